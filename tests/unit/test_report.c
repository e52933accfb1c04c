/* SPDX-License-Identifier: MIT */
/*
 * test_report.c — the daily report's samples (report.h): written and read
 * back field for field; a fixed version-1 text read to exact figures (the
 * format's golden text); a torn last sample, a damaged line, an unknown
 * reason, a newer version and a missing header; the sums over a window
 * with a reset and a gap; percentiles; day files appended, read back and
 * pruned; and the HTML escapes a hostile name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/report.h"
#include "fgtest.h"

/* 2026-12-07 00:00:00 UTC */
#define DAY0 INT64_C(1796601600)

static struct fg_report_sample *samples;	/* what parse_all collected */
static unsigned n_samples;

static int collect(void *arg, const struct fg_report_sample *s)
{
	(void)arg;
	samples = realloc(samples, (n_samples + 1) * sizeof(*s));
	ck_assert_ptr_nonnull(samples);
	memcpy(&samples[n_samples++], s, sizeof(*s));
	return 0;
}

static int parse_all(const char *text, unsigned *damaged)
{
	static struct fg_report_sample scratch;

	free(samples);
	samples = NULL;
	n_samples = 0;
	return fg_report_parse(text, strlen(text), &scratch, collect, NULL, damaged);
}

static void fill(struct fg_report_sample *s, fg_time_t t, uint64_t k)
{
	memset(s, 0, sizeof(*s));
	s->time = t;
	s->interval = 60;
	s->n_peers = 2;
	strcpy(s->peer[0].name, "alpha");
	s->peer[0].offers = 100 * k;
	s->peer[0].accepted = 40 * k;
	s->peer[0].octets = 740484 * k;
	s->peer[0].refused[FG_REASON_DUPLICATE] = 50 * k;
	s->peer[0].refused[FG_REASON_TOO_OLD] = 10 * k;
	s->peer[0].injection.bucket[0] = 30 * k;
	s->peer[0].injection.bucket[3] = 10 * k;
	s->peer[0].propagation.bucket[5] = 40 * k;
	s->peer[0].propagation.negative = k;
	strcpy(s->peer[1].name, "beta.example");
	s->peer[1].offers = 7 * k;
	s->n_ds = 1;
	strcpy(s->ds[0].name, "inn");
	s->ds[0].sent = 41 * k;
	s->ds[0].delivered = 40 * k;
	s->ds[0].refused = k;
	s->ds[0].lag_records = k;
	s->ds[0].lag_seconds = 2 * k;
}

START_TEST(roundtrip_every_field)
{
	struct fg_report_sample *w = malloc(sizeof(*w));
	struct fg_sbuf b;
	unsigned damaged;

	fill(w, DAY0 + 60, 3);
	w->peer[1].offers = UINT64_MAX;
	fg_sbuf_init(&b);
	fg_sbuf_printf(&b, "%s %d\n", FG_REPORT_MAGIC, FG_REPORT_VERSION);
	fg_report_format(&b, w);
	fg_sbuf_put(&b, "", 1);
	ck_assert(!b.failed);
	ck_assert_int_eq(parse_all(b.p, &damaged), 0);
	ck_assert_uint_eq(damaged, 0);
	ck_assert_uint_eq(n_samples, 1);
	ck_assert_int_eq(samples[0].time, w->time);
	ck_assert_int_eq(samples[0].interval, 60);
	ck_assert_uint_eq(samples[0].n_peers, 2);
	ck_assert_mem_eq(&samples[0].peer[0], &w->peer[0], sizeof(w->peer[0]));
	ck_assert_mem_eq(&samples[0].peer[1], &w->peer[1], sizeof(w->peer[1]));
	ck_assert_uint_eq(samples[0].n_ds, 1);
	ck_assert_mem_eq(&samples[0].ds[0], &w->ds[0], sizeof(w->ds[0]));
	fg_sbuf_free(&b);
	free(w);
}
END_TEST

/* The format as version 1 writes it: a fixed text, exact figures. */
static const char golden_v1[] =
	"floodgate-report 1\n"
	"S 1796601660 60\n"
	"P alpha 300 120 2221452 too-old=30,duplicate=150 0=90,3=30 neg=3,5=120\n"
	"P beta.example 21 0 0 - - -\n"
	"D inn 123 120 3 3 6\n"
	"E 1796601660\n";

START_TEST(golden_v1_text)
{
	unsigned damaged;

	ck_assert_int_eq(parse_all(golden_v1, &damaged), 0);
	ck_assert_uint_eq(damaged, 0);
	ck_assert_uint_eq(n_samples, 1);
	ck_assert_uint_eq(samples[0].peer[0].offers, 300);
	ck_assert_uint_eq(samples[0].peer[0].accepted, 120);
	ck_assert_uint_eq(samples[0].peer[0].octets, 2221452);
	ck_assert_uint_eq(samples[0].peer[0].refused[FG_REASON_TOO_OLD], 30);
	ck_assert_uint_eq(samples[0].peer[0].refused[FG_REASON_DUPLICATE], 150);
	ck_assert_uint_eq(samples[0].peer[0].injection.bucket[3], 30);
	ck_assert_uint_eq(samples[0].peer[0].propagation.negative, 3);
	ck_assert_uint_eq(samples[0].ds[0].delivered, 120);
	ck_assert_uint_eq(samples[0].ds[0].lag_seconds, 6);
	/* and this build writes it octet for octet */
	{
		struct fg_report_sample *w = malloc(sizeof(*w));
		struct fg_sbuf b;

		fill(w, DAY0 + 60, 3);
		fg_sbuf_init(&b);
		fg_sbuf_printf(&b, "%s %d\n", FG_REPORT_MAGIC, FG_REPORT_VERSION);
		fg_report_format(&b, w);
		ck_assert_uint_eq(b.len, strlen(golden_v1));
		ck_assert_mem_eq(b.p, golden_v1, b.len);
		fg_sbuf_free(&b);
		free(w);
	}
}
END_TEST

START_TEST(torn_and_damaged_samples_dropped)
{
	unsigned damaged;
	char *text = malloc(4096);

	/* a torn last sample (a crash mid-write): the one before stands */
	snprintf(text, 4096, "%sS 1796601720 60\nP alpha 9", golden_v1);
	ck_assert_int_eq(parse_all(text, &damaged), 0);
	ck_assert_uint_eq(n_samples, 1);
	ck_assert_uint_eq(damaged, 1);
	/* torn after a whole line but before E */
	snprintf(text, 4096, "%sS 1796601720 60\nP alpha 9 9 9 - - -\n", golden_v1);
	ck_assert_int_eq(parse_all(text, &damaged), 0);
	ck_assert_uint_eq(n_samples, 1);
	ck_assert_uint_eq(damaged, 1);
	/* a bad line damages its sample only; the next one reads */
	snprintf(text, 4096, "floodgate-report 1\nS 10 60\nP alpha x 1 1 - - -\nE 10\n"
		 "S 20 60\nP alpha 1 1 1 - 40=1 -\nE 20\n"
		 "S 30 60\nZ what\nE 30\n"
		 "S 40 60\nE 41\n"
		 "S 50 60\nP a 1 1 1 duplicate=1, - -\nE 50\n"
		 "S 60 60\nP alpha 1 1 1 no-such-reason=5,duplicate=2 - -\nE 60\n");
	ck_assert_int_eq(parse_all(text, &damaged), 0);
	ck_assert_uint_eq(damaged, 5);
	ck_assert_uint_eq(n_samples, 1);
	/* a reason this build does not know is skipped, the rest kept */
	ck_assert_int_eq(samples[0].time, 60);
	ck_assert_uint_eq(samples[0].peer[0].refused[FG_REASON_DUPLICATE], 2);
	free(text);
}
END_TEST

START_TEST(versions_and_headers)
{
	unsigned damaged;

	ck_assert_int_eq(parse_all("floodgate-report 2\nS 1 60\nE 1\n", &damaged),
			 -EPROTONOSUPPORT);
	ck_assert_uint_eq(n_samples, 0);
	ck_assert_int_eq(parse_all("S 1 60\nE 1\n", &damaged), -EINVAL);
	ck_assert_int_eq(parse_all("", &damaged), -EINVAL);
	ck_assert_int_eq(parse_all("floodgate-report x\n", &damaged), -EINVAL);
	ck_assert_int_eq(parse_all("floodgate-report 1\n", &damaged), 0);
	ck_assert_uint_eq(n_samples, 0);
}
END_TEST

START_TEST(sums_reset_and_gap)
{
	struct fg_report_sample *s = malloc(sizeof(*s));
	struct fg_report *r = fg_report_new(DAY0 + 100, DAY0 + 10000);
	int64_t v;

	/* before the window: only the base; then a reset (values 1 < 5) after
	 * a gap of 20 minutes; and one after the window: ignored */
	static const struct {
		fg_time_t t;
		uint64_t k;
	} seq[] = { { 60, 1 }, { 120, 2 }, { 180, 5 }, { 1380, 1 }, { 1440, 3 }, { 20000, 100 } };

	for (size_t i = 0; i < FG_ARRAY_SIZE(seq); i++) {
		fill(s, DAY0 + seq[i].t, seq[i].k);
		fg_report_add(r, s);
	}
	ck_assert_uint_eq(r->samples, 4);
	ck_assert_int_eq(r->first, DAY0 + 120);
	ck_assert_int_eq(r->last, DAY0 + 1440);
	ck_assert_uint_eq(r->resets, 1);
	ck_assert_uint_eq(r->n_gaps, 1);
	ck_assert_int_eq(r->gap[0].from, DAY0 + 180);
	ck_assert_int_eq(r->gap[0].to, DAY0 + 1380);
	/* k: 1 -> 2 -> 5 -> reset 1 -> 3: (2-1)+(5-2)+1+(3-1) = 7 */
	ck_assert_uint_eq(r->n_peers, 2);
	ck_assert_str_eq(r->peer[0].name, "alpha");
	ck_assert_uint_eq(r->peer[0].offers, 700);
	ck_assert_uint_eq(r->peer[0].accepted, 280);
	ck_assert_uint_eq(r->peer[0].octets, 740484 * 7);
	ck_assert_uint_eq(r->peer[0].refused[FG_REASON_DUPLICATE], 350);
	ck_assert_uint_eq(r->peer[0].refused[FG_REASON_TOO_OLD], 70);
	ck_assert_uint_eq(r->peer[1].offers, 49);
	ck_assert_uint_eq(r->ds[0].d.delivered, 280);
	ck_assert_uint_eq(r->ds[0].d.lag_seconds, 6);
	ck_assert_uint_eq(r->ds[0].lag_seconds_max, 10);
	/* injection: 210 in bucket 0, 70 in bucket 3 (4..7 s) */
	ck_assert(fg_report_percentile(&r->peer[0].injection, 0.5, &v));
	ck_assert_int_eq(v, 0);
	ck_assert(fg_report_percentile(&r->peer[0].injection, 0.9, &v));
	ck_assert_int_eq(v, 7);
	/* propagation: 7 negative of 287: p50 in bucket 5 (16..31 s) */
	ck_assert(fg_report_percentile(&r->peer[0].propagation, 0.5, &v));
	ck_assert_int_eq(v, 31);
	ck_assert(fg_report_percentile(&r->peer[0].propagation, 0.01, &v));
	ck_assert_int_eq(v, -1);
	ck_assert(!fg_report_percentile(&r->peer[1].injection, 0.5, &v));
	fg_report_free(r);
	free(s);
}
END_TEST

START_TEST(files_appended_loaded_pruned)
{
	struct fg_report_sample *s = malloc(sizeof(*s));
	char dir[64], path[128], cmd[160];
	struct fg_report *r;
	struct stat sb;
	unsigned newer;
	FILE *f;

	strcpy(dir, "/tmp/fgreport-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* day 0 and day 1 */
	fill(s, DAY0 + 86400 - 60, 1);
	ck_assert_int_eq(fg_report_append(dir, s, 8), 0);
	fill(s, DAY0 + 86400, 2);
	ck_assert_int_eq(fg_report_append(dir, s, 8), 0);
	fill(s, DAY0 + 86460, 4);
	ck_assert_int_eq(fg_report_append(dir, s, 8), 0);
	snprintf(path, sizeof(path), "%s/report/2026-12-07", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/report/2026-12-08", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	/* a torn tail on the newest file, and a newer build's file */
	f = fopen(path, "a");
	ck_assert_ptr_nonnull(f);
	fputs("S 1796688120 60\nP alp", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/report/2026-12-06", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("floodgate-report 9\n", f);
	fclose(f);
	r = fg_report_new(DAY0 + 86400 - 30, DAY0 + 86400 + 3600);
	ck_assert_int_eq(fg_report_load(r, dir, &newer), 0);
	ck_assert_uint_eq(newer, 1);
	ck_assert_uint_eq(r->files, 3);
	ck_assert_uint_eq(r->damaged, 1);
	ck_assert_uint_eq(r->samples, 2);
	/* the base is day 0's last sample: (2-1)+(4-2) */
	ck_assert_uint_eq(r->peer[0].offers, 300);
	ck_assert_uint_eq(r->ds[0].d.delivered, 120);
	fg_report_free(r);
	/* keep 1: a sample of day 1 deletes day 0's file and day -1's */
	fill(s, DAY0 + 86520, 5);
	ck_assert_int_eq(fg_report_append(dir, s, 1), 0);
	snprintf(path, sizeof(path), "%s/report/2026-12-07", dir);
	ck_assert_int_eq(stat(path, &sb), -1);
	snprintf(path, sizeof(path), "%s/report/2026-12-06", dir);
	ck_assert_int_eq(stat(path, &sb), -1);
	snprintf(path, sizeof(path), "%s/report/2026-12-08", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(s);
}
END_TEST

START_TEST(renderings_escape_and_agree)
{
	static const char hostile[] =
		"floodgate-report 1\n"
		"S 1796601600 60\nP <script>x</script>&\"' 1 0 0 - - -\nE 1796601600\n"
		"S 1796601660 60\nP <script>x</script>&\"' 11 4 100 duplicate=7 - -\nE 1796601660\n";
	struct fg_report *r = fg_report_new(DAY0, DAY0 + 3600);
	struct fg_sbuf b;
	unsigned damaged;

	ck_assert_int_eq(parse_all(hostile, &damaged), 0);
	ck_assert_uint_eq(n_samples, 2);
	for (unsigned i = 0; i < n_samples; i++)
		fg_report_add(r, &samples[i]);
	ck_assert_uint_eq(r->peer[0].offers, 10);
	fg_sbuf_init(&b);
	fg_report_html(r, &b);
	fg_sbuf_put(&b, "", 1);
	ck_assert_ptr_null(strstr(b.p, "<script"));
	ck_assert_ptr_nonnull(strstr(b.p, "&lt;script&gt;x&lt;/script&gt;&amp;&quot;&#39;"));
	ck_assert_ptr_nonnull(strstr(b.p, "<td>10<td>4<td>7<td>100"));
	fg_sbuf_reset(&b);
	fg_report_json(r, &b);
	fg_sbuf_put(&b, "", 1);
	ck_assert_ptr_nonnull(strstr(b.p, "\"peer\":\"<script>x</script>&\\\"'\""));
	ck_assert_ptr_nonnull(strstr(b.p, "\"offers\":10"));
	fg_sbuf_reset(&b);
	fg_report_text(r, &b);
	fg_sbuf_put(&b, "", 1);
	ck_assert_ptr_nonnull(strstr(b.p, "samples 2"));
	ck_assert_ptr_nonnull(strstr(b.p, "duplicate"));
	fg_sbuf_free(&b);
	fg_report_free(r);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *t = tcase_create("report");

	tcase_add_test(t, roundtrip_every_field);
	tcase_add_test(t, golden_v1_text);
	tcase_add_test(t, torn_and_damaged_samples_dropped);
	tcase_add_test(t, versions_and_headers);
	tcase_add_test(t, sums_reset_and_gap);
	tcase_add_test(t, files_appended_loaded_pruned);
	tcase_add_test(t, renderings_escape_and_agree);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(report_suite)
