/* SPDX-License-Identifier: MIT */
/*
 * fuzz_article.c — libFuzzer target for the header-section scanner.
 *
 * The first input octet picks the form and a split step; the rest is the
 * article. Each input is scanned in one go and again in pieces from a
 * buffer that moves between calls, and the two must agree exactly. Every
 * value handed out must lie inside the scanned bytes. A disagreement or an
 * out-of-range value aborts, so the fuzzer reports it as a crash. The
 * scanned article then goes through the whole admission decision (with
 * the first line as the command argument, a peer wildmat, path identities
 * and a history that knows every other ID), so the rules' own parsing of
 * Path, Newsgroups and the dates sees the same hostile bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/article.h"
#include "floodgate/config.h"
#include "floodgate/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct fg_config *cfg;	/* reachable until exit: not a leak */
static struct fg_rules rules;

/* Every ID whose length is odd is "known": both history answers occur. */
static enum fg_rules_id_state odd_known(void *ctx, const char *id, size_t len, const void *key)
{
	(void)ctx;
	(void)id;
	(void)key;
	return len & 1 ? FG_RULES_ID_KNOWN : FG_RULES_ID_UNKNOWN;
}

static bool newest(void *ctx, const char *base, size_t len, uint64_t *version)
{
	(void)ctx;
	(void)base;
	*version = len % 5;
	return true;
}

static const struct fg_rules_history hist = { odd_known, newest, NULL };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char text[] =
		"[site]\npath-identity news.example.net\npath-identity h\n"
		"[rules]\nhonor-versions on\nhonor-supersedes on\n"
		"[peer p]\naddress 192.0.2.1\nnewsgroups comp.*,!comp.x.*,@alt.*\nmax-article-size 4K\n";
	struct fg_config_errors errs;

	(void)argc;
	(void)argv;
	cfg = fg_config_load_text("fuzz", text, sizeof(text) - 1, &errs);
	if (!cfg || fg_rules_init(&rules, cfg, &hist) != 0)
		abort();
	return 0;
}

/* Decide the scanned article; the first line of the input, if it looks
 * like one, is the command argument. */
static void decide(const struct fg_article *a, const char *s, size_t n, enum fg_article_form form)
{
	const char *lf = memchr(s, '\n', n);
	struct fg_rules_verdict v;
	struct fg_rules_input in = {
		.art = a,
		.arg = n && s[0] == '<' ? s : NULL,
		.arg_len = lf ? (size_t)(lf - s) : 0,
		.size = fg_article_wire_size(s, n, form),
		.now = 1767225600,
		.peer = &cfg->peer[0],
		.explain = n & 1,
	};
	enum fg_reason r = fg_rules_decide(&rules, &in, &v, NULL);

	if (r >= FG_REASON__COUNT || (r == FG_REASON_NONE) != (v.step == FG_RULES_STEP_NONE) ||
	    (r != FG_REASON_NONE && fg_rules_step_reason(v.step) != r))
		abort();
	if (v.what.ptr && !(v.what.ptr >= s && v.what.ptr + v.what.len <= s + n) &&
	    v.step != FG_RULES_STEP_REQUIRED)
		abort();
	(void)fg_rules_offer(&rules, in.arg, in.arg_len, NULL, NULL, NULL);
}

static void check_inside(const struct fg_article *a, const char *buf, size_t len)
{
	if (a->complete && (a->body_off > len || a->header_end > a->body_off))
		abort();
	for (unsigned i = 0; i < a->n_fields; i++) {
		struct fg_article_value n = fg_article_field_name(a, i);
		struct fg_article_value v = fg_article_field_value(a, i);

		if (n.ptr < buf || n.ptr + n.len > buf + len || n.len == 0)
			abort();
		if (v.ptr < buf || v.ptr + v.len > buf + len)
			abort();
		if (v.len && (v.ptr[0] == ' ' || v.ptr[v.len - 1] == ' '))
			abort();	/* values are trimmed */
	}
	for (unsigned h = 0; h < FG_HDR__COUNT; h++) {
		struct fg_article_value v = fg_article_get(a, h);
		unsigned n;

		if (!fg_article_count(a, h) != !v.ptr)
			abort();
		fg_article_find(a, fg_hdr_name(h), strlen(fg_hdr_name(h)), &n);
		if (n < fg_article_count(a, h))
			abort();
	}
}

static enum fg_article_result split_scan(struct fg_article *a, const char *s, size_t n,
					 size_t step)
{
	enum fg_article_result r = FG_ARTICLE_AGAIN;
	char *copy = NULL;
	size_t len = 0;

	for (;;) {
		len = len + step > n ? n : len + step;
		free(copy);
		copy = malloc(len ? len : 1);
		if (!copy)
			abort();
		memcpy(copy, s, len);
		r = fg_article_scan(a, copy, len);
		if (r != FG_ARTICLE_AGAIN || len == n)
			break;
	}
	check_inside(a, copy, len);
	free(copy);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fg_article one, parts;
	enum fg_article_form form;
	enum fg_article_result r1, r2;
	const char *s;
	size_t n, step;

	if (size < 1)
		return 0;
	form = (data[0] & 1) ? FG_ARTICLE_PLAIN : FG_ARTICLE_WIRE;
	s = (const char *)data + 1;
	n = size - 1;
	/* small steps, but at most ~256 pieces so big inputs stay fast */
	step = 1 + (data[0] >> 1);
	if (step < n / 256)
		step = n / 256;

	fg_article_init(&one, form);
	r1 = fg_article_scan(&one, s, n);
	check_inside(&one, s, n);
	fg_article_init(&parts, form);
	r2 = split_scan(&parts, s, n, step);
	if (r1 != r2 || one.n_fields != parts.n_fields || one.body_off != parts.body_off ||
	    one.n_defects != parts.n_defects || one.error != parts.error ||
	    one.terminated != parts.terminated ||
	    memcmp(one.field, parts.field, one.n_fields * sizeof(one.field[0])) != 0)
		abort();
	if (fg_article_wire_size(s, n, form) > 2 * (uint64_t)n + 2)
		abort();
	(void)fg_article_detect(s, n);
	if (r1 != FG_ARTICLE_AGAIN)
		decide(&one, s, n, form);
	return 0;
}
