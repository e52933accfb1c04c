/* SPDX-License-Identifier: MIT */
/*
 * bench_scale.c — the history at a full feed's scale: one table size and
 * shard count per run, every figure against the same run's bound.
 *
 *   bench_scale [--quick|--full] [--entries N] [--shards S] [--dir DIR]
 *               [--snapshot-rate BYTES] [--worker-cpu 0|1] [--json FILE] [--md FILE]
 *
 * --quick: 10 M entries, 64 shards and 1; --full: the same at 10 M and
 * 100 M (each in a child process of its own, so memory is given back
 * between runs); the 1 G point is run alone with --entries (it needs
 * 16 GB: tools/bench/scale_curve.sh). The table ends 80 % full (capacity
 * 1.25 x the entries and the journal tail). Steps, each timed once:
 *   1. fill      N fg_history_insert_final of Message-IDs
 *                "<hex.n@scale.bench.example>" (the hash included) on two
 *                threads, every other ID each: CPU ns per insert, in
 *                anonymous memory with MADV_HUGEPAGE (2M pages where THP
 *                allows: AnonHugePages is reported)
 *   2. lookups   2^20 sampled hits and 2^20 misses through
 *                fg_history_lookup_burst (hash + probe, bursts of 32), on
 *                1 thread and on 2 at once, in thread CPU time (a shared
 *                machine preempts at will), best of 3; the bound: the same
 *                IDs hashed
 *                and one random 64-byte read in the same table, the same
 *                bursts and prefetches (ratio = bound / lookup time)
 *   3. snapshot  fg_snapshot_write while a worker answers CHECK bursts
 *                (32 lookups): p50/p99 of a burst's time during the
 *                snapshot against the same worker for as long before it.
 *                The worker is a process of its own, as a dataplane lcore
 *                is beside floodctld: a forked child reading the table
 *                (lookups only: an offer's write would copy the page under
 *                fork's copy-on-write), so the TLB shootdowns of the
 *                snapshot's writeback go to the writer's CPUs, not the
 *                worker's, as in production. Worker (--worker-cpu, 1 by
 *                default) and writer pinned to CPUs 0 and 1, one each: put
 *                the worker where the disk's interrupts are not, as a site
 *                puts its lcores; the burst's time in thread CPU time
 *                (what a dedicated lcore would see: a shared machine's
 *                preemptions left out, the snapshot's pressure on caches
 *                and memory kept in); then the same snapshot again,
 *                paced (fg_snapshot_write_paced, snapshot-rate) at
 *                --snapshot-rate bytes a second, by default half the rate
 *                the unpaced one reached, and the worker's p50/p99 during it
 *   4. journal   an hour of a full feed's new IDs (600 M a day: 25 M
 *                records; at 10 M entries N/4) appended after the snapshot
 *   5. restore   the table freed, the region gone (a reboot), the
 *                snapshot's and journal's pages dropped from the page
 *                cache (fsync, posix_fadvise DONTNEED), then fg_restore:
 *                table (threads: one per CPU) and journal replay
 *   6. lookups   again on the restored region (tmpfs, 4K pages here)
 *   7. sweep     one full fg_expiry_pass (first-seen, no pauses): the ~10 %
 *                of entries first seen 11 d + 10 min ago go
 * Files go to DIR (default: a new directory under /var/tmp), removed at
 * the end. --json appends one line of figures; --md writes a fragment.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/snapshot.h"
#include "bench_kit.h"

#define DAY 86400
#define SAMPLE (1u << 20)	/* IDs per lookup sample */
#define BURST 32u
#define ID_MAX 48u
#define HOUR_OF_FEED 25000000ull	/* 600 M new IDs a day / 24 */
#define LAT_MAX (1u << 22)		/* burst latencies kept per phase */
#define WORKER_CPU 1u			/* the snapshot phase's worker; the writer takes the other */

struct fig {
	uint64_t entries, capacity, shards, tail;
	double region_gb, anon_huge_gb, rss_gb;
	double fill_ns;
	double hit_ns, miss_ns, bound_ns, hit2_mps, miss2_mps, hit_ns_4k, miss_ns_4k, bound_ns_4k;
	double snap_s, snap_gbps, p50_idle_us, p99_idle_us, p50_snap_us, p99_snap_us;
	double paced_s, paced_mbps, p50_paced_us, p99_paced_us;
	unsigned worker_cpu;
	double restore_s, restore_table_s, restore_journal_s, sweep_s;
	uint64_t swept;
	double load_avg;
};

static double now_s(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

/* This thread's CPU time: a shared machine preempts a run at will, and
 * wall time would count that as the lookups' cost. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Message-ID number i: spread over the whole hex range, so IDs of nearby
 * numbers share no prefix (as real ones do not). */
static unsigned id_of(uint64_t i, char *out)
{
	return (unsigned)snprintf(out, ID_MAX, "<%016" PRIx64 ".%" PRIu64 "@scale.bench.example>",
				  (uint64_t)(i * 0x9e3779b97f4a7c15ull), i);
}

/* first seen over the last 10 days; one in ten 11 d + 10 min ago */
static fg_time_t first_seen(uint64_t i, fg_time_t now)
{
	return now - (fg_time_t)(i % 10 == 0 ? 11 * DAY + 600 : bench_mix64(i) % (10 * DAY));
}

/* ---- the table in anonymous memory ---- */

struct table {
	void *mem;
	size_t len;
	struct fg_history *h;
};

static void table_make(struct table *t, uint64_t capacity, uint32_t shards, fg_time_t now)
{
	struct fg_history_params hp = { .capacity = capacity, .shards = shards,
					.full_policy = FG_FULL_DEFER, .alarm_load_pct = 95,
					.now = now };

	if (fg_history_seed_random(hp.seed) < 0)
		bench_die("no random seed");
	t->len = fg_history_region_size_sharded(capacity, 0, shards);
	t->mem = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t->len || t->mem == MAP_FAILED)
		bench_die("no memory for the table");
	madvise(t->mem, t->len, MADV_HUGEPAGE);
	t->h = fg_history_create(t->mem, t->len, &hp);
	if (!t->h)
		bench_die("fg_history_create");
}

static void table_free(struct table *t)
{
	fg_history_detach(t->h);
	munmap(t->mem, t->len);
}

static double anon_huge_gb(void)
{
	char line[256];
	unsigned long long kb = 0, v;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %llu kB", &v) == 1)
			kb = v;
	fclose(f);
	return (double)kb / 1e6 * 1.024;
}

/* GB the mapping at `base` holds in memory (smaps Rss): what the filled
 * table really occupies, beside the layout's size (region_gb). */
static double mapping_rss_gb(const void *base)
{
	char line[512];
	unsigned long lo, hi;
	unsigned long long kb = 0, v;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo <= (unsigned long)base && (unsigned long)base < hi;
		else if (in && sscanf(line, "Rss: %llu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return (double)kb * 1024 / 1e9;
}

struct fill_arg {
	struct fg_history *h;
	uint64_t from, n, step;
	fg_time_t now;
	double cpu;
};

static void *fill_thread(void *p)
{
	struct fill_arg *a = p;
	char id[ID_MAX];
	double c = cpu_s();

	for (uint64_t i = a->from; i < a->n; i += a->step) {
		struct fg_history_key k;
		fg_time_t fs = first_seen(i, a->now);

		fg_history_hash(a->h, id, id_of(i, id), &k);
		if (fg_history_insert_final(a->h, &k, FG_HISTORY_ACCEPTED, fs, fs, a->now, NULL) < 0)
			bench_die("table full while filling");
	}
	a->cpu = cpu_s() - c;
	return NULL;
}

/* Two threads, every other ID each; CPU ns per insert. */
static double fill(struct fg_history *h, uint64_t n, fg_time_t now)
{
	struct fill_arg a[2] = { { h, 0, n, 2, now, 0 }, { h, 1, n, 2, now, 0 } };
	pthread_t t;

	pthread_create(&t, NULL, fill_thread, &a[1]);
	fill_thread(&a[0]);
	pthread_join(t, NULL);
	return (a[0].cpu + a[1].cpu) * 1e9 / (double)n;
}

/* ---- lookups and their bound ---- */

struct sample {
	char (*id)[ID_MAX];
	uint16_t *len;
};

static void sample_make(struct sample *s, uint64_t base, uint64_t range, uint64_t seed)
{
	s->id = malloc(sizeof(*s->id) * SAMPLE);
	s->len = malloc(sizeof(*s->len) * SAMPLE);
	if (!s->id || !s->len)
		bench_die("no memory for a sample");
	for (unsigned i = 0; i < SAMPLE; i++)
		s->len[i] = (uint16_t)id_of(base + bench_mix64(seed + i) % range, s->id[i]);
}

static void sample_free(struct sample *s)
{
	free(s->id);
	free(s->len);
}

/* CPU ns per lookup over the sample, in bursts; *found counts hits. */
static double lookup_once(const struct fg_history *h, const struct sample *s, fg_time_t now,
			  uint64_t *found)
{
	const void *ids[BURST];
	struct fg_history_key keys[BURST];
	struct fg_history_entry out[BURST];
	double t = cpu_s();

	*found = 0;
	for (unsigned b = 0; b < SAMPLE; b += BURST) {
		for (unsigned i = 0; i < BURST; i++)
			ids[i] = s->id[b + i];
		fg_history_lookup_burst(h, ids, s->len + b, BURST, now, keys, out);
		for (unsigned i = 0; i < BURST; i++)
			*found += out[i].state != FG_HISTORY_ABSENT;
	}
	return (cpu_s() - t) * 1e9 / SAMPLE;
}

#define BEST_OF 3

static double lookup_ns(const struct fg_history *h, const struct sample *s, fg_time_t now,
			uint64_t *found)
{
	double best = 1e30;

	for (int r = 0; r < BEST_OF; r++)
		best = FG_MIN(best, lookup_once(h, s, now, found));
	return best;
}

/* The bound: the same hashes, then one random bucket of the same table
 * read, prefetched as the burst path does. */
static double bound_once(const struct fg_history *h, const void *mem, size_t len,
			 const struct sample *s)
{
	const volatile uint64_t *words = (const uint64_t *)((const uint8_t *)mem + 4096);
	uint64_t m = (len - 4096) / 64, sink = 0;
	uint64_t at[BURST];
	double t = cpu_s();

	for (unsigned b = 0; b < SAMPLE; b += BURST) {
		for (unsigned i = 0; i < BURST; i++) {
			struct fg_history_key k;

			fg_history_hash(h, s->id[b + i], s->len[b + i], &k);
			at[i] = (uint64_t)(((unsigned __int128)k.lo * m) >> 64) * 8;
			__builtin_prefetch((const uint8_t *)mem + 4096 + at[i] * 8);
		}
		for (unsigned i = 0; i < BURST; i++)
			sink += words[at[i]];
	}
	__asm__ volatile("" : : "r"(sink));
	return (cpu_s() - t) * 1e9 / SAMPLE;
}

static double bound_ns(const struct fg_history *h, const void *mem, size_t len,
		       const struct sample *s)
{
	double best = 1e30;

	for (int r = 0; r < BEST_OF; r++)
		best = FG_MIN(best, bound_once(h, mem, len, s));
	return best;
}

struct lk_arg {
	const struct fg_history *h;
	const struct sample *s;
	fg_time_t now;
	double ns;
	uint64_t found;
};

static void *lk_thread(void *p)
{
	struct lk_arg *a = p;

	a->ns = lookup_ns(a->h, a->s, a->now, &a->found);
	return NULL;
}

/* Million lookups a second with two threads on the same sample. */
static double two_threads(const struct fg_history *h, const struct sample *s, fg_time_t now)
{
	struct lk_arg a[2] = { { h, s, now, 0, 0 }, { h, s, now, 0, 0 } };
	pthread_t t;

	pthread_create(&t, NULL, lk_thread, &a[1]);
	lk_thread(&a[0]);
	pthread_join(t, NULL);
	return 1e3 / a[0].ns + 1e3 / a[1].ns;
}

static void lookups(const struct fg_history *h, const void *mem, size_t len, uint64_t n,
		    fg_time_t now, double *hit, double *miss, double *bound, double *hit2,
		    double *miss2)
{
	struct sample hs, ms;
	uint64_t found;

	sample_make(&hs, 0, n, 1);
	sample_make(&ms, n + (1ull << 40), 1ull << 40, 2);
	lookup_ns(h, &hs, now, &found);	/* warm the sample itself */
	*hit = lookup_ns(h, &hs, now, &found);
	if (found != SAMPLE)
		bench_die("a sampled hit was not found");
	*miss = lookup_ns(h, &ms, now, &found);
	*bound = bound_ns(h, mem, len, &hs);
	if (hit2)
		*hit2 = two_threads(h, &hs, now);
	if (miss2)
		*miss2 = two_threads(h, &ms, now);
	sample_free(&hs);
	sample_free(&ms);
}

/* ---- a worker answering CHECKs, with and without a snapshot ---- */

struct worker {
	struct fg_history *h;
	struct sample hits, misses;
	fg_time_t now;
	atomic_int phase;		/* 0 idle, 1 snapshot, 2 paced snapshot, 3 stop */
	unsigned cpu;			/* the worker's CPU, 0 or 1 */
	uint32_t *lat[3];		/* ns per burst */
	uint32_t nlat[3];
};

/* Pin the calling thread to one CPU (worker and snapshot each on their
 * own, as a dataplane lcore and floodctld would be); false if refused. */
static bool pin(unsigned cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

static void unpin(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The worker process: bursts until phase 3, each burst's time kept in the
 * phase it started in (shared memory, read by the parent). */
static void worker_main(struct worker *w)
{
	const void *ids[BURST];
	uint16_t lens[BURST];
	struct fg_history_key keys[BURST];
	struct fg_history_entry out[BURST];
	uint64_t i = 0;
	int ph;

	pin(w->cpu);
	while ((ph = atomic_load(&w->phase)) < 3) {
		double t = cpu_s();

		/* nine in ten offers are duplicates, as on a flood-fill feed */
		for (unsigned j = 0; j < BURST; j++, i++) {
			const struct sample *s = i % 10 ? &w->hits : &w->misses;

			ids[j] = s->id[i % SAMPLE];
			lens[j] = s->len[i % SAMPLE];
		}
		fg_history_lookup_burst(w->h, ids, lens, BURST, w->now, keys, out);
		if (w->nlat[ph] < LAT_MAX)
			w->lat[ph][w->nlat[ph]++] = (uint32_t)((cpu_s() - t) * 1e9);
	}
}

/* Memory both processes see (the parent reads what the worker wrote). */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_die("no shared memory for the worker");
	return p;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(uint32_t *v, uint32_t n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[(uint32_t)((double)(n - 1) * p)] / 1e3;
}

static void snapshot_under_load(struct table *t, const char *dir, uint64_t n, fg_time_t now,
				uint64_t rate, unsigned cpu, struct fig *f)
{
	char path[PATH_MAX];
	struct worker *w = shared_alloc(sizeof(*w));
	struct fg_jpos pos = { 1, FG_JSEG_HEADER };
	struct fg_snap_info info;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	pid_t pid;
	int status;
	double t0;

	memcpy(seed, (const uint8_t *)t->mem + 64, sizeof(seed));	/* the header's seed */
	w->h = t->h;
	w->now = now;
	w->cpu = cpu;
	f->worker_cpu = cpu;
	sample_make(&w->hits, 0, n, 3);
	sample_make(&w->misses, n + (1ull << 41), 1ull << 40, 4);
	for (unsigned i = 0; i < 3; i++)
		w->lat[i] = shared_alloc(sizeof(uint32_t) * LAT_MAX);
	pid = fork();
	if (pid < 0)
		bench_die("fork");
	if (pid == 0) {
		/* a writer that dies (bench_die) takes its worker with it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		worker_main(w);
		_exit(0);
	}
	pin(!w->cpu);	/* the writer on the other of CPUs 0 and 1 */
	/* the worker alone first, about as long as a snapshot will take
	 * (estimated at 0.5 GB/s, at least 3 s) */
	t0 = now_s();
	while (now_s() - t0 < FG_MAX(3.0, (double)t->len / 0.5e9))
		usleep(50000);
	atomic_store(&w->phase, 1);
	t0 = now_s();
	if (fg_snapshot_write(dir, 1, t->h, seed, &pos, &info) < 0)
		bench_die("snapshot write");
	f->snap_s = now_s() - t0;
	f->snap_gbps = (double)(info.image_size + FG_SNAP_HEADER) / 1e9 / f->snap_s;
	/* the same snapshot paced, in place of the first (its disk space and
	 * page cache given back first) */
	if (fg_snapshot_path(dir, 1, path, sizeof(path)) < 0 || unlink(path) < 0)
		bench_die("removing the first snapshot");
	if (!rate)
		rate = (uint64_t)(f->snap_gbps * 1e9 / 2);
	atomic_store(&w->phase, 2);
	t0 = now_s();
	if (fg_snapshot_write_paced(dir, 1, t->h, seed, &pos, rate, &info) < 0)
		bench_die("paced snapshot write");
	f->paced_s = now_s() - t0;
	f->paced_mbps = (double)rate / 1e6;
	atomic_store(&w->phase, 3);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		bench_die("the worker process failed");
	unpin();
	f->p50_idle_us = pct_us(w->lat[0], w->nlat[0], 0.50);
	f->p99_idle_us = pct_us(w->lat[0], w->nlat[0], 0.99);
	f->p50_snap_us = pct_us(w->lat[1], w->nlat[1], 0.50);
	f->p99_snap_us = pct_us(w->lat[1], w->nlat[1], 0.99);
	f->p50_paced_us = pct_us(w->lat[2], w->nlat[2], 0.50);
	f->p99_paced_us = pct_us(w->lat[2], w->nlat[2], 0.99);
	for (unsigned i = 0; i < 3; i++)
		munmap(w->lat[i], sizeof(uint32_t) * LAT_MAX);
	sample_free(&w->hits);
	sample_free(&w->misses);
	munmap(w, sizeof(*w));
}

/* ---- journal tail, cold restore, sweep ---- */

static struct fg_history_key tail_key(uint64_t i)
{
	return (struct fg_history_key){ bench_mix64(i * 2 + 1), bench_mix64(i * 2 + 2) };
}

/* The journal needs a region with rings: a small one whose table has the
 * big one's seed (so the same seed check: the journal is the big table's). */
static void write_tail(const struct table *t, const char *dir, uint64_t n, fg_time_t now)
{
	const struct bench_table jt = { .capacity = 1000, .huge = FG_REGION_HUGE_OFF, .now = now };
	struct fg_history_key a, b;
	struct fg_region *r;
	char shm[128];

	snprintf(shm, sizeof(shm), "/dev/shm/fg-bench-scale-j-%d", (int)getpid());
	r = bench_region(shm, &jt, (const uint8_t *)t->mem + 64);
	fg_region_seed_check(fg_region_history(r), &a);
	fg_region_seed_check(t->h, &b);
	if (a.lo != b.lo || a.hi != b.hi)
		bench_die("the journal's table does not hash as the big one");
	if (bench_journal_tail(r, dir, n, now, tail_key) < 0)
		bench_die("journal for the tail");
	fg_region_close(r);
	fg_region_unlink(shm);
}

/* Write back and drop every file of dir from the page cache. */
static void drop_cache(const char *dir)
{
	uint64_t *nums = NULL;
	size_t n = 0;
	const char *const kinds[][2] = { { "snapshot-", ".fgs" }, { "journal-", ".fgj" } };

	for (unsigned k = 0; k < 2; k++) {
		fg_datadir_list(dir, kinds[k][0], kinds[k][1], &nums, &n);
		for (size_t i = 0; i < n; i++) {
			char path[1024];
			int fd;

			fg_datadir_path(dir, kinds[k][0], nums[i], kinds[k][1], path, sizeof(path));
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				bench_die("open for fadvise");
			fdatasync(fd);
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
		free(nums);
		nums = NULL;
	}
}

static struct fg_region *cold_restore(const char *dir, const char *shm, struct fig *f,
				      fg_time_t now)
{
	const struct bench_table t = { .capacity = f->capacity, .shards = (uint32_t)f->shards,
				       .huge = FG_REGION_HUGE_OFF, .now = now };
	struct fg_restore_result res;
	struct fg_region *r;

	drop_cache(dir);
	r = bench_restore(dir, shm, &t, f->tail, &res, &f->restore_s);
	f->restore_table_s = res.table_seconds;
	f->restore_journal_s = res.journal_seconds;
	return r;
}

static void run_one(const char *dir, uint64_t n, uint32_t shards, uint64_t rate, unsigned cpu,
		    struct fig *f)
{
	char shm[128];
	fg_time_t now = time(NULL);
	struct fg_history_stats hs;
	struct fg_region *r;
	struct table t;
	size_t len;
	void *mem;

	snprintf(shm, sizeof(shm), "/dev/shm/fg-bench-scale-%d", (int)getpid());
	f->entries = n;
	f->tail = n >= 100000000 ? HOUR_OF_FEED : n / 4;
	f->capacity = (n + f->tail) / 4 * 5;
	table_make(&t, f->capacity, shards, now);
	fg_history_stats(t.h, &hs);
	f->shards = hs.shards;
	f->capacity = hs.slots;
	f->region_gb = (double)t.len / 1e9;
	f->fill_ns = fill(t.h, n, now);
	f->anon_huge_gb = anon_huge_gb();
	f->rss_gb = mapping_rss_gb(t.mem);
	lookups(t.h, t.mem, t.len, n, now, &f->hit_ns, &f->miss_ns, &f->bound_ns, &f->hit2_mps,
		&f->miss2_mps);
	snapshot_under_load(&t, dir, n, now, rate, cpu, f);
	write_tail(&t, dir, f->tail, now);
	table_free(&t);	/* a reboot: the table is gone */
	r = cold_restore(dir, shm, f, now);
	mem = fg_region_history_mem(r, &len);
	lookups(fg_region_history(r), mem, len, n, now, &f->hit_ns_4k, &f->miss_ns_4k,
		&f->bound_ns_4k, NULL, NULL);
	bench_sweep(r, now, &f->sweep_s, &f->swept);
	fg_region_close(r);
	fg_region_unlink(shm);
}

static void json_line(FILE *o, const struct fig *f)
{
	fprintf(o, "{\"entries\": %" PRIu64 ", \"capacity\": %" PRIu64 ", \"shards\": %" PRIu64
		", \"region_gb\": %.3f, \"anon_huge_gb\": %.3f, \"rss_gb\": %.3f, \"fill_ns\": %.1f, "
		"\"hit_ns\": %.1f, \"miss_ns\": %.1f, \"bound_ns\": %.1f, \"hit2_mps\": %.2f, "
		"\"miss2_mps\": %.2f, \"hit_ns_4k\": %.1f, \"miss_ns_4k\": %.1f, "
		"\"bound_ns_4k\": %.1f, \"snap_s\": %.2f, \"snap_gbps\": %.3f, "
		"\"p50_idle_us\": %.2f, \"p99_idle_us\": %.2f, \"p50_snap_us\": %.2f, "
		"\"p99_snap_us\": %.2f, \"paced_s\": %.2f, \"paced_mbps\": %.1f, "
		"\"p50_paced_us\": %.2f, \"p99_paced_us\": %.2f, "
		"\"tail\": %" PRIu64 ", \"restore_s\": %.2f, "
		"\"restore_table_s\": %.2f, \"restore_journal_s\": %.2f, \"sweep_s\": %.2f, "
		"\"swept\": %" PRIu64 ", \"load_avg\": %.2f, \"lat_clock\": \"thread_cpu\", "
		"\"worker\": \"process\", \"worker_cpu\": %u}\n",
		f->entries, f->capacity, f->shards, f->region_gb, f->anon_huge_gb, f->rss_gb, f->fill_ns,
		f->hit_ns, f->miss_ns, f->bound_ns, f->hit2_mps, f->miss2_mps, f->hit_ns_4k,
		f->miss_ns_4k, f->bound_ns_4k, f->snap_s, f->snap_gbps, f->p50_idle_us,
		f->p99_idle_us, f->p50_snap_us, f->p99_snap_us, f->paced_s, f->paced_mbps,
		f->p50_paced_us, f->p99_paced_us, f->tail, f->restore_s,
		f->restore_table_s, f->restore_journal_s, f->sweep_s, f->swept, f->load_avg,
		f->worker_cpu);
}

static void md_rows(FILE *o, const struct fig *f)
{
	fprintf(o, "| %" PRIu64 " M | %" PRIu64 " | %.2f GB (%.0f B an entry in memory) | %.0f ns | "
		"%.0f / %.0f ns (bound %.0f: %.2f) | %.1f / %.1f M/s | %.0f / %.0f ns (%.2f) | "
		"%.1f s (%.2f GB/s) | %.0f / %.0f µs (%.2fx) | %.1f s at %.0f MB/s: %.0f µs (%.2fx) | "
		"%.1f s + %.1f s | %.2f s |\n",
		f->entries / 1000000, f->shards, f->region_gb, f->rss_gb * 1e9 / (double)f->entries,
		f->fill_ns, f->hit_ns, f->miss_ns, f->bound_ns, f->bound_ns / f->hit_ns,
		f->hit2_mps, f->miss2_mps, f->hit_ns_4k, f->miss_ns_4k, f->bound_ns_4k / f->hit_ns_4k,
		f->snap_s, f->snap_gbps, f->p99_idle_us, f->p99_snap_us,
		f->p99_snap_us / f->p99_idle_us, f->paced_s, f->paced_mbps, f->p99_paced_us,
		f->p99_paced_us / f->p99_idle_us, f->restore_table_s, f->restore_journal_s,
		f->sweep_s);
}

static const char md_head[] =
	"| entries | shards | table | fill | lookup hit / miss, 2M pages (bound; ratio) | "
	"2 threads hit / miss | hit / miss, 4K pages (ratio) | snapshot | worker p99 burst "
	"idle / during snapshot | paced snapshot: worker p99 | cold restore: table + journal | "
	"full sweep |\n"
	"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";

/* 100M, 512K, 2G or a plain number of bytes; a bad one ends the run. */
static uint64_t size_arg(const char *a)
{
	char *end;
	uint64_t v = strtoull(a, &end, 10);

	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	}
	if (end == a || *end)
		bench_die("--snapshot-rate: a size such as 100M");
	return v;
}

/* One run in a child process (its memory is all given back at exit). */
static int run_child(const char *dir, uint64_t n, uint32_t shards, uint64_t rate, unsigned cpu,
		     const char *json, const char *md)
{
	char cmd[4096], self[1024];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (l <= 0)
		bench_die("readlink /proc/self/exe");
	self[l] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "'%s' --entries %" PRIu64 " --shards %u --snapshot-rate %" PRIu64
		 " --worker-cpu %u --dir '%s'%s%s%s%s%s%s",
		 self, n, shards, rate, cpu, dir, json ? " --json '" : "", json ? json : "", json ? "'" : "",
		 md ? " --md '" : "", md ? md : "", md ? "'" : "");
	return system(cmd);
}

/* One run's figures appended to the JSON lines file and the markdown table. */
static void append_rows(const char *json, const char *md, const struct fig *f)
{
	FILE *o;

	if (json) {
		o = fopen(json, "a");
		if (!o)
			bench_die("cannot append to the JSON file");
		json_line(o, f);
		fclose(o);
	}
	if (md) {
		o = fopen(md, "a");
		if (!o)
			bench_die("cannot append to the markdown file");
		md_rows(o, f);
		fclose(o);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' }, { "full", no_argument, NULL, 'f' },
		{ "entries", required_argument, NULL, 'n' }, { "shards", required_argument, NULL, 's' },
		{ "dir", required_argument, NULL, 'd' }, { "json", required_argument, NULL, 'j' },
		{ "md", required_argument, NULL, 'm' },
		{ "snapshot-rate", required_argument, NULL, 'r' },
		{ "worker-cpu", required_argument, NULL, 'c' }, { NULL, 0, NULL, 0 },
	};
	uint64_t n = 0, sizes[2] = { 10000000, 100000000 };
	unsigned nsizes = 0;
	uint32_t shards = 0;
	uint64_t rate = 0;	/* 0: half of what the unpaced snapshot reached */
	unsigned cpu = WORKER_CPU;
	double la[1] = { 0 };
	const char *md = NULL, *dir = NULL, *json = NULL;
	char tmp[] = "/var/tmp/fg-bench-scale-XXXXXX", cmd[700];
	struct fig f;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': nsizes = 1; break;
		case 'f': nsizes = 2; break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 's': shards = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'd': dir = optarg; break;
		case 'j': json = optarg; break;
		case 'm': md = optarg; break;
		case 'r': rate = size_arg(optarg); break;
		case 'c':
			if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0) {
				fprintf(stderr, "bench_scale: --worker-cpu %s: 0 or 1 (the writer "
					"takes the other)\n", optarg);
				return 2;
			}
			cpu = (unsigned)(optarg[0] - '0');
			break;
		default:
			fputs("usage: bench_scale [--quick|--full] [--entries N] [--shards S] [--dir DIR] "
			      "[--snapshot-rate BYTES] [--worker-cpu 0|1] [--json FILE] [--md FILE]\n", stderr);
			return 2;
		}
	}
	fg_log_set_level(FG_LOG_WARN);
	if (!dir && !(dir = mkdtemp(tmp)))
		bench_die("mkdtemp");
	if (n) {
		memset(&f, 0, sizeof(f));
		getloadavg(la, 1);
		f.load_avg = la[0];
		run_one(dir, n, shards, rate, cpu, &f);
		json_line(stdout, &f);
		append_rows(json, md, &f);
	} else {
		FILE *m = md ? fopen(md, "w") : NULL;

		if (md && !m)
			bench_die("cannot write the markdown file");
		if (m) {
			getloadavg(la, 1);
			fprintf(m, "### History at scale: sharded and single table (`bench_scale`)\n\n"
				"Load average %.2f when it started (a shared machine). Method in the "
				"file-head comment of tools/bench/bench_scale.c; the curve up to 1 G "
				"entries in docs/scale.md.\n\n%s", la[0], md_head);
			fclose(m);
		}
		for (unsigned i = 0; i < (nsizes ? nsizes : 1); i++)
			for (unsigned s = 0; s < 2; s++)
				if (run_child(dir, sizes[i], s ? 1 : 64, rate, cpu, json, md) != 0)
					bench_die("a run failed");
	}
	if (dir == tmp) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_scale: could not remove %s\n", dir);
	}
	return 0;
}
