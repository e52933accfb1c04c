/* SPDX-License-Identifier: MIT */
/*
 * test_innhist.c — what a site brings from INN (innhist.h): MD5 against
 * RFC 1321's vectors, INN's Message-ID hash against INN's own
 * HashMessageID (libinn.a, the oracle) on crafted and random IDs, the
 * three line parsers on good and bad lines, and the foreign table:
 * written, mapped, looked up, in force only until its end, damage refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/date.h"
#include "floodgate/datadir.h"
#include "floodgate/innhist.h"
#include "fgtest.h"
#include "nntp_harness.h"

typedef struct { char hash[16]; } inn_hash;	/* libinn.h's HASH */
extern inn_hash HashMessageID(const char *MessageID);

static void hex(const uint8_t *h, char *out)
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

START_TEST(test_md5_rfc1321)
{
	static const char *v[][2] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		  "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "1234567890123456789012345678901234567890123456789012345678901234567890"
		  "1234567890", "57edf4a22be3c955ac49da2e2107b67a" },
	};
	uint8_t h[16];
	char s[33];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fg_md5(v[i][0], strlen(v[i][0]), h);
		hex(h, s);
		ck_assert_str_eq(s, v[i][1]);
	}
}
END_TEST

/* Every length across the padding edges (55, 56, 63, 64, 119, 120 ...). */
START_TEST(test_inn_hash_against_libinn)
{
	static const char *ids[] = {
		"<lhs@test.invalid>", "<lhs@TEST.invalid>", "<Lhs@test.INVALID>",
		"<postmaster@Example.COM>", "<PostMaster@Example.COM>", "<PostMasterX@EXAMPLE>",
		"<no-at-sign-HERE>", "<a@b@C.D>", "<@X>", "<x@>", "<ÄÖ@ÜX.de>",
	};
	uint8_t mine[16];
	inn_hash inn;
	char id[300];
	unsigned seed = 12345;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		ck_assert(fg_inn_hash_msgid(ids[i], strlen(ids[i]), mine));
		inn = HashMessageID(ids[i]);
		ck_assert_msg(memcmp(mine, inn.hash, 16) == 0, "%s", ids[i]);
	}
	for (unsigned n = 0; n < 20000; n++) {
		size_t len = 3 + n % 250, at;

		id[0] = '<';
		for (size_t j = 1; j + 1 < len; j++) {
			seed = seed * 1103515245u + 12345u;
			id[j] = (char)(33 + (seed >> 16) % 94);
			if (id[j] == '>' || id[j] == '@')
				id[j] = 'Q';
		}
		at = 1 + (n * 7) % (len - 1);
		if (n % 3 && at + 1 < len)
			id[at] = '@';
		id[len - 1] = '>';
		id[len] = '\0';
		ck_assert(fg_inn_hash_msgid(id, len, mine));
		inn = HashMessageID(id);
		ck_assert_msg(memcmp(mine, inn.hash, 16) == 0, "%s", id);
	}
}
END_TEST

START_TEST(test_hisv6_lines)
{
	struct fg_hisv6_line l;
	const char *why;
	const char *good = "[0123456789ABCDEFabcdef0123456789]\t1765000000~-~1764990000\t"
			   "@030945535430000000000000000200000000@";
	static const char *bad[] = {
		"0123456789ABCDEF0123456789ABCDEF]\t1",			/* no [ */
		"[0123456789ABCDEF0123456789ABCDEG]\t1",		/* not hex */
		"[0123456789ABCDEF0123456789ABCDEF\t1",			/* no ] */
		"[0123456789ABCDEF0123456789ABCDEF] 1",			/* no tab */
		"[0123456789ABCDEF0123456789ABCDEF]\t",			/* no arrival */
		"[0123456789ABCDEF0123456789ABCDEF]\tx",		/* not a number */
		"[0123456789ABCDEF0123456789ABCDEF]\t1~x",		/* bad expiry */
		"[0123456789ABCDEF0123456789ABCDEF]\t1~-~",		/* no posted */
		"[0123456789ABCDEF0123456789ABCDEF]\t1~-~2 @x@",	/* no tab */
		"[0123456789ABCDEF0123456789ABCDEF]\t1234567890123",	/* 13 digits */
		"[0123",
	};

	ck_assert_int_eq(fg_hisv6_parse(good, strlen(good), &l, &why), 1);
	ck_assert_int_eq(l.hash[0], 0x01);
	ck_assert_int_eq(l.hash[7], 0xef);
	ck_assert_int_eq(l.hash[15], 0x89);
	ck_assert_int_eq(l.arrived, 1765000000);
	ck_assert_int_eq(l.expires, 0);
	ck_assert_int_eq(l.posted, 1764990000);
	ck_assert(l.has_token);
	/* a remembered ID: no token, no posted time */
	ck_assert_int_eq(fg_hisv6_parse(good, 47, &l, &why), 1);
	ck_assert_int_eq(fg_hisv6_parse("[0123456789ABCDEF0123456789ABCDEF]\t17~-", 39, &l, &why), 1);
	ck_assert(!l.has_token);
	ck_assert_int_eq(l.arrived, 17);
	ck_assert_int_eq(fg_hisv6_parse("[0123456789ABCDEF0123456789ABCDEF]\t17~99~5\tjunk", 47,
					&l, &why), 1);
	ck_assert(!l.has_token);
	ck_assert_int_eq(l.expires, 99);
	ck_assert_int_eq(fg_hisv6_parse("", 0, &l, &why), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(fg_hisv6_parse(bad[i], strlen(bad[i]), &l, &why) == -EINVAL, "%s", bad[i]);
		ck_assert(why != NULL);
	}
}
END_TEST

START_TEST(test_newslog_lines)
{
	struct fg_idtime t;
	enum fg_newslog_code c;
	const char *why;
	time_t now = time(NULL);
	struct tm tm;
	char line[200], mon[4];

	/* a line stamped a minute ago, in local time as innd writes it */
	time_t then = now - 60;

	localtime_r(&then, &tm);
	strftime(mon, sizeof(mon), "%b", &tm);
	snprintf(line, sizeof(line), "%s %2d %02d:%02d:%02d.839 + news.peer <a.1@x.example> 1658 "
		 "a.peer other.peer", mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 1);
	ck_assert_int_eq(c, FG_NEWSLOG_ACCEPTED);
	ck_assert_int_eq((int)t.id_len, 15);
	ck_assert(memcmp(t.id, "<a.1@x.example>", 15) == 0);
	ck_assert_int_eq(t.when, then);
	line[20] = 'j';
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 1);
	ck_assert_int_eq(c, FG_NEWSLOG_JUNKED);
	/* refused, cancels, unknown: nothing to take */
	snprintf(line, sizeof(line), "Aug 25 13:37:54.638 - a.peer <23k82@bar.net> 436 cant store article");
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 0);
	ck_assert_int_eq(c, FG_NEWSLOG_REJECTED);
	snprintf(line, sizeof(line), "Aug 25 13:37:41.839 c news.server.fr <c.4066@foo.com> Cancelling <m@f>");
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 0);
	ck_assert_int_eq(c, FG_NEWSLOG_CANCEL);
	snprintf(line, sizeof(line), "Aug  5 13:37:41.839 ? feed ? reason");
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 0);
	/* never after now + 1 day: a date "tomorrow + 2" is last year's */
	then = now + 3 * 86400;
	localtime_r(&then, &tm);
	strftime(mon, sizeof(mon), "%b", &tm);
	snprintf(line, sizeof(line), "%s %2d 00:00:00.000 + f <b@x>", mon, tm.tm_mday);
	ck_assert_int_eq(fg_newslog_parse(line, strlen(line), now, &t, &c, &why), 1);
	ck_assert(t.when < now);
	ck_assert(t.when > now - 367 * 86400);
	static const char *bad[] = {
		"Aug 25 13:37:41.839 +",
		"Aux 25 13:37:41.839 + f <a@b>",
		"Aug 32 13:37:41.839 + f <a@b>",
		"Aug 25 13:61:41.839 + f <a@b>",
		"Aug 25 13:37:41x839 + f <a@b>",
		"Aug 25 13:37:41.839 ++ f <a@b>",
		"Aug 25 13:37:41.839 x f <a@b>",
		"Aug 25 13:37:41.839 + f a@b",
		"Aug 25 13:37:41.839 + f <>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(fg_newslog_parse(bad[i], strlen(bad[i]), now, &t, &c, &why) == -EINVAL,
			      "%s", bad[i]);
	ck_assert_int_eq(fg_newslog_parse("   ", 3, now, &t, &c, &why), 0);
}
END_TEST

START_TEST(test_idfile_lines)
{
	struct fg_idtime t;
	const char *why;

	ck_assert_int_eq(fg_idfile_parse("<a@b>", 5, &t, &why), 1);
	ck_assert_int_eq(t.when, 0);
	ck_assert_int_eq(fg_idfile_parse("  <a@b>\t1765000000 ", 19, &t, &why), 1);
	ck_assert_int_eq(t.when, 1765000000);
	ck_assert_int_eq((int)t.id_len, 5);
	ck_assert_int_eq(fg_idfile_parse("# comment", 9, &t, &why), 0);
	ck_assert_int_eq(fg_idfile_parse("", 0, &t, &why), 0);
	ck_assert_int_eq(fg_idfile_parse("a@b", 3, &t, &why), -EINVAL);
	ck_assert_int_eq(fg_idfile_parse("<a@b> x", 7, &t, &why), -EINVAL);
	ck_assert_int_eq(fg_idfile_parse("<a@b> 12 13", 11, &t, &why), -EINVAL);
	ck_assert_int_eq(fg_idfile_parse("<a@b", 4, &t, &why), -EINVAL);
}
END_TEST

static void tmpname(char *out, size_t len)
{
	snprintf(out, len, "/tmp/test_innhist.%d.fgf", (int)getpid());
}

START_TEST(test_foreign_table)
{
	enum { N = 50000 };
	uint8_t (*h)[16] = malloc((N + 10) * 16), probe[16];
	char path[64], id[64];
	struct fg_foreign *f;
	const char *why;
	size_t n;
	int err;

	tmpname(path, sizeof(path));
	for (unsigned i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "<%u.in@INN.example>", i);
		ck_assert(fg_inn_hash_msgid(id, strlen(id), h[i]));
	}
	memcpy(h[N], h[3], 16);		/* a duplicate line */
	ck_assert_int_eq(fg_foreign_write(path, h, N + 1, 1000, 5000, &n), 0);
	ck_assert_uint_eq(n, N);
	f = fg_foreign_open(path, true, &err, &why);
	ck_assert_msg(f != NULL, "%s", why);
	ck_assert_uint_eq(fg_foreign_count(f), N);
	ck_assert_int_eq(fg_foreign_imported(f), 1000);
	ck_assert_int_eq(fg_foreign_until(f), 5000);
	ck_assert(fg_foreign_same_file(f, path));
	for (unsigned i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "<%u.in@inn.EXAMPLE>", i);	/* the domain's case */
		ck_assert_msg(fg_foreign_has_id(f, id, strlen(id), 4999), "%s", id);
		snprintf(id, sizeof(id), "<%u.out@INN.example>", i);
		ck_assert_msg(!fg_foreign_has_id(f, id, strlen(id), 4999), "%s", id);
	}
	/* the local part's case matters to INN too */
	ck_assert(!fg_foreign_has_id(f, "<1.IN@inn.example>", 18, 4999));
	/* out of force at its end */
	ck_assert(fg_foreign_has_id(f, "<1.in@inn.example>", 18, 4999));
	ck_assert(!fg_foreign_has_id(f, "<1.in@inn.example>", 18, 5000));
	ck_assert(!fg_foreign_has_id(NULL, "<1.in@inn.example>", 18, 0));
	/* extremes of the hash space */
	memset(probe, 0, 16);
	ck_assert(!fg_foreign_has(f, probe));
	memset(probe, 0xff, 16);
	ck_assert(!fg_foreign_has(f, probe));
	fg_foreign_close(f);

	/* an empty table */
	ck_assert_int_eq(fg_foreign_write(path, h, 0, 1, 2, &n), 0);
	f = fg_foreign_open(path, true, &err, &why);
	ck_assert(f != NULL);
	ck_assert(!fg_foreign_has(f, probe));
	fg_foreign_close(f);

	/* damage: every header octet, and one in the contents */
	ck_assert_int_eq(fg_foreign_write(path, h, 1000, 1, 2, &n), 0);
	{
		FILE *fp = fopen(path, "r+b");
		long size;
		int c;

		ck_assert(fp != NULL);
		fseek(fp, 0, SEEK_END);
		size = ftell(fp);
		for (long off = 0; off < 48; off++) {
			fseek(fp, off, SEEK_SET);
			c = fgetc(fp);
			fseek(fp, off, SEEK_SET);
			fputc(c ^ 0x20, fp);
			fflush(fp);
			f = fg_foreign_open(path, false, &err, &why);
			ck_assert_msg(f == NULL && err == -EINVAL, "octet %ld", off);
			fseek(fp, off, SEEK_SET);
			fputc(c, fp);
			fflush(fp);
		}
		fseek(fp, size - 3, SEEK_SET);
		c = fgetc(fp);
		fseek(fp, size - 3, SEEK_SET);
		fputc(c ^ 1, fp);
		fflush(fp);
		f = fg_foreign_open(path, false, &err, &why);
		ck_assert(f != NULL);	/* without the contents' check: mapped, bounded */
		fg_foreign_close(f);
		f = fg_foreign_open(path, true, &err, &why);
		ck_assert(f == NULL && err == -EINVAL);
		ck_assert_int_eq(ftruncate(fileno(fp), size - 1), 0);
		fclose(fp);
		f = fg_foreign_open(path, false, &err, &why);
		ck_assert(f == NULL && err == -EINVAL);
	}
	unlink(path);
	f = fg_foreign_open(path, false, &err, &why);
	ck_assert(f == NULL && err == -ENOENT);
	free(h);
}
END_TEST

/* ------------------------------------------------------------ the engine asks it on a miss */

#define MS 1000000ull

static char *article(struct fg_th *t, const char *id)
{
	char date[64], *a = malloc(2048);

	fg_date_format(t->now - 3600, date, sizeof(date));
	snprintf(a, 2048, "Path: peer.example!not-for-mail\r\nFrom: P <p@example.com>\r\n"
		 "Newsgroups: test.group\r\nSubject: s\r\nMessage-ID: %s\r\nDate: %s\r\n\r\n"
		 "Hello.\r\n.\r\n", id, date);
	return a;
}

static void send_line(struct fg_th_conn *c, const char *text)
{
	fg_th_send(c, text, strlen(text), 0);
}

static void expect_out(struct fg_th_conn *c, const char *want)
{
	ck_assert_str_eq(fg_th_out(c), want);
	fg_th_out_clear(c);
}

START_TEST(test_engine_asks_inn_history_on_a_miss)
{
	enum { N = 100 };
	uint8_t (*h)[16] = malloc(N * 16);
	char dir[64], path[128], extra[160], id[64], line[600], *art;
	struct fg_history_key k;
	struct fg_th t;
	struct fg_th_conn *c;
	size_t n;

	snprintf(dir, sizeof(dir), "/tmp/test_innhist.%d.d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, FG_FOREIGN_FILE);
	for (unsigned i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "<inn.%u@Site.Example>", i);
		ck_assert(fg_inn_hash_msgid(id, strlen(id), h[i]));
	}
	/* the harness's clock is 1800000000: in force for 1000 s more */
	ck_assert_int_eq(fg_foreign_write(path, h, N, 1800000000 - 10, 1800000000 + 1000, &n), 0);
	snprintf(extra, sizeof(extra), "[persistence]\ndata-dir %s\n", dir);
	ck_assert_int_eq(fg_th_init(&t, extra, NULL), 0);
	c = fg_th_open(&t, "alpha");
	fg_th_pump(&t, 0);
	fg_th_out_clear(c);

	/* CHECK: INN had it (the domain's case is INN's to fold): 438, and
	 * the offer placed in our own history is withdrawn */
	send_line(c, "CHECK <inn.5@site.example>\r\nCHECK <new.1@x.example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "438 <inn.5@site.example>\r\n238 <new.1@x.example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_INN_HISTORY_HITS), 1);
	ck_assert_int_eq(fg_th_state(&t, "<inn.5@site.example>"), FG_HISTORY_ABSENT);
	/* the local part's case is not folded: a different ID for INN too */
	send_line(c, "CHECK <INN.6@Site.Example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "238 <INN.6@Site.Example>\r\n");
	/* TAKETHIS without a CHECK, and IHAVE */
	art = article(&t, "<inn.7@Site.Example>");
	snprintf(line, sizeof(line), "TAKETHIS <inn.7@Site.Example>\r\n%s", art);
	send_line(c, line);
	fg_th_settle(&t, MS, 100);
	expect_out(c, "439 <inn.7@Site.Example>\r\n");
	free(art);
	send_line(c, "IHAVE <inn.8@Site.Example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "435 Article not wanted\r\n");
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_INN_HISTORY_HITS), 3);
	/* a new article still goes through */
	art = article(&t, "<new.1@x.example>");
	snprintf(line, sizeof(line), "TAKETHIS <new.1@x.example>\r\n%s", art);
	send_line(c, line);
	fg_th_settle(&t, MS, 100);
	expect_out(c, "239 <new.1@x.example>\r\n");
	free(art);
	/* our own history answers first: the table is not asked on a hit */
	fg_history_hash(t.h, "<inn.9@Site.Example>", 20, &k);
	ck_assert_int_eq(fg_history_insert_final(t.h, &k, FG_HISTORY_ACCEPTED, t.now, t.now,
						 t.now, NULL), 0);
	send_line(c, "CHECK <inn.9@Site.Example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "438 <inn.9@Site.Example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_INN_HISTORY_HITS), 3);
	/* the window's end: no longer asked */
	t.now = 1800000000 + 1000;
	fg_th_pump(&t, 2 * 1000 * MS);
	send_line(c, "CHECK <inn.10@Site.Example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "238 <inn.10@Site.Example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_INN_HISTORY_HITS), 3);
	/* a new import, renamed over the old file, is mapped within a second */
	for (unsigned i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "<again.%u@Site.Example>", i);
		ck_assert(fg_inn_hash_msgid(id, strlen(id), h[i]));
	}
	ck_assert_int_eq(fg_foreign_write(path, h, N, t.now, t.now + 1000, &n), 0);
	send_line(c, "CHECK <again.1@site.example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "238 <again.1@site.example>\r\n");	/* not looked at yet */
	fg_th_pump(&t, 2 * 1000 * MS);
	send_line(c, "CHECK <again.2@site.example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "438 <again.2@site.example>\r\n");
	ck_assert_uint_eq(fg_th_ctr(&t, FG_CTR_NNTP_INN_HISTORY_HITS), 4);
	/* and a removed one let go */
	ck_assert_int_eq(unlink(path), 0);
	fg_th_pump(&t, 2 * 1000 * MS);
	send_line(c, "CHECK <again.3@site.example>\r\n");
	fg_th_pump(&t, 0);
	expect_out(c, "238 <again.3@site.example>\r\n");
	fg_th_fini(&t);
	unlink(path);
	rmdir(dir);
	free(h);
}
END_TEST

static Suite *innhist_suite(void)
{
	Suite *s = suite_create("innhist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_md5_rfc1321);
	tcase_add_test(tc, test_inn_hash_against_libinn);
	tcase_add_test(tc, test_hisv6_lines);
	tcase_add_test(tc, test_newslog_lines);
	tcase_add_test(tc, test_idfile_lines);
	tcase_add_test(tc, test_foreign_table);
	tcase_add_test(tc, test_engine_asks_inn_history_on_a_miss);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(innhist_suite)
