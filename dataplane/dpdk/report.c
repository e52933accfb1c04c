/* SPDX-License-Identifier: MIT */
/*
 * report.c — what the dataplane tells: its counters as "name value" lines
 * (--stats-file, SIGUSR1 and exit; the same names as floodgate-host, see
 * docs/protocol.md and docs/dataplane.md), and the peers table of
 * `floodctl peers`.
 *
 * Counter lines: every counter of the shared table (workers summed),
 * "rejected:<reason>", "nntp_command:<verb>", "nntp_response:<code>", the
 * two delay histograms, then "peer:<name>:..." for each peer with a
 * non-zero counter, then the port's own figures ("port_*"), the history's
 * and the TSC's rate (the unit of dp_busy_cycles), and the worker states
 * (busy and idle cycles each); with --sink queue, the queue's and each
 * downstream's lines (docs/relay.md), as floodgate-host writes them. Worker blocks are read while they run: plain
 * 64-bit loads of counters the workers bump, so a dump is a consistent
 * per-counter snapshot, not an instant of the whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_ethdev.h>

#include "dp.h"
#include "floodgate/log.h"

static void write_hist(FILE *f, const char *prefix, const char *name, const struct fg_hist *h)
{
	fprintf(f, "%s%s:count %" PRIu64 "\n%s%s:sum %" PRId64 "\n%s%s:negative %" PRIu64 "\n",
		prefix, name, h->count, prefix, name, h->sum, prefix, name, h->negative);
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++)
		if (h->bucket[i])
			fprintf(f, "%s%s:lt_%" PRId64 " %" PRIu64 "\n", prefix, name,
				fg_hist_bucket_le(i), h->bucket[i]);
}

static void write_block(FILE *f, const char *prefix, const struct fg_nntp_counters *c, bool all)
{
	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		if (all || c->s.ctr[i])
			fprintf(f, "%s%s %" PRIu64 "\n", prefix, fg_counter_name(i), c->s.ctr[i]);
	for (unsigned i = 1; i < FG_REASON__COUNT; i++)
		if (all || c->s.rejected[i])
			fprintf(f, "%srejected:%s %" PRIu64 "\n", prefix, fg_reason_name(i),
				c->s.rejected[i]);
	for (unsigned i = 0; i < FG_NNTP_VERB__COUNT; i++)
		if (all || c->n.verb[i])
			fprintf(f, "%snntp_command:%s %" PRIu64 "\n", prefix, fg_nntp_verb_name(i),
				c->n.verb[i]);
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		if (all || c->n.code[i])
			fprintf(f, "%snntp_response:%u %" PRIu64 "\n", prefix,
				fg_nntp_code_number(i), c->n.code[i]);
	if (all || c->n.injection_delay.count)
		write_hist(f, prefix, "injection_delay", &c->n.injection_delay);
	if (all || c->n.arrival_delay.count)
		write_hist(f, prefix, "arrival_delay", &c->n.arrival_delay);
}

static void write_port(FILE *f, const struct dp *dp)
{
	struct rte_eth_stats es;

	if (rte_eth_stats_get(dp->port_id, &es) != 0)
		return;
	fprintf(f, "port_ipackets %" PRIu64 "\nport_opackets %" PRIu64 "\nport_ibytes %" PRIu64
		   "\nport_obytes %" PRIu64 "\nport_imissed %" PRIu64 "\nport_ierrors %" PRIu64
		   "\nport_oerrors %" PRIu64 "\nport_rx_nombuf %" PRIu64 "\n",
		es.ipackets, es.opackets, es.ibytes, es.obytes, es.imissed, es.ierrors, es.oerrors,
		es.rx_nombuf);
	fprintf(f, "mempool_available %u\nmempool_in_use %u\n", rte_mempool_avail_count(dp->pool),
		rte_mempool_in_use_count(dp->pool));
}

/* Counters also written per worker (worker:N:name). */
static const enum fg_counter per_worker_ctrs[] = {
	FG_CTR_NNTP_SESSIONS_OPENED, FG_CTR_NNTP_SESSIONS_TOO_MANY, FG_CTR_NNTP_SESSIONS_TOO_FAST,
};

void dp_write_counters(FILE *f, const struct dp *dp)
{
	struct fg_nntp_counters *sum = calloc(1, sizeof(*sum));
	struct fg_history_stats hs;

	if (!sum)
		return;
	for (unsigned i = 0; i < dp->n_workers; i++)
		if (dp->w[i].stats)
			fg_nntp_counters_merge(sum, dp->w[i].stats);
	/* the queue writer's, the relay's and the cluster thread count in
	 * blocks of their own */
	fg_outbound_counters(dp->ob, sum);
	if (dp->cluster.claimer)
		fg_claimer_counters(dp->cluster.claimer, &sum->s);
	write_block(f, "", sum, true);
	/* per peer, by name across workers (each worker's array follows
	 * the configuration it runs, which is the main lcore's between
	 * reloads) */
	for (unsigned p = 0; p <= dp->cfg->n_peer; p++) {
		char prefix[FG_CONFIG_NAME_MAX + 8];

		memset(sum, 0, sizeof(*sum));
		for (unsigned i = 0; i < dp->n_workers; i++)
			if (dp->w[i].peer_stats)
				fg_nntp_counters_merge(sum, &dp->w[i].peer_stats[p]);
		snprintf(prefix, sizeof(prefix), "peer:%s:",
			 p < dp->cfg->n_peer ? dp->cfg->peer[p].name : "-");
		write_block(f, prefix, sum, false);
	}
	free(sum);
	if (dp->cluster.claimer) {
		char buf[1024];

		fg_claimer_format(dp->cluster.claimer, buf, sizeof(buf));
		fputs(buf, f);
	}
	write_port(f, dp);
	fg_history_stats(dp->history, &hs);
	fprintf(f, "history_entries %" PRIu64 "\nhistory_capacity %" PRIu64 "\n", hs.entries,
		hs.slots);
	/* dp_busy_cycles and dp_idle_cycles count these */
	fprintf(f, "tsc_hz %" PRIu64 "\n", dp->tsc_hz);
	fg_outbound_write(dp->ob, f);
	for (unsigned i = 0; i < dp->n_workers; i++) {
		const struct dp_worker *w = &dp->w[i];

		if (!w->e)
			continue;
		fprintf(f, "worker:%u:sessions %u\nworker:%u:transfers %u\n", i,
			fg_nntp_engine_sessions(w->e), i, fg_nntp_engine_xfers(w->e));
		fprintf(f, "worker:%u:busy_cycles %" PRIu64 "\nworker:%u:idle_cycles %" PRIu64 "\n",
			i, w->stats->s.ctr[FG_CTR_DP_BUSY_CYCLES], i,
			w->stats->s.ctr[FG_CTR_DP_IDLE_CYCLES]);
		/* where the NIC's RSS put the sessions, and which worker
		 * refused them (the peers' limits are the box's) */
		for (unsigned k = 0; k < FG_ARRAY_SIZE(per_worker_ctrs); k++)
			fprintf(f, "worker:%u:%s %" PRIu64 "\n", i, fg_counter_name(per_worker_ctrs[k]),
				w->stats->s.ctr[per_worker_ctrs[k]]);
		if (w->ts)
			fprintf(f, "worker:%u:connections %u\n", i, fg_tcpsess_in_use(w->ts));
		if (w->pv)
			fprintf(f, "worker:%u:flows %u\n", i, fg_passive_flows(w->pv));
	}
}

int dp_write_shadow_file(struct dp *dp, const char *path)
{
	struct fg_shadow_report *sum = calloc(1, sizeof(*sum)), *one = malloc(sizeof(*one));
	char tmp[4096];
	FILE *f = NULL;
	int rc = -ENOMEM;

	if (!sum || !one)
		goto out_free;
	for (unsigned i = 0; i < dp->n_workers; i++) {
		struct dp_worker *w = &dp->w[i];

		if (!w->shadow_pub)
			continue;
		pthread_mutex_lock(&w->shadow_mu);
		*one = *w->shadow_pub;
		pthread_mutex_unlock(&w->shadow_mu);
		fg_shadow_report_add(sum, one);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	rc = f ? fg_shadow_report_write(sum, (int64_t)time(NULL), f) : -errno;
	if (f && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		FG_LOG_ERR(DP, "shadow file %s: %s", path, strerror(-rc));
out_free:
	free(one);
	free(sum);
	return rc;
}

static void write_counters(FILE *f, const void *dp)
{
	dp_write_counters(f, dp);
}

int dp_write_stats_file(const struct dp *dp, const char *path)
{
	return fg_startup_write_file(path, "stats file", DP, write_counters, dp);
}

/* ------------------------------------------------------------ peers */

struct peer_row {
	char name[FG_CONFIG_NAME_MAX];
	unsigned sessions;
	struct fg_nntp_counters c;
};

static const unsigned shown_codes[] = { 238, 431, 438, 239, 439, 335, 235, 435, 436, 437, 400 };

static uint64_t code_count(const struct fg_nntp_counters *c, unsigned number)
{
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		if (fg_nntp_code_number(i) == number)
			return c->n.code[i];
	return 0;
}

static struct peer_row *row_for(struct peer_row *rows, unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	snprintf(rows[*n].name, sizeof(rows[*n].name), "%s", name);
	return &rows[(*n)++];
}

/* Sum the workers' snapshots by peer name; "-" collects non-peers. */
static unsigned collect(const struct dp *dp, struct peer_row *rows)
{
	unsigned n = 0;

	for (unsigned i = 0; i < dp->cfg->n_peer; i++)
		row_for(rows, &n, dp->cfg->peer[i].name);
	for (unsigned i = 0; i < dp->n_workers; i++) {
		const struct dp_peers_snap *s = dp->w[i].snap;

		for (unsigned p = 0; p <= s->n_peer; p++)
			fg_nntp_counters_merge(&row_for(rows, &n, p < s->n_peer ? s->name[p] : "-")->c,
					       &s->peer[p]);
		for (unsigned k = 0; k < s->n_conns; k++)
			if (s->conn[k].state == FG_TCPSESS_OPEN)
				row_for(rows, &n, s->conn[k].peer[0] ? s->conn[k].peer : "-")->sessions++;
	}
	return n;
}

static void conn_line(FILE *f, const struct fg_tcpsess_info *c, unsigned worker, uint64_t now,
		      bool json, bool first)
{
	char addr[INET6_ADDRSTRLEN + 8];
	double age = (double)(now - c->opened_ns) / 1e9;

	/* "198.18.0.1:40000", "[2001:db8::1]:40000" */
	fg_endpoint_format(&c->remote, addr, sizeof(addr));
	if (json) {
		fprintf(f, "%s{\"peer\":\"%s\",\"remote\":\"%s\",\"worker\":%u,\"state\":\"%s\","
			   "\"age_s\":%.1f,\"bytes_in\":%" PRIu64 ",\"bytes_out\":%" PRIu64
			   ",\"held\":%u,\"queued\":%u}",
			first ? "" : ",", c->peer[0] ? c->peer : "-", addr, worker,
			fg_tcpsess_state_name(c->state), age, c->bytes_in, c->bytes_out, c->held,
			c->queued);
		return;
	}
	fprintf(f, "  %-16s %21s %6u %-9s %8.1f %12" PRIu64 " %10" PRIu64 " %8u %8u\n",
		c->peer[0] ? c->peer : "-", addr, worker,
		fg_tcpsess_state_name(c->state), age, c->bytes_in, c->bytes_out, c->held,
		c->queued);
}

/* A JSON number, or null for NaN. */
static void json_num(FILE *f, const char *key, double v)
{
	if (isnan(v))
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%.6g", key, v);
}

/* Seed 002, per peer: the share of its offers it sent first, and the mean
 * delays of the articles it brought. */
static void peer_delays_json(FILE *f, const struct fg_nntp_counters *c)
{
	fprintf(f, ",\"offers\":%" PRIu64 ",\"offers_first\":%" PRIu64,
		c->s.ctr[FG_CTR_NNTP_OFFERS], c->s.ctr[FG_CTR_NNTP_OFFERS_FIRST]);
	json_num(f, "offers_first_share", fg_stats_first_share(&c->s));
	json_num(f, "propagation_delay_mean_s", fg_hist_mean(&c->n.arrival_delay));
	json_num(f, "injection_delay_mean_s", fg_hist_mean(&c->n.injection_delay));
}

/* A column of the text table: "-" for NaN. */
static void text_num(FILE *f, const char *fmt, double v)
{
	if (isnan(v))
		fprintf(f, " %8s", "-");
	else
		fprintf(f, fmt, v);
}

static void peers_json(FILE *f, const struct dp *dp, const struct peer_row *rows, unsigned n)
{
	uint64_t now = fg_mono_ns();
	bool first = true;

	fprintf(f, "{\"peers\":[");
	for (unsigned i = 0; i < n; i++) {
		const struct fg_nntp_counters *c = &rows[i].c;

		fprintf(f, "%s{\"name\":\"%s\",\"sessions\":%u,\"check\":%" PRIu64
			   ",\"takethis\":%" PRIu64 ",\"ihave\":%" PRIu64 ",\"article_bytes\":%" PRIu64,
			i ? "," : "", rows[i].name, rows[i].sessions,
			c->n.verb[FG_NNTP_VERB_CHECK], c->n.verb[FG_NNTP_VERB_TAKETHIS],
			c->n.verb[FG_NNTP_VERB_IHAVE], c->s.ctr[FG_CTR_NNTP_ARTICLE_BYTES]);
		for (unsigned k = 0; k < FG_ARRAY_SIZE(shown_codes); k++)
			fprintf(f, ",\"%u\":%" PRIu64, shown_codes[k], code_count(c, shown_codes[k]));
		peer_delays_json(f, c);
		if (fg_levers_paused_until(&dp->levers.l, rows[i].name))
			fprintf(f, ",\"paused_until\":%" PRId64,
				fg_levers_paused_until(&dp->levers.l, rows[i].name));
		else
			fprintf(f, ",\"paused_until\":null");
		fprintf(f, "}");
	}
	fprintf(f, "],\"connections\":[");
	for (unsigned i = 0; i < dp->n_workers; i++)
		for (unsigned k = 0; k < dp->w[i].snap->n_conns; k++) {
			conn_line(f, &dp->w[i].snap->conn[k], i, now, true, first);
			first = false;
		}
	fprintf(f, "]");
	dp_levers_json(dp, f, false);
	fprintf(f, "}\n");
}

static void peers_text(FILE *f, const struct dp *dp, const struct peer_row *rows, unsigned n)
{
	uint64_t now = fg_mono_ns();

	fprintf(f, "%-16s %8s %10s %10s %10s %10s %10s %10s %10s %8s %8s %8s\n", "peer", "sessions",
		"check", "238", "431", "438", "takethis", "239", "439", "first%", "prop(s)",
		"inj(s)");
	for (unsigned i = 0; i < n; i++) {
		const struct fg_nntp_counters *c = &rows[i].c;

		fprintf(f, "%-16s %8u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			   " %10" PRIu64 " %10" PRIu64 " %10" PRIu64,
			rows[i].name, rows[i].sessions, c->n.verb[FG_NNTP_VERB_CHECK],
			code_count(c, 238), code_count(c, 431), code_count(c, 438),
			c->n.verb[FG_NNTP_VERB_TAKETHIS], code_count(c, 239), code_count(c, 439));
		text_num(f, " %8.1f", fg_stats_first_share(&c->s) * 100.0);
		text_num(f, " %8.1f", fg_hist_mean(&c->n.arrival_delay));
		text_num(f, " %8.1f", fg_hist_mean(&c->n.injection_delay));
		fputc('\n', f);
	}
	fprintf(f, "\nconnections:\n  %-16s %21s %6s %-9s %8s %12s %10s %8s %8s\n", "peer",
		"remote", "worker", "state", "age(s)", "bytes-in", "bytes-out", "held", "queued");
	for (unsigned i = 0; i < dp->n_workers; i++)
		for (unsigned k = 0; k < dp->w[i].snap->n_conns; k++)
			conn_line(f, &dp->w[i].snap->conn[k], i, now, false, true);
	if (dp->levers.l.throttle[0] || dp->levers.l.n_pauses)
		fputc('\n', f);
	dp_levers_text(dp, f);
}

int dp_peers(struct dp *dp, FILE *f, bool json)
{
	struct peer_row *rows;
	unsigned n;
	int rc = dp_post(dp, DP_REQ_PEERS, 2000);

	if (rc != 0)
		return rc;
	rows = calloc(FG_CONFIG_MAX_PEERS * 2 + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	n = collect(dp, rows);
	if (json)
		peers_json(f, dp, rows, n);
	else
		peers_text(f, dp, rows, n);
	free(rows);
	return 0;
}
