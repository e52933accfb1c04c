/* SPDX-License-Identifier: MIT */
/*
 * test_region_huge.c — where a new region's pages come from ([history]
 * huge-pages): a tmpfs mounted with huge=always (the mapping really holds
 * PMD-sized pages, read back from /proc/self/smaps), a tmpfs without it
 * (4K pages and exactly one log line), hugetlbfs with 2M pages this test
 * reserves and releases itself, hugetlbfs without room (one log line).
 * Every mount is made in a private mount namespace of the test's own
 * process (libcheck forks one per test), so nothing outlives it; the huge
 * pages are reserved by the parent before the tests and handed back after
 * them, pass or fail (an unchecked fixture).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "floodgate/region.h"
#include "../../lib/region/region_int.h"
#include "fgtest.h"

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define RESERVE 8u	/* 2M pages: the region below needs 2 or 3 */

static char logbuf[8192];
static unsigned warnings;

static void capture(enum fg_log_level level, const char *component, const char *msg, void *arg)
{
	size_t l = strlen(logbuf);

	(void)arg;
	if (level <= FG_LOG_WARN)
		warnings++;
	snprintf(logbuf + l, sizeof(logbuf) - l, "%s: %s\n", component, msg);
}

/* A private mount namespace and a directory with `type` mounted on it. */
static void private_mount(char *dir, size_t len, const char *type, const char *opts)
{
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	snprintf(dir, len, "/tmp/fg-huge-%d-XXXXXX", (int)getpid());
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(mount(type, dir, type, 0, opts) == 0, "mount %s -o %s: %s", type, opts,
		      strerror(errno));
}

static void private_unmount(const char *dir)
{
	ck_assert_int_eq(umount(dir), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}

static struct fg_region *make(const char *shm, enum fg_region_huge mode)
{
	struct fg_region_params rp = { .history_size = 3u << 20, .writers = 2,
				       .journal_ring = 64, .vlog_ring = 16, .huge = mode };
	char why[256];
	struct fg_region *r;

	logbuf[0] = '\0';
	warnings = 0;
	fg_log_set_sink(capture, NULL);
	r = fg_region_create(shm, &rp, why, sizeof(why));
	fg_log_set_sink(NULL, NULL);
	ck_assert_msg(r != NULL, "%s", why);
	return r;
}

/* kB of the mapping at `base` that smaps counts under `field`. */
static unsigned long smaps_kb(const void *base, const char *field)
{
	char line[512], want[64];
	unsigned long v = 0, lo, hi, got = 0;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), "%s: %%lu kB", field);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = lo == (unsigned long)base;
		else if (in && sscanf(line, want, &v) == 1)
			got = v;
	}
	fclose(f);
	return got;
}

/* Ask the kernel to make free memory contiguous: a 2M page needs 512
 * free 4K pages in a row, and a machine that has just run something large
 * may have none until it compacts. */
static void compact_memory(void)
{
	FILE *f = fopen("/proc/sys/vm/compact_memory", "we");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
}

START_TEST(tmpfs_with_huge_gives_huge_pages)
{
	struct fg_region *r;
	char dir[128], shm[160];

	private_mount(dir, sizeof(dir), "tmpfs", "huge=always,size=64m");
	snprintf(shm, sizeof(shm), "%s/region", dir);
	compact_memory();
	r = make(shm, FG_REGION_HUGE_TMPFS);
	ck_assert_uint_eq(warnings, 0);
	ck_assert_uint_eq(fg_region_page_size(r), 2u << 20);
	ck_assert_uint_eq(fg_region_mapped_size(r) % (2u << 20), 0);
	ck_assert(!fg_region_hugepages(r));
	ck_assert_uint_eq(r->hdr->flags, FG_RFLAG_THP);
	/* the kernel maps it with PMD entries: real 2M pages */
	ck_assert_uint_ge(smaps_kb(r->base, "FilePmdMapped") + smaps_kb(r->base, "ShmemPmdMapped"),
			  2048);
	fg_region_close(r);
	fg_region_unlink(shm);
	private_unmount(dir);
}
END_TEST

START_TEST(tmpfs_without_huge_says_so_once)
{
	struct fg_region *r;
	char dir[128], shm[160];

	private_mount(dir, sizeof(dir), "tmpfs", "size=64m");
	snprintf(shm, sizeof(shm), "%s/region", dir);
	r = make(shm, FG_REGION_HUGE_TMPFS);
	ck_assert_msg(warnings == 1 && strstr(logbuf, "huge-pages tmpfs") &&
			      strstr(logbuf, "no huge= option"), "%u warnings:\n%s", warnings, logbuf);
	ck_assert_uint_eq(fg_region_page_size(r), 4096);
	ck_assert_uint_eq(r->hdr->flags, 0);
	fg_region_close(r);
	fg_region_unlink(shm);
	/* auto and off on the same tmpfs: 4K pages, nothing said */
	r = make(shm, FG_REGION_HUGE_OFF);
	ck_assert_uint_eq(warnings, 0);
	fg_region_close(r);
	fg_region_unlink(shm);
	private_unmount(dir);
}
END_TEST

static unsigned long read_ul(const char *path)
{
	unsigned long v = 0;
	FILE *f = fopen(path, "re");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%lu", &v), 1);
	fclose(f);
	return v;
}

/* Add `delta` pages to the 2M pool (relative to what it is now: others
 * may hold pages of their own); what the pool has afterwards. */
static unsigned long reserve(long delta)
{
	unsigned long now = read_ul(NR_HUGEPAGES);
	FILE *f = fopen(NR_HUGEPAGES, "we");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%lu\n", (unsigned long)((long)now + delta));
	ck_assert_int_eq(fclose(f), 0);
	return read_ul(NR_HUGEPAGES);
}

static unsigned long pool_before;

static void pages_reserve(void)
{
	unsigned long got;

	pool_before = read_ul(NR_HUGEPAGES);
	compact_memory();
	got = reserve(RESERVE);
	if (got != pool_before + RESERVE) {
		/* hand back what did come before failing: the pool is shared */
		reserve((long)pool_before - (long)got);
		ck_abort_msg("the kernel gave %lu of %u 2M pages (memory too fragmented even "
			     "after compaction?)", got - pool_before, RESERVE);
	}
}

static void pages_release(void)
{
	ck_assert_uint_eq(reserve(-(long)RESERVE), pool_before);
}

START_TEST(hugetlbfs_with_reserved_pages)
{
	struct fg_region *r;
	char dir[128], shm[96], hpath[200], why[256];

	ck_assert_uint_ge(read_ul("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"),
			  3);
	private_mount(dir, sizeof(dir), "hugetlbfs", "pagesize=2M");
	snprintf(shm, sizeof(shm), "/dev/shm/fg-huge-%d", (int)getpid());
	r = make(shm, FG_REGION_HUGE_HUGETLBFS);
	ck_assert_msg(warnings == 0, "%s", logbuf);
	ck_assert(fg_region_hugepages(r));
	ck_assert_uint_eq(fg_region_page_size(r), 2u << 20);
	snprintf(hpath, sizeof(hpath), "%s/fg-huge-%d", dir, (int)getpid());
	ck_assert_str_eq(fg_region_path(r), hpath);
	/* a writer finds it on hugetlbfs from shm-path alone */
	ck_assert_ptr_null(fg_region_attach(shm, why, sizeof(why)));	/* not READY yet */
	ck_assert_msg(strstr(why, hpath) != NULL, "%s", why);
	fg_region_close(r);
	ck_assert_int_eq(fg_region_unlink(shm), 0);
	ck_assert_int_eq(access(hpath, F_OK), -1);
	private_unmount(dir);
}
END_TEST

START_TEST(hugetlbfs_without_room_says_so_once)
{
	struct fg_region *r;
	char dir[128], shm[96];

	/* 1G pages: none reserved on this machine's default pool of 2M */
	private_mount(dir, sizeof(dir), "hugetlbfs", "pagesize=1G");
	snprintf(shm, sizeof(shm), "/dev/shm/fg-huge-%d", (int)getpid());
	r = make(shm, FG_REGION_HUGE_HUGETLBFS);
	ck_assert_msg(warnings == 1 && strstr(logbuf, "huge-pages hugetlbfs") &&
			      strstr(logbuf, "with 4K pages"), "%u warnings:\n%s", warnings, logbuf);
	ck_assert(!fg_region_hugepages(r));
	ck_assert_str_eq(fg_region_path(r), shm);
	fg_region_close(r);
	fg_region_unlink(shm);
	/* auto falls back silently */
	r = make(shm, FG_REGION_HUGE_AUTO);
	ck_assert_uint_eq(warnings, 0);
	ck_assert(!fg_region_hugepages(r));
	fg_region_close(r);
	fg_region_unlink(shm);
	private_unmount(dir);
}
END_TEST

static Suite *region_huge_suite(void)
{
	Suite *s = suite_create("region_huge");
	TCase *tc = tcase_create("huge-pages");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, pages_reserve, pages_release);
	tcase_add_test(tc, tmpfs_with_huge_gives_huge_pages);
	tcase_add_test(tc, tmpfs_without_huge_says_so_once);
	tcase_add_test(tc, hugetlbfs_with_reserved_pages);
	tcase_add_test(tc, hugetlbfs_without_room_says_so_once);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(region_huge_suite)
