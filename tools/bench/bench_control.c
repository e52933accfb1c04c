/* SPDX-License-Identifier: MIT */
/*
 * bench_control.c — the control plane's persistence at scale.
 *
 *   bench_control [--quick|--full] [--entries N] [--dir DIR] [--md FILE]
 *
 * --quick: 10 M entries; --full: 100 M (the goal: restore of
 * 100 M entries in under 10 s). The table ends 80 % full (capacity 1.25
 * times the entries and the journal tail).
 * What is timed, each once (a run is minutes at 100 M):
 *   fill        N fg_history_insert_final of random keys (context only)
 *   snapshot    fg_snapshot_write: image copy into the file's mapping,
 *               fsync, rename, fsync of the directory
 *   restore     fg_restore into a new region in /dev/shm: the snapshot's
 *               header and image checked, copied, transient entries
 *               cleared, then a journal tail of N/10 records (at most
 *               1 M) replayed
 *               (the snapshot file is in the page cache: the disk read of
 *               a cold start comes on top, at the disk's speed)
 *   sweep       one full fg_expiry_pass (first-seen mode, no pauses)
 *               removing the ~10 % of entries that are old enough
 *   journal     two writer threads journal records as fast as their rings
 *               allow while a consumer drains and group-commits every
 *               1 s (or at half a ring, as floodctld does), with real
 *               fdatasync, for 3 s (--full: 10 s): records/s and commits/s
 * Files go to DIR (default: a new directory under /var/tmp), removed at
 * the end. --md writes the figures as a markdown fragment.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/snapshot.h"
#include "bench_kit.h"

#define DAY 86400

struct figures {
	uint64_t entries, capacity;
	double fill_s, snap_s, snap_bytes, restore_s, restore_table_s, restore_journal_s, sweep_s;
	uint64_t swept, tail_records;
	double journal_rps, journal_cps, journal_s;
	double load_avg;
};

static uint64_t rng_state = 0x6a09e667f3bcc909ull;

static uint64_t rng(void)
{
	return bench_rng(&rng_state);
}

static double now_s(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

/* A region holding the table, so that the journal can use its rings. */
static struct fg_region *make_region(const char *shm, uint64_t capacity, fg_time_t now)
{
	const struct bench_table t = { .capacity = capacity, .now = now };
	struct fg_region *r = bench_region(shm, &t, NULL);

	fg_region_publish(r);
	return r;
}

/* N entries, first seen over the last 12 days (one in ten beyond 11 d). */
static void fill(struct fg_history *h, uint64_t n, fg_time_t now)
{
	for (uint64_t i = 0; i < n; i++) {
		struct fg_history_key k = { rng(), rng() };
		fg_time_t fs = now - (fg_time_t)(i % 10 == 0 ? 11 * DAY + 600 : (i % (10 * DAY)));

		if (fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED, fs, fs, now, NULL) < 0)
			bench_die("table full while filling");
	}
}

static struct fg_history_key tail_key(uint64_t i)
{
	(void)i;
	return (struct fg_history_key){ rng(), rng() };
}

/* ---- journal throughput ---- */

struct jbench {
	struct fg_region *r;
	struct fg_journal *j;
	atomic_bool stop;
	uint64_t commits;
};

static void *jwriter(void *arg)
{
	struct jbench *b = arg;
	struct fg_region_writer *w;
	int err;

	w = fg_region_claim(b->r, "bench", &err);
	if (!w)
		bench_die("claim");
	while (!atomic_load(&b->stop)) {
		struct fg_history_key k = { rng(), 1 };

		if (fg_journal_append(w, &k, FG_HISTORY_ACCEPTED, 100, 100, 0, 0) == -ENOSPC)
			sched_yield();
	}
	fg_region_release(w);
	return NULL;
}

static void *jconsumer(void *arg)
{
	struct jbench *b = arg;
	double next = now_s() + 1.0;
	uint32_t half = fg_region_ring_capacity(b->r, FG_RING_JOURNAL) / 2;

	while (!atomic_load(&b->stop)) {
		int64_t n = fg_journal_drain(b->j, b->r, 65536);

		if (now_s() >= next || fg_journal_uncommitted(b->j) >= half) {
			fg_journal_commit(b->j, b->r);
			b->commits++;
			next = now_s() + 1.0;
		} else if (n <= 0) {
			struct timespec ts = { .tv_nsec = 200000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void journal_throughput(const char *dir, double seconds, struct figures *f)
{
	char shm[128], jdir[512];
	struct jbench b = { 0 };
	struct fg_journal_params jp;
	struct fg_stats st;
	pthread_t tw[2], tc;
	double t0;
	int err;

	snprintf(shm, sizeof(shm), "/dev/shm/fg-bench-journal-%d", (int)getpid());
	snprintf(jdir, sizeof(jdir), "%s/journal", dir);
	if (fg_datadir_make(jdir) < 0)
		bench_die("journal dir");
	memset(&st, 0, sizeof(st));
	b.r = make_region(shm, 1000, time(NULL));
	memset(&jp, 0, sizeof(jp));
	jp.dir = jdir;
	fg_region_seed(b.r, jp.seed);
	fg_region_seed_check(fg_region_history(b.r), &jp.seed_check);
	b.j = fg_journal_open(&jp, &st, &err);
	if (!b.j)
		bench_die("journal");
	t0 = now_s();
	pthread_create(&tc, NULL, jconsumer, &b);
	for (int i = 0; i < 2; i++)
		pthread_create(&tw[i], NULL, jwriter, &b);
	while (now_s() - t0 < seconds)
		usleep(100000);
	atomic_store(&b.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(tw[i], NULL);
	pthread_join(tc, NULL);
	fg_journal_commit(b.j, b.r);
	f->journal_s = now_s() - t0;
	f->journal_rps = (double)st.ctr[FG_CTR_JOURNAL_RECORDS] / f->journal_s;
	f->journal_cps = (double)st.ctr[FG_CTR_JOURNAL_COMMITS] / f->journal_s;
	fg_journal_close(b.j);
	fg_region_close(b.r);
	fg_region_unlink(shm);
}

/* ---- the table ---- */

static void table_figures(const char *dir, uint64_t n, struct figures *f)
{
	char shm[128], shm2[128];
	fg_time_t now = time(NULL);
	struct fg_restore_result res;
	struct fg_snap_info info;
	struct fg_jpos pos = { 1, FG_JSEG_HEADER };
	struct fg_region *r, *r2;
	uint8_t seed[FG_HISTORY_SEED_LEN];
	double t;

	snprintf(shm, sizeof(shm), "/dev/shm/fg-bench-a-%d", (int)getpid());
	snprintf(shm2, sizeof(shm2), "/dev/shm/fg-bench-b-%d", (int)getpid());
	f->entries = n;
	f->tail_records = FG_MIN(n / 10, 1000000);
	f->capacity = (n + f->tail_records) / 4 * 5;
	r = make_region(shm, f->capacity, now);
	t = now_s();
	fill(fg_region_history(r), n, now);
	f->fill_s = now_s() - t;
	fg_region_seed(r, seed);
	t = now_s();
	if (fg_snapshot_write(dir, 1, fg_region_history(r), seed, &pos, &info) < 0)
		bench_die("snapshot write");
	f->snap_s = now_s() - t;
	f->snap_bytes = (double)(info.image_size + FG_SNAP_HEADER);
	if (bench_journal_tail(r, dir, f->tail_records, now, tail_key) < 0)
		bench_die("journal for the tail");
	fg_region_close(r);
	fg_region_unlink(shm);

	r2 = bench_restore(dir, shm2, &(struct bench_table){ .capacity = f->capacity, .now = now },
			   f->tail_records, &res, &f->restore_s);
	f->restore_table_s = res.table_seconds;
	f->restore_journal_s = res.journal_seconds;
	bench_sweep(r2, now, &f->sweep_s, &f->swept);
	fg_region_close(r2);
	fg_region_unlink(shm2);
}

static void report(FILE *o, const struct figures *f, bool md)
{
	const char *row = md ? "| %s | %s |\n" : "  %-40s %s\n";
	char v[128];

	if (md)
		fprintf(o, "| measure | figure |\n| --- | --- |\n");
	snprintf(v, sizeof(v), "%" PRIu64 " in %" PRIu64 " slots (%.0f %% load)", f->entries,
		 f->capacity, 100.0 * (double)f->entries / (double)f->capacity);
	fprintf(o, row, "history entries", v);
	snprintf(v, sizeof(v), "%.1f s (%.0f ns/insert)", f->fill_s, f->fill_s * 1e9 / (double)f->entries);
	fprintf(o, row, "fill (context)", v);
	snprintf(v, sizeof(v), "%.2f s, %.2f GB (%.2f GB/s) incl. fsync", f->snap_s,
		 f->snap_bytes / 1e9, f->snap_bytes / 1e9 / f->snap_s);
	fprintf(o, row, "snapshot write", v);
	snprintf(v, sizeof(v), "%.2f s: table %.2f s + %" PRIu64 " journal records %.2f s (warm cache)",
		 f->restore_s, f->restore_table_s, f->tail_records, f->restore_journal_s);
	fprintf(o, row, "restore", v);
	snprintf(v, sizeof(v), "%.2f s, %" PRIu64 " expired (%.0f M entries/s)", f->sweep_s, f->swept,
		 (double)f->entries / f->sweep_s / 1e6);
	fprintf(o, row, "full expiry sweep", v);
	snprintf(v, sizeof(v), "%.2f M records/s, %.1f commits/s (2 writers, %.0f s)",
		 f->journal_rps / 1e6, f->journal_cps, f->journal_s);
	fprintf(o, row, "journal, 1 s group commit", v);
	if (!md) {
		snprintf(v, sizeof(v), "%.2f", f->load_avg);
		fprintf(o, row, "load average at start", v);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' }, { "full", no_argument, NULL, 'f' },
		{ "entries", required_argument, NULL, 'n' }, { "dir", required_argument, NULL, 'd' },
		{ "md", required_argument, NULL, 'm' }, { NULL, 0, NULL, 0 },
	};
	uint64_t n = 10000000;
	double jsecs = 3, la[1] = { 0 };
	const char *md = NULL, *dir = NULL;
	char tmp[] = "/var/tmp/fg-bench-control-XXXXXX", cmd[600];
	struct figures f;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q': n = 10000000; jsecs = 3; break;
		case 'f': n = 100000000; jsecs = 10; break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'd': dir = optarg; break;
		case 'm': md = optarg; break;
		default:
			fputs("usage: bench_control [--quick|--full] [--entries N] [--dir DIR] [--md FILE]\n",
			      stderr);
			return 2;
		}
	}
	fg_log_set_level(FG_LOG_WARN);
	memset(&f, 0, sizeof(f));
	getloadavg(la, 1);
	f.load_avg = la[0];
	if (!dir && !(dir = mkdtemp(tmp)))
		bench_die("mkdtemp");
	table_figures(dir, n, &f);
	journal_throughput(dir, jsecs, &f);
	printf("bench_control (%" PRIu64 " entries)\n", n);
	report(stdout, &f, false);
	if (md) {
		FILE *o = fopen(md, "w");

		if (!o)
			bench_die("cannot write the markdown file");
		fprintf(o, "### Control plane: snapshot, restore, expiry, journal (`bench_control`)\n\n"
			"%" PRIu64 " history entries; the snapshot on %s, the region in /dev/shm; "
			"load average %.2f when it started (a shared machine: other jobs slow it). "
			"Method in the file-head comment of tools/bench/bench_control.c.\n\n",
			n, dir == tmp ? "a new directory under /var/tmp" : dir, f.load_avg);
		report(o, &f, true);
		fclose(o);
	}
	if (dir == tmp) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_control: could not remove %s\n", dir);
	}
	return 0;
}
