/* SPDX-License-Identifier: MIT */
/*
 * test_workload.c — feedgen's workload model, article generation, the
 * response checker and the latency histogram.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/lathist.h"
#include "workload/wlcheck.h"
#include "workload/workload.h"
#include "fgtest.h"

#define NOW ((fg_time_t)1700000000)

static struct fg_wl *make(uint32_t articles, void (*tweak)(struct fg_wl_params *))
{
	struct fg_wl_params p;
	struct fg_wl *wl;

	fg_wl_params_default(&p);
	p.articles = articles;
	p.now = NOW;
	if (tweak)
		tweak(&p);
	wl = fg_wl_create(&p);
	ck_assert_ptr_nonnull(wl);
	return wl;
}

static void big_shares(struct fg_wl_params *p)
{
	p->p_old = 0.10;
	p->p_future = 0.05;
	p->p_pathloop = 0.04;
	p->p_badid = 0.03;
	p->p_no_injdate = 0.5;
	p->p_offline = 0.2;
	p->p_version = 0.1;
	strcpy(p->path_identity, "filter.example.net");
}

/* |observed - expected| within 4 binomial standard deviations */
static void assert_share(uint64_t got, uint64_t n, double p)
{
	double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));

	ck_assert_msg(fabs((double)got - mean) <= 4 * sd + 1,
		      "count %llu, expected %.0f +- %.0f", (unsigned long long)got, mean, 4 * sd);
}

START_TEST(test_class_shares)
{
	struct fg_wl *wl = make(40000, big_shares);
	uint64_t sum = 0, inj = 0, offline = 0, versions = 0;
	struct fg_wl_article a;

	for (unsigned c = 0; c < FG_WL__CLASSES; c++)
		sum += fg_wl_class_count(wl, c);
	ck_assert_uint_eq(sum, 40000);
	assert_share(fg_wl_class_count(wl, FG_WL_OLD), 40000, 0.10);
	assert_share(fg_wl_class_count(wl, FG_WL_FUTURE), 40000, 0.05);
	assert_share(fg_wl_class_count(wl, FG_WL_PATHLOOP), 40000, 0.04);
	assert_share(fg_wl_class_count(wl, FG_WL_BADID), 40000, 0.03);
	for (uint32_t i = 0; i < 40000; i++) {
		fg_wl_article(wl, i, &a);
		ck_assert_int_eq(a.cls, fg_wl_class_of(wl, i));
		inj += a.has_injdate;
		offline += a.offline;
		versions += a.is_version;
	}
	assert_share(inj, 40000, 0.5);
	assert_share(offline, inj, 0.2);
	ck_assert(versions > 3000 && versions < 5000);
	fg_wl_free(wl);
}
END_TEST

static void no_pathid(struct fg_wl_params *p)
{
	p->p_pathloop = 0.5;	/* no identity given: no loops can be made */
}

START_TEST(test_no_pathloop_without_identity)
{
	struct fg_wl *wl = make(5000, no_pathid);

	ck_assert_uint_eq(fg_wl_class_count(wl, FG_WL_PATHLOOP), 0);
	fg_wl_free(wl);
}
END_TEST

static void four_of_seven(struct fg_wl_params *p)
{
	p->peers = 7;
	p->dups = 4;
	p->spread = 16;
}

START_TEST(test_offers_duplicates_and_spread)
{
	struct fg_wl *wl = make(3000, four_of_seven);
	uint8_t *count = calloc(3000, 1);
	uint64_t total = 0;

	for (unsigned p = 0; p < 7; p++) {
		uint64_t n;
		const uint32_t *v = fg_wl_peer_offers(wl, p, &n);
		uint8_t *seen = calloc(3000, 1);

		for (uint64_t k = 0; k < n; k++) {
			ck_assert_uint_lt(v[k], 3000);
			ck_assert_msg(!seen[v[k]], "peer %u offers article %u twice", p, v[k]);
			seen[v[k]] = 1;
			count[v[k]]++;
			/* blocks of `spread`: everything in a block precedes the next block */
			if (k % 16 == 0 && k >= 16) {
				uint32_t prev_max = 0, cur_min = UINT32_MAX;

				for (uint64_t j = k - 16; j < k; j++)
					prev_max = FG_MAX(prev_max, v[j]);
				for (uint64_t j = k; j < FG_MIN(n, k + 16); j++)
					cur_min = FG_MIN(cur_min, v[j]);
				ck_assert_uint_lt(prev_max, cur_min);
			}
		}
		total += n;
		free(seen);
	}
	for (uint32_t i = 0; i < 3000; i++)
		ck_assert_uint_eq(count[i], 4);
	ck_assert_uint_eq(total, 12000);
	ck_assert_uint_eq(fg_wl_total_offers(wl), 12000);
	free(count);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_dates_relative_to_now)
{
	struct fg_wl *wl = make(20000, big_shares);
	const struct fg_wl_params *p = fg_wl_params(wl);
	struct fg_wl_article a;
	unsigned ahead = 0;

	for (uint32_t i = 0; i < 20000; i++) {
		fg_wl_article(wl, i, &a);
		if (a.has_injdate)
			ck_assert_int_eq(a.article_date, a.injection_date);
		else
			ck_assert_int_eq(a.article_date, a.date);
		if (a.offline && a.cls == FG_WL_WANTED)	/* by Date alone it would be too old */
			ck_assert_int_lt(a.date, NOW - p->cutoff);
		if (a.offline)
			ck_assert_int_lt(a.date, a.injection_date - p->cutoff - p->future_margin);
		else if (a.has_injdate)
			ck_assert(a.date <= a.injection_date && a.date >= a.injection_date - 600);
		switch (a.cls) {
		case FG_WL_OLD:
			ck_assert_int_le(a.article_date, NOW - p->cutoff - 3600);
			break;
		case FG_WL_FUTURE:
			ck_assert_int_ge(a.article_date, NOW + p->future_margin + 3600);
			break;
		default:
			/* in the window, an hour from either edge */
			ck_assert_int_ge(a.article_date, NOW - p->cutoff + 3600);
			ck_assert_int_le(a.article_date, NOW + p->future_margin - 3600);
			ahead += a.article_date > NOW;
			break;
		}
	}
	ck_assert_uint_gt(ahead, 0);	/* near-future WANTED articles exist */
	fg_wl_free(wl);
}
END_TEST

/* The value of header `name` in a wire head, NUL-terminated in out. */
static bool header(const char *head, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);

	for (const char *l = head; *l && !(l[0] == '\r' && l[1] == '\n');) {
		const char *eol = strstr(l, "\r\n");

		ck_assert_ptr_nonnull(eol);
		ck_assert_msg(strchr(l, ':') && strchr(l, ':') < eol, "not a header line: %.40s", l);
		if (strncmp(l, name, nl) == 0 && l[nl] == ':' && l[nl + 1] == ' ') {
			size_t vl = (size_t)(eol - (l + nl + 2));

			ck_assert_uint_lt(vl, len);
			memcpy(out, l + nl + 2, vl);
			out[vl] = '\0';
			return true;
		}
		l = eol + 2;
	}
	return false;
}

static fg_time_t parse_date(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%a, %d %b %Y %H:%M:%S +0000", &tm);
	ck_assert_msg(end && *end == '\0', "bad date: %s", s);
	return timegm(&tm);
}

/* RFC 5536 3.1.3 in the forms the model writes: <dot-atom-text@dot-atom-text> */
static bool header_form_id(const char *id)
{
	size_t n = strlen(id);
	const char *at = strchr(id, '@');

	return n >= 5 && id[0] == '<' && id[n - 1] == '>' && at && at > id + 1 &&
	       at < id + n - 2 && !strstr(id, "..") && !strchr(at + 1, '@');
}

static void check_article(const struct fg_wl *wl, const struct fg_wl_article *a)
{
	const struct fg_wl_params *p = fg_wl_params(wl);
	char head[FG_WL_HDR_MAX], v[512];
	size_t hl = fg_wl_wire_head(wl, a, 3, head, sizeof(head));
	char *body = malloc(a->body_len + 3), *plain = malloc(a->body_len + 3);

	ck_assert_uint_gt(hl, 100);
	ck_assert_str_eq(head + hl - 4, "\r\n\r\n");
	for (const char *const *h = (const char *const[]){ "Path", "From", "Newsgroups",
			"Subject", "Message-ID", "Date", NULL }; *h; h++)
		ck_assert_msg(header(head, *h, v, sizeof(v)), "no %s header", *h);
	header(head, "Message-ID", v, sizeof(v));
	ck_assert_str_eq(v, a->msgid);
	ck_assert_int_eq(header_form_id(v), a->cls != FG_WL_BADID);
	header(head, "Date", v, sizeof(v));
	ck_assert_int_eq(parse_date(v), a->date);
	ck_assert_int_eq(header(head, "Injection-Date", v, sizeof(v)), a->has_injdate);
	if (a->has_injdate)
		ck_assert_int_eq(parse_date(v), a->injection_date);
	header(head, "Path", v, sizeof(v));
	ck_assert(strncmp(v, "peer3.feedgen.example!", 22) == 0);
	ck_assert_int_eq(strstr(v, "!filter.example.net!") != NULL, a->cls == FG_WL_PATHLOOP);
	header(head, "Newsgroups", v, sizeof(v));
	ck_assert_str_eq(v, p->groups[a->group]);
	ck_assert_int_eq(header(head, "Supersedes", v, sizeof(v)), a->is_version);
	if (a->is_version) {
		ck_assert(strstr(a->msgid, "$v=") != NULL);
		ck_assert(header_form_id(v) && header_form_id(a->msgid));
	}
	/* the body is stuffed: it unstuffs, and no line is a lone "." */
	memcpy(body, fg_wl_wire_body(wl, a), a->body_len);
	memcpy(body + a->body_len, ".\r\n", 3);
	ck_assert_int_ge(fg_wl_unstuff(body, a->body_len + 3, plain), 0);
	ck_assert_uint_eq(fg_wl_wire_len(wl, a, 3), hl + a->body_len + 3);
	free(body);
	free(plain);
}

START_TEST(test_articles_parse_back)
{
	struct fg_wl *wl = make(3000, big_shares);
	struct fg_wl_article a;
	unsigned classes[FG_WL__CLASSES] = { 0 };

	for (uint32_t i = 0; i < 3000; i++) {
		fg_wl_article(wl, i, &a);
		check_article(wl, &a);
		classes[a.cls]++;
	}
	for (unsigned c = 0; c < FG_WL__CLASSES; c++)
		ck_assert_msg(classes[c] > 0, "no %s article", fg_wl_class_name(c));
	fg_wl_free(wl);
}
END_TEST

static void fixed_2k(struct fg_wl_params *p)
{
	p->size = 2048;
}

static void mix(struct fg_wl_params *p)
{
	p->size_mode = FG_WL_SIZE_MIX;
	p->p_binary = 0.1;
}

START_TEST(test_sizes)
{
	struct fg_wl *wl = make(2000, fixed_2k);
	struct fg_wl_article a;
	unsigned binaries = 0;

	for (uint32_t i = 0; i < 2000; i++) {
		fg_wl_article(wl, i, &a);
		size_t len = fg_wl_wire_len(wl, &a, 0);

		ck_assert_msg(len > 1700 && len < 2600, "article %u is %zu octets", i, len);
	}
	fg_wl_free(wl);
	wl = make(2000, mix);
	for (uint32_t i = 0; i < 2000; i++) {
		fg_wl_article(wl, i, &a);
		if (a.binary) {
			binaries++;
			ck_assert_uint_gt(a.body_len, 600000);
			ck_assert_uint_lt(a.body_len, 800000);
			ck_assert_uint_eq(a.group, 1);
		} else {
			ck_assert_uint_lt(a.body_len, 8000);
		}
	}
	ck_assert(binaries > 100 && binaries < 320);
	fg_wl_free(wl);
}
END_TEST

static void feed_mix(struct fg_wl_params *p)
{
	p->size_mode = FG_WL_SIZE_FEED;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Size feed against the figures it is drawn from (model.c): the binary
 * median, the 700-768 KiB share, the P99, the largest, the 97 % of the
 * octets in articles of 700 KiB and more, text's 0.35 % of the octets and
 * median; and the wire carries what the model says (a body within a line
 * of its size). */
START_TEST(test_sizes_feed)
{
	enum { N = 100000 };
	struct fg_wl *wl = make(N, feed_mix);
	uint32_t *bin = malloc(N * sizeof(*bin)), *text = malloc(N * sizeof(*text));
	unsigned nb = 0, nt = 0, in_band = 0;
	double bytes = 0, text_bytes = 0, big_bytes = 0;
	struct fg_wl_article a;

	ck_assert(bin && text);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t size;

		fg_wl_article(wl, i, &a);
		size = (uint32_t)fg_wl_wire_len(wl, &a, 0);
		ck_assert_uint_le(size, FG_WL_MAX_SIZE + 2048);
		bytes += size;
		if (a.binary) {
			bin[nb++] = size;
			in_band += size >= 700u * 1024 && size <= 768u * 1024;
			if (size >= 700u * 1024)
				big_bytes += size;
		} else {
			text[nt++] = size;
			text_bytes += size;
		}
	}
	qsort(bin, nb, sizeof(*bin), cmp_u32);
	qsort(text, nt, sizeof(*text), cmp_u32);
	assert_share(nb, N, fg_wl_feed_binary_share());
	ck_assert_msg(fabs(bin[nb / 2] - 740484.0) / 740484.0 < 0.01, "binary median %u", bin[nb / 2]);
	ck_assert_msg(fabs((double)in_band / nb - 0.847) < 0.01, "700-768 KiB: %.3f",
		      (double)in_band / nb);
	ck_assert_msg(fabs(bin[nb * 99 / 100] - 2.06e6) / 2.06e6 < 0.05, "binary P99 %u",
		      bin[nb * 99 / 100]);
	ck_assert_uint_le(bin[nb - 1], FG_WL_MAX_SIZE + 2048);
	ck_assert_uint_ge(bin[nb - 1], 3000000);
	ck_assert_msg(fabs(big_bytes / (bytes - text_bytes) - 0.97) < 0.01,
		      "octets in binaries of 700 KiB and more: %.3f", big_bytes / (bytes - text_bytes));
	ck_assert_msg(fabs(text_bytes / bytes - FG_WL_FEED_TEXT_BYTES) < 0.0007,
		      "text's share of the octets %.4f", text_bytes / bytes);
	ck_assert_msg(fabs(text[nt / 2] - 2139.0) / 2139.0 < 0.05, "text median %u", text[nt / 2]);
	free(bin);
	free(text);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_unstuff)
{
	char out[64];
	const char ok[] = "..a\r\nb\r\n..\r\n\r\n.\r\n";

	ck_assert_int_eq(fg_wl_unstuff(ok, sizeof(ok) - 1, out), 12);
	ck_assert(memcmp(out, ".a\r\nb\r\n.\r\n\r\n", 12) == 0);
	ck_assert_int_eq(fg_wl_unstuff("a\r\n", 3, out), -EINVAL);		/* no terminator */
	ck_assert_int_eq(fg_wl_unstuff("a\n.\r\n", 5, out), -EINVAL);	/* bare LF */
	ck_assert_int_eq(fg_wl_unstuff(".\r\nx\r\n", 6, out), -EINVAL);	/* data after the end */
}
END_TEST

START_TEST(test_pool_exercises_stuffing)
{
	struct fg_wl *wl = make(3000, NULL);
	struct fg_wl_article a;
	unsigned stuffed = 0;

	for (uint32_t i = 0; i < 3000; i++) {
		const char *b;

		fg_wl_article(wl, i, &a);
		b = fg_wl_wire_body(wl, &a);
		if (b[0] == '.')
			ck_assert_int_eq(b[1], '.');
		for (uint32_t k = 0; k + 3 < a.body_len; k++)
			if (b[k] == '\n' && b[k + 1] == '.') {
				ck_assert_int_eq(b[k + 2], '.');	/* never an unstuffed dot */
				stuffed++;
			}
	}
	ck_assert_uint_gt(stuffed, 100);
	fg_wl_free(wl);
}
END_TEST

/* The first article of class c. */
static uint32_t find(const struct fg_wl *wl, enum fg_wl_class c)
{
	for (uint32_t i = 0; i < fg_wl_params(wl)->articles; i++)
		if (fg_wl_class_of(wl, i) == c)
			return i;
	ck_abort_msg("no article of class %s", fg_wl_class_name(c));
	return 0;
}

START_TEST(test_checker_accepts_once)
{
	struct fg_wl *wl = make(500, big_shares);
	struct fg_wlc *c = fg_wlc_create(wl);
	uint32_t w = find(wl, FG_WL_WANTED);
	uint64_t s1 = fg_wlc_stamp(c), s2 = fg_wlc_stamp(c);

	/* two peers CHECK at once: both may get 238 */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 238, s1, 0, 0), FG_WLC_SEND);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 238, s2, 1, 1), FG_WLC_SEND);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 239, s1, 0, 0), FG_WLC_DONE);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 439, s2, 1, 1), FG_WLC_DONE);
	ck_assert_uint_eq(fg_wlc_mismatches(c), 0);
	/* a CHECK sent after the 239 arrived must not get 238 */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 238, fg_wlc_stamp(c), 2, 2),
			 FG_WLC_MISMATCH);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 438, fg_wlc_stamp(c), 2, 2),
			 FG_WLC_DONE);
	/* a second 239 for the duplicate is a mismatch that names it */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 239, fg_wlc_stamp(c), 3, 3),
			 FG_WLC_MISMATCH);
	ck_assert_uint_eq(fg_wlc_mismatches(c), 2);
	ck_assert_ptr_nonnull(strstr(fg_wlc_mismatch_text(c, 1), "duplicate"));
	ck_assert_uint_eq(fg_wlc_accepted(c), 1);
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_checker_rejects_classes)
{
	struct fg_wl *wl = make(2000, big_shares);
	struct fg_wlc *c = fg_wlc_create(wl);
	enum fg_wl_class bad[] = { FG_WL_OLD, FG_WL_FUTURE, FG_WL_PATHLOOP, FG_WL_BADID };
	uint32_t b = find(wl, FG_WL_BADID);

	for (unsigned k = 0; k < FG_ARRAY_SIZE(bad); k++) {
		uint32_t i = find(wl, bad[k]);

		ck_assert_int_eq(fg_wlc_response(c, i, FG_WLC_TAKETHIS, 439, fg_wlc_stamp(c), 0, 0),
				 FG_WLC_DONE);
		ck_assert_int_eq(fg_wlc_response(c, i, FG_WLC_TAKETHIS, 239, fg_wlc_stamp(c), 0, 0),
				 FG_WLC_MISMATCH);
	}
	ck_assert_uint_eq(fg_wlc_mismatches(c), 4);
	/* an invalid ID must be refused at CHECK, not asked for or deferred */
	ck_assert_int_eq(fg_wlc_response(c, b, FG_WLC_CHECK, 438, fg_wlc_stamp(c), 0, 0), FG_WLC_DONE);
	ck_assert_int_eq(fg_wlc_response(c, b, FG_WLC_CHECK, 238, fg_wlc_stamp(c), 0, 0), FG_WLC_MISMATCH);
	ck_assert_int_eq(fg_wlc_response(c, b, FG_WLC_CHECK, 431, fg_wlc_stamp(c), 0, 0), FG_WLC_MISMATCH);
	ck_assert_uint_eq(fg_wlc_mismatches(c), 6);
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_checker_retry_then_accept)
{
	struct fg_wl *wl = make(300, NULL);
	struct fg_wlc *c = fg_wlc_create(wl);

	for (uint32_t i = 0; i < 300; i++) {
		if (fg_wl_class_of(wl, i) != FG_WL_WANTED)
			continue;
		ck_assert_int_eq(fg_wlc_response(c, i, FG_WLC_CHECK, 431, fg_wlc_stamp(c), 0, 0),
				 FG_WLC_RETRY);
		ck_assert_int_eq(fg_wlc_response(c, i, FG_WLC_CHECK, 238, fg_wlc_stamp(c), 0, 0),
				 FG_WLC_SEND);
		ck_assert_int_eq(fg_wlc_response(c, i, FG_WLC_TAKETHIS, 239, fg_wlc_stamp(c), 0, 0),
				 FG_WLC_DONE);
	}
	ck_assert_uint_eq(fg_wlc_finish(c), 0);
	ck_assert_uint_eq(fg_wlc_accepted(c), fg_wl_class_count(wl, FG_WL_WANTED));
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_checker_missing_239)
{
	struct fg_wl *wl = make(300, NULL);
	struct fg_wlc *c = fg_wlc_create(wl);
	uint32_t w = find(wl, FG_WL_WANTED), lost = w + 1;

	while (fg_wl_class_of(wl, lost) != FG_WL_WANTED)
		lost++;
	/* lost's answer went with its connection: unknown, not missing */
	fg_wlc_answer_lost(c, lost);
	for (uint32_t i = 0; i < 300; i++)
		if (i != w && i != lost && fg_wl_class_of(wl, i) == FG_WL_WANTED)
			fg_wlc_response(c, i, FG_WLC_TAKETHIS, 239, fg_wlc_stamp(c), 0, 0);
	/* every offer of w refused: locally fine, wrong at the end */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 439, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_DONE);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 438, fg_wlc_stamp(c), 1, 1),
			 FG_WLC_DONE);
	ck_assert_uint_eq(fg_wlc_finish(c), 1);
	ck_assert_uint_eq(fg_wlc_unknown(c), 1);
	ck_assert_ptr_nonnull(strstr(fg_wlc_mismatch_text(c, 0), "never got a 239"));
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_checker_protocol_codes)
{
	struct fg_wl *wl = make(300, NULL);
	struct fg_wlc *c = fg_wlc_create(wl);
	uint32_t w = find(wl, FG_WL_WANTED);

	/* RFC 4644 2.5.2: no 431 for TAKETHIS; 400 means reconnect */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 431, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_MISMATCH);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_TAKETHIS, 400, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_RECONNECT);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 400, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_RECONNECT);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_CHECK, 500, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_MISMATCH);
	/* IHAVE, RFC 3977 6.3.2 */
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE, 436, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_RETRY);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE, 335, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_SEND);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE_ART, 436, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_RETRY);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE_ART, 235, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_DONE);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE, 435, fg_wlc_stamp(c), 0, 0),
			 FG_WLC_DONE);
	ck_assert_int_eq(fg_wlc_response(c, w, FG_WLC_IHAVE_ART, 235, fg_wlc_stamp(c), 1, 1),
			 FG_WLC_MISMATCH);
	ck_assert_uint_eq(fg_wlc_mismatches(c), 3);
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_lathist)
{
	static struct fg_lathist h, h2;

	fg_lathist_init(&h);
	ck_assert_uint_eq(fg_lathist_pct(&h, 50), 0);
	for (uint64_t v = 1; v <= 100000; v++)
		fg_lathist_add(&h, v * 1000);	/* 1 us .. 100 ms */
	ck_assert_uint_eq(h.count, 100000);
	ck_assert_uint_eq(h.max, 100000000);
	ck_assert_uint_eq(fg_lathist_pct(&h, 100), 100000000);
	for (double pct = 1; pct < 100; pct += 7.5) {
		double want = pct * 1000.0 * 1000.0, got = (double)fg_lathist_pct(&h, pct);

		ck_assert_msg(got >= want * 0.99 && got <= want * 1.0625 + 1,
			      "p%.1f = %.0f, want ~%.0f", pct, got, want);
	}
	for (uint64_t v = 0; v < 100; v++)		/* small values are exact */
		ck_assert_uint_eq(fg_lathist_lowest(fg_lathist_index(v)), v < 16 ? v :
				  fg_lathist_lowest(fg_lathist_index(v)));
	for (unsigned i = 1; i < FG_LATHIST_BUCKETS - 1; i++)
		ck_assert_uint_gt(fg_lathist_lowest(i), fg_lathist_lowest(i - 1));
	ck_assert_uint_eq(fg_lathist_index(UINT64_MAX), FG_LATHIST_BUCKETS - 1);
	fg_lathist_init(&h2);
	fg_lathist_add(&h2, 5);
	fg_lathist_merge(&h, &h2);
	ck_assert_uint_eq(h.count, 100001);
	ck_assert_uint_eq(h.min, 5);
}
END_TEST

/* --dups / --peers-per-article: "K" or "K:W,...", and everything it refuses */
START_TEST(test_dups_parse)
{
	struct fg_wl_params p;
	char buf[128];
	static const char *const bad[] = {
		"", "0", "-1", "257", "3:", ":1", "3:0", "3:-1", "3:x", "1:1,", ",1:1",
		"1:1,1:2", "1:1,2", "2,1:1", "1:1;2:1", "1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1",
		"3 ", "3k", "1:nan", "1:inf",
	};

	fg_wl_params_default(&p);
	ck_assert_int_eq(fg_wl_params_set_dups(&p, "4"), 0);
	ck_assert_uint_eq(p.dups, 4);
	ck_assert_uint_eq(p.n_dups, 0);
	fg_wl_dups_format(&p, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4");
	ck_assert_int_eq(fg_wl_params_set_dups(&p, "1:2,3:5,6:3"), 0);
	ck_assert_uint_eq(p.dups, 6);		/* the largest K */
	ck_assert_uint_eq(p.n_dups, 3);
	ck_assert_uint_eq(p.dups_k[1], 3);
	ck_assert(fabs(p.dups_w[0] - 0.2) < 1e-9 && fabs(p.dups_w[1] - 0.5) < 1e-9 &&
		  fabs(p.dups_w[2] - 0.3) < 1e-9);	/* relative weights, normalised */
	fg_wl_dups_format(&p, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1:0.2000,3:0.5000,6:0.3000");
	/* a format cut short still says how long it would be, as snprintf */
	ck_assert_int_eq(fg_wl_dups_format(&p, buf, 5), (int)strlen("1:0.2000,3:0.5000,6:0.3000"));
	ck_assert_int_eq(fg_wl_params_set_dups(&p, "2:.5"), 0);	/* one entry with a weight */
	ck_assert_uint_eq(p.n_dups, 1);
	ck_assert(fabs(p.dups_w[0] - 1.0) < 1e-9);
	for (unsigned k = 0; k < FG_ARRAY_SIZE(bad); k++) {
		struct fg_wl_params before;

		fg_wl_params_set_dups(&p, "5:1,7:3");
		before = p;
		ck_assert_msg(fg_wl_params_set_dups(&p, bad[k]) == -EINVAL, "accepted \"%s\"", bad[k]);
		ck_assert_msg(memcmp(&before, &p, sizeof(p)) == 0, "\"%s\" changed the params", bad[k]);
	}
	/* a hand-made distribution that does not add up is refused at create */
	fg_wl_params_default(&p);
	ck_assert_int_eq(fg_wl_params_set_dups(&p, "1:1,3:1"), 0);
	p.dups_w[1] = 0.9;
	ck_assert_ptr_null(fg_wl_create(&p));
}
END_TEST

static void dist_of_eight(struct fg_wl_params *p)
{
	p->peers = 8;
	p->spread = 8;
	ck_assert_int_eq(fg_wl_params_set_dups(p, "1:0.25,3:0.5,8:0.25"), 0);
}

/* The counts add up: every article is offered by exactly K_i distinct
 * peers, the offers sum to sum(K_i), K follows the weights, and the K_i
 * copies of one article come at nearly the same point of each list. */
START_TEST(test_dups_distribution_counts)
{
	const uint32_t n = 8000;
	struct fg_wl *wl = make(n, dist_of_eight);
	uint8_t *count = calloc(n, 1);
	uint64_t *first_pos = calloc(n, sizeof(uint64_t)), *last_pos = calloc(n, sizeof(uint64_t));
	uint64_t by_k[9] = { 0 }, sum_k = 0, total = 0;

	for (uint32_t i = 0; i < n; i++) {
		unsigned k = fg_wl_dups_of(wl, i);

		ck_assert(k == 1 || k == 3 || k == 8);
		by_k[k]++;
		sum_k += k;
		first_pos[i] = UINT64_MAX;
	}
	assert_share(by_k[1], n, 0.25);
	assert_share(by_k[3], n, 0.5);
	assert_share(by_k[8], n, 0.25);
	for (unsigned p = 0; p < 8; p++) {
		uint64_t m;
		const uint32_t *v = fg_wl_peer_offers(wl, p, &m);
		uint8_t *seen = calloc(n, 1);

		for (uint64_t j = 0; j < m; j++) {
			ck_assert_msg(!seen[v[j]], "peer %u offers article %u twice", p, v[j]);
			seen[v[j]] = 1;
			count[v[j]]++;
			/* where in a list the copy is, as a share of the way through */
			first_pos[v[j]] = FG_MIN(first_pos[v[j]], j * 1000 / m);
			last_pos[v[j]] = FG_MAX(last_pos[v[j]], j * 1000 / m);
		}
		total += m;
		free(seen);
	}
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(count[i], fg_wl_dups_of(wl, i));
		/* within 2 % of the lists of one another: offered at nearly the same time */
		ck_assert_msg(last_pos[i] - first_pos[i] <= 20, "article %u spread %llu..%llu", i,
			      (unsigned long long)first_pos[i], (unsigned long long)last_pos[i]);
	}
	ck_assert_uint_eq(total, sum_k);
	ck_assert_uint_eq(fg_wl_total_offers(wl), sum_k);
	/* the same seed gives the same multiplicities; the classes do not move */
	{
		struct fg_wl *fixed = make(n, NULL);

		for (uint32_t i = 0; i < n; i += 97)
			ck_assert_int_eq(fg_wl_class_of(fixed, i), fg_wl_class_of(wl, i));
		ck_assert_uint_eq(fg_wl_dups_of(fixed, 5), 10);
		fg_wl_free(fixed);
	}
	free(count);
	free(first_pos);
	free(last_pos);
	fg_wl_free(wl);
}
END_TEST

/* Every copy answered as a filter must: one 239 and K - 1 439s per wanted
 * article; the checker's totals equal the model's. */
START_TEST(test_dups_answers_add_up)
{
	const uint32_t n = 2000;
	struct fg_wl *wl = make(n, dist_of_eight);
	struct fg_wlc *c = fg_wlc_create(wl);
	uint8_t *got = calloc(n, 1);
	uint64_t n239 = 0, n439 = 0;

	for (unsigned p = 0; p < 8; p++) {
		uint64_t m;
		const uint32_t *v = fg_wl_peer_offers(wl, p, &m);

		for (uint64_t j = 0; j < m; j++) {
			bool take = fg_wl_class_of(wl, v[j]) == FG_WL_WANTED && !got[v[j]];
			int code = take ? 239 : 439;

			ck_assert_int_eq(fg_wlc_response(c, v[j], FG_WLC_TAKETHIS, code,
							 fg_wlc_stamp(c), p, p), FG_WLC_DONE);
			got[v[j]] |= take;
			n239 += take;
			n439 += !take;
		}
	}
	ck_assert_uint_eq(fg_wlc_finish(c), 0);
	ck_assert_uint_eq(n239, fg_wl_class_count(wl, FG_WL_WANTED));
	ck_assert_uint_eq(fg_wlc_accepted(c), n239);
	ck_assert_uint_eq(n239 + n439, fg_wl_total_offers(wl));
	ck_assert_uint_eq(fg_wlc_offered(c), n);
	free(got);
	fg_wlc_free(c);
	fg_wl_free(wl);
}
END_TEST

/* --duration: a run that stopped offering judges only what it offered;
 * without it, the articles never offered are missing their 239. */
START_TEST(test_checker_partial)
{
	struct fg_wl *wl = make(400, NULL);
	struct fg_wlc *c = fg_wlc_create(wl), *whole = fg_wlc_create(wl);
	uint64_t wanted_first = 0, missing = 0;

	fg_wlc_set_partial(c);
	for (uint32_t i = 0; i < 400; i++) {
		bool w = fg_wl_class_of(wl, i) == FG_WL_WANTED;

		if (i < 200) {		/* offered before the run ended */
			fg_wlc_response(c, i, FG_WLC_TAKETHIS, w ? 239 : 439, fg_wlc_stamp(c), 0, 0);
			fg_wlc_response(whole, i, FG_WLC_TAKETHIS, w ? 239 : 439,
					fg_wlc_stamp(whole), 0, 0);
			wanted_first += w;
		} else {
			missing += w;
		}
	}
	ck_assert_uint_gt(missing, 0);
	ck_assert_uint_eq(fg_wlc_finish(c), 0);
	ck_assert_uint_eq(fg_wlc_offered(c), 200);
	ck_assert_uint_eq(fg_wlc_accepted(c), wanted_first);
	ck_assert_uint_eq(fg_wlc_finish(whole), missing);
	/* partial still finds an offered article that never got its 239 */
	{
		struct fg_wlc *p2 = fg_wlc_create(wl);
		uint32_t w = find(wl, FG_WL_WANTED);

		fg_wlc_set_partial(p2);
		fg_wlc_response(p2, w, FG_WLC_TAKETHIS, 439, fg_wlc_stamp(p2), 0, 0);
		ck_assert_uint_eq(fg_wlc_finish(p2), 1);
		fg_wlc_free(p2);
	}
	fg_wlc_free(c);
	fg_wlc_free(whole);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_bad_params)
{
	struct fg_wl_params p;

	fg_wl_params_default(&p);
	p.p_old = 0.6;
	p.p_future = 0.6;			/* shares over 1 */
	ck_assert_ptr_null(fg_wl_create(&p));
	fg_wl_params_default(&p);
	p.future_margin = 2 * 86400;		/* RFC 5537 3.3: at most 24 h */
	ck_assert_ptr_null(fg_wl_create(&p));
	fg_wl_params_default(&p);
	p.articles = 0;
	ck_assert_ptr_null(fg_wl_create(&p));
	ck_assert_int_eq(fg_wl_params_set_groups(&p, "a,,b"), -EINVAL);
	ck_assert_int_eq(fg_wl_params_set_groups(&p, "a.b,c.d"), 0);
	ck_assert_uint_eq(p.n_groups, 2);
	ck_assert_str_eq(p.groups[1], "c.d");
}
END_TEST

static Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("model");
	TCase *tk = tcase_create("checker");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_class_shares);
	tcase_add_test(tc, test_no_pathloop_without_identity);
	tcase_add_test(tc, test_offers_duplicates_and_spread);
	tcase_add_test(tc, test_dates_relative_to_now);
	tcase_add_test(tc, test_articles_parse_back);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_sizes_feed);
	tcase_add_test(tc, test_unstuff);
	tcase_add_test(tc, test_pool_exercises_stuffing);
	tcase_add_test(tc, test_bad_params);
	tcase_add_test(tc, test_dups_parse);
	tcase_add_test(tc, test_dups_distribution_counts);
	tcase_add_test(tk, test_dups_answers_add_up);
	tcase_add_test(tk, test_checker_partial);
	tcase_add_test(tk, test_checker_accepts_once);
	tcase_add_test(tk, test_checker_rejects_classes);
	tcase_add_test(tk, test_checker_retry_then_accept);
	tcase_add_test(tk, test_checker_missing_239);
	tcase_add_test(tk, test_checker_protocol_codes);
	tcase_add_test(tk, test_lathist);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tk);
	return s;
}

FG_TEST_MAIN(workload_suite)
