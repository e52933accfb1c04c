/* SPDX-License-Identifier: MIT */
/*
 * test_log.c — the level filter and sinks, and the three targets: stderr
 * (plain, ISO 8601 timestamps, "<N>" when stderr is the journal stream),
 * the journal's native datagrams and syslog's, each read back from a
 * socket the test binds in place of journald's or syslogd's.
 */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "fgtest.h"

/* A datagram socket bound in a fresh directory: the fake journald. */
struct fake_sock {
	char dir[64];
	char path[128];
	int fd;
};

static void fake_open(struct fake_sock *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };

	snprintf(f->dir, sizeof(f->dir), "/tmp/fg-test-log.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/sock", f->dir);
	f->fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(f->fd, 0);
	strcpy(sa.sun_path, f->path);
	ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(f->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static size_t fake_recv(struct fake_sock *f, char *buf, size_t cap)
{
	ssize_t n = recv(f->fd, buf, cap - 1, 0);

	ck_assert_msg(n > 0, "no datagram within 5 s");
	buf[n] = '\0';
	return (size_t)n;
}

static void fake_close(struct fake_sock *f)
{
	close(f->fd);
	unlink(f->path);
	rmdir(f->dir);
}

/* Run fn with stderr going to a file; the file's text into buf. */
static void capture_stderr(void (*fn)(void), char *buf, size_t cap)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, cap - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

static bool matches(const char *re, const char *text)
{
	regex_t r;
	int rc;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	rc = regexec(&r, text, 0, NULL, 0);
	regfree(&r);
	return rc == 0;
}

START_TEST(test_level_filter)
{
	struct fg_test_logcap cap;

	fg_log_set_level(FG_LOG_WARN);
	fg_test_logcap_start(&cap);
	FG_LOG_INFO("t", "dropped %d", 1);
	FG_LOG_WARN("t", "kept %d", 2);
	FG_LOG_ERR("x", "kept %s", "too");
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 2);
	ck_assert(fg_test_logcap_has(&cap, "warn t: kept 2\n"));
	ck_assert(fg_test_logcap_has(&cap, "err x: kept too\n"));
	ck_assert(!fg_test_logcap_has(&cap, "dropped"));
}
END_TEST

START_TEST(test_long_message_is_cut)
{
	struct fg_test_logcap cap;
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fg_log_set_level(FG_LOG_DEBUG);
	fg_test_logcap_start(&cap);
	FG_LOG_ERR("t", "%s", big);
	fg_test_logcap_stop();
	ck_assert_uint_eq(cap.lines, 1);
	ck_assert_uint_lt(cap.len, 1100);
}
END_TEST

START_TEST(test_level_names)
{
	ck_assert_int_eq(fg_log_level_parse("debug"), FG_LOG_DEBUG);
	ck_assert_int_eq(fg_log_level_parse("err"), FG_LOG_ERR);
	ck_assert_int_eq(fg_log_level_parse("loud"), -EINVAL);
	ck_assert_str_eq(fg_log_level_name(FG_LOG_NOTICE), "notice");
}
END_TEST

START_TEST(test_panic_aborts)
{
	FG_ASSERT(1 + 1 == 3);
}
END_TEST

static void log_with_ts_on(void)
{
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_ON, "t", NULL), 0);
	FG_LOG_WARN("relay", "down#%d: connection refused", 0);
	fg_log_close();
}

static void log_with_ts_off(void)
{
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_OFF, "t", NULL), 0);
	FG_LOG_WARN("relay", "plain");
	fg_log_close();
}

/* auto: the time unless systemd runs us ($INVOCATION_ID, $JOURNAL_STREAM),
 * a file or a pipe as well as a terminal */
static void log_with_ts_auto(void)
{
	unsetenv("INVOCATION_ID");
	unsetenv("JOURNAL_STREAM");
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_AUTO, "t", NULL), 0);
	FG_LOG_NOTICE("ctld", "ready");
	fg_log_close();
	setenv("INVOCATION_ID", "0123456789abcdef0123456789abcdef", 1);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_AUTO, "t", NULL), 0);
	FG_LOG_NOTICE("ctld", "a service");
	fg_log_close();
	unsetenv("INVOCATION_ID");
	setenv("JOURNAL_STREAM", "1:2", 1);	/* not our stderr, but systemd's doing */
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_AUTO, "t", NULL), 0);
	FG_LOG_NOTICE("ctld", "a stream");
	fg_log_close();
	unsetenv("JOURNAL_STREAM");
}

/* systemd's JOURNAL_STREAM naming our stderr: "<N>" and no time, even with on */
static void log_under_journal_stream(void)
{
	struct stat st;
	char js[64];

	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_ON, "t", NULL), 0);
	FG_LOG_ERR("queue", "disk full");
	FG_LOG_INFO("queue", "x");
	fg_log_close();
	/* another stream's numbers: not the journal */
	setenv("JOURNAL_STREAM", "1:2", 1);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_STDERR, FG_LOG_TIME_OFF, "t", NULL), 0);
	FG_LOG_ERR("queue", "not journal");
	fg_log_close();
	unsetenv("JOURNAL_STREAM");
}

START_TEST(test_stderr_timestamps)
{
	char buf[1024];

	fg_log_set_level(FG_LOG_NOTICE);
	capture_stderr(log_with_ts_on, buf, sizeof(buf));
	ck_assert_msg(matches("^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]"
			      "\\.[0-9]{3}Z warn relay: down#0: connection refused$", buf),
		      "on: %s", buf);
	capture_stderr(log_with_ts_off, buf, sizeof(buf));
	ck_assert_str_eq(buf, "warn relay: plain\n");
	capture_stderr(log_with_ts_auto, buf, sizeof(buf));
	ck_assert_msg(matches("^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]"
			      "\\.[0-9]{3}Z notice ctld: ready\n"
			      "notice ctld: a service\nnotice ctld: a stream$", buf), "auto: %s", buf);
	fg_log_set_level(FG_LOG_INFO);
	capture_stderr(log_under_journal_stream, buf, sizeof(buf));
	ck_assert_str_eq(buf, "<3>err queue: disk full\n<6>info queue: x\nerr queue: not journal\n");
	fg_log_set_level(FG_LOG_NOTICE);
}
END_TEST

/* The value of journal field `name` in a native-protocol datagram (text
 * form), or NULL. */
static const char *jfield(const char *dgram, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	for (const char *p = dgram; *p; ) {
		const char *end = strchr(p, '\n');

		if (!end)
			return NULL;
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			snprintf(out, cap, "%.*s", (int)(end - p - nl - 1), p + nl + 1);
			return out;
		}
		p = end + 1;
	}
	return NULL;
}

START_TEST(test_journal_fields)
{
	struct fake_sock f;
	char d[2048], v[1100];
	struct fg_log_ctx ctx = { .peer = "upstream-a", .msgid = "<abc@example.net>" };

	fake_open(&f);
	fg_log_set_level(FG_LOG_NOTICE);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_JOURNAL, FG_LOG_TIME_AUTO, "floodctld", f.path), 0);
	fg_log_about(FG_LOG_WARN, "nntp", &ctx, "history finish of %s: %d", ctx.msgid, -5);
	fake_recv(&f, d, sizeof(d));
	ck_assert_str_eq(jfield(d, "PRIORITY", v, sizeof(v)), "4");
	ck_assert_str_eq(jfield(d, "SYSLOG_IDENTIFIER", v, sizeof(v)), "floodctld");
	ck_assert_str_eq(jfield(d, "FG_COMPONENT", v, sizeof(v)), "nntp");
	ck_assert_str_eq(jfield(d, "FG_PEER", v, sizeof(v)), "upstream-a");
	ck_assert_str_eq(jfield(d, "FG_MSGID", v, sizeof(v)), "<abc@example.net>");
	ck_assert_str_eq(jfield(d, "MESSAGE", v, sizeof(v)),
			 "nntp: history finish of <abc@example.net>: -5");

	/* no context: no FG_PEER, no FG_MSGID; err is priority 3 */
	FG_LOG_ERR("ctld", "plain");
	fake_recv(&f, d, sizeof(d));
	ck_assert_str_eq(jfield(d, "PRIORITY", v, sizeof(v)), "3");
	ck_assert_ptr_null(jfield(d, "FG_PEER", v, sizeof(v)));
	ck_assert_ptr_null(jfield(d, "FG_MSGID", v, sizeof(v)));

	/* a newline in the message: the length-prefixed binary form */
	FG_LOG_NOTICE("ctld", "two\nlines");
	{
		size_t n = fake_recv(&f, d, sizeof(d));
		const char *m = memmem(d, n, "MESSAGE\n", 8);
		uint64_t len = 0;

		ck_assert_ptr_nonnull(m);
		for (int i = 7; i >= 0; i--)
			len = len << 8 | (uint8_t)m[8 + i];
		ck_assert_uint_eq(len, strlen("ctld: two\nlines"));
		ck_assert(memcmp(m + 16, "ctld: two\nlines\n", len + 1) == 0);
	}

	/* below the level: nothing sent (the next datagram is the later line) */
	FG_LOG_INFO("ctld", "filtered");
	FG_LOG_NOTICE("ctld", "after");
	fake_recv(&f, d, sizeof(d));
	ck_assert_str_eq(jfield(d, "MESSAGE", v, sizeof(v)), "ctld: after");
	fg_log_close();
	fake_close(&f);
}
END_TEST

static void log_to_missing_socket(void)
{
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_JOURNAL, FG_LOG_TIME_OFF, "t",
				     "/nonexistent/journal.sock"), 0);
	FG_LOG_ERR("ctld", "still seen");
	fg_log_close();
}

START_TEST(test_unreachable_target_falls_back_to_stderr)
{
	char buf[256];

	capture_stderr(log_to_missing_socket, buf, sizeof(buf));
	ck_assert_str_eq(buf, "err ctld: still seen\n");
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_SYSLOG, FG_LOG_TIME_OFF, "t",
				     "/a/path/much/longer/than/the/hundred/and/eight/octets/that/"
				     "sun_path/holds/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
			 -ENAMETOOLONG);
	fg_log_close();
}
END_TEST

START_TEST(test_syslog_line)
{
	struct fake_sock f;
	char d[2048], re[256];

	fake_open(&f);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_SYSLOG, FG_LOG_TIME_AUTO, "floodgate-host", f.path),
			 0);
	FG_LOG_WARN("relay", "down#%d", 1);
	fake_recv(&f, d, sizeof(d));
	/* daemon facility (3) * 8 + warning (4) = 28 */
	snprintf(re, sizeof(re),
		 "^<28>[A-Z][a-z]{2} [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] "
		 "floodgate-host\\[%d\\]: relay: down#1$", (int)getpid());
	ck_assert_msg(matches(re, d), "%s", d);
	FG_LOG_ERR("x", "e");
	fake_recv(&f, d, sizeof(d));
	ck_assert_msg(strncmp(d, "<27>", 4) == 0, "%s", d);
	fg_log_close();
	fake_close(&f);
}
END_TEST

/* A test's own sink wins over the target. */
START_TEST(test_sink_overrides_target)
{
	struct fake_sock f;
	struct fg_test_logcap cap;
	char d[64];

	fake_open(&f);
	ck_assert_int_eq(fg_log_open(FG_LOG_TO_JOURNAL, FG_LOG_TIME_AUTO, "t", f.path), 0);
	fg_test_logcap_start(&cap);
	FG_LOG_ERR("t", "to the sink");
	fg_test_logcap_stop();
	ck_assert(fg_test_logcap_has(&cap, "err t: to the sink\n"));
	ck_assert_int_lt(recv(f.fd, d, sizeof(d), MSG_DONTWAIT), 0);
	fg_log_close();
	fake_close(&f);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_level_filter);
	tcase_add_test(tc, test_long_message_is_cut);
	tcase_add_test(tc, test_level_names);
	tcase_add_test(tc, test_stderr_timestamps);
	tcase_add_test(tc, test_journal_fields);
	tcase_add_test(tc, test_unreachable_target_falls_back_to_stderr);
	tcase_add_test(tc, test_syslog_line);
	tcase_add_test(tc, test_sink_overrides_target);
	tcase_add_test_raise_signal(tc, test_panic_aborts, 6 /* SIGABRT */);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(log_suite)
