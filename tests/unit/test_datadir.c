/* SPDX-License-Identifier: MIT */
/*
 * test_datadir.c — lib/datadir's durable replace (fg_datadir_replace) and
 * the INN hash table's writer on top of it (fg_foreign_write): what lands
 * is exactly the buffers, with the mode asked; a failure leaves neither a
 * half file nor the .tmp; the old file survives a failed replace.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/innhist.h"
#include "fgtest.h"

static char dir[256];
static char one_s[] = "one,", two_s[] = "two", empty_s[] = "", x_s[] = "x", old_s[] = "old",
	    new_s[] = "new";

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_datadir.%d.XXXXXX", (int)getpid());
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, cap);
	close(fd);
	ck_assert_int_ge(n, 0);
	return (size_t)n;
}

START_TEST(test_replace_writes_the_buffers_in_order)
{
	char path[PATH_MAX], tmp[PATH_MAX], got[64];
	struct iovec iov[3] = { { one_s, 4 }, { empty_s, 0 }, { two_s, 3 } };
	struct stat st;

	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(tmp, sizeof(tmp), "%s/f.tmp", dir);
	ck_assert_int_eq(fg_datadir_replace(path, 0600, iov, 3), 0);
	ck_assert_uint_eq(slurp(path, got, sizeof(got)), 7);
	ck_assert_int_eq(memcmp(got, "one,two", 7), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	/* over the old one, shorter: nothing of the old is left */
	ck_assert_int_eq(fg_datadir_replace(path, 0644, &(struct iovec){ x_s, 1 }, 1), 0);
	ck_assert_uint_eq(slurp(path, got, sizeof(got)), 1);
	ck_assert_int_eq(got[0], 'x');
	/* no buffers: an empty file */
	ck_assert_int_eq(fg_datadir_replace(path, 0644, NULL, 0), 0);
	ck_assert_uint_eq(slurp(path, got, sizeof(got)), 0);
}
END_TEST

START_TEST(test_replace_failures_leave_the_old_file)
{
	char path[PATH_MAX], got[16], longp[PATH_MAX + 8];
	struct iovec one = { old_s, 3 };

	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_int_eq(fg_datadir_replace(path, 0644, &one, 1), 0);
	/* a directory where the .tmp must go: the open fails, f stays */
	snprintf(longp, sizeof(longp), "%s/f.tmp", dir);
	ck_assert_int_eq(mkdir(longp, 0755), 0);
	ck_assert_int_eq(fg_datadir_replace(path, 0644, &(struct iovec){ new_s, 3 }, 1), -EISDIR);
	ck_assert_uint_eq(slurp(path, got, sizeof(got)), 3);
	ck_assert_int_eq(memcmp(got, "old", 3), 0);
	ck_assert_int_eq(rmdir(longp), 0);
	/* a missing directory */
	snprintf(longp, sizeof(longp), "%s/none/f", dir);
	ck_assert_int_eq(fg_datadir_replace(longp, 0644, &one, 1), -ENOENT);
	/* a name with no room for ".tmp" */
	memset(longp, 'a', PATH_MAX - 2);
	longp[PATH_MAX - 2] = '\0';
	ck_assert_int_eq(fg_datadir_replace(longp, 0644, &one, 1), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_foreign_write_through_replace)
{
	char path[PATH_MAX];
	uint8_t (*h)[FG_MD5_LEN] = calloc(3, FG_MD5_LEN);
	struct fg_foreign *f;
	const char *why;
	size_t n = 0;
	int err;

	ck_assert_ptr_nonnull(h);
	h[0][0] = 7;
	h[1][0] = 3;
	h[2][0] = 7;		/* a duplicate of h[0] */
	snprintf(path, sizeof(path), "%s/none/" FG_FOREIGN_FILE, dir);
	ck_assert_int_eq(fg_foreign_write(path, h, 3, 10, 20, &n), -ENOENT);
	ck_assert_uint_eq(n, 0);
	snprintf(path, sizeof(path), "%s/" FG_FOREIGN_FILE, dir);
	ck_assert_int_eq(fg_foreign_write(path, h, 3, 10, 20, &n), 0);
	ck_assert_uint_eq(n, 2);
	f = fg_foreign_open(path, true, &err, &why);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fg_foreign_count(f), 2);
	ck_assert(fg_foreign_has(f, h[0]) && fg_foreign_has(f, h[1]));
	ck_assert_int_eq(fg_foreign_until(f), 20);
	fg_foreign_close(f);
	free(h);
}
END_TEST

static Suite *datadir_suite(void)
{
	Suite *s = suite_create("datadir");
	TCase *tc = tcase_create("replace");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_replace_writes_the_buffers_in_order);
	tcase_add_test(tc, test_replace_failures_leave_the_old_file);
	tcase_add_test(tc, test_foreign_write_through_replace);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(datadir_suite)
