/* SPDX-License-Identifier: MIT */
/*
 * test_statusfield.c — a status file's field table (statusfield.h,
 * lib/datadir/statusfield.c): rows from an X-macro carry name, kind, help
 * and offset; a value is read at its offset; fg_status_set sets exactly
 * the field a name of `len` octets names, and nothing for a name the
 * table lacks (a prefix, a longer name, an empty one).
 */
#include <string.h>

#include "fgtest.h"
#include "floodgate/common.h"
#include "floodgate/statusfield.h"

#define T_FIELDS(X)                      \
	X(up, GAUGE, "1 while up")       \
	X(upper, COUNTER, "an upper")    \
	X(sent, COUNTER, "things sent")

struct t_rec {
	char label[12];			/* not a field: offsets must skip it */
#define T_FIELD(f, k, h) uint64_t f;
	T_FIELDS(T_FIELD)
#undef T_FIELD
};

static const struct fg_status_field t_fields[] = {
#define T_ROW(f, k, h) FG_STATUS_ROW(struct t_rec, f, k, h)
	T_FIELDS(T_ROW)
#undef T_ROW
};
static const unsigned t_n = FG_ARRAY_SIZE(t_fields);

START_TEST(rows)
{
	struct t_rec r = { .up = 1, .upper = 2, .sent = UINT64_MAX };

	ck_assert_uint_eq(t_n, 3);
	ck_assert_str_eq(t_fields[0].name, "up");
	ck_assert_int_eq(t_fields[0].kind, FG_STATUS_GAUGE);
	ck_assert_str_eq(t_fields[1].help, "an upper");
	ck_assert_int_eq(t_fields[2].kind, FG_STATUS_COUNTER);
	ck_assert_uint_eq(t_fields[2].off, offsetof(struct t_rec, sent));
	ck_assert_uint_eq(fg_status_value(&r, &t_fields[0]), 1);
	ck_assert_uint_eq(fg_status_value(&r, &t_fields[1]), 2);
	ck_assert_uint_eq(fg_status_value(&r, &t_fields[2]), UINT64_MAX);
}
END_TEST

START_TEST(set_by_name)
{
	static const char line[] = "upper=7 up=9";
	struct t_rec r, want;

	memset(&r, 0, sizeof(r));
	memset(&want, 0, sizeof(want));
	/* the names are not NUL-terminated in a line: len bounds them */
	ck_assert(fg_status_set(&r, t_fields, t_n, line, 5, 7));
	ck_assert(fg_status_set(&r, t_fields, t_n, line + 8, 2, 9));
	want.upper = 7;
	want.up = 9;
	ck_assert_mem_eq(&r, &want, sizeof(r));
	ck_assert(!fg_status_set(&r, t_fields, t_n, "uppe", 4, 1));
	ck_assert(!fg_status_set(&r, t_fields, t_n, "sent_", 5, 1));
	ck_assert(!fg_status_set(&r, t_fields, t_n, "", 0, 1));
	ck_assert(!fg_status_set(&r, t_fields, t_n, "label", 5, 1));
	ck_assert(!fg_status_set(&r, t_fields, 1, "sent", 4, 1));	/* not in the first row */
	ck_assert_mem_eq(&r, &want, sizeof(r));
}
END_TEST

static Suite *statusfield_suite(void)
{
	Suite *s = suite_create("statusfield");
	TCase *t = tcase_create("statusfield");

	tcase_add_test(t, rows);
	tcase_add_test(t, set_by_name);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(statusfield_suite)
