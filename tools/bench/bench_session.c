/* SPDX-License-Identifier: MIT */
/*
 * bench_session.c — the session engine alone, one core, no network.
 *
 *   bench_session [--quick|--full] [--md FILE] [--only ROW]
 *
 * A history table of five slots per pre-filled ID is created and
 * pre-filled with accepted IDs (2 M in 10 M slots quick, 8 M in 40 M
 * full: the same loads, and room for the new IDs and articles the rows
 * insert on top), then one session is fed, in 64 KiB pieces as
 * a TCP receive path would hand them over:
 *   CHECK dup   CHECKs of pre-filled IDs in random order (438 each)
 *   CHECK new   CHECKs of IDs never seen (238 each: an OFFERED insert),
 *               in 24 KiB pieces a second of the engine's clock apart,
 *               with offer-timeout 1s: each piece's offers lapse before
 *               the next, as if their articles had come, so the session
 *               stays under its peer's max-outstanding-offers (1024) and
 *               every CHECK is a 238 (docs/protocol.md, "Limits")
 *   CHECK new, INN's history imported
 *               the same with a table of as many INN hashes as were
 *               pre-filled (innhist.h) in the data directory: each miss
 *               of the history then asks it too (INN's MD5 of the ID and
 *               a lookup), so the ratio to the row above is its cost
 *   TAKETHIS    2 KB and 700 KB articles, every one new, into the null
 *               sink (rules, header copy, terminator search, history)
 * Each row is printed next to the history-lookup rate of the same run
 * (fg_history_lookup_burst over the same IDs), so what parsing and
 * answering cost beyond the table shows. Responses go to a transport that
 * only counts them. Goals (issue 4): 5 M CHECK/s, 4 GB/s of article bytes.
 * A row whose answers are not all the expected ones (438, 238, 239) fails
 * the run: no figure comes from a table that deferred or refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/config.h"
#include "floodgate/date.h"
#include "floodgate/history.h"
#include "floodgate/datadir.h"
#include "floodgate/innhist.h"
#include "floodgate/log.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"
#include "bench_kit.h"

#define SLOTS_PER_PREFILLED 5ull	/* table size: prefill x this */
#define PIECE (64u << 10)

struct result {
	const char *name;
	double ops, ops_per_s, bytes_per_s, lookups_per_s;
	const char *unit;
	double goal;		/* in the row's unit */
	bool bytes_goal;
};

static uint64_t out_bytes;

static int b_send(void *t, const void *buf, uint32_t len)
{
	(void)t;
	(void)buf;
	out_bytes += len;
	return (int)len;
}

static void b_nop(void *t)
{
	(void)t;
}

static void b_seg(void *t, const struct fg_iov *s)
{
	(void)t;
	(void)s;
}

static const struct fg_nntp_session_transport bench_ops = {
	.send = b_send, .hold = b_seg, .release = b_seg, .pause = b_nop, .resume = b_nop,
	.close = b_nop,
};

/* CPU time of this thread: the figures are per core, and the machine that
 * runs `make bench` is shared (wall time would count other processes). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct buf {
	char *p;
	size_t len, cap;
	size_t mapped;		/* set by buf_settle: p is an mmap of this size */
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Move the finished input to memory mapped for it, on transparent huge
 * pages where the kernel gives them, written once before timing. A buffer
 * grown by realloc sits on 4 KiB pages that the kernel moved with mremap:
 * on this project's VM the first reads of such a buffer cost a hypervisor
 * fault per page (0.7 GB/s instead of >10), which would be charged to the
 * engine. A NIC's mbufs live in pinned hugepages. */
static void buf_settle(struct buf *b)
{
	size_t sz = (b->len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		abort();
	(void)madvise(m, sz, MADV_HUGEPAGE);
	memcpy(m, b->p, b->len);
	free(b->p);
	b->p = m;
	b->cap = b->len;
	b->mapped = sz;
}

static void buf_free(struct buf *b)
{
	if (b->mapped)
		munmap(b->p, b->mapped);
	else
		free(b->p);
	memset(b, 0, sizeof(*b));
}

#define BENCH_CONF \
	"[site]\nserver-name bench.example\npath-identity filter.bench.example\n" \
	"listen 127.0.0.1:1119\n[rules]\ncutoff 10d\nretention 11d\n" \
	"[session]\nmax-pending-commands 4096\nmax-pending-bytes 64M\noffer-timeout 1s\n" \
	"[history]\ncapacity 10M\n[peer bench]\naddress 127.0.0.1\n" \
	/* rates it never reaches: what the budgets cost an offer */ \
	"[peer limited]\naddress 127.0.0.2\nmax-offer-rate 100000000\nmax-byte-rate 1T\n"

struct env {
	struct fg_config *cfg;
	struct fg_config *cfg_inn;	/* data-dir: inn_dir, a table of INN hashes in it */
	char inn_dir[64];
	void *mem;
	size_t len;
	struct fg_history *h;
	fg_time_t now;
	uint64_t prefill, capacity;
	bool thp;
};

static int env_init(struct env *v, uint64_t prefill)
{
	static const char conf[] = BENCH_CONF;
	struct fg_config_errors errs;
	struct fg_history_params hp = { .capacity = prefill * SLOTS_PER_PREFILLED,
					.side_capacity = 4096, .alarm_load_pct = 99 };
	char id[64];

	v->cfg = fg_config_load_text("<bench>", conf, sizeof(conf) - 1, &errs);
	v->now = time(NULL);
	v->prefill = prefill;
	v->capacity = hp.capacity;
	hp.now = v->now;
	memcpy(hp.seed, "bench-seed-bench", FG_HISTORY_SEED_LEN);
	v->len = fg_history_region_size(v->capacity, 4096);
	v->mem = mmap(NULL, v->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!v->cfg || v->mem == MAP_FAILED)
		return -1;
	/* 2 MB pages where the kernel has them (THP): a lookup is one DRAM
	 * miss, not a page walk too (floodctld maps hugetlbfs when it can) */
	v->thp = madvise(v->mem, v->len, MADV_HUGEPAGE) == 0;
	v->h = fg_history_create(v->mem, v->len, &hp);
	if (!v->h)
		return -1;
	for (uint64_t i = 0; i < prefill; i++) {
		struct fg_history_key k;
		int n = snprintf(id, sizeof(id), "<pre%llu.x@bench.example>", (unsigned long long)i);

		fg_history_hash(v->h, id, (size_t)n, &k);
		fg_history_insert_final(v->h, &k, FG_HISTORY_ACCEPTED, v->now - 3600, v->now - 60,
					v->now, NULL);
	}
	return 0;
}

/* A table of `n` INN hashes in a data directory of its own, and a
 * configuration that names it. */
static int env_inn(struct env *v, uint64_t n)
{
	static const char conf[] = BENCH_CONF "[persistence]\ndata-dir ";
	uint8_t (*h)[FG_MD5_LEN] = malloc(n * FG_MD5_LEN);
	struct fg_config_errors errs;
	char text[512], path[128], id[64];
	size_t m;
	int len;

	snprintf(v->inn_dir, sizeof(v->inn_dir), "/tmp/bench_session.%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/%s", v->inn_dir, FG_FOREIGN_FILE);
	if (!h || mkdir(v->inn_dir, 0700) != 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		len = snprintf(id, sizeof(id), "<inn%llu.q@bench.example>", (unsigned long long)i);
		fg_inn_hash_msgid(id, (size_t)len, h[i]);
	}
	if (fg_foreign_write(path, h, n, v->now, v->now + 11 * 86400, &m) != 0)
		return -1;
	free(h);
	len = snprintf(text, sizeof(text), "%s%s\n", conf, v->inn_dir);
	v->cfg_inn = fg_config_load_text("<bench>", text, (size_t)len, &errs);
	return v->cfg_inn ? 0 : -1;
}

static void env_inn_fini(struct env *v)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", v->inn_dir, FG_FOREIGN_FILE);
	unlink(path);
	rmdir(v->inn_dir);
	fg_config_free(v->cfg_inn);
}

/* One engine, one session, the null sink. */
struct rig {
	struct fg_sink_null *sink;
	struct fg_nntp_counters st;
	struct fg_nntp_engine *e;
	struct fg_nntp_session *s;
};

static int rig_open(struct rig *r, struct env *v, const struct fg_config *cfg, unsigned peer)
{
	struct fg_nntp_engine_params ep = { 0 };

	memset(&r->st, 0, sizeof(r->st));
	r->sink = fg_sink_null_create(65536);
	ep.cfg = cfg;
	ep.history = v->h;
	ep.sink_ops = &fg_sink_null_ops;
	ep.sink = r->sink;
	ep.stats = &r->st;
	ep.max_sessions = 4;
	ep.max_xfers = 4096;
	ep.response_buffer = 1u << 20;
	r->e = fg_nntp_engine_create(&ep);
	if (!r->e)
		return -1;
	r->s = fg_nntp_session_open(r->e, &cfg->peer[peer], &bench_ops, NULL, v->now, 1);
	return r->s ? 0 : -1;
}

static void rig_close(struct rig *r)
{
	fg_nntp_session_closed(r->s);
	for (int i = 0; i < 1000 && fg_nntp_engine_xfers(r->e); i++)
		fg_nntp_engine_poll(r->e, 0, 2);
	fg_nntp_engine_destroy(r->e);
	fg_sink_null_destroy(r->sink);
}

/* Feed the whole buffer in pieces of `piece` octets, the engine's clock
 * `tick` seconds later at each; seconds taken. */
static double feed(struct rig *r, struct env *v, const struct buf *b, size_t piece,
		   fg_time_t tick)
{
	double t0 = now_s();
	fg_time_t now = v->now;
	uint64_t ns = 1;

	for (size_t off = 0; off < b->len; now += tick) {
		struct fg_iov iov = { (const uint8_t *)b->p + off, 0, NULL };
		uint32_t took;

		iov.len = (uint32_t)FG_MIN(piece, b->len - off);
		took = fg_nntp_session_input(r->s, &iov, 1, now, ns);
		fg_nntp_engine_poll(r->e, now, ns);
		if (took == 0) {
			fprintf(stderr, "bench: the session stopped reading\n");
			abort();
		}
		off += took;
	}
	while (fg_nntp_engine_xfers(r->e))
		fg_nntp_engine_poll(r->e, now, ns);
	return now_s() - t0;
}

/* Lookups of the same IDs, in bursts of 32: per second. */
static double lookup_rate(struct env *v, const char *const *ids, const uint16_t *lens, size_t n)
{
	struct fg_history_key keys[32];
	struct fg_history_entry out[32];
	double t0 = now_s();

	for (size_t i = 0; i < n; i += 32) {
		unsigned k = (unsigned)FG_MIN((size_t)32, n - i);

		fg_history_lookup_burst(v->h, (const void *const *)(ids + i), lens + i, k, v->now,
					keys, out);
	}
	return (double)n / (now_s() - t0);
}

/* The rates of n commands, b, fed in secs; b and the n IDs are freed. */
static void fed(struct result *res, uint64_t n, double secs, struct buf *b, char **ids,
		uint16_t *lens)
{
	res->ops = (double)n;
	res->ops_per_s = (double)n / secs;
	res->bytes_per_s = (double)b->len / secs;
	for (uint64_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(lens);
	buf_free(b);
}

/* CHECKs of `n` IDs (dup: prefilled, random order; new: fresh; inn: with
 * INN's history in the data directory), from peer `peer` of the
 * configuration (1: with offer and octet rates). */
static int bench_check(struct env *v, bool dup, bool inn, uint64_t n, unsigned peer,
		       struct result *res)
{
	struct buf b = { 0 };
	char **ids = malloc(n * sizeof(*ids));
	uint16_t *lens = malloc(n * sizeof(*lens));
	uint64_t seed = dup ? 1 : 2, c438, c238;
	struct rig r;
	double secs;
	int rc = 0;

	for (uint64_t i = 0; i < n; i++) {
		char line[96];
		uint64_t k = dup ? bench_rng(&seed) % v->prefill : i;
		int len = snprintf(line, sizeof(line), dup ? "CHECK <pre%llu.x@bench.example>\r\n" :
				   inn ? "CHECK <new%llu.w@bench.example>\r\n" :
				   "CHECK <new%llu.y@bench.example>\r\n", (unsigned long long)k);

		put(&b, line, (size_t)len);
		ids[i] = strndup(line + 6, (size_t)len - 8);
		lens[i] = (uint16_t)(len - 8);
	}
	buf_settle(&b);
	if (rig_open(&r, v, inn ? v->cfg_inn : v->cfg, peer) != 0)
		abort();
	/* lookups first for new IDs (they are absent then), after for dups */
	res->lookups_per_s = dup ? 0 : lookup_rate(v, (const char *const *)ids, lens, n);
	/* new: at most 24576 / 30 = 819 CHECKs a piece, each piece's offers
	 * lapsed (offer-timeout 1s) when the next comes */
	secs = dup ? feed(&r, v, &b, PIECE, 0) : feed(&r, v, &b, 24u << 10, 1);
	if (dup)
		res->lookups_per_s = lookup_rate(v, (const char *const *)ids, lens, n);
	c438 = r.st.n.code[FG_NNTP_CODE_C438];
	c238 = r.st.n.code[FG_NNTP_CODE_C238];
	if ((dup && c438 != n) || (!dup && c238 != n)) {
		fprintf(stderr, "bench: unexpected answers (438: %llu, 238: %llu of %llu)\n",
			(unsigned long long)c438, (unsigned long long)c238, (unsigned long long)n);
		rc = -1;
	}
	rig_close(&r);
	res->name = peer ? "CHECK, duplicates, peer rates" :
		    dup ? "CHECK, duplicate IDs (438)" :
		    inn ? "CHECK, new IDs, INN's history imported (238)" : "CHECK, new IDs (238)";
	res->unit = "CHECK/s";
	res->goal = 5e6;
	fed(res, n, secs, &b, ids, lens);
	return rc;
}

/* An article of about `size` octets, wire form, 128-octet body lines. */
static void make_article(struct buf *b, const struct env *v, uint64_t i, size_t size,
			 char *id, size_t id_cap)
{
	char date[64], hdr[1024];
	size_t start = b->len;
	int n;

	snprintf(id, id_cap, "<art%llu.z@bench.example>", (unsigned long long)i);
	fg_date_format(v->now - 300, date, sizeof(date));
	n = snprintf(hdr, sizeof(hdr),
		     "TAKETHIS %s\r\n"
		     "Path: peer1.example!peer2.example!poster.example!not-for-mail\r\n"
		     "From: A Poster <poster@example.com>\r\n"
		     "Newsgroups: alt.binaries.test,alt.test\r\n"
		     "Subject: benchmark article %llu (1/1) yEnc\r\n"
		     "Message-ID: %s\r\nDate: %s\r\nInjection-Date: %s\r\n"
		     "Organization: floodgate bench\r\nLines: 100\r\n\r\n",
		     id, (unsigned long long)i, id, date, date);
	put(b, hdr, (size_t)n);
	while (b->len - start < size) {
		static const char line[] =
			"=ybegin part=1 line=128 size=123456 name=benchmark.bin "
			"kjhasdkjhaskdjhaksjdhkasjhdkajshdkjashdkjahsdkjhaskjdhakjsdhkajsdhkajs\r\n";

		put(b, line, sizeof(line) - 1);
	}
	put(b, ".\r\n", 3);
}

static int bench_takethis(struct env *v, size_t size, uint64_t n, uint64_t base,
			  struct result *res)
{
	struct buf b = { 0 };
	char **ids = malloc(n * sizeof(*ids));
	uint16_t *lens = malloc(n * sizeof(*lens));
	uint64_t body = 0;
	struct rig r;
	double secs;
	int rc = 0;

	for (uint64_t i = 0; i < n; i++) {
		char id[64];
		size_t before = b.len;

		make_article(&b, v, base + i, size, id, sizeof(id));
		ids[i] = strdup(id);
		lens[i] = (uint16_t)strlen(id);
		body += b.len - before;
	}
	buf_settle(&b);
	if (rig_open(&r, v, v->cfg, 0) != 0)
		abort();
	res->lookups_per_s = lookup_rate(v, (const char *const *)ids, lens, n);
	secs = feed(&r, v, &b, PIECE, 0);
	if (r.st.n.code[FG_NNTP_CODE_C239] != n) {
		fprintf(stderr, "bench: %llu of %llu articles accepted\n",
			(unsigned long long)r.st.n.code[FG_NNTP_CODE_C239], (unsigned long long)n);
		rc = -1;
	}
	rig_close(&r);
	res->name = size > 100000 ? "TAKETHIS, 700 KB articles" : "TAKETHIS, 2 KB articles";
	res->unit = "articles/s";
	res->goal = 4e9;
	res->bytes_goal = true;
	fed(res, n, secs, &b, ids, lens);
	return rc;
}

static void print_table(FILE *f, const struct result *r, unsigned n, bool md, const struct env *v)
{
	if (md) {
		fprintf(f, "### Session engine (bench_session)\n\n"
			"One core, engine alone, no network; history of %llu slots pre-filled with "
			"%llu accepted IDs; input in 64 KiB pieces (new IDs: 24 KiB pieces a second "
			"apart on the engine's clock, offer-timeout 1s, so that each piece's 238s "
			"lapse as if their articles came and the session stays under its "
			"max-outstanding-offers); null sink. Rates are per CPU "
			"second of the thread (the machine is shared). Lookup rate: "
			"`fg_history_lookup_burst` over the same IDs, same run.\n\n"
			"| workload | rate | octets/s | history lookups/s | goal | met |\n"
			"| --- | ---: | ---: | ---: | ---: | :---: |\n",
			(unsigned long long)v->capacity, (unsigned long long)v->prefill);
		for (unsigned i = 0; i < n; i++)
			fprintf(f, "| %s | %.2f M %s | %.2f GB/s | %.2f M/s | %s | %s |\n", r[i].name,
				r[i].ops_per_s / 1e6, r[i].unit, r[i].bytes_per_s / 1e9,
				r[i].lookups_per_s / 1e6,
				r[i].bytes_goal ? "4 GB/s" : "5 M/s",
				(r[i].bytes_goal ? r[i].bytes_per_s : r[i].ops_per_s) >= r[i].goal ?
				"yes" : "no");
		fprintf(f, "\n");
		return;
	}
	fprintf(f, "%-30s %16s %12s %18s %8s\n", "workload", "rate", "octets/s", "lookups/s (same run)",
		"goal");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%-30s %9.2f M/s %9.2f GB/s %15.2f M/s %8s%s\n", r[i].name,
			r[i].ops_per_s / 1e6, r[i].bytes_per_s / 1e9, r[i].lookups_per_s / 1e6,
			r[i].bytes_goal ? "4 GB/s" : "5 M/s",
			(r[i].bytes_goal ? r[i].bytes_per_s : r[i].ops_per_s) >= r[i].goal ? "" :
			"  (below)");
}

int main(int argc, char **argv)
{
	static const char *const rows[] = { "check-dup", "check-new", "check-new-inn", "takethis-2k",
					    "takethis-700k", "check-dup-rate" };
	bool full = false;
	const char *md = NULL, *only = NULL;
	struct result res[FG_ARRAY_SIZE(rows)];
	unsigned n = 0;
	struct env v;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--full") == 0)
			full = true;
		else if (strcmp(argv[i], "--quick") == 0)
			full = false;
		else if (strcmp(argv[i], "--md") == 0 && i + 1 < argc)
			md = argv[++i];
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];	/* one row, for profiling */
		else {
			fprintf(stderr, "usage: bench_session [--quick|--full] [--md FILE] "
				"[--only check-dup|check-new|check-new-inn|takethis-2k|takethis-700k|"
				"check-dup-rate]\n");
			return 2;
		}
	}
	fg_log_set_level(FG_LOG_WARN);
	if (env_init(&v, full ? 8000000 : 2000000) != 0) {
		fprintf(stderr, "bench_session: setup failed\n");
		return 1;
	}
	if (env_inn(&v, full ? 8000000 : 2000000) != 0) {
		fprintf(stderr, "bench_session: setup of INN's history failed\n");
		return 1;
	}
	for (unsigned i = 0; i < FG_ARRAY_SIZE(rows); i++) {
		if (only && strcmp(only, rows[i]) != 0)
			continue;
		switch (i) {
		case 0:
			rc |= bench_check(&v, true, false, full ? 8000000 : 2000000, 0, &res[n]);
			break;
		case 1:
		case 2:
			rc |= bench_check(&v, false, i == 2, full ? 2000000 : 1000000, 0, &res[n]);
			break;
		case 3:
			rc |= bench_takethis(&v, 2048, full ? 400000 : 100000, 0, &res[n]);
			break;
		case 4:
			rc |= bench_takethis(&v, 700 * 1024, full ? 1000 : 200, 10000000, &res[n]);
			break;
		default:
			rc |= bench_check(&v, true, false, full ? 8000000 : 2000000, 1, &res[n]);
			break;
		}
		n++;
	}
	if (rc != 0) {
		fprintf(stderr, "bench_session: answers other than the expected ones; no figures\n");
		return 1;
	}
	env_inn_fini(&v);
	print_table(stdout, res, n, false, &v);
	if (md) {
		FILE *f = fopen(md, "w");

		if (!f) {
			fprintf(stderr, "bench_session: %s: %s\n", md, strerror(errno));
			return 1;
		}
		print_table(f, res, n, true, &v);
		fclose(f);
	}
	return 0;
}
