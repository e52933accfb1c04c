/* SPDX-License-Identifier: MIT */
/*
 * test_ctl.c — the control protocol: every verb and flag, every kind of bad
 * request, reply heads in both directions, and the client against servers
 * that answer well, badly, or not at all (never a hang).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/common.h"
#include "floodgate/ctl.h"
#include "fgtest.h"

static int parse(const char *line, struct fg_ctl_req *q, const char **why)
{
	return fg_ctl_parse_request(line, strlen(line), q, why);
}

START_TEST(test_every_verb)
{
	static const struct {
		const char *line;
		enum fg_ctl_verb verb;
		unsigned flags, argc;
	} ok[] = {
		{ "ping\n", FG_CTL_PING, 0, 0 },
		{ "status --json\r\n", FG_CTL_STATUS, FG_CTL_F_JSON, 0 },
		{ "stats --prom", FG_CTL_STATS, FG_CTL_F_PROM, 0 },
		{ "  stats   --json  ", FG_CTL_STATS, FG_CTL_F_JSON, 0 },
		{ "stats --json alpha", FG_CTL_STATS, FG_CTL_F_JSON, 1 },
		{ "lookup <a@b>", FG_CTL_LOOKUP, 0, 1 },
		{ "lookup --json <a@b>", FG_CTL_LOOKUP, FG_CTL_F_JSON, 1 },
		{ "expire --dry-run --json", FG_CTL_EXPIRE, FG_CTL_F_DRY_RUN | FG_CTL_F_JSON, 0 },
		{ "snapshot", FG_CTL_SNAPSHOT, 0, 0 },
		{ "reload", FG_CTL_RELOAD, 0, 0 },
		{ "reload /etc/floodgate.conf --json", FG_CTL_RELOAD, FG_CTL_F_JSON, 1 },
		{ "peers --json", FG_CTL_PEERS, FG_CTL_F_JSON, 0 },
		{ "drain", FG_CTL_DRAIN, 0, 0 },
		{ "drain off", FG_CTL_DRAIN, 0, 1 },
		{ "shutdown 30", FG_CTL_SHUTDOWN, 0, 1 },
		{ "forget <a@b> --json", FG_CTL_FORGET, FG_CTL_F_JSON, 1 },
		{ "remember <a@b>", FG_CTL_REMEMBER, 0, 1 },
		{ "remember <a@b> rejected", FG_CTL_REMEMBER, 0, 2 },
		{ "downstreams --json", FG_CTL_DOWNSTREAMS, FG_CTL_F_JSON, 0 },
		{ "downstream pause text", FG_CTL_DOWNSTREAM, 0, 2 },
		{ "report", FG_CTL_REPORT, 0, 0 },
		{ "report 86400 --html", FG_CTL_REPORT, FG_CTL_F_HTML, 1 },
		{ "report --json 3600", FG_CTL_REPORT, FG_CTL_F_JSON, 1 },
	};
	struct fg_ctl_req q;
	const char *why;

	for (size_t i = 0; i < FG_ARRAY_SIZE(ok); i++) {
		ck_assert_msg(parse(ok[i].line, &q, &why) == 0, "%s: %s", ok[i].line, why);
		ck_assert_int_eq(q.verb, ok[i].verb);
		ck_assert_uint_eq(q.flags, ok[i].flags);
		ck_assert_uint_eq(q.argc, ok[i].argc);
	}
	ck_assert_int_eq(parse("lookup <x@y>", &q, &why), 0);
	ck_assert_str_eq(q.argv[0], "<x@y>");
	ck_assert_str_eq(fg_ctl_verb_name(FG_CTL_EXPIRE), "expire");
	ck_assert_ptr_null(fg_ctl_verb_name(FG_CTL_VERB__COUNT));
}
END_TEST

START_TEST(test_bad_requests_say_why)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "", "empty request" },
		{ "   \n", "empty request" },
		{ "Status", "unknown verb" },
		{ "status extra", "too many arguments" },
		{ "downstream pause", "missing argument" },
		{ "downstreams text", "too many arguments" },
		{ "peers all", "too many arguments" },
		{ "shutdown 5 now", "too many arguments" },
		{ "lookup", "missing argument" },
		{ "forget", "missing argument" },
		{ "forget <a@b> <c@d>", "too many arguments" },
		{ "remember <a@b> rejected now", "too many arguments" },
		{ "lookup <a@b> <c@d>", "too many arguments" },
		{ "status --dry-run", "unknown option for this verb" },
		{ "stats --json --prom", "--json, --prom and --html exclude each other" },
		{ "report --html --json", "--json, --prom and --html exclude each other" },
		{ "stats --html", "unknown option for this verb" },
		{ "report 60 120", "too many arguments" },
		{ "expire --force", "unknown option for this verb" },
		{ "status\tnow", "a request holds only printable US-ASCII words" },
		{ "lookup <a\x80@b>", "a request holds only printable US-ASCII words" },
	};
	struct fg_ctl_req q;
	const char *why;
	char big[FG_CTL_LINE_MAX + 10], arg[FG_CTL_ARG_MAX + 10];

	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++) {
		ck_assert_msg(parse(bad[i].line, &q, &why) == -EINVAL, "%s accepted", bad[i].line);
		ck_assert_str_eq(why, bad[i].why);
	}
	memset(big, 'a', sizeof(big));
	memcpy(big, "lookup ", 7);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(parse(big, &q, &why), -EINVAL);
	ck_assert_str_eq(why, "request line too long");
	memset(arg, 'b', sizeof(arg));
	memcpy(arg, "lookup ", 7);
	arg[sizeof(arg) - 1] = '\0';
	ck_assert_int_eq(parse(arg, &q, &why), -EINVAL);
	ck_assert_str_eq(why, "an argument is too long");
	/* a NUL inside the line is not printable */
	ck_assert_int_eq(fg_ctl_parse_request("ping\0x", 6, &q, &why), -EINVAL);
}
END_TEST

START_TEST(test_format_round_trip)
{
	struct fg_ctl_req q, back;
	const char *why;
	char buf[FG_CTL_LINE_MAX + 1];
	int n;

	memset(&q, 0, sizeof(q));
	q.verb = FG_CTL_LOOKUP;
	q.flags = FG_CTL_F_JSON;
	q.argc = 1;
	strcpy(q.argv[0], "<id@host>");
	n = fg_ctl_format_request(&q, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, "lookup <id@host> --json\n");
	ck_assert_int_eq(fg_ctl_parse_request(buf, (size_t)n, &back, &why), 0);
	ck_assert_int_eq(back.verb, q.verb);
	ck_assert_uint_eq(back.flags, q.flags);
	ck_assert_str_eq(back.argv[0], q.argv[0]);
	ck_assert_int_eq(fg_ctl_format_request(&q, buf, 8), -ENOSPC);
}
END_TEST

START_TEST(test_reply_heads)
{
	char buf[64], code[32];
	const char *why;
	size_t len;
	bool ok;

	ck_assert_int_eq(fg_ctl_format_reply_head(buf, sizeof(buf), NULL, 12), 6);
	ck_assert_str_eq(buf, "ok 12\n");
	ck_assert_int_eq(fg_ctl_parse_reply_head("ok 12", 5, &ok, code, &len, &why), 0);
	ck_assert(ok);
	ck_assert_uint_eq(len, 12);
	fg_ctl_format_reply_head(buf, sizeof(buf), "not-found", 3);
	ck_assert_str_eq(buf, "err not-found 3\n");
	ck_assert_int_eq(fg_ctl_parse_reply_head(buf, strlen(buf) - 1, &ok, code, &len, &why), 0);
	ck_assert(!ok);
	ck_assert_str_eq(code, "not-found");
	ck_assert_uint_eq(len, 3);
	static const char *const bad[] = {
		"", "ok", "ok ", "ok x", "ok -1", "ok 123456789", "ok 67108865", "OK 1", "err", "err 5",
		"err bad_code 1", "err  1", "err bad-request", "err bad-request x", "HTTP/1.0 200 OK",
		"err aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1",
	};
	for (size_t i = 0; i < FG_ARRAY_SIZE(bad); i++)
		ck_assert_msg(fg_ctl_parse_reply_head(bad[i], strlen(bad[i]), &ok, code, &len, &why) ==
			      -EPROTO, "'%s' accepted", bad[i]);
	ck_assert_int_eq(fg_ctl_parse_reply_head("ok 67108864", 11, &ok, code, &len, &why), 0);
}
END_TEST

/* ---- the client against scripted servers ---- */

struct server {
	char path[108];
	int fd;
	const char *reply;	/* NULL: say nothing, keep the connection open */
	size_t reply_len;
	pthread_t t;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	int c = accept(s->fd, NULL, NULL);
	char buf[2048];

	if (c < 0)
		return NULL;
	(void)!read(c, buf, sizeof(buf));
	if (s->reply)
		(void)!write(c, s->reply, s->reply_len);
	else	/* silent until the client gives up and closes: never an answer */
		while (read(c, buf, sizeof(buf)) > 0)
			;
	close(c);
	return NULL;
}

static void server_start(struct server *s, const char *reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(s->path, sizeof(s->path), "/tmp/fg-ctl-unit-%d.sock", (int)getpid());
	unlink(s->path);
	strcpy(sa.sun_path, s->path);
	s->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s->fd, 1), 0);
	s->reply = reply;
	s->reply_len = reply ? strlen(reply) : 0;
	pthread_create(&s->t, NULL, serve, s);
}

static void server_stop(struct server *s)
{
	pthread_join(s->t, NULL);
	close(s->fd);
	unlink(s->path);
}

static int call(const char *path, int timeout_ms, struct fg_ctl_reply *rep, const char **why)
{
	struct fg_ctl_req q;

	memset(&q, 0, sizeof(q));
	q.verb = FG_CTL_STATUS;
	return fg_ctl_call(path, &q, timeout_ms, rep, why);
}

START_TEST(test_client_outcomes)
{
	static const struct {
		const char *reply;
		int rc;
		bool ok;
		const char *body;
	} cases[] = {
		{ "ok 5\nhello", 0, true, "hello" },
		{ "ok 0\n", 0, true, "" },
		{ "err refused 4\nno!\n", 0, false, "no!\n" },
		{ "ok 10\nshort", -EPROTO, false, NULL },
		{ "ok 2\ntoo long", -EPROTO, false, NULL },
		{ "garbage\n", -EPROTO, false, NULL },
		{ "", -EPROTO, false, NULL },
	};
	struct fg_ctl_reply rep;
	const char *why;

	for (size_t i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		struct server s;
		int rc;

		server_start(&s, cases[i].reply);
		rc = call(s.path, 2000, &rep, &why);
		ck_assert_msg(rc == cases[i].rc, "reply %zu: rc %d", i, rc);
		if (rc == 0) {
			ck_assert(rep.ok == cases[i].ok);
			ck_assert_str_eq(rep.body, cases[i].body);
		}
		fg_ctl_reply_free(&rep);
		server_stop(&s);
	}
}
END_TEST

START_TEST(test_client_never_hangs)
{
	struct fg_ctl_reply rep;
	struct server s;
	const char *why;
	uint64_t t0;
	double took;

	server_start(&s, NULL);
	t0 = fg_mono_ns();
	/* the server never answers and never closes first: only the client's
	 * own timeout ends the call (the test case's timeout bounds a hang) */
	ck_assert_int_eq(call(s.path, 300, &rep, &why), -ETIMEDOUT);
	took = (double)(fg_mono_ns() - t0) / 1e9;
	ck_assert_msg(took >= 0.29, "gave up after %.2f s, before its 0.3 s timeout", took);
	server_stop(&s);
	ck_assert_int_eq(call("/tmp/fg-ctl-unit-nobody-here.sock", 300, &rep, &why), -ENOENT);
}
END_TEST

/* ---- the server side (the dataplanes' sockets) ---- */

struct served {
	int lfd;
	unsigned rounds;
	unsigned handled;
	pthread_t t;
};

static const char *echo(void *arg, const struct fg_ctl_req *q, FILE *f)
{
	struct served *sv = arg;

	sv->handled++;
	fprintf(f, "%s %u%s", fg_ctl_verb_name(q->verb), q->argc,
		q->flags & FG_CTL_F_JSON ? " json" : "");
	return q->argc ? "refused" : NULL;
}

static void *serve_rounds(void *arg)
{
	struct served *sv = arg;

	for (unsigned i = 0; i < sv->rounds; i++)
		fg_ctl_serve_one(sv->lfd, 5000, echo, sv);
	return NULL;
}

START_TEST(test_server)
{
	char path[108];
	/* rounds: the second listen's probe, two calls, one bad line */
	struct served sv = { .rounds = 4 };
	struct fg_ctl_req q;
	struct fg_ctl_reply rep;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *why;
	char buf[256];
	int fd, other = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/tmp/fg-ctl-srv-%d.sock", (int)getpid());
	/* a socket file nobody answers on (a dead owner's) is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, path);
	unlink(path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	ck_assert_int_eq(fg_ctl_listen(path, "test", &sv.lfd), 0);
	/* one that another process answers on is not */
	ck_assert_int_eq(fg_ctl_listen(path, "test", &other), -EADDRINUSE);
	ck_assert_int_eq(other, -1);
	pthread_create(&sv.t, NULL, serve_rounds, &sv);
	memset(&q, 0, sizeof(q));
	q.verb = FG_CTL_PING;
	q.flags = FG_CTL_F_JSON;
	ck_assert_int_eq(fg_ctl_call(path, &q, 5000, &rep, &why), 0);
	ck_assert(rep.ok);
	ck_assert_str_eq(rep.body, "ping 0 json");
	fg_ctl_reply_free(&rep);
	q.verb = FG_CTL_RESUME;
	q.flags = 0;
	q.argc = 1;
	strcpy(q.argv[0], "alpha");
	ck_assert_int_eq(fg_ctl_call(path, &q, 5000, &rep, &why), 0);
	ck_assert(!rep.ok);
	ck_assert_str_eq(rep.code, "refused");
	ck_assert_str_eq(rep.body, "resume 1");
	fg_ctl_reply_free(&rep);
	/* a line that does not parse never reaches the handler */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(write(fd, "frobnicate\n", 11), 11);
	n = read(fd, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_msg(strncmp(buf, "err bad-request ", 16) == 0, "%s", buf);
	close(fd);
	pthread_join(sv.t, NULL);
	ck_assert_uint_eq(sv.handled, 2);
	fg_ctl_unlisten(&sv.lfd, path);
	ck_assert_int_eq(sv.lfd, -1);
	ck_assert_int_eq(access(path, F_OK), -1);
	fg_ctl_unlisten(&sv.lfd, path);	/* again: nothing */
}
END_TEST

static int fake_reload(void *arg, const char *file, FILE *report)
{
	fprintf(report, "%s: loaded\n", file ? file : "<running>");
	return *(int *)arg;
}

/* A dataplane's reply to reload: the report as text, or wrapped in JSON;
 * the code from the outcome. */
START_TEST(test_reload_serve)
{
	struct fg_ctl_req q = { .verb = FG_CTL_RELOAD };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int rc = 0;

	ck_assert_ptr_null(fg_ctl_reload_serve(fake_reload, &rc, &q, f));
	q.argc = 1;
	strcpy(q.argv[0], "f.conf");
	q.flags = FG_CTL_F_JSON;
	rc = -EINVAL;
	ck_assert_str_eq(fg_ctl_reload_serve(fake_reload, &rc, &q, f), "refused");
	rc = -ETIMEDOUT;
	ck_assert_str_eq(fg_ctl_reload_serve(fake_reload, &rc, &q, f), "failed");
	fclose(f);
	ck_assert_str_eq(out, "<running>: loaded\n"
			 "{\"reloaded\":false,\"report\":\"f.conf: loaded\\u000a\"}\n"
			 "{\"reloaded\":false,\"report\":\"f.conf: loaded\\u000a\"}\n");
	free(out);
}
END_TEST

static Suite *ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_verb);
	tcase_add_test(tc, test_bad_requests_say_why);
	tcase_add_test(tc, test_format_round_trip);
	tcase_add_test(tc, test_reply_heads);
	tcase_add_test(tc, test_client_outcomes);
	tcase_add_test(tc, test_client_never_hangs);
	tcase_add_test(tc, test_server);
	tcase_add_test(tc, test_reload_serve);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(ctl_suite)
