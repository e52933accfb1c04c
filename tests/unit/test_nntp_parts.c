/* SPDX-License-Identifier: MIT */
/*
 * test_nntp_parts.c — the session engine's pieces on their own: the
 * command parser (against a plain reference on random lines), the article
 * reader against a reference in every segmentation, the dot-unstuffer,
 * the response queue through wrap-around and partial sends, and the
 * clock-sanity view on the feeds it must and must not alarm on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dataplane/nntp/nntp_int.h"
#include "fgtest.h"

/* ------------------------------------------------------------ commands */

START_TEST(cmd_parse_cases)
{
	struct fg_nntp_cmd c;
	static const char nul[] = "CHECK <a\0b>";

	fg_nntp_cmd_parse("CHECK <a@b>", 11, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_CHECK);
	ck_assert_uint_eq(c.argc, 1);
	ck_assert_uint_eq(c.arg_len[0], 5);
	ck_assert(memcmp(c.arg[0], "<a@b>", 5) == 0);
	fg_nntp_cmd_parse(" \ttakeThis\t <x@y>  ", 19, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_TAKETHIS);
	ck_assert_uint_eq(c.argc, 1);
	ck_assert(memcmp(c.arg[0], "<x@y>", 5) == 0 && c.arg_len[0] == 5);
	fg_nntp_cmd_parse("mode STREAM", 11, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_MODE);
	fg_nntp_cmd_parse("", 0, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_UNKNOWN);
	ck_assert_uint_eq(c.argc, 0);
	fg_nntp_cmd_parse("CHECKS <a>", 10, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_UNKNOWN);
	fg_nntp_cmd_parse("QUIT a b c d e f", 16, &c);
	ck_assert_int_eq(c.verb, FG_NNTP_VERB_QUIT);
	ck_assert_uint_eq(c.argc, FG_NNTP_MAX_ARGS + 1);	/* "more than enough" */
	fg_nntp_cmd_parse(nul, sizeof(nul) - 1, &c);
	ck_assert(c.bad_char);
	fg_nntp_cmd_parse("CHECK <a\r>", 10, &c);
	ck_assert(c.bad_char);
	/* an 8-bit octet is no reason to refuse a line: it is an argument */
	fg_nntp_cmd_parse("CHECK <\xe9@x>", 10, &c);
	ck_assert(!c.bad_char && c.argc == 1);
	ck_assert_int_eq(fg_nntp_cmd_verb("ihave <a@b>", 11), FG_NNTP_VERB_IHAVE);
	ck_assert_str_eq(fg_nntp_verb_name(FG_NNTP_VERB_CAPABILITIES), "capabilities");
	ck_assert_uint_eq(fg_nntp_code_number(FG_NNTP_CODE_C439), 439);
}
END_TEST

/* The parser as the RFC 3977 3.1 words say it, one octet at a time. */
static void cmd_reference(const char *line, uint32_t len, struct fg_nntp_cmd *c)
{
	uint32_t i = 0, s;

	memset(c, 0, sizeof(*c));
	c->verb = FG_NNTP_VERB__COUNT;
	for (uint32_t j = 0; j < len; j++)
		c->bad_char |= line[j] == '\0' || line[j] == '\r';
	for (;;) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		if (c->verb == FG_NNTP_VERB__COUNT) {
			c->verb = fg_nntp_cmd_verb(line + s, i - s);
			continue;
		}
		if (c->argc < FG_NNTP_MAX_ARGS) {
			c->arg[c->argc] = line + s;
			c->arg_len[c->argc] = i - s;
		}
		if (c->argc <= FG_NNTP_MAX_ARGS)
			c->argc++;
	}
	if (c->verb == FG_NNTP_VERB__COUNT)
		c->verb = FG_NNTP_VERB_UNKNOWN;
}

/* Random lines of every length up to 600 (windows of 64, sixteen-octet
 * steps and tails), of blanks, NUL, CR, verbs and other octets. */
START_TEST(cmd_parse_matches_reference)
{
	static const char *const words[] = { "CHECK", "takethis", "IHAVE", " ", "\t", "  \t",
					     "<a@b>", "x", "\r", "mode", "QUIT", "\xe9" };
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(_i + 1);
	char line[640];

	for (unsigned round = 0; round < 20000; round++) {
		uint32_t len = 0, want;
		struct fg_nntp_cmd a, b;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		want = (uint32_t)(rng >> 33) % 600;
		while (len < want) {
			uint64_t r;
			const char *w;
			size_t n;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			r = rng >> 33;
			if (r % 7 == 0) {
				line[len++] = (char)(r >> 8);	/* any octet, NUL too */
				continue;
			}
			w = words[(r >> 3) % FG_ARRAY_SIZE(words)];
			n = strlen(w);
			if (len + n > want)
				n = want - len;
			memcpy(line + len, w, n);
			len += (uint32_t)n;
		}
		fg_nntp_cmd_parse(line, len, &a);
		cmd_reference(line, len, &b);
		/* (a passing ck_assert costs a write to check's pipe) */
		if (a.verb != b.verb || a.argc != b.argc || a.bad_char != b.bad_char || a.key)
			ck_abort_msg("line of %u: verb %d/%d argc %u/%u bad %d/%d", len, a.verb, b.verb,
				     a.argc, b.argc, a.bad_char, b.bad_char);
		for (unsigned k = 0; k < FG_MIN(a.argc, (unsigned)FG_NNTP_MAX_ARGS); k++)
			if (a.arg[k] != b.arg[k] || a.arg_len[k] != b.arg_len[k])
				ck_abort_msg("line of %u: argument %u differs", len, k);
	}
}
END_TEST

/* ------------------------------------------------------------ the reader */

/* Reference: where the terminator starts (offset of its "."), or -1. */
static long ref_terminator(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i + 2 < n; i++) {
		bool line_start = i == 0 || (i >= 2 && s[i - 2] == '\r' && s[i - 1] == '\n');

		if (line_start && s[i] == '.' && s[i + 1] == '\r' && s[i + 2] == '\n')
			return (long)i;
	}
	return -1;
}

/* Feed `s` in pieces of the given sizes; collect the content. */
static size_t run_reader(const uint8_t *s, size_t n, uint64_t *rng, size_t maxseg, uint8_t *out,
			 size_t *consumed_total)
{
	struct fg_nntp_reader r;
	size_t off = 0, o = 0;

	fg_nntp_reader_init(&r);
	*consumed_total = 0;
	while (off < n) {
		size_t len = 1 + fg_test_rng(rng) % maxseg;
		struct fg_nntp_read rd;

		if (len > n - off)
			len = n - off;
		fg_nntp_reader_scan(&r, s + off, (uint32_t)len, &rd);
		ck_assert_uint_le(rd.held, 2);
		memcpy(out + o, ".\r", rd.held);
		o += rd.held;
		ck_assert_uint_le(rd.content, rd.consumed);
		memcpy(out + o, s + off, rd.content);
		o += rd.content;
		off += rd.consumed;
		*consumed_total = off;
		if (rd.end)
			break;
		ck_assert_uint_eq(rd.consumed, len);	/* all of it, unless it ended */
	}
	return o;
}

START_TEST(reader_matches_reference)
{
	static const uint8_t alphabet[] = { '.', '\r', '\n', 'a', '.', '\r', '\n', 'x' };
	uint64_t rng = 1 + (uint64_t)_i;
	uint8_t s[600], out[700];

	for (unsigned round = 0; round < 400; round++) {
		size_t n = fg_test_rng(&rng) % 500, got, consumed;
		long t;

		for (size_t i = 0; i < n; i++)
			s[i] = alphabet[fg_test_rng(&rng) % sizeof(alphabet)];
		/* make sure it ends: a terminator, then something after it */
		memcpy(s + n, "\r\n.\r\nNEXT", 9);
		n += 9;
		t = ref_terminator(s, n);
		ck_assert(t >= 0);
		for (size_t maxseg = 1; maxseg <= 40; maxseg += 13) {
			got = run_reader(s, n, &rng, maxseg, out, &consumed);
			ck_assert_uint_eq(got, (size_t)t);
			ck_assert(memcmp(out, s, (size_t)t) == 0);
			ck_assert_uint_eq(consumed, (size_t)t + 3);
		}
		/* one piece, and long bodies for the vector path */
		got = run_reader(s, n, &rng, 100000, out, &consumed);
		ck_assert_uint_eq(got, (size_t)t);
		ck_assert_uint_eq(consumed, (size_t)t + 3);
	}
}
END_TEST

START_TEST(reader_edges)
{
	uint64_t rng = 9;
	uint8_t out[64];
	size_t consumed;
	static const struct {
		const char *in;
		size_t content;
	} cases[] = {
		{ ".\r\n", 0 },			/* empty article */
		{ "..\r\n.\r\n", 4 },		/* a stuffed dot line */
		{ ".\r\r\n.\r\n", 4 },		/* ".\r" then CRLF: not the end */
		{ "a\n.\r\n.\r\n", 5 },		/* bare LF: no line start */
		{ "a\r\n.x\r\n.\r\n", 7 },
		{ "a\r\n.\r\n.\r\n", 3 },	/* the first one ends it */
		{ "\r\n.\r\n", 2 },
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++)
		for (size_t seg = 1; seg <= 4; seg++) {
			size_t n = strlen(cases[i].in);

			ck_assert_uint_eq(run_reader((const uint8_t *)cases[i].in, n, &rng, seg, out,
						     &consumed), cases[i].content);
			ck_assert_uint_eq(consumed, cases[i].content + 3);
		}
}
END_TEST

START_TEST(unstuff_any_pieces)
{
	static const char wire[] = "Subject: x\r\n\r\n..dot\r\nbare\n.kept\r\n...two\r\n.\r\r\n";
	static const char want[] = "Subject: x\r\n\r\n.dot\r\nbare\n.kept\r\n..two\r\n\r\r\n";
	uint8_t out[128];

	for (size_t seg = 1; seg < sizeof(wire); seg++) {
		struct fg_sink_unstuff u;
		size_t o = 0;

		fg_sink_unstuff_init(&u);
		for (size_t off = 0; off < sizeof(wire) - 1; off += seg)
			o += fg_sink_unstuff(&u, (const uint8_t *)wire + off,
					     FG_MIN(seg, sizeof(wire) - 1 - off), out + o);
		ck_assert_uint_eq(o, sizeof(want) - 1);
		ck_assert(memcmp(out, want, o) == 0);
	}
}
END_TEST

/* ------------------------------------------------------------ the response queue */

struct qsink {
	char out[1 << 16];
	size_t len;
	uint64_t rng;
};

static int q_send(void *t, const void *buf, uint32_t len)
{
	struct qsink *q = t;
	uint32_t n = (uint32_t)(fg_test_rng(&q->rng) % (len + 1));	/* takes some */

	memcpy(q->out + q->len, buf, n);
	q->len += n;
	return (int)n;
}

static const struct fg_nntp_session_transport qops = { .send = q_send };

START_TEST(respq_order_wrap_partial)
{
	struct fg_respq q;
	static struct qsink sink;
	char want[1 << 16];
	size_t wlen = 0;
	uint32_t waiting[8], nwait = 0, seq;
	uint64_t rng = 3;
	bool closing;

	memset(&sink, 0, sizeof(sink));
	sink.rng = 5;
	ck_assert_int_eq(fg_respq_init(&q, 300, 16), 0);
	for (unsigned i = 0; i < 3000; i++) {
		char line[64];
		int n = snprintf(line, sizeof(line), "%03u line %u\r\n", 200 + i % 300, i);
		bool wait = fg_test_rng(&rng) % 5 == 0 && nwait < 8;
		char *p;

		/* make room as a session would: flush, then fill waiting lines */
		while (!fg_respq_room(&q, 40)) {
			if (nwait && fg_test_rng(&rng) % 2) {
				uint32_t cap;

				p = fg_respq_slot(&q, waiting[0], &cap);
				memcpy(p, "ok\r\n", 4);
				fg_respq_fill(&q, waiting[0], 4, FG_RQ_READY);
				memmove(waiting, waiting + 1, --nwait * sizeof(waiting[0]));
			}
			ck_assert_int_ge(fg_respq_flush(&q, &qops, &sink, &closing), 0);
		}
		p = fg_respq_push(&q, wait ? 40 : (uint32_t)n, wait ? FG_RQ_WAIT : FG_RQ_READY, &seq);
		ck_assert_ptr_nonnull(p);
		if (wait) {
			waiting[nwait++] = seq;
			/* its text will be "ok\r\n": the expected order keeps its place */
			memcpy(want + wlen, "ok\r\n", 4);
			wlen += 4;
		} else {
			memcpy(p, line, (size_t)n);
			memcpy(want + wlen, line, (size_t)n);
			wlen += (size_t)n;
		}
		if (wlen > sizeof(want) - 100)
			break;
	}
	while (nwait) {
		uint32_t cap;
		char *p = fg_respq_slot(&q, waiting[0], &cap);

		memcpy(p, "ok\r\n", 4);
		fg_respq_fill(&q, waiting[0], 4, FG_RQ_READY);
		memmove(waiting, waiting + 1, --nwait * sizeof(waiting[0]));
	}
	while (fg_respq_entries(&q))
		ck_assert_int_ge(fg_respq_flush(&q, &qops, &sink, &closing), 0);
	ck_assert_uint_eq(sink.len, wlen);
	for (size_t i = 0; i < wlen; i++)
		ck_assert_msg(sink.out[i] == want[i], "differs at %zu: \"%.30s\" want \"%.30s\"", i,
			      sink.out + i, want + i);
	fg_respq_free(&q);
}
END_TEST

START_TEST(respq_close_line_is_last)
{
	struct fg_respq q;
	static struct qsink sink;
	uint32_t seq;
	bool closing = false;
	char *p;

	memset(&sink, 0, sizeof(sink));
	sink.rng = 11;
	ck_assert_int_eq(fg_respq_init(&q, 256, 8), 0);
	p = fg_respq_push(&q, 5, FG_RQ_READY, &seq);
	memcpy(p, "a\r\nb\n", 5);
	p = fg_respq_push(&q, 5, FG_RQ_CLOSE, &seq);
	memcpy(p, "400\r\n", 5);
	p = fg_respq_push(&q, 5, FG_RQ_READY, &seq);
	memcpy(p, "late\n", 5);
	while (!closing)
		ck_assert_int_ge(fg_respq_flush(&q, &qops, &sink, &closing), 0);
	ck_assert_uint_eq(sink.len, 10);
	ck_assert(memcmp(sink.out, "a\r\nb\n400\r\n", 10) == 0);
	ck_assert_uint_eq(fg_respq_entries(&q), 1);
	fg_respq_free(&q);
}
END_TEST

/* ------------------------------------------------------------ the clock view */

static int feed_clock(struct fg_nntp_clock *c, unsigned n, int64_t base, int64_t spread,
		      uint64_t *rng)
{
	int last = 0;

	for (unsigned i = 0; i < n; i++) {
		int t = fg_nntp_clock_sample(c, base + (int64_t)(fg_test_rng(rng) % (uint64_t)spread));

		if (t)
			last = t;
	}
	return last;
}

START_TEST(clock_views)
{
	static struct fg_nntp_clock c;
	uint64_t rng = 17;

	/* a sane feed: seconds to minutes of propagation */
	fg_nntp_clock_init(&c, 3600);
	ck_assert_int_eq(feed_clock(&c, 5000, 0, 300, &rng), 0);
	ck_assert(!c.suspect);
	/* ahead by 3 h: once every article of the window looks 3 h old */
	ck_assert_int_eq(feed_clock(&c, FG_CLOCK_WINDOW - 1, 3 * 3600, 300, &rng), 0);
	ck_assert_int_eq(feed_clock(&c, 1, 3 * 3600, 300, &rng), 1);
	ck_assert(c.suspect);
	ck_assert_int_ge(c.offset, 3 * 3600);
	/* fixed: the first fresh article clears it */
	ck_assert_int_eq(feed_clock(&c, 1, 0, 300, &rng), -1);
	ck_assert(!c.suspect && c.offset == 0);
	/* a backlog of hours-old articles with some fresh traffic is no alarm */
	for (unsigned i = 0; i < 20000; i++)
		fg_nntp_clock_sample(&c, i % 500 ? 5 * 3600 + (int64_t)(i % 600) : 20);
	ck_assert(!c.suspect);
	/* nor ages spread over two days (feedgen's model), however long */
	fg_nntp_clock_init(&c, 3600);
	feed_clock(&c, 200000, 60, 2 * 86400, &rng);
	ck_assert(!c.suspect);
	/* behind by 2 h: most articles seem to come from the future */
	fg_nntp_clock_init(&c, 3600);
	ck_assert_int_eq(feed_clock(&c, FG_CLOCK_MIN_SAMPLES, -2 * 3600, 300, &rng), 1);
	ck_assert_int_le(c.offset, -3600);
	ck_assert_int_eq(feed_clock(&c, FG_CLOCK_WINDOW, 0, 300, &rng), -1);
	/* a share of articles dated ahead (inside the margin) is no alarm */
	fg_nntp_clock_init(&c, 3600);
	for (unsigned i = 0; i < 20000; i++)
		fg_nntp_clock_sample(&c, i % 3 ? (int64_t)(i % 120) : -20 * 3600);
	ck_assert(!c.suspect);
	/* no judgement on fewer samples, none with the limit off */
	fg_nntp_clock_init(&c, 3600);
	ck_assert_int_eq(feed_clock(&c, FG_CLOCK_MIN_SAMPLES - 1, 86400, 10, &rng), 0);
	fg_nntp_clock_init(&c, 0);
	ck_assert_int_eq(feed_clock(&c, 5000, 86400, 10, &rng), 0);
}
END_TEST

/* The credentials comparison (auth.c): equal only for the same length and
 * octets, whatever the lengths on either side (a prefix, one more octet,
 * more than the buffer holds, nothing). */
START_TEST(secret_equal_cases)
{
	char have[FG_CONFIG_SECRET_MAX] = "open sesame", big[300];

	ck_assert(fg_nntp_secret_equal(have, 11, sizeof(have), "open sesame", 11));
	ck_assert(!fg_nntp_secret_equal(have, 11, sizeof(have), "open sesam", 10));
	ck_assert(!fg_nntp_secret_equal(have, 11, sizeof(have), "open sesame!", 12));
	ck_assert(!fg_nntp_secret_equal(have, 11, sizeof(have), "open sesame\0", 12));
	ck_assert(!fg_nntp_secret_equal(have, 11, sizeof(have), "Open sesame", 11));
	ck_assert(!fg_nntp_secret_equal(have, 11, sizeof(have), "", 0));
	/* a full buffer: a longer argument with the same first 128 octets */
	memset(have, 'k', sizeof(have));
	memset(big, 'k', sizeof(big));
	ck_assert(fg_nntp_secret_equal(have, 128, sizeof(have), big, 128));
	ck_assert(!fg_nntp_secret_equal(have, 128, sizeof(have), big, 129));
	ck_assert(!fg_nntp_secret_equal(have, 128, sizeof(have), big, 300));
	ck_assert(!fg_nntp_secret_equal(have, 128, sizeof(have), big, 127));
	/* lengths past 16 bits do not wrap into a match */
	ck_assert(!fg_nntp_secret_equal(have, 128, sizeof(have), big, 128 + 65536));
}
END_TEST

static Suite *parts_suite(void)
{
	Suite *s = suite_create("nntp_parts");
	TCase *tc = tcase_create("parts");

	tcase_add_test(tc, cmd_parse_cases);
	tcase_add_test(tc, secret_equal_cases);
	tcase_add_loop_test(tc, cmd_parse_matches_reference, 0, 4);
	tcase_add_loop_test(tc, reader_matches_reference, 0, 8);
	tcase_add_test(tc, reader_edges);
	tcase_add_test(tc, unstuff_any_pieces);
	tcase_add_test(tc, respq_order_wrap_partial);
	tcase_add_test(tc, respq_close_line_is_last);
	tcase_add_test(tc, clock_views);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(parts_suite)
