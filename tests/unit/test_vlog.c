/* SPDX-License-Identifier: MIT */
/*
 * test_vlog.c — verdict-log lines: the exact line format, the remote's
 * address in both families (through the ring to the file), untrusted
 * fields clamped, nothing emitted while the log is off, a full ring drops and
 * counts, files rotate by size keeping N, and a drain without a file
 * counts every line it throws away.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/vlog.h"
#include "ctl_fixture.h"
#include "fgtest.h"

#define T0 1780000000LL		/* 2026-05-28T20:26:40Z */

static int emit_from(struct fg_region_writer *w, int peer, const struct fg_endpoint *remote,
		     const char *id)
{
	return fg_vlog_emit(w, T0 * 1000000000LL + 123456789, FG_VLOG_TAKETHIS, peer, remote, id,
			    strlen(id), FG_VLOG_REJECT, FG_REASON_TOO_OLD, T0 - 86400 * 11,
			    T0 - 86400 * 11 - 5, T0 - 86400 * 11, T0);
}

static int emit(struct fg_region_writer *w, int peer, const char *id)
{
	return emit_from(w, peer, NULL, id);
}

static struct fg_endpoint endpoint(const char *text)
{
	struct fg_endpoint ep;

	ck_assert_int_eq(fg_parse_endpoint(text, 0, &ep), 0);
	return ep;
}

static const struct {
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
	const char *want;
} remotes[] = {
	{ FG_VREC_AF_INET, { 192, 0, 2, 1 }, 41234, "\"192.0.2.1:41234\"" },
	{ FG_VREC_AF_INET6, { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 119, "\"[2001:db8::1]:119\"" },
	{ FG_VREC_AF_INET6, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			      0xff, 0xff, 0xff, 0xff }, 65535,
	  "\"[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535\"" },
	{ 5, { 192, 0, 2, 1 }, 41234, "null" },
	{ FG_VREC_AF_NONE, { 192, 0, 2, 1 }, 41234, "null" },
};

START_TEST(test_line_format)
{
	struct fg_vrec rec;
	struct fg_sbuf b;

	memset(&rec, 0, sizeof(rec));
	rec.time_ns = T0 * 1000000000LL + 123456789;
	rec.article_date = T0 - 60;
	rec.date = T0 - 60;
	rec.arrival = T0;
	rec.verdict = FG_VLOG_ACCEPT;
	rec.cmd = FG_VLOG_IHAVE;
	rec.id_len = 7;
	memcpy(rec.id, "<a\"b@c>", 7);
	fg_sbuf_init(&b);
	fg_vlog_format(&b, &rec, "peer-1");
	ck_assert_str_eq(b.p, "{\"time\":\"2026-05-28T20:26:40.123Z\",\"peer\":\"peer-1\",\"addr\":null,"
			 "\"cmd\":\"IHAVE\","
			 "\"id\":\"<a\\\"b@c>\",\"verdict\":\"accept\",\"reason\":\"none\","
			 "\"article_date\":\"2026-05-28T20:25:40Z\",\"date\":\"2026-05-28T20:25:40Z\","
			 "\"injection_date\":null,\"arrival\":\"2026-05-28T20:26:40Z\"}\n");
	/* the remote, both families, spelt as floodctl peers spells it; the
	 * widest fits; a family no writer puts there (a damaged ring) is null,
	 * not guessed */
	for (size_t i = 0; i < sizeof(remotes) / sizeof(remotes[0]); i++) {
		char want[96];

		fg_sbuf_reset(&b);
		rec.family = remotes[i].family;
		memcpy(rec.addr, remotes[i].addr, 16);
		rec.port = remotes[i].port;
		fg_vlog_format(&b, &rec, "peer-1");
		snprintf(want, sizeof(want), ",\"peer\":\"peer-1\",\"addr\":%s,\"cmd\":", remotes[i].want);
		ck_assert_msg(strstr(b.p, want), "%zu: %s", i, b.p);
	}
	/* a damaged record: fields out of range are null, the ID is cut */
	fg_sbuf_reset(&b);
	rec.verdict = 200;
	rec.cmd = 99;
	rec.reason = 250;
	rec.id_len = 255;
	memset(rec.id, 'x', sizeof(rec.id));
	fg_vlog_format(&b, &rec, NULL);
	ck_assert(strstr(b.p, "\"peer\":null,\"addr\":null,\"cmd\":null"));
	ck_assert(strstr(b.p, "\"verdict\":null,\"reason\":null"));
	ck_assert_uint_eq(strspn(strstr(b.p, "\"id\":\"") + 6, "x"), FG_VREC_ID_MAX);
	fg_sbuf_free(&b);
}
END_TEST

START_TEST(test_off_full_and_drop_counting)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_region_writer *w;
	struct fg_stats st;
	int err;

	w = fg_region_claim(r, "v", &err);
	ck_assert_int_eq(emit(w, 0, "<off@x>"), 0);	/* off: nothing pushed */
	ck_assert_uint_eq(fg_region_ring_pushed(w, FG_RING_VLOG), 0);
	fg_region_set_vlog(r, true);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(emit(w, 0, "<on@x>"), 0);
	ck_assert_int_eq(emit(w, 0, "<full@x>"), -ENOSPC);
	ck_assert_uint_eq(fg_region_writer_stats(w)->total.ctr[FG_CTR_VLOG_DROPPED], 1);
	ck_assert_int_eq(emit(w, FG_REGION_PEERS, "<bad@x>"), -EINVAL);
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(fg_vlog_drain(NULL, r, 100, &st), 16);	/* no file: dropped */
	ck_assert_uint_eq(st.ctr[FG_CTR_VLOG_DROPPED], 16);
	ck_assert_int_eq(emit(w, 0, "<again@x>"), 0);
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

/* A writer's remote goes through the ring to floodctld's file: v4, v6 and
 * none each on its line; a remote of another family is refused, not
 * pushed. */
START_TEST(test_remote_through_ring)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_endpoint v4 = endpoint("198.51.100.7:40001"), v6 = endpoint("[2001:db8::7]:40002");
	struct fg_endpoint odd = v4;
	struct fg_region_writer *w;
	struct fg_vlog_file *f;
	struct fg_stats st;
	char path[256], text[2048];
	FILE *in;
	size_t n;
	int err;

	snprintf(path, sizeof(path), "%s/verdict.log", fx_dir(&fx));
	f = fg_vlog_open(path, 0, 1, &err);
	ck_assert_ptr_nonnull(f);
	fg_region_set_vlog(r, true);
	w = fg_region_claim(r, "v", &err);
	ck_assert_ptr_nonnull(w);
	odd.family = AF_UNIX;
	ck_assert_int_eq(emit_from(w, -1, &odd, "<odd@x>"), -EINVAL);
	ck_assert_uint_eq(fg_region_ring_pushed(w, FG_RING_VLOG), 0);
	ck_assert_int_eq(emit_from(w, -1, &v4, "<v4@x>"), 0);
	ck_assert_int_eq(emit_from(w, -1, &v6, "<v6@x>"), 0);
	ck_assert_int_eq(emit_from(w, -1, NULL, "<none@x>"), 0);
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(fg_vlog_drain(f, r, 100, &st), 3);
	fg_vlog_close(f);
	in = fopen(path, "r");
	ck_assert_ptr_nonnull(in);
	n = fread(text, 1, sizeof(text) - 1, in);
	fclose(in);
	text[n] = '\0';
	ck_assert_msg(strstr(text, "\"addr\":\"198.51.100.7:40001\",\"cmd\":\"TAKETHIS\","
				   "\"id\":\"<v4@x>\""), "%s", text);
	ck_assert_msg(strstr(text, "\"addr\":\"[2001:db8::7]:40002\",\"cmd\":\"TAKETHIS\","
				   "\"id\":\"<v6@x>\""), "%s", text);
	ck_assert_msg(strstr(text, "\"addr\":null,\"cmd\":\"TAKETHIS\",\"id\":\"<none@x>\""), "%s",
		      text);
	ck_assert_ptr_null(strstr(text, "<odd@x>"));
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

static unsigned count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

START_TEST(test_files_rotate_and_keep_n)
{
	struct ctl_fixture fx = { 0 };
	struct fg_region *r = fx_region(&fx, 1000, 1, 64);
	struct fg_region_writer *w;
	struct fg_vlog_file *f;
	struct fg_stats st;
	char path[256], p1[300], p2[300], p3[300];
	unsigned total = 0;
	int err;

	snprintf(path, sizeof(path), "%s/verdict.log", fx_dir(&fx));
	snprintf(p1, sizeof(p1), "%s.1", path);
	snprintf(p2, sizeof(p2), "%s.2", path);
	snprintf(p3, sizeof(p3), "%s.3", path);
	f = fg_vlog_open(path, 1000, 3, &err);
	ck_assert_ptr_nonnull(f);
	fg_region_set_vlog(r, true);
	w = fg_region_claim(r, "v", &err);
	memset(&st, 0, sizeof(st));
	/* one line per drain: each flush is one line, so rotation is exact */
	for (int i = 0; i < 40; i++) {
		ck_assert_int_eq(emit(w, -1, "<rotate@x>"), 0);
		ck_assert_int_eq(fg_vlog_drain(f, r, 100, &st), 1);
	}
	ck_assert_uint_eq(st.ctr[FG_CTR_VLOG_LINES], 40);
	ck_assert_uint_ge(st.ctr[FG_CTR_VLOG_ROTATIONS], 3);
	ck_assert_int_eq(access(p1, F_OK), 0);
	ck_assert_int_eq(access(p2, F_OK), 0);
	ck_assert_int_ne(access(p3, F_OK), 0);	/* keep 3 files in all */
	total = count_lines(path) + count_lines(p1) + count_lines(p2);
	ck_assert_uint_le(total, 40);
	{
		struct stat sb;

		ck_assert_int_eq(stat(p1, &sb), 0);
		ck_assert_int_le(sb.st_size, 1000);
		ck_assert_int_gt(sb.st_size, 1000 - 300);
	}
	ck_assert_str_eq(fg_vlog_path(f), path);
	fg_vlog_close(f);
	fg_region_release(w);
	fx_cleanup(&fx);
}
END_TEST

static Suite *vlog_suite(void)
{
	Suite *s = suite_create("vlog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_line_format);
	tcase_add_test(tc, test_remote_through_ring);
	tcase_add_test(tc, test_off_full_and_drop_counting);
	tcase_add_test(tc, test_files_rotate_and_keep_n);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(vlog_suite)
