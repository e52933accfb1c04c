/* SPDX-License-Identifier: MIT */
/*
 * test_session_feed.c — a generated feed of thousands of mixed commands and
 * its expected transcript, computed from the workload model below (what
 * each command must get, by RFC 3977/4644 and RFC-NOTES), never from the
 * engine's output. The same feed goes in as one buffer, one byte at a
 * time, and in random segmentations over many seeds, with an immediate, a
 * delayed-and-reordering, and a holding sink; every run must produce the
 * transcript octet for octet, leave the history in the expected states and
 * hand the sink exactly the accepted articles, unstuffed.
 *
 * A second part races two sessions of one engine over the same IDs: every
 * ID is accepted exactly once, whatever the interleaving.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/date.h"
#include "fgtest.h"
#include "nntp_harness.h"

#define MS 1000000ull
#define CAPS "101 Capability list:\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n" \
	     "IMPLEMENTATION floodgate 0.1\r\n.\r\n"
#define GREETING "200 news.test.example floodgate transit-only NNTP service ready " \
		 "(feeds only, no reading or posting)\r\n"

/* A growing byte string. */
struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putf(struct buf *b, const char *fmt, ...) FG_PRINTF(2, 3);
static void putf(struct buf *b, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	ck_assert(n > 0 && (size_t)n < sizeof(tmp));
	put(b, tmp, (size_t)n);
}

/* ------------------------------------------------------------ the model */

enum st { ABSENT = 0, OFFERED, ACCEPTED, REJECTED };

struct id {
	char text[64];
	enum st st;
	char *plain;		/* the accepted article's text, for the sink check */
	size_t plain_len;
};

struct feed {
	struct buf in, want;	/* what the peer sends, what it must get */
	struct id *ids;
	unsigned n_ids, cap_ids;
	unsigned accepted;
	uint64_t rng;
	fg_time_t now;
};

static unsigned rnd(struct feed *f, unsigned n)
{
	return (unsigned)(fg_test_rng(&f->rng) % n);
}

static struct id *new_id(struct feed *f)
{
	struct id *d;

	if (f->n_ids == f->cap_ids) {
		f->cap_ids = f->cap_ids ? 2 * f->cap_ids : 1024;
		f->ids = realloc(f->ids, f->cap_ids * sizeof(*f->ids));
		ck_assert_ptr_nonnull(f->ids);
	}
	d = &f->ids[f->n_ids];
	memset(d, 0, sizeof(*d));
	snprintf(d->text, sizeof(d->text), "<wl%u.%x@feed.example>", f->n_ids, rnd(f, 1 << 20));
	f->n_ids++;
	return d;
}

/* An existing ID in one of the states in `mask` (bit per enum st), or NULL. */
static struct id *pick(struct feed *f, unsigned mask)
{
	if (!f->n_ids)
		return NULL;
	for (unsigned tries = 0; tries < 16; tries++) {
		struct id *d = &f->ids[rnd(f, f->n_ids)];

		if (mask & (1u << d->st))
			return d;
	}
	return NULL;
}

/* A body of awkward lines, as plain text (LF lines) and in wire form. */
static void body(struct feed *f, struct buf *plain, struct buf *wire)
{
	static const char nul_line[] = "line with NUL \0 here";
	static const char *const odd[] = {
		".", "..", ". leading dot", ".\r", "trailing CR\r", "bare\nLF inside",
		"a lone \r CR", "", "\t tab", "8-bit \xe9\xff", nul_line,
		".\n.", "x\r\n.a dot after an inner CRLF",
	};
	unsigned lines = 1 + rnd(f, 12);

	for (unsigned i = 0; i < lines; i++) {
		char tmp[2100];
		size_t n;

		switch (rnd(f, 4)) {
		case 0: {
			unsigned k = rnd(f, FG_ARRAY_SIZE(odd));

			/* the NUL entry holds one; the others are C strings */
			n = odd[k] == nul_line ? sizeof(nul_line) - 1 : strlen(odd[k]);
			memcpy(tmp, odd[k], n);
			break;
		}
		case 1:
			n = 1 + rnd(f, 2000);
			for (size_t j = 0; j < n; j++)
				tmp[j] = (char)('a' + rnd(f, 26));
			break;
		default:
			n = (size_t)snprintf(tmp, sizeof(tmp), "body line %u of a test article", i);
			break;
		}
		/* plain text has CRLF line ends too (the sink keeps wire line ends) */
		put(plain, tmp, n);
		put(plain, "\r\n", 2);
		/* RFC 3977 3.1.1: a line that starts with "." is stuffed; line
		 * starts are only after CRLF, so a "." after an inner CRLF too */
		if (n && tmp[0] == '.')
			put(wire, ".", 1);
		for (size_t j = 0; j < n; j++) {
			put(wire, tmp + j, 1);
			if (tmp[j] == '\n' && j > 0 && tmp[j - 1] == '\r' && j + 1 < n &&
			    tmp[j + 1] == '.')
				put(wire, ".", 1);
		}
		put(wire, "\r\n", 2);
	}
}

enum kind { GOOD, OLD, FUTURE, MISMATCH, NO_SUBJECT };

/* One article for `id` (plain text in *plain, wire form appended to f->in). */
static void article(struct feed *f, const char *id, enum kind k, struct buf *plain)
{
	struct buf hdr = { 0 }, wire = { 0 };
	char date[64], inj[64];
	long age = k == OLD ? 20 * 86400 : k == FUTURE ? -2 * 86400 : 60 + (long)rnd(f, 3000);

	fg_date_format(f->now - age - 300, date, sizeof(date));
	fg_date_format(f->now - age, inj, sizeof(inj));
	putf(&hdr, "Path: peer.example!poster.example!not-for-mail\r\n");
	putf(&hdr, "From: Someone <someone@example.com>\r\nNewsgroups: test.feed\r\n");
	if (k != NO_SUBJECT)
		putf(&hdr, "Subject: article %s\r\n", id);
	putf(&hdr, "Message-ID: %s\r\n", k == MISMATCH ? "<someone-else@feed.example>" : id);
	putf(&hdr, "Date: %s\r\nInjection-Date: %s\r\n\r\n", date, inj);
	put(plain, hdr.p, hdr.len);
	put(&wire, hdr.p, hdr.len);
	body(f, plain, &wire);
	put(&f->in, wire.p, wire.len);
	puts_(&f->in, ".\r\n");
	free(hdr.p);
	free(wire.p);
}

static void keep_plain(struct id *d, struct buf *plain)
{
	d->plain = plain->p;
	d->plain_len = plain->len;
	plain->p = NULL;
	plain->len = plain->cap = 0;
}

/* One TAKETHIS: the command, the article, the answer, the new state. */
static void op_takethis(struct feed *f, struct id *d, enum kind k)
{
	struct buf plain = { 0 };

	putf(&f->in, "TAKETHIS %s\r\n", d->text);
	article(f, d->text, k, &plain);
	if (d->st == ACCEPTED || d->st == REJECTED) {
		putf(&f->want, "439 %s\r\n", d->text);	/* known: drained */
	} else if (k == GOOD) {
		putf(&f->want, "239 %s\r\n", d->text);
		d->st = ACCEPTED;
		f->accepted++;
		keep_plain(d, &plain);
	} else {
		putf(&f->want, "439 %s\r\n", d->text);
		/* remembered only when the article carried the ID, for a fact of it */
		d->st = k == OLD || k == NO_SUBJECT ? REJECTED : ABSENT;
	}
	free(plain.p);
}

static void op_ihave(struct feed *f, struct id *d, enum kind k)
{
	struct buf plain = { 0 };

	putf(&f->in, "IHAVE %s\r\n", d->text);
	if (d->st == ACCEPTED || d->st == REJECTED) {
		puts_(&f->want, "435 Article not wanted\r\n");
		return;
	}
	if (d->st == OFFERED) {
		puts_(&f->want, "436 Try again later\r\n");
		return;
	}
	puts_(&f->want, "335 Send it; end with <CR-LF>.<CR-LF>\r\n");
	article(f, d->text, k, &plain);
	if (k == GOOD) {
		puts_(&f->want, "235 Article transferred OK\r\n");
		d->st = ACCEPTED;
		f->accepted++;
		keep_plain(d, &plain);
	} else {
		putf(&f->want, "437 Rejected: %s\r\n", k == OLD ? "too-old" : "too-far-future");
		d->st = k == OLD ? REJECTED : ABSENT;
	}
	free(plain.p);
}

static void op_check(struct feed *f, struct id *d)
{
	putf(&f->in, "CHECK %s\r\n", d->text);
	if (d->st == ACCEPTED || d->st == REJECTED) {
		putf(&f->want, "438 %s\r\n", d->text);
	} else if (d->st == OFFERED) {
		putf(&f->want, "431 %s\r\n", d->text);	/* our own live offer */
	} else {
		putf(&f->want, "238 %s\r\n", d->text);
		d->st = OFFERED;
	}
}

static void op_misc(struct feed *f, unsigned n)
{
	switch (rnd(f, 7)) {
	case 0:
		puts_(&f->in, "MODE STREAM\r\n");
		puts_(&f->want, "203 Streaming permitted\r\n");
		break;
	case 1:
		puts_(&f->in, "CAPABILITIES\r\n");
		puts_(&f->want, CAPS);
		break;
	case 2:
		putf(&f->in, "XYZZY %u\r\n", n);
		puts_(&f->want, "500 Unknown command\r\n");
		break;
	case 3:
		putf(&f->in, "CHECK junk%u\r\n", n);
		putf(&f->want, "438 junk%u\r\n", n);
		break;
	case 4:
		puts_(&f->in, "mode stream\n");	/* bare LF, lower case */
		puts_(&f->want, "203 Streaming permitted\r\n");
		break;
	case 5: {
		struct buf plain = { 0 };

		putf(&f->in, "TAKETHIS no-angle-%u\r\n", n);
		article(f, "<whatever@feed.example>", GOOD, &plain);
		putf(&f->want, "439 no-angle-%u\r\n", n);
		free(plain.p);
		break;
	}
	default:
		puts_(&f->in, "CHECK\r\n");
		puts_(&f->want, "501 Syntax error\r\n");
		break;
	}
}

/* Live 238s of the session (it tracks up to max-pending-commands of them). */
static unsigned offered(const struct feed *f)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->n_ids; i++)
		n += f->ids[i].st == OFFERED;
	return n;
}

static void build(struct feed *f, uint64_t seed, unsigned n_ops, fg_time_t now)
{
	memset(f, 0, sizeof(*f));
	f->rng = seed;
	f->now = now;
	puts_(&f->want, GREETING);
	for (unsigned i = 0; i < n_ops; i++) {
		unsigned r = rnd(f, 100);
		struct id *d;

		/*
		 * An accepted ID is re-offered only by TAKETHIS: its acceptance
		 * may still be in flight (the sink's delay), when a CHECK or an
		 * IHAVE is rightly answered "try later" — a matter of timing a
		 * transcript cannot fix. A remembered reject is final at once.
		 */
		if (r < 18 && offered(f) < 300) {
			op_check(f, new_id(f));
		} else if (r < 30 && (d = pick(f, 1u << OFFERED))) {
			op_takethis(f, d, rnd(f, 10) ? GOOD : MISMATCH);
		} else if (r < 40 && (d = pick(f, 1u << REJECTED | 1u << OFFERED))) {
			op_check(f, d);
		} else if (r < 58) {
			op_takethis(f, new_id(f), GOOD);
		} else if (r < 64 && (d = pick(f, 1u << ACCEPTED | 1u << REJECTED))) {
			op_takethis(f, d, GOOD);
		} else if (r < 68) {
			op_takethis(f, new_id(f), OLD);
		} else if (r < 71) {
			op_takethis(f, new_id(f), MISMATCH);
		} else if (r < 73) {
			op_takethis(f, new_id(f), NO_SUBJECT);
		} else if (r < 80) {
			op_ihave(f, new_id(f), rnd(f, 8) ? GOOD : rnd(f, 2) ? OLD : FUTURE);
		} else if (r < 85 && (d = pick(f, 1u << ABSENT | 1u << OFFERED | 1u << REJECTED))) {
			op_ihave(f, d, GOOD);
		} else {
			op_misc(f, i);
		}
	}
	puts_(&f->in, "QUIT\r\n");
	puts_(&f->want, "205 Bye\r\n");
}

static void feed_free(struct feed *f)
{
	for (unsigned i = 0; i < f->n_ids; i++)
		free(f->ids[i].plain);
	free(f->ids);
	free(f->in.p);
	free(f->want.p);
}

/* ------------------------------------------------------------ running it */

enum split { ONE, BYTES, RANDOM };

static void run(const struct feed *f, enum split how, uint64_t seed, size_t maxseg,
		const struct fg_sink_mem_params *sp)
{
	struct fg_th t;
	struct fg_th_conn *c;
	uint64_t rng = seed;
	struct fg_sink_mem_stats st;

	ck_assert_int_eq(fg_th_init(&t, NULL, sp), 0);
	ck_assert_int_eq(t.now, f->now);
	c = fg_th_open(&t, "alpha");
	ck_assert_ptr_nonnull(c);
	if (sp && sp->jitter_ns)
		fg_sink_mem_set_jitter(t.sink, sp->jitter_ns, seed);
	if (how == ONE)
		fg_th_send(c, f->in.p, f->in.len, 0);
	else if (how == BYTES)
		fg_th_send(c, f->in.p, f->in.len, 1);
	else
		fg_th_send_random(c, f->in.p, f->in.len, maxseg, &rng);
	fg_th_settle(&t, MS, 100000);
	/* the transcript, octet for octet */
	if (strcmp(fg_th_out(c), f->want.p) != 0) {
		const char *got = fg_th_out(c);
		size_t i = 0;

		while (got[i] && got[i] == f->want.p[i])
			i++;
		ck_abort_msg("transcript differs at octet %zu (seed %llu, split %d): got \"%.80s\" "
			     "want \"%.80s\"", i, (unsigned long long)seed, how, got + i,
			     f->want.p + i);
	}
	ck_assert(c->closed_reported && c->detached);
	/* the history, ID by ID (offers of a closed session are released) */
	for (unsigned i = 0; i < f->n_ids; i++) {
		const struct id *d = &f->ids[i];
		enum fg_history_state want = d->st == ACCEPTED ? FG_HISTORY_ACCEPTED :
					     d->st == REJECTED ? FG_HISTORY_REJECTED :
					     FG_HISTORY_ABSENT;

		ck_assert_msg(fg_th_state(&t, d->text) == want, "%s: state %d, want %d", d->text,
			      fg_th_state(&t, d->text), want);
		if (d->st == ACCEPTED) {
			const struct fg_sink_mem_article *m =
				fg_sink_mem_find(t.sink, d->text, strlen(d->text));

			ck_assert_ptr_nonnull(m);
			ck_assert_ptr_nonnull(m->text);
			ck_assert_uint_eq(m->text_len, d->plain_len);
			ck_assert(memcmp(m->text, d->plain, d->plain_len) == 0);
		}
	}
	fg_sink_mem_stats(t.sink, &st);
	ck_assert_uint_eq(st.succeeded, f->accepted);
	ck_assert_uint_eq(st.open, 0);
	ck_assert_uint_eq(t.stats.s.ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED], f->accepted);
	ck_assert_uint_eq(fg_nntp_engine_xfers(t.e), 0);
	fg_th_fini(&t);
}

#define N_OPS 3000
static struct feed F;
static const fg_time_t NOW = 1800000000;

static void setup(void)
{
	build(&F, 0x5eed, N_OPS, NOW);
}

static void teardown(void)
{
	feed_free(&F);
}

START_TEST(feed_model_sane)
{
	/* the workload exercises every kind of answer */
	ck_assert_uint_gt(F.accepted, 600);
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n438 <"));
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n431 <"));
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n435 "));
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n436 "));
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n437 Rejected: too-far-future"));
	ck_assert_ptr_nonnull(strstr(F.want.p, "\r\n439 no-angle-"));
	ck_assert_uint_gt(F.in.len, 500000);
}
END_TEST

START_TEST(feed_one_buffer)
{
	run(&F, ONE, 1, 0, NULL);
}
END_TEST

START_TEST(feed_single_bytes)
{
	run(&F, BYTES, 1, 0, NULL);
}
END_TEST

START_TEST(feed_random_segments)
{
	/* many seeds, from tiny pieces to larger than most articles */
	static const size_t maxseg[] = { 2, 3, 7, 16, 61, 200, 1448, 4096, 9000, 65536 };
	uint64_t seed = 1000 + (uint64_t)_i;

	run(&F, RANDOM, seed, maxseg[_i % FG_ARRAY_SIZE(maxseg)], NULL);
}
END_TEST

START_TEST(feed_delayed_reordering_sink)
{
	struct fg_sink_mem_params sp = {
		.delay_ns = 2 * MS, .jitter_ns = 20 * MS, .store_limit = 1u << 30,
	};

	run(&F, RANDOM, 77 + (uint64_t)_i, 1448, &sp);
}
END_TEST

START_TEST(feed_holding_sink)
{
	struct fg_sink_mem_params sp = {
		.hold = true, .delay_ns = 3 * MS, .jitter_ns = 5 * MS, .store_limit = 1u << 30,
	};

	run(&F, RANDOM, 4242 + (uint64_t)_i, 700, &sp);
}
END_TEST

/* ------------------------------------------------------------ two sessions racing */

START_TEST(two_sessions_race)
{
	struct fg_th t;
	struct fg_th_conn *a, *b;
	struct buf in = { 0 };
	struct feed f;
	uint64_t rng = 99 + (uint64_t)_i;
	unsigned n = 400, c239 = 0;
	const char *p;
	struct fg_sink_mem_params sp = { .delay_ns = MS, .jitter_ns = 4 * MS, .store_limit = 1 << 30 };

	ck_assert_int_eq(fg_th_init(&t, NULL, &sp), 0);
	memset(&f, 0, sizeof(f));
	f.rng = 5;
	f.now = t.now;
	/* both peers offer the same articles, in the same order, some by CHECK first */
	for (unsigned i = 0; i < n; i++) {
		struct buf plain = { 0 };
		char id[64];

		snprintf(id, sizeof(id), "<race%u@feed.example>", i);
		if (i % 3 == 0)
			putf(&f.in, "CHECK %s\r\n", id);
		putf(&f.in, "TAKETHIS %s\r\n", id);
		article(&f, id, GOOD, &plain);
		free(plain.p);
	}
	put(&in, f.in.p, f.in.len);
	a = fg_th_open(&t, "alpha");
	b = fg_th_open(&t, "beta");
	fg_th_send_random(a, in.p, in.len, 3000, &rng);
	fg_th_send_random(b, in.p, in.len, 3000, &rng);
	fg_th_settle(&t, MS, 100000);
	/* every ID: exactly one 239 across both sessions, and ACCEPTED */
	for (unsigned i = 0; i < n; i++) {
		char id[64], want[80];
		unsigned k = 0;

		snprintf(id, sizeof(id), "<race%u@feed.example>", i);
		snprintf(want, sizeof(want), "239 %s\r\n", id);
		for (p = fg_th_out(a); (p = strstr(p, want)); p++)
			k++;
		for (p = fg_th_out(b); (p = strstr(p, want)); p++)
			k++;
		ck_assert_msg(k == 1, "%s accepted %u times", id, k);
		ck_assert_int_eq(fg_th_state(&t, id), FG_HISTORY_ACCEPTED);
		c239 += k;
	}
	ck_assert_uint_eq(c239, n);
	ck_assert_uint_eq(t.stats.s.ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED], n);
	/* and every TAKETHIS got an answer: 2n in all */
	ck_assert_uint_eq(t.stats.n.code[FG_NNTP_CODE_C239] + t.stats.n.code[FG_NNTP_CODE_C439],
			  2 * n);
	fg_th_fini(&t);
	free(in.p);
	feed_free(&f);
}
END_TEST

static Suite *feed_suite(void)
{
	Suite *s = suite_create("session_feed");
	TCase *tc = tcase_create("transcript");
	TCase *race = tcase_create("race");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, feed_model_sane);
	tcase_add_test(tc, feed_one_buffer);
	tcase_add_test(tc, feed_single_bytes);
	tcase_add_loop_test(tc, feed_random_segments, 0, 20);
	tcase_add_loop_test(tc, feed_delayed_reordering_sink, 0, 4);
	tcase_add_loop_test(tc, feed_holding_sink, 0, 4);
	tcase_set_timeout(race, 300);
	tcase_add_loop_test(race, two_sessions_race, 0, 6);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, race);
	return s;
}

FG_TEST_MAIN(feed_suite)
