/* SPDX-License-Identifier: MIT */
/*
 * test_respguard.c — the guard between a Redis node and hiredis's reader
 * (respguard.h). Scanned alone: every bound at its edge (one in, one
 * past), headers cut between reads, RESP read as hiredis reads it (each
 * case held to hiredis itself), a refusal that sticks; fg_cluster_parse_slots refuses the
 * 354,600,922-element reply fuzz_cluster found. Then the cluster client
 * against a hostile node (a thread of this test on loopback, in a network
 * namespace of the test's own): the reply declaring 354,600,922 elements
 * and a 600 MB bulk string are refused unread (the connection closed,
 * replies_refused counted, the process's peak address space not grown by
 * what they declare), and the client goes on with the node's sound
 * replies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "fgtest.h"
#include "floodgate/cluster.h"
#include "floodgate/respguard.h"
#include "rediskit.h"

/* ---- the scan alone ------------------------------------------------------- */

static int scan(const char *s)
{
	struct fg_resp_guard g;

	fg_resp_guard_init(&g);
	return fg_resp_guard_scan(&g, s, strlen(s));
}

/* A reply of `n` values built by fn into a growing buffer. */
struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2;
		t->p = realloc(t->p, t->cap);
		ck_assert_ptr_nonnull(t->p);
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

static void putf(struct text *t, const char *fmt, unsigned long v)
{
	char b[64];
	int n = snprintf(b, sizeof(b), fmt, v);

	put(t, b, (size_t)n);
}

static int scan_text(const struct text *t, uint64_t *replies)
{
	struct fg_resp_guard g;
	int rc;

	fg_resp_guard_init(&g);
	rc = fg_resp_guard_scan(&g, t->p, t->len);
	if (replies)
		*replies = g.replies;
	return rc;
}

/* `arrays` arrays of `each` integers, in one array. */
static int nested_ints(unsigned arrays, unsigned each)
{
	struct text t = { 0 };
	int rc;

	putf(&t, "*%lu\r\n", arrays);
	for (unsigned a = 0; a < arrays; a++) {
		putf(&t, "*%lu\r\n", each);
		for (unsigned i = 0; i < each; i++)
			put(&t, ":1\r\n", 4);
	}
	rc = scan_text(&t, NULL);
	free(t.p);
	return rc;
}

/* `n` bulk strings of `len` octets, in one array. */
static int bulks(unsigned n, unsigned len)
{
	struct text t = { 0 };
	char *body = malloc(len);
	int rc;

	ck_assert_ptr_nonnull(body);
	memset(body, 'x', len);
	putf(&t, "*%lu\r\n", n);
	for (unsigned i = 0; i < n; i++) {
		putf(&t, "$%lu\r\n", len);
		put(&t, body, len);
		put(&t, "\r\n", 2);
	}
	rc = scan_text(&t, NULL);
	free(body);
	free(t.p);
	return rc;
}

START_TEST(bounds_at_their_edges)
{
	struct text t = { 0 };
	char hdr[64];

	/* elements one array declares */
	snprintf(hdr, sizeof(hdr), "*%u\r\n", FG_RESP_MAX_ELEMENTS);
	ck_assert_int_eq(scan(hdr), 0);
	snprintf(hdr, sizeof(hdr), "*%u\r\n", FG_RESP_MAX_ELEMENTS + 1);
	ck_assert_int_eq(scan(hdr), -EMSGSIZE);
	ck_assert_int_eq(scan("*354600922\r\n"), -EMSGSIZE);
	ck_assert_int_eq(scan("*99999999999999999999999999\r\n"), -EMSGSIZE);
	/* octets one bulk string declares */
	snprintf(hdr, sizeof(hdr), "$%u\r\n", FG_RESP_MAX_BULK);
	ck_assert_int_eq(scan(hdr), 0);
	snprintf(hdr, sizeof(hdr), "$%u\r\n", FG_RESP_MAX_BULK + 1);
	ck_assert_int_eq(scan(hdr), -EMSGSIZE);
	/* a line */
	put(&t, "-", 1);
	for (unsigned i = 0; i < FG_RESP_MAX_LINE; i++)
		put(&t, "e", 1);
	ck_assert_int_eq(scan_text(&t, NULL), 0);
	put(&t, "e", 1);
	ck_assert_int_eq(scan_text(&t, NULL), -EMSGSIZE);
	free(t.p);
	/* arrays open at once: hiredis reads 8 */
	ck_assert_int_eq(scan("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"), 0);
	ck_assert_int_eq(scan("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n"),
			 -EMSGSIZE);
	/* values in one reply: 1 + 31 + 31 * 16384 = 507,936 in, 540,706 past */
	ck_assert_int_eq(nested_ints(31, FG_RESP_MAX_ELEMENTS), 0);
	ck_assert_int_eq(nested_ints(33, FG_RESP_MAX_ELEMENTS), -EMSGSIZE);
	/* octets of one reply: 15 MiB of bulk strings in, 17 past */
	ck_assert_int_eq(bulks(15, FG_RESP_MAX_BULK), 0);
	ck_assert_int_eq(bulks(17, FG_RESP_MAX_BULK), -EMSGSIZE);
}
END_TEST

START_TEST(across_reads_and_sticky)
{
	static const char reply[] = "*2\r\n$6\r\nhel\rlo\r\n*2\r\n:-7\r\n+OK\r\n";
	struct fg_resp_guard g;
	int rc = 0;

	/* a sound reply one octet at a time: one reply, no refusal */
	fg_resp_guard_init(&g);
	for (size_t i = 0; i < sizeof(reply) - 1 && rc == 0; i++)
		rc = fg_resp_guard_scan(&g, reply + i, 1);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(g.replies, 1);
	/* the big header cut in two: refused at its second part */
	fg_resp_guard_init(&g);
	ck_assert_int_eq(fg_resp_guard_scan(&g, "*3546", 5), 0);
	ck_assert_int_eq(fg_resp_guard_scan(&g, "00922\r\n", 7), -EMSGSIZE);
	ck_assert_ptr_nonnull(g.why);
	/* and it sticks: nothing after it is passed */
	ck_assert_int_eq(fg_resp_guard_scan(&g, "+OK\r\n", 5), -EMSGSIZE);
	/* the bounds are a reply's: many replies pass, one after another */
	fg_resp_guard_init(&g);
	for (unsigned i = 0; i < 40 && rc == 0; i++) {
		char hdr[32];

		snprintf(hdr, sizeof(hdr), "*%u\r\n", FG_RESP_MAX_ELEMENTS);
		rc = fg_resp_guard_scan(&g, hdr, strlen(hdr));
		for (unsigned k = 0; k < FG_RESP_MAX_ELEMENTS && rc == 0; k++)
			rc = fg_resp_guard_scan(&g, ":1\r\n", 4);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(g.replies, 40);
}
END_TEST

/* hiredis's reading of s: the replies it returns, -1 at its first error. */
static int hiredis_replies(const char *s, size_t len)
{
	redisReader *rd = redisReaderCreate();
	int n = 0;

	ck_assert_ptr_nonnull(rd);
	ck_assert_int_eq(redisReaderFeed(rd, s, len), REDIS_OK);
	for (;;) {
		void *reply = NULL;

		if (redisReaderGetReply(rd, &reply) != REDIS_OK) {
			n = -1;
			break;
		}
		if (!reply)
			break;
		freeReplyObject(reply);
		n++;
	}
	redisReaderFree(rd);
	return n;
}

/* The guard reads RESP as hiredis 0.14.1 does: what one refuses, so does
 * the other (the guard first, -EPROTO); what one reads, the other reads
 * as the same replies. */
START_TEST(reads_as_hiredis_reads)
{
	static const char *const cases[] = {
		/* refused by both */
		"$x\r\n", "$\r\n\r\n", "$-0\r\n\r\n", "$-2\r\n", "*12\r3\r\n",
		"$+3\r\nabc\r\n", "$007\r\nabcdefg\r\n", "*01\r\n:1\r\n", "*-01\r\n",
		":1x\r\n", ":\r\n", ":-\r\n", ":-0\r\n", ":+5\r\n", ":007\r\n", ":1\r\r\n",
		":99999999999999999999\r\n", ":9223372036854775808\r\n",
		":-9223372036854775809\r\n", "?\r\n", "_\r\n", "%1\r\n",
		"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n",
		/* read by both */
		"$-1\r\n", "*-1\r\n", "*0\r\n", "$0\r\n\r\n", ":-1\r\n", ":0\r\n", "+\r\n",
		"-ERR x\r\n", ":-9223372036854775808\r\n", ":9223372036854775807\r\n",
		"+a\rb\r\n", "*2\r\n$6\r\nhel\rlo\r\n:-7\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
		"*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n+OK\r\n$2\r\nab\r\n",
	};
	unsigned both_read = 0;

	for (unsigned i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		struct fg_resp_guard g;
		int rc, h = hiredis_replies(cases[i], strlen(cases[i]));

		fg_resp_guard_init(&g);
		rc = fg_resp_guard_scan(&g, cases[i], strlen(cases[i]));
		if (h < 0) {
			ck_assert_msg(rc == -EPROTO || rc == -EMSGSIZE, "'%s' passed, hiredis refuses it",
				      cases[i]);
		} else {
			ck_assert_msg(rc == 0, "'%s' refused (%s), hiredis reads it", cases[i], g.why);
			ck_assert_uint_eq(g.replies, (unsigned)h);
			both_read++;
		}
	}
	ck_assert_uint_eq(both_read, 14);
	/* stricter in one place: hiredis takes any two octets for a bulk
	 * string's CRLF */
	ck_assert_int_eq(hiredis_replies("$3\r\nabcde", 9), 1);
	ck_assert_int_eq(scan("$3\r\nabcde"), -EPROTO);
}
END_TEST

START_TEST(parse_slots_refuses_what_it_cannot_hold)
{
	/* fuzz_cluster's find: hiredis 0.14 callocs 2.8 GB for this header */
	static const char big[] = "*354600922\r\n*3\r\n:0\r\n:1\r\n";
	static const char small[] = "*3\r\n*3\r\n:0\r\n:1\r\n";
	struct fg_cluster_range r[4];

	ck_assert_int_eq(fg_cluster_parse_slots(big, sizeof(big) - 1, "x", r, 4), -EMSGSIZE);
	/* the same reply within bounds is only incomplete */
	ck_assert_int_eq(fg_cluster_parse_slots(small, sizeof(small) - 1, "x", r, 4), -EAGAIN);
	ck_assert_int_eq(fg_cluster_parse_slots("$x\r\n", 4, "x", r, 4), -EINVAL);
}
END_TEST

/* ---- a hostile node ------------------------------------------------------- */

/* A node of one port: CLUSTER SLOTS answered on its first connection by
 * a reply declaring 354,600,922 elements, later by a map naming itself
 * for every slot; GET "big" by a 600 MB bulk header, any other GET by
 * "abc"; anything else +OK. */
struct node {
	int lfd;
	uint16_t port;
	pthread_t th;
	_Atomic bool stop;
	_Atomic unsigned conns;
};

/* One command "*N\r\n$L\r\n...": its first two arguments; the octets it
 * took, 0 while incomplete. */
static size_t command(const char *b, size_t len, char *a0, char *a1, size_t cap)
{
	const char *p = b, *end = b + len;
	char *e;
	long n = 0;

	a0[0] = a1[0] = '\0';
	if (len < 4 || *p != '*' || !memchr(p, '\n', len))
		return 0;
	n = strtol(p + 1, &e, 10);
	p = strchr(p, '\n') + 1;
	for (long i = 0; i < n; i++) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		long l;

		if (!nl || *p != '$')
			return 0;
		l = strtol(p + 1, &e, 10);
		p = nl + 1;
		if (end - p < l + 2)
			return 0;
		if (i < 2)
			snprintf(i ? a1 : a0, cap, "%.*s", (int)(l < (long)cap ? l : (long)cap - 1), p);
		p += l + 2;
	}
	return (size_t)(p - b);
}

static void answer(struct node *nd, int fd, unsigned conn, const char *a0, const char *a1)
{
	char out[256];
	int n;

	if (strcmp(a0, "CLUSTER") == 0 && strcmp(a1, "SLOTS") == 0 && conn == 0)
		n = snprintf(out, sizeof(out), "*354600922\r\n*3\r\n:0\r\n:16383\r\n");
	else if (strcmp(a0, "CLUSTER") == 0)
		n = snprintf(out, sizeof(out),
			     "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:%u\r\n",
			     nd->port);
	else if (strcmp(a0, "GET") == 0 && strcmp(a1, "big") == 0)
		n = snprintf(out, sizeof(out), "$600000000\r\nxxxxxxxx");
	else if (strcmp(a0, "GET") == 0)
		n = snprintf(out, sizeof(out), "$3\r\nabc\r\n");
	else
		n = snprintf(out, sizeof(out), "+OK\r\n");
	if (send(fd, out, (size_t)n, MSG_NOSIGNAL) < 0)
		return;
}

/* One connection at a time: the client has one to a node. */
static void *node_main(void *arg)
{
	struct node *nd = arg;

	while (!atomic_load(&nd->stop)) {
		struct pollfd p = { nd->lfd, POLLIN, 0 };
		char buf[4096], a0[32], a1[32];
		size_t have = 0;
		unsigned conn;
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(nd->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		conn = atomic_fetch_add(&nd->conns, 1);
		while (!atomic_load(&nd->stop)) {
			struct pollfd q = { fd, POLLIN, 0 };
			ssize_t got;
			size_t used;

			if (poll(&q, 1, 50) <= 0)
				continue;
			got = recv(fd, buf + have, sizeof(buf) - have, 0);
			if (got <= 0)
				break;
			have += (size_t)got;
			while ((used = command(buf, have, a0, a1, sizeof(a0))) > 0) {
				answer(nd, fd, conn, a0, a1);
				memmove(buf, buf + used, have - used);
				have -= used;
			}
			if (have == sizeof(buf))
				break;
		}
		close(fd);
	}
	return NULL;
}

static void node_start(struct node *nd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	nd->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(nd->lfd, 0);
	ck_assert_int_eq(bind(nd->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(nd->lfd, 4), 0);
	ck_assert_int_eq(getsockname(nd->lfd, (struct sockaddr *)&sin, &sl), 0);
	nd->port = ntohs(sin.sin_port);
	ck_assert_int_eq(pthread_create(&nd->th, NULL, node_main, nd), 0);
}

static void node_stop(struct node *nd)
{
	atomic_store(&nd->stop, true);
	pthread_join(nd->th, NULL);
	close(nd->lfd);
}

/* The process's peak address space (VmPeak), kB. */
static unsigned long vm_peak_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kb = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPeak: %lu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	return kb;
}

struct done {
	unsigned n;
	int rc;
	char val[16];
};

static void on_done(void *arg, uint64_t cookie, int rc, const struct fg_cluster_reply *r,
		    uint64_t rtt_ns)
{
	struct done *d = arg;

	(void)cookie;
	(void)rtt_ns;
	d->n++;
	d->rc = rc;
	d->val[0] = '\0';
	if (rc == 0)
		snprintf(d->val, sizeof(d->val), "%.*s", (int)r->len, r->str ? r->str : "");
}

struct run {
	struct fg_cluster *c;
	struct done *d;
	uint64_t refused;		/* wait for replies_refused to reach it */
	bool mapped;			/* or for the whole map */
};

static bool ran_until(void *arg)
{
	struct run *r = arg;
	struct fg_cluster_stats st;

	fg_cluster_run(r->c, 10, on_done, r->d);
	fg_cluster_get_stats(r->c, &st);
	if (r->mapped)
		return st.slots_mapped == FG_CLUSTER_SLOTS;
	if (r->refused)
		return st.replies_refused >= r->refused;
	return r->d->n > 0;
}

/* GET key until it completes (a node closed a moment ago is not
 * reconnected before its retry time: -ENOTCONN at submit is tried again). */
static void get(struct fg_cluster *c, const char *key, struct done *d)
{
	const char *argv[] = { "GET", key };
	size_t len[] = { 3, strlen(key) };
	struct run r = { c, d, 0, false };

	*d = (struct done){ 0 };
	for (;;) {
		int rc = fg_cluster_submit(c, 2, argv, len, 1, 0);

		if (rc == 0)
			break;
		ck_assert_int_eq(rc, -ENOTCONN);
		fg_cluster_run(c, 10, on_done, d);
	}
	ck_assert_msg(fg_test_wait_until(ran_until, &r, 0), "GET %s never completed", key);
}

static int netns_rc = -ENOEXEC;	/* the hostile tests' namespace: 0 once entered */

static void hostile_setup(void)
{
	netns_rc = fg_test_netns_enter();
}

START_TEST(hostile_node_refused_unread)
{
	static struct node nd;
	struct fg_cluster_params p = { .timeout_ms = 1000 };
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	struct done d = { 0 };
	struct run r = { .d = &d };
	unsigned long peak0;
	char seed[32];

	ck_assert_msg(netns_rc == 0, "cannot enter a network namespace of its own: %s",
		      strerror(-netns_rc));
	node_start(&nd);
	snprintf(seed, sizeof(seed), "127.0.0.1:%u", nd.port);
	p.seeds = seed;
	peak0 = vm_peak_kb();
	c = fg_cluster_create(&p);
	ck_assert_ptr_nonnull(c);
	r.c = c;
	/* the first map: 354,600,922 elements declared, refused unread */
	r.refused = 1;
	ck_assert_msg(fg_test_wait_until(ran_until, &r, 0), "the first map was not refused");
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.replies_refused, 1);
	ck_assert_uint_eq(st.map_refreshes, 0);
	ck_assert_uint_ge(st.disconnects, 1);
	/* hiredis would have calloc'd 2.8 GB for it */
	ck_assert_msg(vm_peak_kb() - peak0 < 256 * 1024, "peak address space grew by %lu kB",
		      vm_peak_kb() - peak0);
	/* reconnected: the node's next map is taken, a GET answered */
	r.refused = 0;
	r.mapped = true;
	ck_assert_msg(fg_test_wait_until(ran_until, &r, 0), "the second map was not taken");
	get(c, "k", &d);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_str_eq(d.val, "abc");
	/* a 600 MB bulk string: refused unread, its request failed with the
	 * connection */
	get(c, "big", &d);
	ck_assert_int_eq(d.rc, -ECONNRESET);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.replies_refused, 2);
	ck_assert_msg(vm_peak_kb() - peak0 < 256 * 1024, "peak address space grew by %lu kB",
		      vm_peak_kb() - peak0);
	/* and the client goes on */
	get(c, "k", &d);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_str_eq(d.val, "abc");
	ck_assert_uint_ge(atomic_load(&nd.conns), 3);
	fg_cluster_destroy(c, NULL, NULL);
	node_stop(&nd);
}
END_TEST

static Suite *respguard_suite(void)
{
	Suite *s = suite_create("respguard");
	TCase *t = tcase_create("scan");
	TCase *live = tcase_create("hostile");

	tcase_add_test(t, bounds_at_their_edges);
	tcase_add_test(t, across_reads_and_sticky);
	tcase_add_test(t, reads_as_hiredis_reads);
	tcase_add_test(t, parse_slots_refuses_what_it_cannot_hold);
	suite_add_tcase(s, t);
	tcase_add_unchecked_fixture(live, hostile_setup, NULL);
	tcase_set_timeout(live, 120);
	tcase_add_test(live, hostile_node_refused_unread);
	suite_add_tcase(s, live);
	return s;
}

FG_TEST_MAIN(respguard_suite)
