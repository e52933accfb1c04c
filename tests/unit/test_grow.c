/* SPDX-License-Identifier: MIT */
/*
 * test_grow.c — fg_grow (dataplane/core/grow.c): the first size, doubling
 * to what is asked, the contents kept, a buffer big enough left alone, and
 * a size that cannot be reached refused with the buffer as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fgtest.h"
#include "floodgate/common.h"

/* From nothing: the first size, or the smallest doubling of it that holds
 * what is asked; no first size starts from one octet. */
START_TEST(test_first_size)
{
	static const struct { size_t want, first, cap; } cases[] = {
		{ 10, 64, 64 }, { 0, 16, 16 }, { 1000, 256, 1024 }, { 3, 0, 4 }, { 64, 64, 64 },
	};

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		size_t cap = 0;
		char *b = fg_grow(NULL, &cap, cases[i].want, cases[i].first);

		ck_assert_ptr_nonnull(b);
		ck_assert_uint_eq(cap, cases[i].cap);
		free(b);
	}
}
END_TEST

/* Doubling keeps the contents; a buffer big enough is left as it is. */
START_TEST(test_doubling)
{
	size_t cap = 0;
	char *b = fg_grow(NULL, &cap, 10, 64), *same;

	ck_assert_ptr_nonnull(b);
	memcpy(b, "kept", 5);
	/* 64 -> 128 -> 256 -> 512: the smallest doubling that holds 300 */
	b = fg_grow(b, &cap, 300, 64);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(cap, 512);
	ck_assert_str_eq(b, "kept");
	same = fg_grow(b, &cap, 512, 4096);
	ck_assert_ptr_eq(same, b);
	ck_assert_uint_eq(cap, 512);
	free(b);
}
END_TEST

START_TEST(test_unreachable_refused)
{
	size_t cap = 0;
	char *b = fg_grow(NULL, &cap, 8, 8);
	char *r;

	ck_assert_ptr_nonnull(b);
	memcpy(b, "still", 6);
	/* no doubling of 8 reaches SIZE_MAX: refused, nothing changed */
	r = fg_grow(b, &cap, SIZE_MAX, 8);
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(cap, 8);
	ck_assert_str_eq(b, "still");
	free(b);
}
END_TEST

static Suite *grow_suite(void)
{
	Suite *s = suite_create("grow");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_first_size);
	tcase_add_test(tc, test_doubling);
	tcase_add_test(tc, test_unreachable_refused);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(grow_suite)
