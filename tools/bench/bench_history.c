/* SPDX-License-Identifier: MIT */
/*
 * bench_history.c — the history table against DPDK's rte_hash and against
 * the machine's bound, on the same random Message-IDs.
 *
 *   bench_history [--quick | --full | --entries N] [--md FILE] [--no-rte] [--thp]
 *
 * --quick is 10 M entries (make bench), --full 100 M (make bench-full).
 * IDs are 48..64 octets ("<" 12..27 random [a-z0-9] "." decimal "@" host
 * ">", mean ~57), generated from their index so that none has to be kept.
 *
 * Measured, each in its own phase:
 *  - floodgate: N inserts (insert_final, one thread); lookups of present
 *    IDs (hits) and of never-inserted IDs (misses) through the burst API
 *    (hash, prefetch both buckets, probe; groups of 32), with 1 and 2
 *    threads; then inserts continue until the first failure, giving the
 *    highest load and bytes per entry = region size / entries stored.
 *    The table hashes with AES (aeshash.h); a second table of the same
 *    size with SipHash-1-3, the reference hash, is timed the same way
 *    (lookups only), so the hash's share shows.
 *  - rte_hash created with RW_CONCURRENCY_LF | MULTI_WRITER_ADD, 64-byte
 *    keys (the IDs, zero-padded), bulk lookups of 32, with its own CRC32
 *    hash and with floodgate's keyed AES hash; its bytes per entry are its
 *    rte_malloc heap growth over the entries it held at its first failed
 *    insert.
 *  - the bound of a one-miss lookup: for each ID the table's keyed hash
 *    and one independent random 8-byte read in a buffer the size of the
 *    table; the same with SipHash-1-3; and the reads without a hash.
 *  - each keyed hash alone, in ns per ID.
 * Rates are per CPU-second of the measuring thread(s) (the machine is
 * shared; on an idle one this is wall-clock time), the best of 3 runs;
 * with two threads, the sum of both threads' rates. Table on stdout; with --md FILE also as a markdown fragment for
 * docs/benchmarks.md (tools/bench/run.sh collects the docs/bench/ fragments).
 * Lookups are checked (every hit found, every miss absent): a benchmark
 * of wrong answers is worthless.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "floodgate/history.h"
#include "bench_kit.h"
#include "../../dataplane/history/history_int.h"

#define T0 1767225600
#define ID_STRIDE 64			/* bytes per ID in the buffers (rte_hash key) */
#define BURST 32
#define SAMPLE_MAX (4u << 20)		/* lookups per measurement */
#define CHUNK (1u << 16)		/* IDs generated per insert batch */
#define REPEAT 3			/* measurements per figure, best kept */

struct ids {
	char *buf;			/* n x ID_STRIDE, zero-padded */
	uint16_t *len;
	const void **ptr;
	struct fg_history_key *key;
	uint32_t *sig;			/* rte_hash's CRC32 of the padded ID */
	size_t n;
};

/* One contender's figures; rates per second, [0] one thread, [1] two. */
struct figures {
	int ran;
	double hit[2], miss[2];		/* lookups of present / absent IDs */
	double insert;
	double bpe, load;		/* at the first failed insert */
	uint64_t full;			/* entries stored then */
	uint64_t wrong;			/* lookup answers that were wrong */
};

enum { C_FG, C_FG_SIP, C_FG_KEYS, C_FG_KEYS_1L, C_RTE_CRC, C_RTE_CRC_KEYS, C_RTE_AES,
       C_BOUND, C_BOUND_SIP, C_BOUND_KEYS, C__N };

static const char *const cname[C__N] = {
	[C_FG] = "floodgate (AES hash)",
	[C_FG_SIP] = "floodgate with SipHash-1-3 (the reference hash)",
	[C_FG_KEYS] = "floodgate, keys hashed before",
	[C_FG_KEYS_1L] = "floodgate, keys hashed before, 2nd line on demand",
	[C_RTE_CRC] = "rte_hash, CRC32 (unkeyed)",
	[C_RTE_CRC_KEYS] = "rte_hash, CRC32, keys hashed before",
	[C_RTE_AES] = "rte_hash, AES hash (keyed, as floodgate)",
	[C_BOUND] = "bound: AES hash + 1 random read",
	[C_BOUND_SIP] = "bound: SipHash-1-3 + 1 random read",
	[C_BOUND_KEYS] = "bound: 1 random read",
};

/* Ratios printed: floodgate's row `us` over row `them`. */
static const struct {
	int us, them;
	const char *goal;
} ratios[] = {
	{ C_FG, C_RTE_CRC, " (goal >= 3)" },
	{ C_FG_KEYS, C_RTE_CRC_KEYS, "" },
	{ C_FG, C_RTE_AES, " (goal >= 3)" },
	{ C_FG, C_BOUND, " (goal >= 0.7)" },
	{ C_FG_SIP, C_BOUND_SIP, "" },
	{ C_FG_KEYS, C_BOUND_KEYS, "" },
};

struct results {
	struct figures c[C__N];
	double aes_ns, sip13_ns, sip24_ns;
	size_t region;
};

static uint64_t entries = 10000000;
static const char *md_path;
static int no_rte, thp;
static struct fg_history *g_h;

/* CPU time of the calling thread: several engineers share this 2-core
 * machine, and a measurement must not count the time others ran. On an
 * idle machine it equals wall-clock time. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The i-th Message-ID: unique by its decimal part, random-looking left
 * part and host, 48..64 octets. */
static uint16_t make_id(uint64_t i, char *out)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static const char *const hosts[] = { "news.example.net", "feed.example.org",
		"reader.example-isp.co.uk", "nntp.example.de", "usenet.example.nl",
		"news.example.com", "in.example.fr", "spool.example.se" };
	uint64_t r = bench_mix64(i * 0x9e3779b97f4a7c15ull + 1);
	const char *host = hosts[r % 8];
	size_t hl = strlen(host), n = 0;
	char dec[24];
	int dl = snprintf(dec, sizeof(dec), "%llu", (unsigned long long)i);
	size_t left = 48 + (r >> 8) % 17 - 4 - (size_t)dl - hl;	/* total 48..64 */

	if (left > 40)
		left = 12;
	out[n++] = '<';
	for (size_t k = 0; k < left; k++, r = bench_mix64(r))
		out[n++] = alnum[r % 36];
	out[n++] = '.';
	memcpy(out + n, dec, (size_t)dl);
	n += (size_t)dl;
	out[n++] = '@';
	memcpy(out + n, host, hl);
	n += hl;
	out[n++] = '>';
	memset(out + n, 0, ID_STRIDE - n);
	return (uint16_t)n;
}

static void ids_alloc(struct ids *s, size_t n)
{
	s->n = n;
	s->buf = calloc(n, ID_STRIDE);
	s->len = calloc(n, sizeof(*s->len));
	s->ptr = calloc(n, sizeof(*s->ptr));
	s->key = calloc(n, sizeof(*s->key));
	s->sig = calloc(n, sizeof(*s->sig));
	if (!s->buf || !s->len || !s->ptr || !s->key || !s->sig) {
		fprintf(stderr, "bench_history: out of memory for %zu IDs\n", n);
		exit(1);
	}
}

/* IDs first + k*step (k < n) into s. */
static void ids_fill(struct ids *s, uint64_t first, uint64_t step, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		s->len[k] = make_id(first + k * step, s->buf + k * ID_STRIDE);
		s->ptr[k] = s->buf + k * ID_STRIDE;
	}
}

static void ids_free(struct ids *s)
{
	free(s->buf);
	free(s->len);
	free(s->ptr);
	free(s->key);
	free(s->sig);
}

/* ---- two-thread runner ---- */

struct job {
	void (*fn)(struct job *);
	const struct ids *s;
	void *ctx;
	int want;			/* the answer every lookup must give */
	unsigned shift;			/* 1: start half-way into the sample */
	double secs;			/* CPU seconds the job took */
	uint64_t sink;
	uint64_t errors;
};

static void *job_main(void *p)
{
	struct job *j = p;
	double t0 = now_s();

	j->fn(j);
	j->secs = now_s() - t0;
	return NULL;
}

/* One measurement: lookups per CPU-second over the sample with 1 or 2
 * threads (each runs the whole sample, from a different starting point;
 * with two, the sum of both rates). */
static double run_once(void (*fn)(struct job *), const struct ids *s, void *ctx, int want,
		       unsigned threads, uint64_t *errors)
{
	struct job j[2] = { { .fn = fn, .s = s, .ctx = ctx, .want = want },
			    { .fn = fn, .s = s, .ctx = ctx, .want = want, .shift = 1 } };
	pthread_t th;
	double rate;

	if (threads == 2 && pthread_create(&th, NULL, job_main, &j[1]))
		threads = 1;
	job_main(&j[0]);
	if (threads == 2)
		pthread_join(th, NULL);
	if (errors)
		*errors += j[0].errors + (threads == 2 ? j[1].errors : 0);
	rate = (double)s->n / j[0].secs;
	if (threads == 2)
		rate += (double)s->n / j[1].secs;
	return rate;
}

/* The best of REPEAT measurements: other engineers' jobs share the
 * machine, and interference only ever makes a run slower. */
static double run_rate(void (*fn)(struct job *), const struct ids *s, void *ctx, int want,
		       unsigned threads, uint64_t *errors)
{
	double best = 0;

	for (int i = 0; i < REPEAT; i++) {
		double r = run_once(fn, s, ctx, want, threads, errors);

		best = r > best ? r : best;
	}
	return best;
}

static size_t start_of(const struct job *j)
{
	return j->shift ? (j->s->n / 2) & ~(size_t)(BURST - 1) : 0;
}

/* ---- floodgate ---- */

static void fg_lookup_job(struct job *j)
{
	const struct ids *s = j->s;
	enum fg_history_state want = (enum fg_history_state)j->want;
	struct fg_history_key keys[BURST];
	struct fg_history_entry out[BURST];
	size_t n = s->n, off = start_of(j);

	for (size_t b = 0; b < n; b += BURST) {
		size_t at = (b + off) % n, cnt = n - at < BURST ? n - at : BURST;

		fg_history_lookup_burst(g_h, s->ptr + at, s->len + at, (unsigned)cnt, T0, keys, out);
		for (size_t i = 0; i < cnt; i++)
			j->errors += out[i].state != want;
	}
}

/* The same pipeline on precomputed keys: the table's cost without hashing,
 * prefetching both lines (ctx NULL) or the first only (ctx non-NULL). */
static void fg_lookup_keys_job(struct job *j)
{
	const struct ids *s = j->s;
	struct fg_history_entry out[BURST];
	size_t n = s->n, off = start_of(j);

	for (size_t b = 0; b < n; b += BURST) {
		size_t at = (b + off) % n, cnt = n - at < BURST ? n - at : BURST;

		fg_hlookup_keys(g_h, s->key + at, (unsigned)cnt, T0, out, j->ctx == NULL);
		for (size_t i = 0; i < cnt; i++)
			j->errors += out[i].state != (enum fg_history_state)j->want;
	}
}

/* ---- the bound: keyed hash + one random 8-byte read ---- */

struct bound_ctx {
	const uint64_t *buf;
	uint64_t words;
	const struct fg_history *hash;	/* whose keyed hash, or NULL: none */
};

/* As good as such a loop gets here: per group of 32, hash all, then
 * prefetch all, then the 32 independent reads. (A prefetch right after
 * each hash is much slower on this machine: a prefetch that misses the
 * TLB holds up retirement while the page walk runs, and the hash that
 * follows cannot overlap it.) */
static void bound_job(struct job *j)
{
	const struct bound_ctx *c = j->ctx;
	const struct ids *s = j->s;
	size_t n = s->n, off = start_of(j);
	uint64_t sum = 0, idx[BURST];

	for (size_t b = 0; b < n; b += BURST) {
		size_t at = (b + off) % n, cnt = n - at < BURST ? n - at : BURST;

		for (size_t i = 0; i < cnt; i++) {
			uint64_t lo = s->key[at + i].lo;

			if (c->hash) {
				struct fg_history_key k;

				fg_history_hash(c->hash, s->ptr[at + i], s->len[at + i], &k);
				lo = k.lo;
			}
			idx[i] = fg_hrange(lo, c->words);
		}
		for (size_t i = 0; i < cnt; i++)
			__builtin_prefetch(&c->buf[idx[i]]);
		for (size_t i = 0; i < cnt; i++)
			sum += c->buf[idx[i]];
	}
	j->sink = sum;
}

/* ---- rte_hash ---- */

/* with_sig: the signatures computed beforehand, rte_hash's table alone,
 * to compare with floodgate's "keys hashed before". */
static void rte_lookups(struct job *j, bool with_sig)
{
	const struct ids *s = j->s;
	const struct rte_hash *rh = j->ctx;
	size_t n = s->n, off = start_of(j);
	int32_t pos[BURST];

	for (size_t b = 0; b < n; b += BURST) {
		size_t at = (b + off) % n, cnt = n - at < BURST ? n - at : BURST;

		if (with_sig)
			rte_hash_lookup_with_hash_bulk(rh, s->ptr + at, s->sig + at, (uint32_t)cnt,
						       pos);
		else
			rte_hash_lookup_bulk(rh, s->ptr + at, (uint32_t)cnt, pos);
		for (size_t i = 0; i < cnt; i++)
			j->errors += (pos[i] >= 0) != j->want;
	}
}

static void rte_lookup_job(struct job *j)
{
	rte_lookups(j, false);
}

static void rte_lookup_sig_job(struct job *j)
{
	rte_lookups(j, true);
}

static double time_hash(void (*fn)(const uint64_t *, const void *, size_t, uint64_t *),
			const struct ids *s)
{
	uint64_t k[2] = { 1, 2 }, out[2], sum = 0;
	double best = 1e9;

	for (int r = 0; r < REPEAT; r++) {
		double t0 = now_s(), ns;

		for (size_t i = 0; i < s->n; i++) {
			fn(k, s->ptr[i], s->len[i], out);
			sum += out[0];
		}
		ns = (now_s() - t0) * 1e9 / (double)s->n;
		best = ns < best ? ns : best;
	}
	if (sum == 42)
		puts("");
	return best;
}

static struct fg_aeskey aes_key;

static void aes(const uint64_t *k, const void *d, size_t n, uint64_t *o) { (void)k; fg_aeshash128(&aes_key, d, n, o); }
static void sip13(const uint64_t *k, const void *d, size_t n, uint64_t *o) { fg_siphash13_128(k, d, n, o); }
static void sip24(const uint64_t *k, const void *d, size_t n, uint64_t *o) { fg_siphash24_128(k, d, n, o); }

/* Insert IDs [from, to) into our table; stops at the first failure.
 * Returns how many went in; *secs = time spent inserting. */
static uint64_t fg_insert_range(uint64_t from, uint64_t to, double *secs)
{
	struct ids c;
	uint64_t done = 0;

	ids_alloc(&c, CHUNK);
	*secs = 0;
	for (uint64_t i = from; i < to; i += CHUNK) {
		size_t n = (size_t)(to - i < CHUNK ? to - i : CHUNK);
		double t0;

		ids_fill(&c, i, 1, n);
		t0 = now_s();
		for (size_t k = 0; k < n; k++) {
			struct fg_history_key key;

			fg_history_hash(g_h, c.ptr[k], c.len[k], &key);
			if (fg_history_insert_final(g_h, &key, FG_HISTORY_ACCEPTED, T0, T0, T0, NULL)) {
				*secs += now_s() - t0;
				ids_free(&c);
				return done;
			}
			done++;
		}
		*secs += now_s() - t0;
	}
	ids_free(&c);
	return done;
}

/* A table with `hash` holding the first `entries` IDs, in a new mapping
 * of r->region bytes (*mem); g_h is its handle. */
static void fg_fill(struct results *r, enum fg_history_hashfn hash, void **mem, double *rate)
{
	struct fg_history_params p = { .capacity = entries + entries / 9 + 5, .hash = hash,
				       .full_policy = FG_FULL_DEFER, .alarm_load_pct = 90, .now = T0 };
	uint64_t n;
	double secs;

	r->region = fg_history_region_size(p.capacity, 0);
	*mem = mmap(NULL, r->region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*mem == MAP_FAILED || fg_history_seed_random(p.seed)) {
		perror("bench_history: region");
		exit(1);
	}
	if (thp)	/* off by default: rte_hash runs on 4 KiB pages (--no-huge) too */
		madvise(*mem, r->region, MADV_HUGEPAGE);
	g_h = fg_history_create(*mem, r->region, &p);
	if (!g_h)
		exit(1);
	fprintf(stderr, "floodgate (%s): inserting %llu IDs (table at 90 %% when done)\n",
		hash == FG_HISTORY_HASH_AES ? "AES" : "SipHash", (unsigned long long)entries);
	n = fg_insert_range(0, entries, &secs);
	if (n != entries) {
		fprintf(stderr, "bench_history: insert failed at %llu\n", (unsigned long long)n);
		exit(1);
	}
	*rate = (double)n / secs;
}

/* Lookups through the burst API (row c) and the bound with the same
 * hash (row b), 1 and 2 threads. */
static void fg_lookups(struct results *r, int c, int b, void *mem, struct ids *hits,
		       struct ids *miss, uint64_t *errors)
{
	/* the bound reads the table's own memory: same size, already mapped */
	struct bound_ctx bc = { .buf = mem, .words = r->region / 8, .hash = g_h };

	for (unsigned t = 1; t <= 2; t++) {
		r->c[c].hit[t - 1] = run_rate(fg_lookup_job, hits, NULL, FG_HISTORY_ACCEPTED, t, errors);
		r->c[c].miss[t - 1] = run_rate(fg_lookup_job, miss, NULL, FG_HISTORY_ABSENT, t, errors);
		r->c[b].hit[t - 1] = r->c[b].miss[t - 1] = run_rate(bound_job, miss, &bc, 0, t, NULL);
	}
	r->c[c].ran = r->c[b].ran = 1;
}

static void bench_floodgate(struct results *r, struct ids *hits, struct ids *miss)
{
	struct fg_history_stats st;
	struct bound_ctx bc;
	uint64_t errors = 0, n = entries;
	double secs;
	void *mem;

	/* the reference hash first, lookups only */
	fg_fill(r, FG_HISTORY_HASH_SIPHASH, &mem, &r->c[C_FG_SIP].insert);
	fprintf(stderr, "floodgate (SipHash): lookups\n");
	fg_lookups(r, C_FG_SIP, C_BOUND_SIP, mem, hits, miss, &errors);
	fg_history_detach(g_h);
	munmap(mem, r->region);

	fg_fill(r, FG_HISTORY_HASH_AES, &mem, &r->c[C_FG].insert);
	for (size_t i = 0; i < hits->n; i++)
		fg_history_hash(g_h, hits->ptr[i], hits->len[i], &hits->key[i]);
	for (size_t i = 0; i < miss->n; i++)
		fg_history_hash(g_h, miss->ptr[i], miss->len[i], &miss->key[i]);
	fprintf(stderr, "floodgate (AES): lookups\n");
	fg_lookups(r, C_FG, C_BOUND, mem, hits, miss, &errors);
	for (unsigned t = 1; t <= 2; t++) {
		struct figures *k = &r->c[C_FG_KEYS], *k1 = &r->c[C_FG_KEYS_1L];

		k->hit[t - 1] = run_rate(fg_lookup_keys_job, hits, NULL, FG_HISTORY_ACCEPTED, t, &errors);
		k->miss[t - 1] = run_rate(fg_lookup_keys_job, miss, NULL, FG_HISTORY_ABSENT, t, &errors);
		k1->hit[t - 1] = run_rate(fg_lookup_keys_job, hits, (void *)1, FG_HISTORY_ACCEPTED, t,
					  &errors);
		k1->miss[t - 1] = run_rate(fg_lookup_keys_job, miss, (void *)1, FG_HISTORY_ABSENT, t,
					   &errors);
	}
	bc = (struct bound_ctx){ .buf = mem, .words = r->region / 8, .hash = NULL };
	for (unsigned t = 1; t <= 2; t++)
		r->c[C_BOUND_KEYS].hit[t - 1] = r->c[C_BOUND_KEYS].miss[t - 1] =
			run_rate(bound_job, miss, &bc, 0, t, NULL);
	if (errors) {
		fprintf(stderr, "bench_history: %llu wrong lookup answers\n", (unsigned long long)errors);
		exit(1);
	}
	fprintf(stderr, "floodgate: filling until the first failed insert\n");
	n += fg_insert_range(entries, 4 * entries, &secs);
	fg_history_stats(g_h, &st);
	r->c[C_FG].full = n;
	r->c[C_FG].load = (double)n / (double)st.slots;
	r->c[C_FG].bpe = (double)r->region / (double)n;
	r->c[C_FG_KEYS].ran = r->c[C_FG_KEYS_1L].ran = r->c[C_BOUND_KEYS].ran = 1;
	fg_history_detach(g_h);
	munmap(mem, r->region);
}

static size_t rte_heap_bytes(void)
{
	struct rte_malloc_socket_stats s;
	size_t total = 0;

	for (unsigned sock = 0; sock < rte_socket_count(); sock++)
		if (rte_malloc_get_socket_stats((int)rte_socket_id_by_idx(sock), &s) == 0)
			total += s.heap_allocsz_bytes;
	return total;
}

static int rte_add_range(struct rte_hash *rh, uint64_t from, uint64_t to, uint64_t *done,
			 double *secs)
{
	struct ids c;
	int rc = 0;

	ids_alloc(&c, CHUNK);
	*secs = 0;
	for (uint64_t i = from; i < to && !rc; i += CHUNK) {
		size_t n = (size_t)(to - i < CHUNK ? to - i : CHUNK);
		double t0;

		ids_fill(&c, i, 1, n);
		t0 = now_s();
		for (size_t k = 0; k < n; k++) {
			rc = rte_hash_add_key(rh, c.ptr[k]);
			if (rc < 0)
				break;
			rc = 0;
			++*done;
		}
		*secs += now_s() - t0;
	}
	ids_free(&c);
	return rc;
}

static struct fg_aeskey rte_aes_key;

/* rte_hash's hash function slot with the table's keyed hash: the same
 * flood resistance, the same cost per ID */
static uint32_t rte_aes(const void *key, uint32_t len, uint32_t init)
{
	uint64_t o[2];

	(void)init;
	fg_aeshash128(&rte_aes_key, key, len, o);
	return (uint32_t)o[0];
}

static void bench_rte(struct figures *f, struct figures *fk, rte_hash_function fn,
		      const char *name, struct ids *hits, struct ids *miss)
{
	struct rte_hash_parameters p = {
		.name = name, .entries = (uint32_t)entries, .key_len = ID_STRIDE,
		.hash_func = fn, .socket_id = (int)rte_socket_id(),
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD,
	};
	size_t before = rte_heap_bytes(), bytes;
	struct rte_hash *rh = rte_hash_create(&p);
	uint64_t done = 0, errors = 0;
	double secs, more;

	if (!rh) {
		fprintf(stderr, "bench_history: rte_hash_create: %s\n", rte_strerror(rte_errno));
		return;
	}
	bytes = rte_heap_bytes() - before;
	fprintf(stderr, "%s: inserting %llu IDs\n", name, (unsigned long long)entries);
	if (rte_add_range(rh, 0, entries, &done, &secs) || done != entries)
		fprintf(stderr, "%s: add failed after %llu\n", name, (unsigned long long)done);
	f->insert = (double)done / secs;
	fprintf(stderr, "%s: lookups\n", name);
	for (unsigned t = 1; t <= 2; t++) {
		f->hit[t - 1] = run_rate(rte_lookup_job, hits, rh, 1, t, &errors);
		f->miss[t - 1] = run_rate(rte_lookup_job, miss, rh, 0, t, &errors);
	}
	for (unsigned t = 1; fk && t <= 2; t++) {
		for (size_t i = 0; i < hits->n; i++)
			hits->sig[i] = rte_hash_hash(rh, hits->ptr[i]);
		for (size_t i = 0; i < miss->n; i++)
			miss->sig[i] = rte_hash_hash(rh, miss->ptr[i]);
		fk->hit[t - 1] = run_rate(rte_lookup_sig_job, hits, rh, 1, t, &errors);
		fk->miss[t - 1] = run_rate(rte_lookup_sig_job, miss, rh, 0, t, &errors);
		fk->ran = 1;
	}
	f->wrong = errors;
	if (errors)
		fprintf(stderr, "%s: %llu wrong lookup answers\n", name, (unsigned long long)errors);
	rte_add_range(rh, entries, 2 * entries, &done, &more);
	f->full = done;
	f->load = (double)done / (double)entries;
	f->bpe = (double)bytes / (double)done;
	f->ran = 1;
	rte_hash_free(rh);
}

static int eal_init(void)
{
	/* the key store (~72 B/entry), buckets and slack */
	unsigned long mb = (unsigned long)(entries * 130 / (1 << 20)) + 256;
	char args[10][32] = { "bench_history", "--no-huge", "-m", "", "--no-pci", "--no-shconf",
			      "--no-telemetry", "--log-level=error", "-l", "0" };
	char *argv[11];

	snprintf(args[3], sizeof(args[3]), "%lu", mb);
	for (int i = 0; i < 10; i++)
		argv[i] = args[i];
	argv[10] = NULL;
	return rte_eal_init(10, argv);
}

/* ---- report ---- */

static void cell(FILE *f, int md, int ran, double v, const char *fmt)
{
	char buf[32];

	if (ran && v > 0)
		snprintf(buf, sizeof(buf), fmt, v);
	else
		snprintf(buf, sizeof(buf), "-");
	fprintf(f, md ? " %s |" : " %9s", buf);
}

static void report(FILE *f, int md, const struct results *r, const char *when)
{
	const struct figures *fg = &r->c[C_FG];
	struct utsname u;

	uname(&u);
	if (md)
		fprintf(f, "### History table, %llu entries\n\n"
			"`build/release/bench/bench_history --entries %llu` on %s (%s, %ld CPUs), %s. "
			"IDs of 48..64 octets; lookups in bursts of 32 with the table at 90 %% load; "
			"rates per CPU-second of the measuring threads, best of 3 (2 threads: the sum of both).\n\n"
			"| million per second | hits, 1 thr | misses, 1 thr | hits, 2 thr | misses, 2 thr "
			"| inserts | bytes/entry | load at 1st failure |\n"
			"| --- | --- | --- | --- | --- | --- | --- | --- |\n",
			(unsigned long long)entries, (unsigned long long)entries, u.nodename,
			u.machine, sysconf(_SC_NPROCESSORS_ONLN), when);
	else
		fprintf(f, "\nhistory: %llu entries, 48..64-octet IDs, bursts of 32, table at 90%% load\n"
			"%-52s %9s %9s %9s %9s %9s %9s %9s\n", (unsigned long long)entries,
			"(million per second, per CPU-second)", "hit 1t", "miss 1t", "hit 2t",
			"miss 2t", "insert", "B/entry", "load %");
	for (int c = 0; c < C__N; c++) {
		const struct figures *x = &r->c[c];

		fprintf(f, md ? "| %s%s |" : "%-52s%s", cname[c], x->wrong ? " *" : "");
		cell(f, md, x->ran, x->hit[0] / 1e6, "%.2f");
		cell(f, md, x->ran, x->miss[0] / 1e6, "%.2f");
		cell(f, md, x->ran, x->hit[1] / 1e6, "%.2f");
		cell(f, md, x->ran, x->miss[1] / 1e6, "%.2f");
		cell(f, md, x->ran, x->insert / 1e6, "%.2f");
		cell(f, md, x->ran, x->bpe, "%.2f");
		cell(f, md, x->ran, 100 * x->load, "%.1f");
		fputc('\n', f);
	}
	fprintf(f, md ? "\n| floodgate / ... | hits, 1 thr | misses, 1 thr | hits, 2 thr | misses, 2 thr |\n"
			"| --- | --- | --- | --- | --- |\n"
		   : "\n%-52s %9s %9s %9s %9s\n", "floodgate / ...", "hit 1t", "miss 1t", "hit 2t", "miss 2t");
	for (unsigned i = 0; i < FG_ARRAY_SIZE(ratios); i++) {
		const struct figures *x = &r->c[ratios[i].them], *us = &r->c[ratios[i].us];
		char name[160];
		int ok = x->ran && !x->wrong && us->ran;

		snprintf(name, sizeof(name), "%s%s%s%s", ratios[i].us == C_FG ? "" : cname[ratios[i].us],
			 ratios[i].us == C_FG ? "" : " / ", cname[ratios[i].them], ratios[i].goal);
		fprintf(f, md ? "| %s |" : "%-52s", name);
		cell(f, md, ok, x->hit[0] > 0 ? us->hit[0] / x->hit[0] : 0, "%.2f");
		cell(f, md, ok, x->miss[0] > 0 ? us->miss[0] / x->miss[0] : 0, "%.2f");
		cell(f, md, ok, x->hit[1] > 0 ? us->hit[1] / x->hit[1] : 0, "%.2f");
		cell(f, md, ok, x->miss[1] > 0 ? us->miss[1] / x->miss[1] : 0, "%.2f");
		fputc('\n', f);
	}
	fprintf(f, md ? "\nKeyed hash of one ID (IDs read from memory): AES %.1f ns (the table's), "
			"SipHash-1-3-128 %.1f ns, SipHash-2-4-128 %.1f ns. Region %.1f MiB; floodgate's "
			"first failed insert after %llu entries (%.2f bytes per entry, goal <= 16).\n"
		   : "\nkeyed hash per ID: AES %.1f ns (used), SipHash-1-3-128 %.1f ns, SipHash-2-4-128 %.1f ns\n"
		     "region %.1f MiB; first failed insert after %llu entries (%.2f B/entry, goal <= 16)\n",
		r->aes_ns, r->sip13_ns, r->sip24_ns, r->region / 1048576.0, (unsigned long long)fg->full,
		fg->bpe);
	if (r->c[C_RTE_CRC].wrong || r->c[C_RTE_AES].wrong)
		fprintf(f, md ? "\n\\* rte_hash gave wrong answers (%llu and %llu lookups): its key store is "
				"addressed with a 32-bit key index times a 32-bit entry size, so beyond 4 GiB of "
				"keys (%llu keys of %d+8 bytes) entries alias. Its rates are not comparable; no "
				"ratio is given.\n"
			   : "\n* rte_hash gave wrong answers (%llu and %llu lookups): its key store is "
			     "addressed with a 32-bit index x entry size; beyond 4 GiB of keys (%llu keys of "
			     "%d+8 bytes) entries alias. No ratio is given.\n",
			(unsigned long long)r->c[C_RTE_CRC].wrong, (unsigned long long)r->c[C_RTE_AES].wrong,
			(unsigned long long)((1ull << 32) / (ID_STRIDE + 8)), ID_STRIDE);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' }, { "full", no_argument, NULL, 'f' },
		{ "entries", required_argument, NULL, 'n' }, { "md", required_argument, NULL, 'm' },
		{ "no-rte", no_argument, NULL, 'r' }, { "thp", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 } };
	struct results r = { 0 };
	struct ids hits, miss;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	char when[64];
	time_t tnow = time(NULL);
	size_t sample;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': entries = 10000000; break;
		case 'f': entries = 100000000; break;
		case 'n': entries = strtoull(optarg, NULL, 10); break;
		case 'm': md_path = optarg; break;
		case 'r': no_rte = 1; break;
		case 't': thp = 1; break;
		default:
			fprintf(stderr, "usage: %s [--quick|--full|--entries N] [--md FILE] [--no-rte] [--thp]\n",
				argv[0]);
			return 2;
		}
	}
	if (entries < 1000 || entries > (1ull << 32) - 1) {
		fprintf(stderr, "bench_history: --entries between 1000 and 2^32-1\n");
		return 2;
	}
	strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&tnow));
	sample = entries < SAMPLE_MAX ? (size_t)entries : SAMPLE_MAX;
	ids_alloc(&hits, sample);
	ids_alloc(&miss, sample);
	/* present: spread over the whole inserted range; absent: beyond it */
	ids_fill(&hits, entries / sample / 2, entries / sample, sample);
	ids_fill(&miss, 1ull << 40, 3, sample);
	if (fg_history_seed_random(seed) != 0)
		return 1;
	fg_aeskey_init(&aes_key, seed);
	r.aes_ns = time_hash(aes, &hits);
	r.sip13_ns = time_hash(sip13, &hits);
	r.sip24_ns = time_hash(sip24, &hits);
	bench_floodgate(&r, &hits, &miss);
	if (!no_rte) {
		if (eal_init() < 0) {
			fprintf(stderr, "bench_history: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		} else {
			bench_rte(&r.c[C_RTE_CRC], &r.c[C_RTE_CRC_KEYS], rte_hash_crc, "rte_hash_crc",
				  &hits, &miss);
			fg_aeskey_init(&rte_aes_key, seed);
			bench_rte(&r.c[C_RTE_AES], NULL, rte_aes, "rte_hash_aes", &hits, &miss);
		}
	}
	report(stdout, 0, &r, when);
	if (md_path) {
		FILE *f = fopen(md_path, "w");

		if (!f) {
			perror(md_path);
			return 1;
		}
		report(f, 1, &r, when);
		fclose(f);
	}
	ids_free(&hits);
	ids_free(&miss);
	if (!no_rte)
		rte_eal_cleanup();
	return 0;
}
