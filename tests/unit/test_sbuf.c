/* SPDX-License-Identifier: MIT */
/*
 * test_sbuf.c — the text buffer and the JSON writer every part uses
 * (lib/text/sbuf.c; floodctl prints its documents with it): members in
 * order with commas, arrays without keys, nesting closed at the end, any
 * octet string escaped into valid JSON, NULL strings and time 0 as null,
 * a value past its buffer's failure not written.
 */
#include <string.h>

#include "fgtest.h"
#include "floodgate/sbuf.h"

START_TEST(sbuf_grows)
{
	struct fg_sbuf b;
	char big[5000];

	fg_sbuf_init(&b);
	memset(big, 'x', sizeof(big));
	fg_sbuf_put(&b, big, sizeof(big));
	fg_sbuf_printf(&b, "<%d>", 42);
	ck_assert(!b.failed);
	ck_assert_uint_eq(b.len, sizeof(big) + 4);
	ck_assert_str_eq(b.p + sizeof(big), "<42>");
	fg_sbuf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	fg_sbuf_free(&b);
}
END_TEST

START_TEST(json_document)
{
	struct fg_sbuf b;
	struct fg_json j;

	fg_sbuf_init(&b);
	fg_json_begin(&j, &b);
	fg_json_u64(&j, "n", UINT64_MAX);
	fg_json_i64(&j, "i", -5);
	fg_json_bool(&j, "ok", true);
	fg_json_null(&j, "none");
	fg_json_str(&j, "s", NULL);
	fg_json_strn(&j, "sn", NULL, 0);
	fg_json_strn(&j, "empty", "", 0);
	fg_json_arr(&j, "list");
	fg_json_str(&j, NULL, "a");
	fg_json_obj(&j, "ignored key");
	fg_json_u64(&j, "x", 1);
	fg_json_close(&j);
	fg_json_f64(&j, NULL, 1.0 / 0.0);
	fg_json_close(&j);
	fg_json_time(&j, "t0", 0);
	fg_json_time(&j, "t", 1800000000);
	fg_json_obj(&j, "open");
	fg_json_arr(&j, "left");
	fg_json_end(&j);		/* closes what is still open */
	ck_assert(!b.failed);
	ck_assert_str_eq(b.p, "{\"n\":18446744073709551615,\"i\":-5,\"ok\":true,\"none\":null,"
			 "\"s\":null,\"sn\":null,\"empty\":\"\",\"list\":[\"a\",{\"x\":1},null],"
			 "\"t0\":null,\"t\":\"2027-01-15T08:00:00Z\",\"open\":{\"left\":[]}}");
	fg_sbuf_free(&b);
}
END_TEST

START_TEST(json_escapes_any_octets)
{
	static const char raw[] = "q\"b\\n\n\t\x01\x7f\x80\xff/";
	struct fg_sbuf b;
	struct fg_json j;

	fg_sbuf_init(&b);
	fg_json_begin(&j, &b);
	fg_json_strn(&j, "k\"", raw, sizeof(raw) - 1);
	fg_json_strn(&j, "nul", "a\0b", 3);
	fg_json_end(&j);
	ck_assert_str_eq(b.p, "{\"k\\\"\":\"q\\\"b\\\\n\\u000a\\u0009\\u0001\\u007f\\u0080\\u00ff/\","
			 "\"nul\":\"a\\u0000b\"}");
	fg_sbuf_free(&b);
}
END_TEST

static Suite *sbuf_suite(void)
{
	Suite *s = suite_create("sbuf");
	TCase *t = tcase_create("sbuf");

	tcase_add_test(t, sbuf_grows);
	tcase_add_test(t, json_document);
	tcase_add_test(t, json_escapes_any_octets);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(sbuf_suite)
