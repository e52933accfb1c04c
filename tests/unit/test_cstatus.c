/* SPDX-License-Identifier: MIT */
/*
 * test_cstatus.c — the cluster's status file (lib/cluster/cstatus.c):
 * written and read back field for field; a reader keeps the fields it
 * knows, ignores others and lines of another shape, refuses a file
 * without the header or of another version, and takes a cut-short last
 * line as absent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/cstatus.h"

START_TEST(round_trip)
{
	char dir[] = "/tmp/fg-cs-XXXXXX", path[64];
	struct fg_cluster_status s = { 0 }, back;
	fg_time_t t = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(fg_cs_status_read(dir, &back, &t), -ENOENT);
	for (unsigned k = 0; k < fg_cs_n_fields; k++)
		*(uint64_t *)(void *)((char *)&s + fg_cs_fields[k].off) = 1000 + k;
	s.rtt_count = UINT64_MAX;
	ck_assert_int_eq(fg_cs_status_write(dir, 1800000000, &s), 0);
	ck_assert_int_eq(fg_cs_status_read(dir, &back, &t), 0);
	ck_assert_int_eq(t, 1800000000);
	ck_assert_mem_eq(&s, &back, sizeof(s));
	snprintf(path, sizeof(path), "%s/%s", dir, FG_CS_STATUS_FILE);
	unlink(path);
	rmdir(dir);
}
END_TEST

static int parse(const char *text, struct fg_cluster_status *s, fg_time_t *t)
{
	return fg_cs_status_parse(text, strlen(text), s, t);
}

START_TEST(shapes)
{
	struct fg_cluster_status s;
	fg_time_t t;

	ck_assert_int_eq(parse("floodgate-cluster 1 5\nanswering 1\nnodes_up 3\nfuture_field 9\n"
			       "masters x\nmasters -1\n masters 4\nmasters 18446744073709551616\n"
			       "slots_mapped 16384\nrtt_p99_us 77", &s, &t), 0);
	ck_assert_int_eq(t, 5);
	ck_assert_uint_eq(s.answering, 1);
	ck_assert_uint_eq(s.nodes_up, 3);
	ck_assert_uint_eq(s.masters, 0);
	ck_assert_uint_eq(s.slots_mapped, 16384);
	ck_assert_uint_eq(s.rtt_p99_us, 0);	/* its line was cut short */
	ck_assert_int_eq(parse("floodgate-cluster 2 5\nanswering 1\n", &s, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-downstreams 1 5\n", &s, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-cluster 1 5", &s, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-cluster 1 x\n", &s, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-cluster 1 \n", &s, &t), -EINVAL);
	ck_assert_int_eq(parse("", &s, &t), -EINVAL);
}
END_TEST

static Suite *cstatus_suite(void)
{
	Suite *s = suite_create("cstatus");
	TCase *t = tcase_create("cstatus");

	tcase_add_test(t, round_trip);
	tcase_add_test(t, shapes);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(cstatus_suite)
