/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c — the stats export's text: the exposition format's rules
 * (HELP and TYPE before each family, families contiguous and unique,
 * counters ending in _total, label values escaped, histogram buckets
 * cumulative and ending in +Inf == _count), known values from known
 * counter blocks summed over slots, and the JSON and table renderings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

#include "floodgate/metrics.h"
#include "floodgate/region.h"
#include "ctl_fixture.h"
#include "metrics_fixture.h"
#include "fgtest.h"

static char *render(struct fg_region *r)
{
	struct fg_metrics_state m;
	struct fg_sbuf b;

	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_prometheus(r, &m, &b);
	ck_assert(!b.failed);
	return b.p;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

START_TEST(test_known_values)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t = render(r);

	ck_assert(has_line(t, "floodgate_rules_accepted_total 20"));
	ck_assert(has_line(t, "floodgate_snapshots_total 1"));
	ck_assert(has_line(t, "floodgate_rejected_total{reason=\"too-old\"} 6"));
	ck_assert(has_line(t, "floodgate_rejected_total{reason=\"duplicate\"} 0"));
	ck_assert(has_line(t, "floodgate_peer_rules_accepted_total{peer=\"alpha\"} 10"));
	ck_assert(has_line(t, "floodgate_peer_rules_accepted_total{peer=\"we\\\"ird\\\\name\"} 10"));
	ck_assert(has_line(t, "floodgate_peer_rejected_total{peer=\"alpha\",reason=\"too-old\"} 3"));
	/* no per-peer family for a counter no peer counted */
	ck_assert_ptr_null(strstr(t, "floodgate_peer_journal_records_total"));
	/* -2, 0, 5 twice each: le=-1 2, le=0 4, le=3 4, le=7 6 */
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_bucket{le=\"-1\"} 2"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_bucket{le=\"0\"} 4"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_bucket{le=\"3\"} 4"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_bucket{le=\"7\"} 6"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_bucket{le=\"+Inf\"} 6"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_sum 6"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_count 6"));
	ck_assert(has_line(t, "floodgate_propagation_delay_seconds_bucket{le=\"63\"} 0"));
	ck_assert(has_line(t, "floodgate_propagation_delay_seconds_bucket{le=\"127\"} 2"));
	/* the delays and the first-offer share by peer (alpha's 3600 s is in
	 * 2048..4095; the other peer's families are there, empty) */
	ck_assert(has_line(t, "floodgate_peer_propagation_delay_seconds_bucket{peer=\"alpha\",le=\"2047\"} 0"));
	ck_assert(has_line(t, "floodgate_peer_propagation_delay_seconds_bucket{peer=\"alpha\",le=\"4095\"} 1"));
	ck_assert(has_line(t, "floodgate_peer_propagation_delay_seconds_bucket{peer=\"alpha\",le=\"+Inf\"} 1"));
	ck_assert(has_line(t, "floodgate_peer_propagation_delay_seconds_sum{peer=\"alpha\"} 3600"));
	ck_assert(has_line(t, "floodgate_peer_injection_delay_seconds_bucket{peer=\"alpha\",le=\"255\"} 0"));
	ck_assert(has_line(t, "floodgate_peer_injection_delay_seconds_bucket{peer=\"alpha\",le=\"511\"} 1"));
	ck_assert(has_line(t, "floodgate_peer_injection_delay_seconds_count{peer=\"we\\\"ird\\\\name\"} 0"));
	ck_assert(has_line(t, "floodgate_peer_nntp_offers_total{peer=\"alpha\"} 4"));
	ck_assert(has_line(t, "floodgate_peer_offers_first_ratio{peer=\"alpha\"} 0.25"));
	ck_assert(has_line(t, "floodgate_peer_offers_first_ratio{peer=\"we\\\"ird\\\\name\"} NaN"));
	/* when each peer last sent a command: the latest of the writers',
	 * 0 for one never heard from */
	ck_assert(has_line(t, "floodgate_peer_last_seen_seconds{peer=\"alpha\"} 999995"));
	ck_assert(has_line(t, "floodgate_peer_last_seen_seconds{peer=\"we\\\"ird\\\\name\"} 0"));
	/* the site-wide families do not count the per-peer ones twice */
	ck_assert(has_line(t, "floodgate_propagation_delay_seconds_count 2"));
	ck_assert(has_line(t, "floodgate_writers 2"));
	/* the busy share of the one writer that counts its cycles */
	ck_assert(has_line(t, "floodgate_lcore_busy_share{writer=\"t\"} 0.25"));
	ck_assert(has_line(t, "floodgate_lcore_busy_cycles_total{writer=\"t\"} 1000"));
	ck_assert(has_line(t, "floodgate_lcore_idle_cycles_total{writer=\"t\"} 3000"));
	ck_assert(has_line(t, "floodgate_dp_busy_cycles_total 1000"));
	ck_assert_ptr_null(strstr(strstr(t, "floodgate_lcore_busy_share{") + 1,
				  "floodgate_lcore_busy_share{"));
	ck_assert(has_line(t, "floodgate_snapshot_age_seconds 500"));
	ck_assert(has_line(t, "floodgate_journal_commit_age_seconds NaN"));
	ck_assert(has_line(t, "floodgate_startup_info{source=\"empty\"} 1"));
	ck_assert(has_line(t, "floodgate_clock_suspect 0"));
	ck_assert(strstr(t, "\nfloodgate_kernel_clock_synchronized ") != NULL);
	ck_assert(strstr(t, "\nfloodgate_kernel_clock_estimated_error_seconds ") != NULL);
	fg_region_writer_clock_suspect(w[1], true);
	free(t);
	t = render(r);
	ck_assert(has_line(t, "floodgate_clock_suspect 1"));
	free(t);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* Every sample line belongs to the family last introduced by HELP and
 * TYPE; no family appears twice; counters end in _total; histogram
 * buckets never decrease within a series. */
START_TEST(test_exposition_rules)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t = render(r), *save = NULL, fam[160] = "", type[16] = "", seen[16384] = " ";
	bool help = false;
	double last_bucket = -1;

	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[160], key[170];

		if (strncmp(line, "# HELP ", 7) == 0) {
			ck_assert(sscanf(line + 7, "%159s", fam) == 1);
			snprintf(key, sizeof(key), " %s ", fam);
			ck_assert_msg(!strstr(seen, key), "family %s twice", fam);
			strncat(seen, key + 1, sizeof(seen) - strlen(seen) - 1);
			help = true;
			last_bucket = -1;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			ck_assert(help);
			ck_assert(sscanf(line + 7, "%159s %15s", name, type) == 2);
			ck_assert_str_eq(name, fam);
			ck_assert(strcmp(type, "counter") != 0 || strstr(fam, "_total"));
			ck_assert(strcmp(type, "counter") == 0 || !strstr(fam, "_total"));
			help = false;
			continue;
		}
		ck_assert(sscanf(line, "%159[^{ ]", name) == 1);
		ck_assert_msg(strncmp(name, fam, strlen(fam)) == 0, "%s outside its family %s", name, fam);
		if (strcmp(type, "histogram") == 0 && strstr(name, "_bucket")) {
			double v = atof(strrchr(line, ' ') + 1);

			if (strstr(line, "le=\"-1\""))
				last_bucket = -1;	/* a series (a peer's) begins */
			ck_assert(v >= last_bucket);
			last_bucket = v;
		}
	}
	free(t);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

START_TEST(test_json_and_table)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	struct fg_metrics_state m;
	struct fg_sbuf b;
	int depth = 0;

	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_json(r, &m, &b);
	ck_assert(strstr(b.p, "\"rules_accepted\":20"));
	ck_assert(strstr(b.p, "\"alpha\":{\"counters\":{\"rules_accepted\":10,\"nntp_offers\":4,"
			  "\"nntp_offers_first\":1},\"rejected\":{\"too-old\":3},\"histograms\":"
			  "{\"injection_delay_seconds\":{\"count\":1,\"sum\":300,"));
	ck_assert(strstr(b.p, "\"propagation_delay_seconds\":{\"count\":1,\"sum\":3600,\"negative\":0,"
			  "\"buckets\":[[4095,1]]}},\"last_seen\":\"1970-01-12T13:46:35Z\","
			  "\"offers_first_share\":0.25,\"sessions\":0}"));
	ck_assert(strstr(b.p, "\"last_seen\":null,\"offers_first_share\":null,\"sessions\":0}"));
	ck_assert(strstr(b.p, "\"we\\\"ird\\\\name\":"));
	ck_assert(strstr(b.p, "\"commit_age_seconds\":null"));
	ck_assert(strstr(b.p, "\"lcores\":[{\"writer\":\"t\",\"busy_cycles\":1000,"
			  "\"idle_cycles\":3000,\"busy_share\":0.25}]"));
	for (const char *p = b.p; *p; p++) {
		depth += *p == '{' || *p == '[';
		depth -= *p == '}' || *p == ']';
		ck_assert_int_ge(depth, 0);
	}
	ck_assert_int_eq(depth, 0);
	fg_sbuf_reset(&b);
	fg_metrics_table(r, &m, &b);
	ck_assert(strstr(b.p, "rules_accepted"));
	ck_assert(strstr(b.p, "peer alpha"));
	ck_assert(strstr(b.p, "rejected too-old"));
	ck_assert(strstr(b.p, "lcore t: busy 25.0 % of its loop since it started\n"));
	ck_assert(strstr(b.p, "  offered first: 25.0 % of its offers\n"));
	/* floodctl stats --peer: one peer's block, table and JSON */
	fg_sbuf_reset(&b);
	ck_assert_int_eq(fg_metrics_peer(r, "alpha", false, &b), 0);
	ck_assert(strncmp(b.p, "peer alpha\n", 11) == 0);
	ck_assert(strstr(b.p, "propagation delay (arrival - Injection-Date) count 1, negative 0, "
			 "mean 3600.0 s\n  <= 4095"));
	ck_assert(strstr(b.p, "\n  last command: 1970-01-12T13:46:35Z\n"));
	ck_assert_ptr_null(strstr(b.p, "we\"ird"));
	fg_sbuf_reset(&b);
	ck_assert_int_eq(fg_metrics_peer(r, "alpha", true, &b), 0);
	ck_assert(strncmp(b.p, "{\"peer\":\"alpha\",\"counters\":{\"rules_accepted\":10,", 48) == 0);
	ck_assert(strstr(b.p, "\"last_seen\":\"1970-01-12T13:46:35Z\",\"offers_first_share\":0.25,"
			  "\"sessions\":0}\n"));
	fg_sbuf_reset(&b);
	ck_assert_int_eq(fg_metrics_peer(r, "nobody", true, &b), -ENOENT);
	ck_assert_uint_eq(b.len, 0);
	fg_sbuf_free(&b);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* A peer's sessions open now: opened less closed over the live slots
 * only; a slot given back (or dead) takes its sessions with it, though
 * the sum of counters keeps them. */
START_TEST(test_live_sessions)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	struct fg_region_wstats *s0 = fg_region_writer_stats(w[0]), *s1 = fg_region_writer_stats(w[1]);
	struct fg_metrics_state m;
	uint64_t n[2];
	struct fg_sbuf b;

	s0->peer[0].ctr[FG_CTR_NNTP_SESSIONS_OPENED] = 3;
	s0->peer[0].ctr[FG_CTR_NNTP_SESSIONS_CLOSED] = 1;
	s1->peer[0].ctr[FG_CTR_NNTP_SESSIONS_OPENED] = 4;
	s1->peer[0].ctr[FG_CTR_NNTP_SESSIONS_CLOSED] = 4;
	s1->peer[1].ctr[FG_CTR_NNTP_SESSIONS_OPENED] = 2;
	fg_region_live_sessions(r, n, 2);
	ck_assert_uint_eq(n[0], 2);
	ck_assert_uint_eq(n[1], 2);
	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_prometheus(r, &m, &b);
	ck_assert(has_line(b.p, "floodgate_peer_sessions{peer=\"alpha\"} 2"));
	fg_region_release(w[1]);
	fg_region_live_sessions(r, n, 2);
	ck_assert_uint_eq(n[0], 2);
	ck_assert_uint_eq(n[1], 0);
	fg_sbuf_reset(&b);
	fg_metrics_json(r, &m, &b);
	ck_assert(strstr(b.p, "\"sessions\":2}"));
	ck_assert(strstr(b.p, "\"sessions\":0}"));
	ck_assert(strstr(b.p, "\"nntp_sessions_opened\":2"));	/* the sum keeps them */
	fg_sbuf_free(&b);
	fg_region_release(w[0]);
	fx_cleanup(&fx);
}
END_TEST

/* The kernel's clock view: read from adjtimex, rendered everywhere. */
START_TEST(test_kernel_clock)
{
	struct timex tx;
	struct fg_kclock k;
	struct fg_sbuf b;

	memset(&tx, 0, sizeof(tx));
	tx.status = STA_UNSYNC;
	tx.esterror = 1500;		/* microseconds */
	tx.maxerror = 16000000;
	fg_kclock_from_timex(&tx, TIME_ERROR, &k);
	ck_assert(k.ok && !k.synchronised);
	ck_assert(k.est_error == 0.0015 && k.max_error == 16.0);
	tx.status = STA_PLL;
	fg_kclock_from_timex(&tx, TIME_OK, &k);
	ck_assert(k.ok && k.synchronised);
	fg_kclock_from_timex(&tx, TIME_ERROR, &k);	/* the state alone says unsynchronised */
	ck_assert(!k.synchronised);
	fg_kclock_from_timex(&tx, -1, &k);
	ck_assert(!k.ok && !k.synchronised);
	fg_sbuf_init(&b);
	fg_metrics_kclock_text(&b, &k);
	ck_assert_str_eq(b.p, "kernel clock: adjtimex failed\n");
	fg_sbuf_reset(&b);
	fg_kclock_from_timex(&tx, TIME_OK, &k);
	fg_metrics_kclock_text(&b, &k);
	ck_assert_str_eq(b.p, "kernel clock: synchronised, estimated error 0.001500 s, "
			 "maximum 16.000000 s (adjtimex; not acted on)\n");
	fg_sbuf_free(&b);
	/* this machine's own answer: readable without privilege */
	ck_assert_int_eq(fg_kclock_read(&k), 0);
	ck_assert(k.ok && k.est_error >= 0 && k.max_error >= 0);
}
END_TEST

START_TEST(test_sums_never_go_backwards)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t;

	/* a released slot's counters move to the retired block */
	fg_region_release(w[0]);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	t = render(r);
	ck_assert(has_line(t, "floodgate_rules_accepted_total 20"));
	ck_assert(has_line(t, "floodgate_injection_delay_seconds_count 6"));
	ck_assert(has_line(t, "floodgate_writers 1"));
	free(t);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* floodctl downstreams and the labelled families of /metrics. */
START_TEST(test_downstreams)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t = render(r);
	struct fg_metrics_state m;
	struct fg_sbuf b;

	ck_assert(has_line(t, "floodgate_downstream_parked{downstream=\"binaries\"} 0"));
	ck_assert(has_line(t, "floodgate_downstream_parked{downstream=\"te\\\"xt\"} 1"));
	ck_assert(has_line(t, "floodgate_downstream_sent_total{downstream=\"binaries\"} 120"));
	ck_assert(has_line(t, "floodgate_downstream_dropped_total{downstream=\"te\\\"xt\"} 12"));
	ck_assert(has_line(t, "floodgate_downstream_backlog_bytes{downstream=\"te\\\"xt\"} 1048576"));
	ck_assert(has_line(t, "floodgate_downstream_status_age_seconds 2"));
	ck_assert(!strstr(t, "floodgate_downstream_lag_"));	/* floodgate_relay_lag_* has it */
	free(t);

	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_downstreams(&m, true, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\"name\":\"binaries\",\"id\":\"binaries\","
					  "\"state\":\"feeding\""));
	ck_assert_ptr_nonnull(strstr(b.p, "\"state\":\"parked\""));
	ck_assert_ptr_nonnull(strstr(b.p, "\"lag\":{\"records\":350,"));
	ck_assert_ptr_nonnull(strstr(b.p, "\"age_seconds\":2"));
	fg_sbuf_free(&b);
	fg_sbuf_init(&b);
	m.ds[1].full = 1;
	m.ds[0].paused = 1;
	m.now += 60;
	fg_metrics_downstreams(&m, false, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "binaries         paused"));
	ck_assert_ptr_nonnull(strstr(b.p, "parked-full"));
	ck_assert_ptr_nonnull(strstr(b.p, "stale"));
	fg_sbuf_free(&b);
	/* no file: said so, and JSON says null */
	m.ds_written = 0;
	fg_sbuf_init(&b);
	fg_metrics_downstreams(&m, false, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "not running yet"));
	fg_sbuf_free(&b);
	fg_sbuf_init(&b);
	fg_metrics_downstreams(&m, true, &b);
	ck_assert_ptr_nonnull(strstr(b.p, "\"written\":null"));
	fg_sbuf_free(&b);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* /metrics of state m over the fixture's region. */
static char *prom_of(const struct fg_metrics_state *m)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	struct fg_sbuf b;

	fg_sbuf_init(&b);
	fg_metrics_prometheus(r, m, &b);
	ck_assert(!b.failed);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
	return b.p;
}

/* The line of text that begins with `start`, copied into line (cap). */
static bool text_line(const char *text, const char *start, char *line, size_t cap)
{
	const char *p = strstr(text, start), *e;

	if (!p)
		return false;
	e = strchr(p, '\n');
	e = e ? e : p + strlen(p);
	if ((size_t)(e - p) >= cap)
		return false;
	memcpy(line, p, (size_t)(e - p));
	line[e - p] = '\0';
	return true;
}

/* Every row of the downstream status table (dstatus.h FG_DS_FIELDS)
 * reaches every output: /metrics, the JSON, the text table (a STATE row
 * through the state word), each with the value the row holds. The file's
 * round trip of every row is test_dstatus's roundtrip_every_field. */
START_TEST(test_ds_table_every_output)
{
	struct fg_metrics_state m;
	struct fg_sbuf b;
	char want[160], head[512], row[512];
	unsigned cols = 0;

	state(&m);
	/* a value no other row holds in every non-STATE row of binaries */
	for (unsigned k = 0; k < fg_ds_n_fields; k++)
		if (fg_ds_fields[k].kind != FG_STATUS_STATE)
			*(uint64_t *)(void *)((char *)&m.ds[0] + fg_ds_fields[k].off) = 7000 + k;
	/* the lag in /metrics is the queue's own (floodgate_relay_lag_*) */
	m.queue.present = true;
	m.queue.n_consumers = 1;
	strcpy(m.queue.consumer[0].name, "binaries");
	m.queue.consumer[0].found = true;
	m.queue.consumer[0].lag_records = m.ds[0].lag_records;
	m.queue.consumer[0].lag_bytes = m.ds[0].lag_bytes;
	m.queue.consumer[0].lag_seconds = (int64_t)m.ds[0].lag_seconds;

	b.p = prom_of(&m);
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		const struct fg_status_field *f = &fg_ds_fields[k];
		bool lag = strncmp(f->name, "lag_", 4) == 0;

		snprintf(want, sizeof(want), "floodgate_%s_%s%s{downstream=\"binaries\"} %llu",
			 lag ? "relay" : "downstream", f->name,
			 f->kind == FG_STATUS_COUNTER ? "_total" : "",
			 (unsigned long long)fg_ds_value(&m.ds[0], f));
		ck_assert_msg(has_line(b.p, want), "/metrics lacks %s", want);
		snprintf(want, sizeof(want), "# TYPE floodgate_%s_%s%s %s",
			 lag ? "relay" : "downstream", f->name,
			 f->kind == FG_STATUS_COUNTER ? "_total" : "",
			 f->kind == FG_STATUS_COUNTER ? "counter" : "gauge");
		ck_assert_msg(has_line(b.p, want), "/metrics lacks %s", want);
	}
	free(b.p);
	fg_sbuf_init(&b);
	fg_metrics_downstreams(&m, true, &b);
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		snprintf(want, sizeof(want), "\"%s\":%llu", fg_ds_fields[k].name,
			 (unsigned long long)fg_ds_value(&m.ds[0], &fg_ds_fields[k]));
		ck_assert_msg(strstr(b.p, want), "JSON lacks %s", want);
	}
	fg_sbuf_reset(&b);
	fg_metrics_downstreams(&m, false, &b);
	ck_assert(text_line(b.p, "downstream ", head, sizeof(head)));
	ck_assert(text_line(b.p, "binaries ", row, sizeof(row)));
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		const struct fg_status_field *f = &fg_ds_fields[k];

		/* a STATE row is in the state word (below), every other one a column */
		ck_assert_int_eq(f->column == NULL, f->kind == FG_STATUS_STATE);
		if (!f->column)
			continue;
		cols++;
		snprintf(want, sizeof(want), " %*s", f->width, f->column);
		ck_assert_msg(strstr(head, want), "text head lacks %s", want);
		snprintf(want, sizeof(want), " %*llu", f->width,
			 (unsigned long long)fg_ds_value(&m.ds[0], f));
		ck_assert_msg(strstr(row, want), "text row lacks %s: %s", want, row);
	}
	ck_assert_uint_gt(cols, 0);
	/* each STATE row alone turns the state word from "feeding" */
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		const struct fg_status_field *f = &fg_ds_fields[k];

		if (f->kind != FG_STATUS_STATE)
			continue;
		ck_assert_str_eq(fg_metrics_ds_state(&m.ds[0]), "feeding");
		*(uint64_t *)(void *)((char *)&m.ds[0] + f->off) = 1;
		ck_assert_str_ne(fg_metrics_ds_state(&m.ds[0]), "feeding");
		fg_sbuf_reset(&b);
		fg_metrics_downstreams(&m, false, &b);
		ck_assert(text_line(b.p, "binaries ", row, sizeof(row)));
		snprintf(want, sizeof(want), "binaries         %-11s", fg_metrics_ds_state(&m.ds[0]));
		ck_assert_msg(strncmp(row, want, strlen(want)) == 0, "%s: %s", f->name, row);
		*(uint64_t *)(void *)((char *)&m.ds[0] + f->off) = 0;
	}
	fg_sbuf_free(&b);
}
END_TEST

/* The port's figures: labelled per port and queue, a gauge without
 * _total, shown in JSON and the table, gone with their slot (a port's
 * counters are its own since it started: never summed, never retired). */
START_TEST(test_nic)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t = render(r);
	struct fg_metrics_state m;
	struct fg_nic_block copy;
	struct fg_sbuf b;

	ck_assert(has_line(t, "floodgate_nic_link_up{port=\"net_\\\"bond0\",role=\"port\"} 1"));
	ck_assert(has_line(t, "floodgate_nic_link_up{port=\"net_tap1\",role=\"member\"} 0"));
	ck_assert(has_line(t, "floodgate_nic_link_speed_mbps{port=\"net_\\\"bond0\",role=\"port\"} 10000"));
	ck_assert(has_line(t, "floodgate_nic_rx_missed_total{port=\"net_\\\"bond0\",role=\"port\"} 7"));
	ck_assert(has_line(t, "floodgate_nic_rx_packets_total{port=\"net_tap1\",role=\"member\"} 400"));
	ck_assert(has_line(t, "floodgate_nic_queue_rx_packets_total{port=\"net_\\\"bond0\",queue=\"1\"} 600"));
	ck_assert(has_line(t, "floodgate_nic_queue_tx_dropped_total{port=\"net_\\\"bond0\",queue=\"1\"} 3"));
	ck_assert(has_line(t, "floodgate_nic_queue_tx_dropped_total{port=\"net_tap1\",queue=\"0\"} 0"));
	ck_assert(!strstr(t, "queue=\"2\""));
	ck_assert(!strstr(t, "floodgate_nic_link_up_total"));
	ck_assert(has_line(t, "floodgate_nic_lacp_state{port=\"net_tap2\",role=\"member\"} 63"));
	ck_assert(has_line(t, "floodgate_nic_lacp_state{port=\"net_\\\"bond0\",role=\"port\"} 0"));
	free(t);

	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_json(r, &m, &b);
	ck_assert(strstr(b.p, "\"nic\":[{\"port\":\"net_\\\"bond0\",\"role\":\"port\",\"link_up\":1,"));
	ck_assert(strstr(b.p, "\"queues\":[{\"queue\":0,"));
	fg_sbuf_reset(&b);
	fg_metrics_table(r, &m, &b);
	ck_assert(strstr(b.p, "nic net_tap1 (member): link DOWN, lacp NOT distributing (0x47); "
			      "rx 400 frames"));
	ck_assert(strstr(b.p, "nic net_tap2 (member): link up, lacp collecting+distributing "
			      "(0x3f); rx 0 frames"));
	ck_assert(strstr(b.p, "link up 10000 Mbit/s; rx 1000 frames, missed 7"));
	fg_sbuf_free(&b);

	/* the reader's bounds: a slot with nothing published, a count out
	 * of range, queue counts beyond the table, a free slot */
	ck_assert_int_eq(fg_region_nic_read(r, fg_region_writer_slot(w[0]), &copy), -ENOENT);
	ck_assert_int_eq(fg_region_nic_read(r, 999, &copy), -ENOENT);
	fg_region_writer_nic(w[1])->port[1].n_rxq = 1000;
	ck_assert_int_eq(fg_region_nic_read(r, fg_region_writer_slot(w[1]), &copy), 0);
	ck_assert_uint_eq(copy.n_ports, 3);
	ck_assert_uint_eq(copy.port[1].n_rxq, FG_NIC_MAX_QUEUES);
	fg_region_writer_nic(w[1])->n_ports = FG_NIC_MAX_PORTS + 1;
	ck_assert_int_eq(fg_region_nic_read(r, fg_region_writer_slot(w[1]), &copy), -ENOENT);
	fg_region_writer_nic(w[1])->n_ports = 2;
	fg_region_release(w[1]);
	ck_assert_uint_eq(fg_region_reap(r, NULL, NULL), 1);
	t = render(r);
	ck_assert(!strstr(t, "floodgate_nic_"));
	free(t);
	ck_assert_int_eq(fg_region_nic_read(r, fg_region_writer_slot(w[0]) ^ 1, &copy), -ENOENT);
	fg_region_release(w[0]);
	fx_cleanup(&fx);
}
END_TEST

/* The table's names: one per figure, unique, and what each kind exports. */
START_TEST(test_nic_names)
{
	for (unsigned c = 0; c < FG_NIC__COUNT; c++) {
		ck_assert_ptr_nonnull(fg_nic_name(c));
		ck_assert(strlen(fg_nic_help(c)) > 10);
		for (unsigned d = 0; d < c; d++)
			ck_assert_str_ne(fg_nic_name(c), fg_nic_name(d));
	}
	for (unsigned c = 0; c < FG_NICQ__COUNT; c++) {
		ck_assert_ptr_nonnull(fg_nicq_name(c));
		ck_assert(strlen(fg_nicq_help(c)) > 10);
	}
	ck_assert_ptr_null(fg_nic_name(FG_NIC__COUNT));
	ck_assert_ptr_null(fg_nicq_help(FG_NICQ__COUNT));
	ck_assert_int_eq(fg_nic_kind(FG_NIC_LINK_UP), FG_NIC_GAUGE);
	ck_assert_int_eq(fg_nic_kind(FG_NIC_RX_MISSED), FG_NIC_COUNTER);
	ck_assert_int_eq(fg_nic_kind(FG_NIC__COUNT), FG_NIC_COUNTER);
	ck_assert_str_eq(fg_nic_role_name(FG_NIC_ROLE_MEMBER), "member");
	ck_assert_str_eq(fg_nic_role_name(77), "port");
}
END_TEST

/* The cluster's health from its status file: there only with one. */
START_TEST(test_cluster_status)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	struct fg_metrics_state m;
	struct fg_sbuf b;

	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_prometheus(r, &m, &b);
	ck_assert(!strstr(b.p, "floodgate_cluster_answering"));
	ck_assert(!strstr(b.p, "floodgate_cluster_status_age_seconds"));
	fg_sbuf_free(&b);
	m.cs_written = 999999;
	m.cs.answering = 1;
	m.cs.masters = 3;
	m.cs.rtt_p99_us = 2048;
	m.cs.moved = 5;
	m.cs.replies_refused = 2;
	fg_sbuf_init(&b);
	fg_metrics_prometheus(r, &m, &b);
	ck_assert(has_line(b.p, "floodgate_cluster_status_age_seconds 1"));
	ck_assert(has_line(b.p, "floodgate_cluster_answering 1"));
	ck_assert(has_line(b.p, "floodgate_cluster_masters 3"));
	ck_assert(has_line(b.p, "floodgate_cluster_rtt_p99_us 2048"));
	ck_assert(has_line(b.p, "# TYPE floodgate_cluster_moved_total counter"));
	ck_assert(has_line(b.p, "floodgate_cluster_moved_total 5"));
	ck_assert(has_line(b.p, "# TYPE floodgate_cluster_replies_refused_total counter"));
	ck_assert(has_line(b.p, "floodgate_cluster_replies_refused_total 2"));
	ck_assert(has_line(b.p, "floodgate_cluster_digest_mismatch 0"));
	fg_sbuf_free(&b);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

/* The lever gauges: throttled with its reason, each peer's pause left. */
START_TEST(test_levers)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region_writer *w[2];
	struct fg_region *r = workload(&fx, w);
	char *t = render(r);
	struct fg_metrics_state m;
	struct fg_sbuf b;

	ck_assert(has_line(t, "floodgate_throttled 1"));
	ck_assert(has_line(t, "floodgate_throttle_info{reason=\"disk \\\"full\\\"\"} 1"));
	ck_assert(has_line(t, "floodgate_paused_peers 1"));
	ck_assert(has_line(t, "floodgate_peer_paused_seconds{peer=\"alpha\"} 90"));
	ck_assert(has_line(t, "floodgate_peer_paused_seconds{peer=\"we\\\"ird\\\\name\"} 0"));
	free(t);
	state(&m);
	fg_sbuf_init(&b);
	fg_metrics_json(r, &m, &b);
	ck_assert(strstr(b.p, "\"levers\":{\"throttled\":\"disk \\\"full\\\"\",\"paused\":"
			  "[{\"peer\":\"alpha\",\"until\":"));
	ck_assert(strstr(b.p, "\"remaining_seconds\":90}]}"));
	fg_sbuf_reset(&b);
	fg_metrics_table(r, &m, &b);
	ck_assert(strstr(b.p, "THROTTLED: disk \"full\" (floodctl go ends it)\n"));
	ck_assert(strstr(b.p, "PAUSED: peer alpha, 90 s more (floodctl resume)\n"));
	/* go, and no pause: the gauges say so, the reason's family goes */
	fg_levers_throttle(&m.levers, NULL);
	fg_levers_pause(&m.levers, "alpha", 0);
	fg_sbuf_reset(&b);
	fg_metrics_prometheus(r, &m, &b);
	ck_assert(has_line(b.p, "floodgate_throttled 0"));
	ck_assert(has_line(b.p, "floodgate_peer_paused_seconds{peer=\"alpha\"} 0"));
	ck_assert_ptr_null(strstr(b.p, "floodgate_throttle_info"));
	fg_sbuf_free(&b);
	fg_region_release(w[0]);
	fg_region_release(w[1]);
	fx_cleanup(&fx);
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_known_values);
	tcase_add_test(tc, test_exposition_rules);
	tcase_add_test(tc, test_json_and_table);
	tcase_add_test(tc, test_live_sessions);
	tcase_add_test(tc, test_sums_never_go_backwards);
	tcase_add_test(tc, test_kernel_clock);
	tcase_add_test(tc, test_downstreams);
	tcase_add_test(tc, test_ds_table_every_output);
	tcase_add_test(tc, test_nic);
	tcase_add_test(tc, test_nic_names);
	tcase_add_test(tc, test_cluster_status);
	tcase_add_test(tc, test_levers);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(metrics_suite)
