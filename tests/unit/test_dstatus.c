/* SPDX-License-Identifier: MIT */
/*
 * test_dstatus.c — the downstreams' status file: written and read back
 * field for field, unknown keys ignored (a newer writer), bad lines
 * skipped, a file without its header refused, a truncated file read up
 * to its last whole line; and the field table is the struct.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/dstatus.h"
#include "fgtest.h"

static char dir[64];

static void mkdir_tmp(void)
{
	strcpy(dir, "/tmp/fgds-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int parse(const char *text, struct fg_ds_status *s, unsigned max, unsigned *n,
		 fg_time_t *t)
{
	return fg_ds_status_parse(text, strlen(text), s, max, n, t);
}

START_TEST(roundtrip_every_field)
{
	struct fg_ds_status w[2], r[4];
	fg_time_t t;
	unsigned n;

	memset(w, 0, sizeof(w));
	strcpy(w[0].name, "binaries");
	strcpy(w[0].id, "bin-2019");
	strcpy(w[1].name, "text");
	strcpy(w[1].id, "text");
	/* a distinct value in every field, the largest too */
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		*(uint64_t *)(void *)((char *)&w[0] + fg_ds_fields[k].off) = 1000 + k;
		*(uint64_t *)(void *)((char *)&w[1] + fg_ds_fields[k].off) = UINT64_MAX - k;
	}
	mkdir_tmp();
	ck_assert_int_eq(fg_ds_status_write(dir, 1767225600, w, 2), 0);
	ck_assert_int_eq(fg_ds_status_read(dir, r, 4, &n, &t), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(t, 1767225600);
	ck_assert_mem_eq(&r[0], &w[0], sizeof(w[0]));
	ck_assert_mem_eq(&r[1], &w[1], sizeof(w[1]));
	/* at most max read */
	ck_assert_int_eq(fg_ds_status_read(dir, r, 1, &n, &t), 0);
	ck_assert_uint_eq(n, 1);
	rm_tmp();
	ck_assert_int_eq(fg_ds_status_read(dir, r, 4, &n, &t), -ENOENT);
}
END_TEST

START_TEST(table_is_the_struct)
{
	/* one uint64_t per field, in order, after the two names */
	ck_assert_uint_eq(sizeof(struct fg_ds_status),
			  2 * FG_CONFIG_NAME_MAX + fg_ds_n_fields * sizeof(uint64_t));
	for (unsigned k = 0; k < fg_ds_n_fields; k++) {
		ck_assert_uint_eq(fg_ds_fields[k].off, 2 * FG_CONFIG_NAME_MAX + k * sizeof(uint64_t));
		ck_assert(fg_ds_fields[k].help && *fg_ds_fields[k].help);
	}
}
END_TEST

/* The keys are external names (floodctl, /metrics, scripts reading the
 * file): a line as the build before the one status table wrote it, keys in
 * its order, reads into the same values, and is written back with every
 * key it had. The names are spelled out here on purpose, not taken from
 * the table: renaming a row must fail this test. */
START_TEST(released_keys_read)
{
	static const char *const v1_keys[] = {
		"paused", "parked", "full", "connections", "ready", "streaming",
		"lag_records", "lag_bytes", "lag_seconds", "backlog_bytes", "sent", "accepted",
		"refused", "not_wanted", "deferred", "reconnects", "not_routed", "dropped", "parks",
	};
	char text[1024], *p = text, *back = NULL;
	struct fg_ds_status r[2];
	fg_time_t t;
	unsigned n;
	size_t len = 0;
	FILE *f;

	p += sprintf(p, "floodgate-downstreams 1 5\nbinaries bin-2019");
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v1_keys); i++)
		p += sprintf(p, " %s=%u", v1_keys[i], 100 + i);
	strcpy(p, "\n");
	ck_assert_int_eq(parse(text, r, 2, &n, &t), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(fg_ds_n_fields, FG_ARRAY_SIZE(v1_keys));
	ck_assert_uint_eq(r[0].paused, 100);
	ck_assert_uint_eq(r[0].connections, 103);
	ck_assert_uint_eq(r[0].streaming, 105);
	ck_assert_uint_eq(r[0].backlog_bytes, 109);
	ck_assert_uint_eq(r[0].not_wanted, 113);
	ck_assert_uint_eq(r[0].parks, 118);
	/* every key found its row: each row holds the value of its key */
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v1_keys); i++) {
		unsigned k = 0;

		while (k < fg_ds_n_fields && strcmp(fg_ds_fields[k].name, v1_keys[i]) != 0)
			k++;
		ck_assert_msg(k < fg_ds_n_fields, "no row for key %s", v1_keys[i]);
		ck_assert_uint_eq(fg_ds_value(&r[0], &fg_ds_fields[k]), 100 + i);
	}
	/* and written back, every key again */
	mkdir_tmp();
	ck_assert_int_eq(fg_ds_status_write(dir, 5, r, 1), 0);
	snprintf(text, sizeof(text), "%s/%s", dir, FG_DS_STATUS_FILE);
	f = fopen(text, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_gt(getdelim(&back, &len, '\0', f), 0);
	fclose(f);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(v1_keys); i++) {
		snprintf(text, sizeof(text), " %s=%u", v1_keys[i], 100 + i);
		ck_assert_msg(strstr(back, text), "written back without%s", text);
	}
	free(back);
	rm_tmp();
}
END_TEST

START_TEST(newer_keys_and_bad_lines)
{
	struct fg_ds_status r[4];
	fg_time_t t;
	unsigned n;

	ck_assert_int_eq(parse("floodgate-downstreams 1 5\n"
			       "a a sent=3 future_key=9 parked=1\n"		/* kept, 9 ignored */
			       "b/x b sent=1\n"					/* bad name */
			       "c c sent=-1\n"					/* not a number */
			       "d d sent\n"					/* no value */
			       "e e sent=99999999999999999999999\n"		/* overflow */
			       "f\n"						/* no id */
			       "g g   accepted=4  \n"				/* blanks */
			       "h h sent=1",					/* cut short */
			       r, 4, &n, &t), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(t, 5);
	ck_assert_str_eq(r[0].name, "a");
	ck_assert_uint_eq(r[0].sent, 3);
	ck_assert_uint_eq(r[0].parked, 1);
	ck_assert_uint_eq(r[0].accepted, 0);
	ck_assert_str_eq(r[1].name, "g");
	ck_assert_uint_eq(r[1].accepted, 4);
}
END_TEST

/* A word holding a NUL octet is not of the shape: as a C string the name
 * "\0\0x" would read as "" and be written back as a line of another
 * shape (the fuzzer's find: fuzz_dstatus's corpus, nul-in-name). */
START_TEST(nul_octets_refused)
{
	static const char text[] = "floodgate-downstreams 1 5\n"
				   "\0\0x acc sent=1\n"		/* NUL in the name */
				   "b b\0c sent=2\n"		/* in the id */
				   "c c sent=3\0junk\n"		/* in a value */
				   "d d sent=4\n";
	static const char hdr[] = "floodgate-downstreams 1 5\0\nd d sent=4\n";
	struct fg_ds_status r[4];
	fg_time_t t;
	unsigned n;

	ck_assert_int_eq(fg_ds_status_parse(text, sizeof(text) - 1, r, 4, &n, &t), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(r[0].name, "d");
	ck_assert_uint_eq(r[0].sent, 4);
	/* the header's words too */
	ck_assert_int_eq(fg_ds_status_parse(hdr, sizeof(hdr) - 1, r, 4, &n, &t), -EINVAL);
}
END_TEST

START_TEST(header_refused)
{
	struct fg_ds_status r[2];
	fg_time_t t;
	unsigned n;

	ck_assert_int_eq(parse("", r, 2, &n, &t), -EINVAL);
	ck_assert_int_eq(parse("a a sent=1\n", r, 2, &n, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-downstreams 2 5\na a sent=1\n", r, 2, &n, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-downstreams 1 x\n", r, 2, &n, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-downstreams 1\n", r, 2, &n, &t), -EINVAL);
	ck_assert_int_eq(parse("floodgate-downstreams 1 5", r, 2, &n, &t), -EINVAL);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(parse("floodgate-downstreams 1 5\n", r, 2, &n, &t), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

static Suite *dstatus_suite(void)
{
	Suite *s = suite_create("dstatus");
	TCase *t = tcase_create("file");

	tcase_add_test(t, roundtrip_every_field);
	tcase_add_test(t, table_is_the_struct);
	tcase_add_test(t, released_keys_read);
	tcase_add_test(t, newer_keys_and_bad_lines);
	tcase_add_test(t, nul_octets_refused);
	tcase_add_test(t, header_refused);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(dstatus_suite)
