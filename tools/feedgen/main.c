/* SPDX-License-Identifier: MIT */
/*
 * feedgen — a Netnews sending peer and load generator (docs/feedgen.md).
 *
 *   feedgen [options]               feed a server, check every answer
 *   feedgen --pcap FILE [options]   write the client side as a pcap instead
 *   feedgen --dpdk PORT [options]   feed a server over a DPDK port (memif)
 *                                   with the project's own TCP
 *
 * Exit status: 0 when every answer matched the workload model, 1 on any
 * mismatch (the first few are printed), 2 on a usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedgen.h"
#include "floodgate/log.h"
#include "workload/pcapgen.h"

static const char usage_text[] =
"usage: feedgen [options]\n"
"connection:\n"
"  --host ADDR            server address, IPv4 or IPv6 (127.0.0.1)\n"
"  --port N               server port (119)\n"
"  --peers N              simulated peers (10)\n"
"  --conns N              connections per peer (1)\n"
"  --window N             commands in flight per connection (64)\n"
"  --mode M               check | takethis | ihave (check)\n"
"  --capabilities         send CAPABILITIES first, require STREAMING\n"
"  --no-mode-stream       do not send MODE STREAM\n"
"  --retry-delay S        seconds before a 431/436 is offered again (0.1)\n"
"  --max-retries N        deferrals of one article by one peer before giving up (50)\n"
"  --max-reconnects N     per connection (5)\n"
"  --timeout S            give up after S seconds, a mismatch (0 = never)\n"
"  --duration S           no first offer after S seconds; the articles offered by then\n"
"                         are judged, the rest never sent (0 = offer them all)\n"
"  --server-pid PID       also measure the server's CPU (/proc/PID/stat)\n"
"  --rate N               at most N first offers a second, all peers together (0 = no limit)\n"
"  --source ADDR          peer i connects from ADDR + i (one address per peer)\n"
"  --dpdk PORT            kernel-free: the project's TCP over this DPDK device, e.g.\n"
"                         net_memif0,role=client,socket=PATH (docs/dataplane.md)\n"
"  --dpdk-addr ADDR       our IPv4 address on it (198.18.0.1)\n"
"  --dpdk-queues N        queues, one per floodgate worker (1)\n"
"  --dpdk-member DEV      a device created before PORT (repeatable, up to 4): a bond's\n"
"                         members, PORT then net_bonding0,mode=4,slave=...\n"
"  --dpdk-peer-mac MAC    the server's MAC, not asked by ARP (a link without broadcast:\n"
"                         an 802.3ad bond of memif ports)\n"
"workload:\n"
"  --seed N               (1)      --articles N   unique articles (10000)\n"
"  --dups N|K:W,...       offers per article across peers (10), or a distribution:\n"
"                         K peers with weight W, e.g. 1:0.2,3:0.5,6:0.3 (flood-fill:\n"
"                         one copy gets 239, the others 439/438); alias\n"
"                         --peers-per-article\n"
"  --spread N             offers of one article within ~N offers (32)\n"
"  --size BYTES|mix|feed  fixed article size (2K), or text posts + binaries, or a\n"
"                         full feed's mix (median binary 740,484 octets, P99 2.06 MB,\n"
"                         text 0.35 % of the octets: tools/workload/model.c)\n"
"  --binary-size BYTES    mix: binary part size (700K)\n"
"  --binary-share F       mix: share of binary parts (0.02)\n"
"  --old F --future F --path-loop F --bad-id F      class shares\n"
"                         (0.02 0.01 0.01 0.005; path loops need --path-identity)\n"
"  --no-injection-date F  (0.3)   --offline F   Date older than cutoff (0.02)\n"
"  --versions F           $v=N IDs with Supersedes (0.01)\n"
"  --near-future F        wanted articles dated ahead, inside the margin (0.02)\n"
"  --id-prefix S          left part of every Message-ID (fg<seed>)\n"
"  --groups G1,G2         newsgroups; the last gets binaries (fg.test.text,fg.test.binaries)\n"
"server rules (what the answers are checked against):\n"
"  --cutoff DUR           (10d)    --future-margin DUR (24h)\n"
"  --path-identity NAME   the server's path identity\n"
"  --now EPOCH            the model's clock (now)\n"
"output:\n"
"  --json                 one JSON object on stdout\n"
"  --outcomes FILE        a line per article: Message-ID, class, 239s it got, answer lost\n"
"  --accept-times FILE    a line per 239/235 received: Message-ID, CLOCK_REALTIME ns\n"
"downstream sink (the server behind the server under test, in this process):\n"
"  --sink ADDR:PORT       listen there and take every article (239/238/235/335)\n"
"  --sink-times FILE      a line per 239/235 it sent: Message-ID, CLOCK_REALTIME ns\n"
"  --sink-wait N          before the peers start, wait (60 s at most) for N connections\n"
"  --sink-drain S         after the peers, wait up to S s until the sink has had as\n"
"                         many articles as the peers got 239s for (10)\n"
"  --progress / --no-progress   progress line on stderr (default: if a terminal)\n"
"  --pcap FILE            write the client side as a pcap; no server needed\n"
"  --pcap-server A:P      the server address in the pcap (198.19.0.1:119)\n"
"  --pcap-ipv6            the pcap's flows over IPv6: every address A.B.C.D becomes\n"
"                         fd00::A.B.C.D (the server [fd00::c613:1]:119 by default)\n"
"  --log-level L          err|warn|notice|info|debug (notice)\n"
"Sizes take K/M (1024), durations s/m/h/d/w.\n";

enum {
	O_HOST = 256, O_PORT, O_PEERS, O_CONNS, O_WINDOW, O_MODE, O_CAPS, O_NOMODE, O_RETRY,
	O_MAXRETRY, O_MAXRECON, O_TIMEOUT, O_SPID, O_SEED, O_ARTICLES, O_DUPS, O_SPREAD,
	O_SIZE, O_BINSIZE, O_BINSHARE, O_OLD, O_FUTURE, O_LOOP, O_BADID, O_NOINJ, O_OFFLINE,
	O_VERSIONS, O_NEAR, O_PREFIX, O_GROUPS, O_CUTOFF, O_MARGIN, O_PATHID, O_NOW, O_JSON,
	O_PROGRESS, O_NOPROGRESS, O_PCAP, O_PCAPSRV, O_PCAP6, O_LOGLEVEL, O_RATE, O_SOURCE, O_HELP,
	O_DPDK, O_DPDKADDR, O_DPDKQ, O_DPDKMEMBER, O_DPDKPEERMAC, O_OUTCOMES,
	O_DURATION, O_ACCTIMES, O_SINK, O_SINKTIMES, O_SINKWAIT, O_SINKDRAIN,
};

static const struct option long_opts[] = {
	{ "host", 1, 0, O_HOST }, { "port", 1, 0, O_PORT }, { "peers", 1, 0, O_PEERS },
	{ "conns", 1, 0, O_CONNS }, { "window", 1, 0, O_WINDOW }, { "mode", 1, 0, O_MODE },
	{ "capabilities", 0, 0, O_CAPS }, { "no-mode-stream", 0, 0, O_NOMODE },
	{ "retry-delay", 1, 0, O_RETRY }, { "max-retries", 1, 0, O_MAXRETRY },
	{ "max-reconnects", 1, 0, O_MAXRECON }, { "timeout", 1, 0, O_TIMEOUT },
	{ "server-pid", 1, 0, O_SPID }, { "seed", 1, 0, O_SEED }, { "articles", 1, 0, O_ARTICLES },
	{ "rate", 1, 0, O_RATE }, { "source", 1, 0, O_SOURCE },
	{ "dpdk", 1, 0, O_DPDK }, { "dpdk-addr", 1, 0, O_DPDKADDR }, { "dpdk-queues", 1, 0, O_DPDKQ },
	{ "dpdk-member", 1, 0, O_DPDKMEMBER }, { "dpdk-peer-mac", 1, 0, O_DPDKPEERMAC },
	{ "dups", 1, 0, O_DUPS }, { "peers-per-article", 1, 0, O_DUPS },
	{ "duration", 1, 0, O_DURATION }, { "accept-times", 1, 0, O_ACCTIMES },
	{ "sink", 1, 0, O_SINK }, { "sink-times", 1, 0, O_SINKTIMES },
	{ "sink-wait", 1, 0, O_SINKWAIT }, { "sink-drain", 1, 0, O_SINKDRAIN }, { "spread", 1, 0, O_SPREAD }, { "size", 1, 0, O_SIZE },
	{ "binary-size", 1, 0, O_BINSIZE }, { "binary-share", 1, 0, O_BINSHARE },
	{ "old", 1, 0, O_OLD }, { "future", 1, 0, O_FUTURE }, { "path-loop", 1, 0, O_LOOP },
	{ "bad-id", 1, 0, O_BADID }, { "no-injection-date", 1, 0, O_NOINJ },
	{ "offline", 1, 0, O_OFFLINE }, { "versions", 1, 0, O_VERSIONS },
	{ "near-future", 1, 0, O_NEAR }, { "id-prefix", 1, 0, O_PREFIX },
	{ "groups", 1, 0, O_GROUPS }, { "cutoff", 1, 0, O_CUTOFF },
	{ "future-margin", 1, 0, O_MARGIN }, { "path-identity", 1, 0, O_PATHID },
	{ "now", 1, 0, O_NOW }, { "json", 0, 0, O_JSON }, { "progress", 0, 0, O_PROGRESS },
	{ "no-progress", 0, 0, O_NOPROGRESS }, { "pcap", 1, 0, O_PCAP },
	{ "pcap-server", 1, 0, O_PCAPSRV }, { "pcap-ipv6", 0, 0, O_PCAP6 },
	{ "log-level", 1, 0, O_LOGLEVEL }, { "outcomes", 1, 0, O_OUTCOMES },
	{ "help", 0, 0, O_HELP }, { 0, 0, 0, 0 },
};

/* Unsigned integer with an optional K/M/G (1024) suffix, at most max. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024 * 1024 * 1024, end++;
	if (*end || v > max / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "10d", "24h", "90m", "30s", "2w", or plain seconds. */
static int parse_duration(const char *s, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	int64_t mul = 1;

	if (end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case '\0': case 's': break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	case 'w': mul = 7 * 86400; break;
	default: return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	*out = (int64_t)v * mul;
	return 0;
}

static int set_string(char *dst, size_t len, const char *s)
{
	if (strlen(s) >= len)
		return -EINVAL;
	strcpy(dst, s);
	return 0;
}

static int parse_mode(const char *s, enum fg_feed_mode *m)
{
	if (strcmp(s, "check") == 0)
		*m = FEED_CHECK;
	else if (strcmp(s, "takethis") == 0)
		*m = FEED_TAKETHIS;
	else if (strcmp(s, "ihave") == 0)
		*m = FEED_IHAVE;
	else
		return -EINVAL;
	return 0;
}

static int parse_size(struct fg_wl_params *w, const char *s)
{
	uint64_t v;

	if (strcmp(s, "mix") == 0) {
		w->size_mode = FG_WL_SIZE_MIX;
		return 0;
	}
	if (strcmp(s, "feed") == 0) {
		w->size_mode = FG_WL_SIZE_FEED;
		return 0;
	}
	w->size_mode = FG_WL_SIZE_FIXED;
	if (parse_uint(s, FG_WL_MAX_SIZE, &v) < 0)
		return -EINVAL;
	w->size = (uint32_t)v;
	return 0;
}

/* The options about connections and output. */
static int opt_feed(struct feed_opts *o, int opt, const char *arg)
{
	uint64_t v;
	int rc = 0;

	switch (opt) {
	case O_HOST: rc = set_string(o->host, sizeof(o->host), arg); break;
	case O_PORT: rc = parse_uint(arg, 65535, &v); o->port = (uint16_t)v; break;
	case O_CONNS: rc = parse_uint(arg, 1024, &v); o->conns = (unsigned)v; break;
	case O_WINDOW: rc = parse_uint(arg, 100000, &v); o->window = (unsigned)v; break;
	case O_MODE: rc = parse_mode(arg, &o->mode); break;
	case O_CAPS: o->capabilities = true; break;
	case O_NOMODE: o->mode_stream = false; break;
	case O_RETRY: rc = parse_double(arg, 0, 3600, &o->retry_delay); break;
	case O_MAXRETRY: rc = parse_uint(arg, 255, &v); o->max_retries = (unsigned)v; break;
	case O_MAXRECON: rc = parse_uint(arg, 1000000, &v); o->max_reconnects = (unsigned)v; break;
	case O_TIMEOUT: rc = parse_double(arg, 0, 1e9, &o->timeout); break;
	case O_SPID: rc = parse_uint(arg, 1u << 30, &v); o->server_pid = (pid_t)v; break;
	case O_RATE: rc = parse_double(arg, 0, 1e9, &o->rate); break;
	case O_SOURCE: rc = set_string(o->source, sizeof(o->source), arg); break;
	case O_DPDK: o->dpdk = arg; break;
	case O_DPDKADDR: rc = set_string(o->dpdk_addr, sizeof(o->dpdk_addr), arg); break;
	case O_DPDKQ: rc = parse_uint(arg, 16, &v); o->dpdk_queues = (unsigned)v; break;
	case O_DPDKPEERMAC: {
		unsigned m[6];
		char tail;

		rc = sscanf(arg, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4],
			    &m[5], &tail) == 6 ? 0 : -EINVAL;
		for (unsigned i = 0; rc == 0 && i < 6; i++)
			o->dpdk_peer_mac[i] = (uint8_t)m[i];
		o->has_dpdk_peer_mac = rc == 0;
		break;
	}
	case O_DPDKMEMBER:
		if (o->n_dpdk_members == FEED_DP_MAX_MEMBERS)
			rc = -E2BIG;
		else
			o->dpdk_member[o->n_dpdk_members++] = arg;
		break;
	case O_JSON: o->json = true; break;
	case O_OUTCOMES: o->outcomes = optarg; break;
	case O_DURATION: rc = parse_double(arg, 0, 1e7, &o->duration); break;
	case O_ACCTIMES: o->accept_times = arg; break;
	case O_SINK: o->sink = arg; break;
	case O_SINKTIMES: o->sink_times = arg; break;
	case O_SINKWAIT: rc = parse_uint(arg, 256, &v); o->sink_wait = (unsigned)v; break;
	case O_SINKDRAIN: rc = parse_double(arg, 0, 1e6, &o->sink_drain); break;
	case O_PROGRESS: o->progress = 1; break;
	case O_NOPROGRESS: o->progress = 0; break;
	case O_PCAP: o->pcap = arg; break;
	case O_PCAPSRV: rc = set_string(o->pcap_server, sizeof(o->pcap_server), arg); break;
	case O_PCAP6: o->pcap_v6 = true; break;
	case O_LOGLEVEL:
		rc = fg_log_level_parse(arg);
		if (rc >= 0)
			fg_log_set_level((enum fg_log_level)rc);
		break;
	default: rc = -ENOENT; break;
	}
	return rc < 0 ? rc : 0;
}

/* The options about the workload and the server's rules. */
static int opt_workload(struct fg_wl_params *w, int opt, const char *arg)
{
	uint64_t v = 0;
	int rc = 0;

	switch (opt) {
	case O_PEERS: rc = parse_uint(arg, FG_WL_MAX_PEERS, &v); w->peers = (unsigned)v; break;
	case O_SEED: rc = parse_uint(arg, UINT64_MAX, &w->seed); break;
	case O_ARTICLES: rc = parse_uint(arg, UINT32_MAX, &v); w->articles = (uint32_t)v; break;
	case O_DUPS: rc = fg_wl_params_set_dups(w, arg); break;
	case O_SPREAD: rc = parse_uint(arg, 1u << 30, &v); w->spread = (unsigned)v; break;
	case O_SIZE: rc = parse_size(w, arg); break;
	case O_BINSIZE: rc = parse_uint(arg, FG_WL_MAX_SIZE, &v); w->binary_size = (uint32_t)v; break;
	case O_BINSHARE: rc = parse_double(arg, 0, 1, &w->p_binary); break;
	case O_OLD: rc = parse_double(arg, 0, 1, &w->p_old); break;
	case O_FUTURE: rc = parse_double(arg, 0, 1, &w->p_future); break;
	case O_LOOP: rc = parse_double(arg, 0, 1, &w->p_pathloop); break;
	case O_BADID: rc = parse_double(arg, 0, 1, &w->p_badid); break;
	case O_NOINJ: rc = parse_double(arg, 0, 1, &w->p_no_injdate); break;
	case O_OFFLINE: rc = parse_double(arg, 0, 1, &w->p_offline); break;
	case O_VERSIONS: rc = parse_double(arg, 0, 1, &w->p_version); break;
	case O_NEAR: rc = parse_double(arg, 0, 1, &w->p_near_future); break;
	case O_PREFIX: rc = set_string(w->id_prefix, sizeof(w->id_prefix), arg); break;
	case O_GROUPS: rc = fg_wl_params_set_groups(w, arg); break;
	case O_CUTOFF: rc = parse_duration(arg, &w->cutoff); break;
	case O_MARGIN: rc = parse_duration(arg, &w->future_margin); break;
	case O_PATHID: rc = set_string(w->path_identity, sizeof(w->path_identity), arg); break;
	case O_NOW: rc = parse_uint(arg, INT64_MAX, &v); w->now = (fg_time_t)v; break;
	default: rc = -ENOENT; break;
	}
	return rc;
}

static int parse_args(int argc, char **argv, struct feed_opts *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	fg_wl_params_default(&o->wl);
	strcpy(o->host, "127.0.0.1");
	strcpy(o->pcap_server, "198.19.0.1:119");
	strcpy(o->dpdk_addr, "198.18.0.1");
	o->dpdk_queues = 1;
	o->port = 119;
	o->conns = 1;
	o->window = 64;
	o->mode_stream = true;
	o->retry_delay = 0.1;
	o->max_retries = 50;
	o->max_reconnects = 5;
	o->progress = -1;
	o->sink_drain = 10;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		int rc;

		if (opt == 'h' || opt == O_HELP) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (opt == '?')
			return -EINVAL;
		rc = opt_feed(o, opt, optarg);
		if (rc == -ENOENT)
			rc = opt_workload(&o->wl, opt, optarg);
		if (rc < 0) {
			const struct option *lo = long_opts;

			while (lo->name && lo->val != opt)
				lo++;
			fprintf(stderr, "feedgen: bad value for --%s: %s\n",
				lo->name ? lo->name : "?", optarg ? optarg : "");
			return -EINVAL;
		}
	}
	if (optind != argc || o->window == 0 || o->conns == 0) {
		fprintf(stderr, "feedgen: unexpected argument or zero window/conns\n");
		return -EINVAL;
	}
	return 0;
}

static int write_outcomes(const char *path, const struct fg_wlc *chk)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f) {
		fprintf(stderr, "feedgen: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	rc = fg_wlc_write_outcomes(chk, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		fprintf(stderr, "feedgen: writing %s: %s\n", path, strerror(-rc));
	return rc;
}

/* --sink-wait: the downstream's connections (floodgate's relay) before
 * the first offer, so that no article waits for the relay's reconnect. */
static int sink_wait(const struct feed_opts *o, struct feed_sink *sink)
{
	uint64_t end = fg_mono_ns() + 60000000000ull;

	while (feed_sink_connections(sink) < o->sink_wait) {
		if (fg_mono_ns() > end) {
			fprintf(stderr, "feedgen: the sink has %u connections of %u after 60 s\n",
				feed_sink_connections(sink), o->sink_wait);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
	return 0;
}

/* After the peers: the sink may still be receiving what a queue relays
 * after its 239; wait until it has had as many articles as were accepted
 * (the server under test relays each accepted article once). */
static void sink_drain(const struct feed_opts *o, struct feed_sink *sink, uint64_t accepted,
		       struct feed_sink_stats *st)
{
	uint64_t t0 = fg_mono_ns(), end = t0 + (uint64_t)(o->sink_drain * 1e9);

	while (feed_sink_articles(sink) < accepted && fg_mono_ns() < end)
		usleep(1000);
	st->drain_s = (double)(fg_mono_ns() - t0) / 1e9;
	feed_sink_stop(sink, st);
	st->drained = st->articles >= accepted;
}

static int run_live(const struct feed_opts *o, const struct fg_wl *wl)
{
	struct fg_wlc *chk = fg_wlc_create(wl);
	struct feed_result *res = calloc(1, sizeof(*res));
	struct feed_sink *sink = NULL;
	struct feed_sink_stats sst = { 0 };
	int rc = 2;

	if (!chk || !res)
		goto out_free;
	if (o->duration > 0)
		fg_wlc_set_partial(chk);
	if (o->sink) {
		sink = feed_sink_start(o->sink, o->sink_times);
		if (!sink || sink_wait(o, sink) < 0)
			goto out_free;
	}
	if (feed_run(o, wl, chk, res) < 0)
		goto out_free;
	if (sink) {
		sink_drain(o, sink, fg_wlc_accepted(chk), &sst);
		sink = NULL;
		if (!sst.drained)
			fg_wlc_mismatch(chk, "the sink had %llu articles of %llu accepted after %.1f s",
					(unsigned long long)sst.articles,
					(unsigned long long)fg_wlc_accepted(chk), sst.drain_s);
	}
	fg_wlc_finish(chk);
	if (o->outcomes && write_outcomes(o->outcomes, chk) < 0)
		goto out_free;
	if (o->json)
		feed_report_json(o, wl, chk, res, o->sink ? &sst : NULL);
	else
		feed_report_text(o, wl, chk, res, o->sink ? &sst : NULL);
	rc = fg_wlc_mismatches(chk) ? 1 : 0;
out_free:
	if (sink)
		feed_sink_stop(sink, &sst);
	if (res) {
		free(res->conn_codes);
		free(res->conn_peer);
	}
	free(res);
	fg_wlc_free(chk);
	return rc;
}

static int run_pcap(const struct feed_opts *o, const struct fg_wl *wl)
{
	struct fg_pcapfeed_opts po;
	struct fg_pcapfeed_stats st;
	int rc;

	memset(&po, 0, sizeof(po));
	po.conns = o->conns;
	po.window = o->mode == FEED_IHAVE ? 1 : o->window;
	po.mode = o->mode == FEED_CHECK ? FG_PCAPFEED_CHECK :
		  o->mode == FEED_TAKETHIS ? FG_PCAPFEED_TAKETHIS : FG_PCAPFEED_IHAVE;
	po.mode_stream = o->mode_stream && o->mode != FEED_IHAVE;
	po.capabilities = o->capabilities;
	po.v6 = o->pcap_v6;
	rc = fg_pcap_parse_endpoint(o->pcap_server, &po.server_addr, &po.server_port);
	if (rc < 0) {
		fprintf(stderr, "feedgen: bad --pcap-server %s\n", o->pcap_server);
		return 2;
	}
	rc = fg_pcapfeed_write(wl, &po, o->pcap, &st);
	if (rc < 0) {
		fprintf(stderr, "feedgen: writing %s: %s\n", o->pcap, strerror(-rc));
		return 2;
	}
	printf("pcap %s: %u connections, %llu packets, %llu client octets, %llu offers, "
	       "%llu articles\n", o->pcap, st.flows, (unsigned long long)st.packets,
	       (unsigned long long)st.payload_bytes, (unsigned long long)st.offers,
	       (unsigned long long)st.articles);
	/* what a server deciding the capture in order answers (passive replay) */
	if (o->mode == FEED_IHAVE)
		printf("expected in order: 335=%llu 436=%llu 435=%llu 235=%llu 437=%llu\n",
		       (unsigned long long)st.want, (unsigned long long)st.defer,
		       (unsigned long long)st.refuse, (unsigned long long)st.accept,
		       (unsigned long long)st.reject);
	else
		printf("expected in order: 238=%llu 431=%llu 438=%llu 239=%llu 439=%llu\n",
		       (unsigned long long)st.want, (unsigned long long)st.defer,
		       (unsigned long long)st.refuse, (unsigned long long)st.accept,
		       (unsigned long long)st.reject);
	return 0;
}

int main(int argc, char **argv)
{
	struct feed_opts o;
	struct fg_wl *wl;
	int rc;

	if (parse_args(argc, argv, &o) < 0) {
		fputs(usage_text, stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	wl = fg_wl_create(&o.wl);
	if (!wl)
		return 2;
	o.wl = *fg_wl_params(wl);	/* now, id prefix as resolved */
	rc = o.pcap ? run_pcap(&o, wl) : run_live(&o, wl);
	fg_wl_free(wl);
	return rc;
}
