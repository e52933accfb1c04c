/* SPDX-License-Identifier: MIT */
/*
 * test_region_huge.c — where a new region's pages come from ([history]
 * huge-pages): a tmpfs mounted with huge=always (the mapping really holds
 * PMD-sized pages, read back from /proc/self/smaps), a tmpfs without it
 * (4K pages and exactly one log line), hugetlbfs with 2M pages this test
 * reserves and releases itself (hugetlbfs and auto each say so in one
 * line), hugetlbfs without room (a mount whose size= limit is smaller than
 * the region: one log line, on every machine), and 1G pages as this
 * machine has them: where the processor offers them, a 1G mount without
 * free pages beside a 2M mount with them, and auto must pick the 2M one;
 * where it does not, the kernel must refuse the 1G mount (EINVAL) and auto
 * still picks 2M. Each test prints the branch it ran.
 *
 * Every mount is made in a private mount namespace of the test's own
 * process (libcheck forks one per test), with the host's own hugetlbfs
 * mounts detached there, so nothing outlives it and nothing of the host's
 * is chosen; the huge pages are reserved by the parent before the tests
 * and handed back after them, pass or fail (an unchecked fixture).
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

/* The host's hugetlbfs mounts, detached in this process's private mount
 * namespace: the tests choose among their own mounts only. */
static void hide_host_hugetlbfs(void)
{
	char line[1024], dev[256], mnt[512], type[64];
	bool again = true;

	while (again) {
		FILE *f = fopen("/proc/self/mounts", "re");

		ck_assert_ptr_nonnull(f);
		again = false;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%255s %511s %63s", dev, mnt, type) == 3 &&
			    strcmp(type, "hugetlbfs") == 0) {
				ck_assert_msg(umount2(mnt, MNT_DETACH) == 0, "umount %s: %s", mnt,
					      strerror(errno));
				again = true;
				break;
			}
		fclose(f);
	}
}

static bool in_private_ns;

/* A directory with `type` mounted on it, in a private mount namespace of
 * this process (made at the first call). */
static void private_mount(char *dir, size_t len, const char *type, const char *opts)
{
	static unsigned seq;

	if (!in_private_ns) {
		ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
		ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
		hide_host_hugetlbfs();
		in_private_ns = true;
	}
	snprintf(dir, len, "/tmp/fg-huge-%d-%u-XXXXXX", (int)getpid(), seq++);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(mount(type, dir, type, 0, opts) == 0, "mount %s -o %s: %s", type, opts,
		      strerror(errno));
}

/* Does this machine's processor and kernel offer huge pages of `kb`? */
static bool machine_offers(unsigned long kb)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%lukB", kb);
	return access(path, F_OK) == 0;
}

/* How often `needle` occurs in the captured log. */
static unsigned log_count(const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(logbuf, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
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
	fg_log_set_level(FG_LOG_INFO);	/* the "created" line says which pages */
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
	ck_assert_msg(log_count("2048 KB pages on hugetlbfs") == 1, "%s", logbuf);
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
	/* auto on the same mount: 2M pages, said once, nothing warned */
	r = make(shm, FG_REGION_HUGE_AUTO);
	ck_assert_msg(warnings == 0 && log_count("2048 KB pages on hugetlbfs") == 1, "%s", logbuf);
	ck_assert_str_eq(fg_region_path(r), hpath);
	fg_region_close(r);
	ck_assert_int_eq(fg_region_unlink(shm), 0);
	private_unmount(dir);
}
END_TEST

/* The mount's size= limit holds one 2M page; the region needs more. The
 * pool has pages (the fixture's), so only the limit can say no: the case
 * of a hugetlbfs without room, forced on every machine. */
START_TEST(hugetlbfs_without_room_says_so_once)
{
	struct fg_region *r;
	char dir[128], shm[96];

	private_mount(dir, sizeof(dir), "hugetlbfs", "pagesize=2M,size=2M");
	snprintf(shm, sizeof(shm), "/dev/shm/fg-huge-%d", (int)getpid());
	r = make(shm, FG_REGION_HUGE_HUGETLBFS);
	ck_assert_msg(warnings == 1 && strstr(logbuf, "huge-pages hugetlbfs") &&
			      strstr(logbuf, "no hugetlbfs mount has room") &&
			      strstr(logbuf, "2048 KB pages, 2 MB free") &&
			      strstr(logbuf, "with 4K pages"), "%u warnings:\n%s", warnings, logbuf);
	ck_assert(!fg_region_hugepages(r));
	ck_assert_str_eq(fg_region_path(r), shm);
	fg_region_close(r);
	fg_region_unlink(shm);
	/* auto falls back silently; its one "created" line says 4 KB pages */
	r = make(shm, FG_REGION_HUGE_AUTO);
	ck_assert_uint_eq(warnings, 0);
	ck_assert_msg(log_count("4 KB pages") == 1, "%s", logbuf);
	ck_assert(!fg_region_hugepages(r));
	fg_region_close(r);
	fg_region_unlink(shm);
	private_unmount(dir);
	/* no hugetlbfs mounted at all: one line that says so */
	r = make(shm, FG_REGION_HUGE_HUGETLBFS);
	ck_assert_msg(warnings == 1 && strstr(logbuf, "no hugetlbfs is mounted"), "%s", logbuf);
	fg_region_close(r);
	fg_region_unlink(shm);
}
END_TEST

/* 1G pages as this machine has them. Offered: a 1G mount whose pool has no
 * free page (the usual case: 1G pages are reserved at boot or not at all)
 * beside a 2M mount with the fixture's pages; if the 1G pool does have a
 * free page, auto rightly takes the larger pages. Not offered (an AMD EPYC
 * of this kind, say): the kernel refuses the mount, and auto takes 2M. */
START_TEST(one_gig_pages_as_the_machine_has_them)
{
	struct fg_region *r;
	char dir1g[128], dir2m[128], shm[96];
	bool offered = machine_offers(1048576);

	if (offered) {
		unsigned long free1g =
			read_ul("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages");

		private_mount(dir1g, sizeof(dir1g), "hugetlbfs", "pagesize=1G");
		fprintf(stderr, "region_huge: branch: this machine offers 1G pages (%lu free)\n",
			free1g);
		private_mount(dir2m, sizeof(dir2m), "hugetlbfs", "pagesize=2M");
		snprintf(shm, sizeof(shm), "/dev/shm/fg-huge-%d", (int)getpid());
		r = make(shm, FG_REGION_HUGE_AUTO);
		ck_assert_msg(warnings == 0, "%s", logbuf);
		ck_assert(fg_region_hugepages(r));
		ck_assert_uint_eq(fg_region_page_size(r), free1g ? 1u << 30 : 2u << 20);
		ck_assert_msg(strncmp(fg_region_path(r), free1g ? dir1g : dir2m,
				      strlen(free1g ? dir1g : dir2m)) == 0, "%s", fg_region_path(r));
		fg_region_close(r);
		ck_assert_int_eq(fg_region_unlink(shm), 0);
		private_unmount(dir2m);
		private_unmount(dir1g);
	} else {
		char dir[128];

		fprintf(stderr, "region_huge: branch: this machine offers no 1G pages\n");
		private_mount(dir2m, sizeof(dir2m), "hugetlbfs", "pagesize=2M");
		snprintf(dir, sizeof(dir), "/tmp/fg-huge-%d-1g-XXXXXX", (int)getpid());
		ck_assert_ptr_nonnull(mkdtemp(dir));
		errno = 0;
		ck_assert_int_eq(mount("hugetlbfs", dir, "hugetlbfs", 0, "pagesize=1G"), -1);
		ck_assert_msg(errno == EINVAL, "mount -o pagesize=1G: %s", strerror(errno));
		ck_assert_int_eq(rmdir(dir), 0);
		snprintf(shm, sizeof(shm), "/dev/shm/fg-huge-%d", (int)getpid());
		r = make(shm, FG_REGION_HUGE_AUTO);
		ck_assert_msg(warnings == 0 && log_count("2048 KB pages on hugetlbfs") == 1, "%s",
			      logbuf);
		fg_region_close(r);
		ck_assert_int_eq(fg_region_unlink(shm), 0);
		private_unmount(dir2m);
	}
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
	tcase_add_test(tc, one_gig_pages_as_the_machine_has_them);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(region_huge_suite)
