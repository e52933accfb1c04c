/* SPDX-License-Identifier: MIT */
/*
 * bench_dataplane.c — one worker core of the dataplane in passive mode,
 * frames from memory: what one lcore decides per second with no kernel
 * and no device in the path.
 *
 *   bench_dataplane [--quick | --full] [--runs R] [--pairs N] [--md FILE]
 *
 * Each workload is feedgen's model (tools/workload) written as a capture
 * (fg_pcapfeed_write), read back once into DPDK mbufs from an rte_mempool
 * of its own (EAL started with --no-huge --no-pci, one lcore). The
 * captures are written before the EAL starts, because they decide its
 * memory: a pool holds one mbuf per frame with room for the largest frame,
 * and -m is the largest pool as DPDK lays it out on 4 KiB pages (an
 * IOVA-contiguous mbuf never straddles a page, so a page holds only as
 * many whole mbufs as fit) plus the EAL's own share. A run gives every mbuf
 * an extra reference (so the worker's releases leave them for the next
 * run), builds a fresh history table, engine (null sink) and passive
 * reassembler — exactly what a passive worker lcore runs — and feeds the
 * frames in bursts of 32 with their capture times, as the lcore loop
 * does after rte_eth_rx_burst. Only that loop is timed, in CPU time of the
 * thread (CLOCK_THREAD_CPUTIME_ID: the machine is shared, and the wall
 * clock would count other processes' turns); cycles are that time at the
 * TSC rate (calibrated against CLOCK_MONOTONIC). A run counts only if the engine's
 * answers equal the model's (fg_pcapfeed_stats): a figure always comes
 * from a correct run. The fastest of R runs is reported (other work on a
 * shared machine only ever adds cycles).
 *
 * IPv6 against IPv4: each "-v6" workload is measured with the workload of
 * its name over IPv4, both loaded at once, as N pairs of runs in ABBA
 * order (v4 v6, v6 v4, v4 v6, ...: a load that rises or falls during the
 * pairs weighs on both sides alike). Each pair gives a ratio, IPv6's
 * offers per CPU second over IPv4's, from two runs moments apart; the
 * report is the median of the N ratios and their min–max. (Best of each
 * side would compare two runs that may be seconds and a load swing
 * apart: on the loaded 2-core machine one such ratio varied ±10 %.) The
 * table rows of paired workloads are the fastest of their N runs.
 *
 * Workloads: check (CHECK-heavy: 10 peers each offering every article,
 * 2 KB articles), takethis (innfeed's no-CHECK mode, 2 KB), and with
 * --full big (TAKETHIS of 700 KB articles). Figures: CHECK/s, articles/s,
 * article Gbit/s (wire octets of complete articles), frames/s,
 * cycles per frame.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "floodgate/config.h"
#include "floodgate/passive.h"
#include "workload/pcapgen.h"
#include "floodgate/session.h"
#include "workload/workload.h"

#define BURST 32
#define NOW ((fg_time_t)1790000000)
#define POOL_CACHE 256
#define POOL_SPARE 1024			/* mbufs beyond one per frame */
#define PAGE_SHIFT_4K 12		/* --no-huge: the EAL's pages are the kernel's */
#define POOL_SLACK_SHIFT 5		/* + 1/32 for the heap's element headers */
#define EAL_OWN_MB 64			/* the EAL's own memzones and heap */

struct wl_def {
	const char *name;
	enum fg_pcapfeed_mode mode;
	unsigned articles, peers, dups, window;
	uint32_t size;
	bool v6;			/* the same flows over IPv6 (fd00::198.18.x.y) */
};

struct capture {
	char path[32];			/* the capture file, while it exists */
	struct fg_pcapfeed_stats model;
	uint32_t max_frame;		/* its largest frame, octets */
	struct rte_mempool *mp;		/* its frames, loaded: */
	struct rte_mbuf **m;
	uint64_t *ts;
	unsigned n;
};

struct result {
	const char *name;
	uint64_t ns, frames, checks, articles, article_bytes;	/* ns: thread CPU time */
};

#define MAX_PAIRS 64

/* IPv6 / IPv4 offers per CPU second of one workload, over its pairs. */
struct ratio {
	const char *name;	/* the IPv4 workload's */
	unsigned pairs;
	double median, min, max;
};

static const char conf_text[] =
	"[site]\npath-identity floodgate.test\nlisten 198.19.0.1:119 [fd00::c613:1]:119\n"
	"[session]\nclock-skew-limit 0\n"
	"[peer feeders]\naddress 198.18.0.0/15 fd00::c612:0/111\n"
	"[dataplane]\nmode passive\n";

/* ------------------------------------------------------------ mbuf ops */

static void mb_ref(void *port, void *h)
{
	(void)port;
	rte_mbuf_refcnt_update(h, 1);
}

static void mb_unref(void *port, void *h)
{
	(void)port;
	rte_pktmbuf_free(h);
}

/* passive mode never transmits: these are never called */
static uint8_t *no_tx_alloc(void *port, uint32_t size, void **h)
{
	(void)port, (void)size, (void)h;
	return NULL;
}

static void no_tx_free(void *port, void *h)
{
	(void)port, (void)h;
}

static unsigned no_tx_burst(void *port, struct fg_tx_frame *f, unsigned n)
{
	(void)port, (void)f;
	return n;
}

static const struct fg_port_ops mbuf_ops = {
	.buf_ref = mb_ref, .buf_unref = mb_unref, .tx_alloc = no_tx_alloc,
	.tx_free = no_tx_free, .tx_burst = no_tx_burst,
};

/* ------------------------------------------------------------ set-up */

/* CPU time of this thread: on a shared machine the wall clock (and the
 * TSC) also counts the time other processes had the core. */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double tsc_hz(void)
{
	uint64_t a, b, c0, c1;

	a = fg_mono_ns();
	c0 = __rdtsc();
	usleep(200000);
	b = fg_mono_ns();
	c1 = __rdtsc();
	return (double)(c1 - c0) / ((double)(b - a) / 1e9);
}

static const char *loadavg(void)
{
	static char buf[64];
	FILE *f = fopen("/proc/loadavg", "r");

	if (!f || !fgets(buf, sizeof(buf), f))
		snprintf(buf, sizeof(buf), "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, " ")] = '\0';
	return buf;
}

/* Write the workload as a capture file (before the EAL starts: its size
 * decides the EAL's memory) and note its largest frame. */
static int capture_write(const struct wl_def *d, struct capture *c)
{
	struct fg_wl_params wp;
	struct fg_pcapfeed_opts o = { .conns = 1, .window = d->window, .mode = d->mode,
				      .mode_stream = true, .server_addr = 0xc6130001,
				      .server_port = 119, .v6 = d->v6 };
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	struct fg_wl *wl;
	pcap_t *pc;
	int fd, rc;

	snprintf(c->path, sizeof(c->path), "/tmp/fg_bench_dp_XXXXXX");
	fd = mkstemp(c->path);
	if (fd < 0) {
		c->path[0] = '\0';
		return -errno;
	}
	close(fd);
	fg_wl_params_default(&wp);
	wp.articles = d->articles;
	wp.peers = d->peers;
	wp.dups = d->dups;
	wp.size = d->size;
	wp.now = NOW;
	wl = fg_wl_create(&wp);
	if (!wl)
		return -ENOMEM;
	rc = fg_pcapfeed_write(wl, &o, c->path, &c->model);
	fg_wl_free(wl);
	if (rc != 0)
		return rc;
	pc = pcap_open_offline(c->path, err);
	if (!pc) {
		fprintf(stderr, "bench_dataplane: %s: %s\n", c->path, err);
		return -EIO;
	}
	while (pcap_next_ex(pc, &h, &data) == 1)
		c->max_frame = FG_MAX(c->max_frame, h->caplen);
	pcap_close(pc);
	return 0;
}

static void capture_remove(struct capture *c)
{
	if (c->path[0])
		unlink(c->path);
	c->path[0] = '\0';
}

/* The mbuf pool a capture needs: one mbuf per frame, each with room for
 * the largest frame behind the usual headroom. */
static unsigned pool_mbufs(const struct capture *c)
{
	return (unsigned)c->model.packets + POOL_SPARE;
}

static uint16_t pool_data_room(const struct capture *c)
{
	return (uint16_t)(RTE_PKTMBUF_HEADROOM + c->max_frame);
}

/*
 * The EAL memory that pool takes, by DPDK's own arithmetic: with
 * --no-huge the pages are 4 KiB and an IOVA-contiguous mbuf never straddles
 * a page (rte_mempool_op_calc_mem_size_helper), plus the mempool's
 * header with its per-lcore caches and its ring.
 */
static size_t pool_bytes(const struct capture *c)
{
	struct rte_mempool_objsz sz;
	struct rte_mempool mp = { 0 };
	size_t min_chunk, align;
	unsigned n = pool_mbufs(c);
	ssize_t objs;

	rte_mempool_calc_obj_size((uint32_t)(sizeof(struct rte_mbuf) + pool_data_room(c)), 0, &sz);
	mp.header_size = sz.header_size;
	mp.elt_size = sz.elt_size;
	mp.trailer_size = sz.trailer_size;
	objs = rte_mempool_op_calc_mem_size_helper(&mp, n, PAGE_SHIFT_4K, 0, &min_chunk, &align);
	return (size_t)FG_MAX(objs, (ssize_t)0) + align + sizeof(struct rte_mempool) +
	       RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) +
	       rte_ring_get_memsize((unsigned)rte_align32pow2(n + 1));
}

/* The workload over IPv6 measured with workload i (its name and "-v6"),
 * or -1. */
static int v6_partner(const struct wl_def *defs, unsigned n, unsigned i)
{
	size_t len = strlen(defs[i].name);

	if (defs[i].v6)
		return -1;
	for (unsigned j = 0; j < n; j++)
		if (defs[j].v6 && strlen(defs[j].name) == len + 3 &&
		    !strncmp(defs[j].name, defs[i].name, len) && !strcmp(defs[j].name + len, "-v6"))
			return (int)j;
	return -1;
}

/* -m for the EAL: the most pool memory loaded at once (one workload's
 * pool, or a pair's two) and what the EAL itself keeps, in MB. */
static unsigned eal_memory_mb(const struct wl_def *defs, const struct capture *c, unsigned n)
{
	size_t most = 0;

	for (unsigned i = 0; i < n; i++) {
		int j = v6_partner(defs, n, i);

		most = FG_MAX(most, pool_bytes(&c[i]) + (j < 0 ? 0 : pool_bytes(&c[j])));
	}
	return (unsigned)((most + (most >> POOL_SLACK_SHIFT)) >> 20) + EAL_OWN_MB;
}

/* Read the capture back into mbufs of its own pool. */
static int capture_load(const char *name, struct capture *c)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;

	c->mp = rte_pktmbuf_pool_create(name, pool_mbufs(c), POOL_CACHE, 0, pool_data_room(c),
					SOCKET_ID_ANY);
	if (!c->mp) {
		fprintf(stderr, "bench_dataplane: %s: a pool of %u mbufs: %s\n", name,
			pool_mbufs(c), rte_strerror(rte_errno));
		return -ENOMEM;
	}
	c->m = calloc(c->model.packets, sizeof(*c->m));
	c->ts = calloc(c->model.packets, sizeof(*c->ts));
	pc = pcap_open_offline(c->path, err);
	if (!c->m || !c->ts || !pc) {
		if (pc)
			pcap_close(pc);
		return -ENOMEM;
	}
	for (c->n = 0; c->n < c->model.packets && pcap_next_ex(pc, &h, &data) == 1; c->n++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(c->mp);

		if (!m || h->caplen > rte_pktmbuf_tailroom(m)) {
			rte_pktmbuf_free(m);
			break;
		}
		memcpy(rte_pktmbuf_append(m, (uint16_t)h->caplen), data, h->caplen);
		c->m[c->n] = m;
		c->ts[c->n] = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec * 1000ull;
	}
	pcap_close(pc);
	return c->n == c->model.packets ? 0 : -ENOBUFS;
}

static void capture_unload(struct capture *c)
{
	for (unsigned i = 0; i < c->n; i++)
		rte_pktmbuf_free(c->m[i]);
	free(c->m);
	free(c->ts);
	rte_mempool_free(c->mp);
	c->m = NULL;
	c->ts = NULL;
	c->mp = NULL;
	c->n = 0;
}

/* ------------------------------------------------------------ one run */

struct worker {
	struct fg_config *cfg;
	void *hmem;
	size_t hlen;
	struct fg_history *h;
	struct fg_sink_null *sink;
	struct fg_nntp_counters *st;
	struct fg_nntp_engine *e;
	struct fg_passive *pv;
};

static int worker_up(struct worker *w, uint64_t capacity, unsigned flows)
{
	struct fg_config_errors errs;
	struct fg_history_params hp = { .capacity = capacity, .alarm_load_pct = 90, .now = NOW };
	struct fg_nntp_engine_params ep = { 0 };
	struct fg_passive_params pp = { 0 };

	w->cfg = fg_config_load_text("bench", conf_text, sizeof(conf_text) - 1, &errs);
	w->hlen = fg_history_region_size(capacity, 0);
	/* populated at once, as a running dataplane's table is: no page
	 * fault of a fresh mapping inside the timed loop */
	w->hmem = mmap(NULL, w->hlen, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	w->st = calloc(1, sizeof(*w->st));
	w->sink = fg_sink_null_create(0);
	if (!w->cfg || w->hmem == MAP_FAILED || !w->st || !w->sink ||
	    fg_history_seed_random(hp.seed) != 0)
		return -ENOMEM;
	w->h = fg_history_create(w->hmem, w->hlen, &hp);
	ep.cfg = w->cfg;
	ep.history = w->h;
	ep.sink_ops = &fg_sink_null_ops;
	ep.sink = w->sink;
	ep.stats = w->st;
	w->e = w->h ? fg_nntp_engine_create(&ep) : NULL;
	pp.engine = w->e;
	pp.cfg = w->cfg;
	pp.ops = &mbuf_ops;
	pp.stats = &w->st->s;
	pp.max_flows = flows;
	w->pv = w->e ? fg_passive_create(&pp) : NULL;
	return w->pv ? 0 : -ENOMEM;
}

static void worker_down(struct worker *w)
{
	fg_passive_destroy(w->pv);
	if (w->e)
		fg_nntp_engine_destroy(w->e);
	fg_sink_null_destroy(w->sink);
	if (w->h)
		fg_history_detach(w->h);
	if (w->hmem && w->hmem != MAP_FAILED)
		munmap(w->hmem, w->hlen);
	free(w->st);
	fg_config_free(w->cfg);
	memset(w, 0, sizeof(*w));
}

static uint64_t code(const struct worker *w, unsigned number)
{
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		if (fg_nntp_code_number(i) == number)
			return w->st->n.code[i];
	return 0;
}

static int run(const char *name, const struct capture *c, uint64_t capacity, struct result *r)
{
	struct fg_rx_frame fr[BURST];
	struct worker w = { 0 };
	uint64_t t0, t1;
	int rc = worker_up(&w, capacity, c->model.flows + 16);

	if (rc != 0)
		goto out_down;
	for (unsigned i = 0; i < c->n; i++)
		rte_mbuf_refcnt_update(c->m[i], 1);
	t0 = thread_ns();
	for (unsigned i = 0; i < c->n; i += BURST) {
		unsigned n = FG_MIN((unsigned)BURST, c->n - i);
		uint64_t now_ns = c->ts[i + n - 1];

		for (unsigned k = 0; k < n; k++) {
			struct rte_mbuf *m = c->m[i + k];

			fr[k] = (struct fg_rx_frame){ .data = rte_pktmbuf_mtod(m, uint8_t *),
						      .len = m->data_len, .handle = m };
		}
		fg_passive_rx(w.pv, fr, n, c->ts + i, 0, 0);
		fg_nntp_engine_poll(w.e, (fg_time_t)(now_ns / 1000000000ull), now_ns);
		fg_passive_work(w.pv);
	}
	t1 = thread_ns();
	fg_passive_end_all(w.pv);
	*r = (struct result){ name, t1 - t0, c->n, w.st->n.verb[FG_NNTP_VERB_CHECK],
			      w.st->s.ctr[FG_CTR_NNTP_ARTICLES],
			      w.st->s.ctr[FG_CTR_NNTP_ARTICLE_BYTES] };
	/* a figure only from a run that answered as the model says */
	if (code(&w, 238) != c->model.want || code(&w, 431) != c->model.defer ||
	    code(&w, 438) != c->model.refuse || code(&w, 239) != c->model.accept ||
	    code(&w, 439) != c->model.reject) {
		fprintf(stderr, "bench_dataplane: %s: answers differ from the model (239: %lu of %lu)\n",
			name, (unsigned long)code(&w, 239), (unsigned long)c->model.accept);
		rc = -EPROTO;
	}
out_down:
	worker_down(&w);
	return rc;
}

/* ------------------------------------------------------------ report */

static void print(FILE *f, const struct result *r, unsigned n, double hz, bool md)
{
	if (md)
		fprintf(f, "| workload (one worker core, passive, frames from memory) | frames | "
			   "CHECK/s | articles/s | article Gbit/s | frames/s | cycles/frame |\n"
			   "|---|---:|---:|---:|---:|---:|---:|\n");
	else
		fprintf(f, "%-12s %10s %12s %12s %10s %12s %10s\n", "workload", "frames", "CHECK/s",
			"articles/s", "Gbit/s", "frames/s", "cyc/frame");
	for (unsigned i = 0; i < n; i++) {
		double s = (double)r[i].ns / 1e9;

		fprintf(f, md ? "| %s | %lu | %.0f | %.0f | %.2f | %.0f | %.0f |\n"
			      : "%-12s %10lu %12.0f %12.0f %10.2f %12.0f %10.0f\n",
			r[i].name, (unsigned long)r[i].frames, r[i].checks / s, r[i].articles / s,
			r[i].article_bytes * 8 / s / 1e9, r[i].frames / s, s * hz / r[i].frames);
	}
}

/* Each pair measured: IPv6's offers per CPU second over IPv4's. */
static void print_ratios(FILE *f, const struct ratio *q, unsigned n, bool md)
{
	for (unsigned i = 0; i < n; i++)
		fprintf(f, md ? "\n%s over IPv6 / IPv4, offers per CPU second: **%.3f**, the median of "
			      "%u ABBA pairs (min %.3f, max %.3f)\n"
			      : "%s over IPv6 / IPv4, offers per CPU second: %.3f, median of %u ABBA "
			      "pairs (min %.3f, max %.3f)\n",
			q[i].name, q[i].median, q[i].pairs, q[i].min, q[i].max);
}

static int eal_start(unsigned memory_mb)
{
	static char args[192];
	char *eal[16], *save = NULL;
	int n = 0;

	snprintf(args, sizeof(args), "bench_dataplane --no-huge -m %u --no-pci --no-shconf "
		 "--no-telemetry -l 0 --log-level lib.eal:error", memory_mb);
	for (char *t = strtok_r(args, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save))
		eal[n++] = t;
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "bench_dataplane: EAL (-m %u): %s\n", memory_mb,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/* One workload: its frames into mbufs, R runs, the fastest kept. */
static int measure(const struct wl_def *d, struct capture *c, unsigned runs, struct result *best)
{
	uint64_t cap = (uint64_t)d->articles * 2 + 1000;
	int rc = capture_load(d->name, c);

	for (unsigned k = 0; k < runs && rc == 0; k++) {
		struct result r;

		rc = run(d->name, c, cap, &r);
		if (rc == 0 && (k == 0 || r.ns < best->ns))
			*best = r;
	}
	capture_unload(c);
	return rc;
}

static double offers_per_ns(const struct result *r)
{
	return (double)(r->checks ? r->checks : r->articles) / (double)r->ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A workload (index 0) and its IPv6 twin (1), both loaded: `pairs` pairs
 * of runs in ABBA order, each pair's ratio, their median and range; the
 * fastest run of each side into best[]. */
static int measure_pair(const struct wl_def *d[2], struct capture *c[2], unsigned pairs,
			struct result best[2], struct ratio *q)
{
	double ratio[MAX_PAIRS];
	int rc = capture_load(d[0]->name, c[0]);

	if (rc == 0)
		rc = capture_load(d[1]->name, c[1]);
	for (unsigned p = 0; p < pairs && rc == 0; p++) {
		struct result r[2];

		for (unsigned k = 0; k < 2 && rc == 0; k++) {
			unsigned side = k ^ (p & 1);	/* A B, B A, A B, ... */

			rc = run(d[side]->name, c[side], (uint64_t)d[side]->articles * 2 + 1000,
				 &r[side]);
			if (rc == 0 && (p == 0 || r[side].ns < best[side].ns))
				best[side] = r[side];
		}
		if (rc == 0)
			ratio[p] = offers_per_ns(&r[1]) / offers_per_ns(&r[0]);
	}
	if (rc == 0) {
		qsort(ratio, pairs, sizeof(ratio[0]), cmp_double);
		*q = (struct ratio){ d[0]->name, pairs,
				     (ratio[(pairs - 1) / 2] + ratio[pairs / 2]) / 2,
				     ratio[0], ratio[pairs - 1] };
	}
	capture_unload(c[1]);
	capture_unload(c[0]);
	return rc;
}

static int write_md(const char *md, const struct result *res, unsigned n,
		    const struct ratio *q, unsigned nq, double hz, unsigned runs, unsigned pairs,
		    unsigned memory_mb)
{
	FILE *f = fopen(md, "w");

	if (!f) {
		perror(md);
		return -errno;
	}
	print(f, res, n, hz, true);
	print_ratios(f, q, nq, true);
	fprintf(f, "\nThread CPU time, TSC %.2f GHz, load average %s. ", hz / 1e9, loadavg());
	if (nq)
		fprintf(f, "A workload and its -v6 twin run as %u pairs (v4 v6, v6 v4, v4 v6, ...); "
			   "its row is the fastest of its %u runs, the ratio the median of the "
			   "pairs' own ratios. ", pairs, pairs);
	if (nq * 2 < n)
		fprintf(f, "%s best of %u runs. ", nq ? "The others:" : "Each", runs);
	fprintf(f, "Frames are feedgen's model written as a capture (one connection per peer; the "
		   "-v6 workloads the same flows over IPv6, MSS 1440) in DPDK mbufs (EAL --no-huge "
		   "-m %u, sized to the largest pair of captures); every run's answers equal the "
		   "model's.\n", memory_mb);
	return fclose(f) == 0 ? 0 : -errno;
}

/*
 * The set-up is a chain: every capture is written first, because their
 * frame counts and largest frame decide the EAL's memory (-m); then the
 * EAL; then each workload in turn gets a pool of its own size, its runs,
 * and gives the pool back before the next.
 */
int main(int argc, char **argv)
{
	static const struct wl_def quick[] = {
		{ "check", FG_PCAPFEED_CHECK, 40000, 10, 10, 64, 2048, false },
		{ "takethis", FG_PCAPFEED_TAKETHIS, 40000, 4, 1, 32, 2048, false },
		{ "check-v6", FG_PCAPFEED_CHECK, 40000, 10, 10, 64, 2048, true },
		{ "takethis-v6", FG_PCAPFEED_TAKETHIS, 40000, 4, 1, 32, 2048, true },
	}, full[] = {
		{ "check", FG_PCAPFEED_CHECK, 200000, 10, 10, 64, 2048, false },
		{ "takethis", FG_PCAPFEED_TAKETHIS, 200000, 4, 1, 32, 2048, false },
		{ "check-v6", FG_PCAPFEED_CHECK, 200000, 10, 10, 64, 2048, true },
		{ "takethis-v6", FG_PCAPFEED_TAKETHIS, 200000, 4, 1, 32, 2048, true },
		{ "big", FG_PCAPFEED_TAKETHIS, 1500, 4, 1, 8, 700 * 1024, false },
	};
	const struct wl_def *defs = quick;
	unsigned n_defs = FG_ARRAY_SIZE(quick), runs = 3, pairs = 10, memory_mb = 0, nq = 0;
	struct capture caps[FG_ARRAY_SIZE(full)] = { 0 };
	struct result res[FG_ARRAY_SIZE(full)];
	struct ratio q[FG_ARRAY_SIZE(full)];
	bool paired[FG_ARRAY_SIZE(full)] = { false };
	const char *md = NULL;
	double hz;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			defs = quick, n_defs = FG_ARRAY_SIZE(quick), runs = 3;
		} else if (!strcmp(argv[i], "--full")) {
			defs = full, n_defs = FG_ARRAY_SIZE(full), runs = 5;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--pairs") && i + 1 < argc) {
			pairs = (unsigned)strtoul(argv[++i], NULL, 10);
			if (pairs == 0 || pairs > MAX_PAIRS) {
				fprintf(stderr, "bench_dataplane: --pairs 1..%u\n", MAX_PAIRS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--md") && i + 1 < argc) {
			md = argv[++i];
		} else {
			fprintf(stderr, "usage: bench_dataplane [--quick|--full] [--runs R] [--pairs N] "
				"[--md FILE]\n");
			return 2;
		}
	}
	for (unsigned d = 0; d < n_defs && rc == 0; d++) {
		rc = capture_write(&defs[d], &caps[d]);
		if (rc != 0)
			fprintf(stderr, "bench_dataplane: %s: the capture: %s\n", defs[d].name,
				strerror(-rc));
	}
	if (rc != 0)
		goto out_remove_captures;
	memory_mb = eal_memory_mb(defs, caps, n_defs);
	rc = eal_start(memory_mb);
	if (rc != 0)
		goto out_remove_captures;
	hz = tsc_hz();
	for (unsigned d = 0; d < n_defs && rc == 0; d++) {
		int j = v6_partner(defs, n_defs, d);

		if (paired[d])
			continue;	/* measured with its IPv4 twin */
		if (j >= 0) {
			paired[j] = true;
			const struct wl_def *pd[2] = { &defs[d], &defs[j] };
			struct capture *pc[2] = { &caps[d], &caps[j] };
			struct result best[2];

			rc = measure_pair(pd, pc, pairs, best, &q[nq]);
			if (rc == 0) {
				res[d] = best[0];
				res[j] = best[1];
				nq++;
			}
		} else {
			rc = measure(&defs[d], &caps[d], runs, &res[d]);
		}
		if (rc != 0)
			fprintf(stderr, "bench_dataplane: %s: %s\n", defs[d].name, strerror(-rc));
	}
	if (rc == 0) {
		print(stdout, res, n_defs, hz, false);
		print_ratios(stdout, q, nq, false);
		printf("EAL memory: -m %u (--no-huge)\n", memory_mb);
		if (md)
			rc = write_md(md, res, n_defs, q, nq, hz, runs, pairs, memory_mb);
	}
	rte_eal_cleanup();
out_remove_captures:
	for (unsigned d = 0; d < n_defs; d++)
		capture_remove(&caps[d]);
	return rc == 0 ? 0 : 1;
}
