/* SPDX-License-Identifier: MIT */
/*
 * test_cluster.c — the Redis Cluster client (dataplane/cluster/) against a
 * real cluster: three masters with a replica each, started by the test in
 * a network namespace of its own (tests/lib/rediskit). The slot map comes
 * from CLUSTER SLOTS; pipelined requests reach every master; a client that
 * knows only one seed follows MOVED; a slot in migration is followed with
 * ASK; a stopped master times requests out and the client reconnects by
 * itself; a manual failover and a killed master are followed with a fresh
 * map. Slot hashing is checked against the spec's own examples.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/cluster.h"
#include "rediskit.h"

#define BASE_PORT 7000
/* A reply's deadline where no reply is meant to be late: generous, since a
 * loaded machine (sanitizers, a CPU hog, other suites) may deschedule a
 * Redis process for a moment, and a timeout there is not the client's
 * failure. The stalled-master test sets its own short one: there the
 * timeout is what it checks. */
#define TIMEOUT_MS 3000u
#define STALL_TIMEOUT_MS 100u
#define BOUND_MS 20000u		/* failure bound of every wait below */

static struct fg_test_redis R;
static bool cluster_up;

struct results {
	unsigned n_done, n_ok, n_err;
	int rc[1024];
	char val[1024][64];
	enum fg_cluster_reply_type type[1024];
};

static struct results res;

static uint64_t ms_now(void)
{
	return fg_mono_ns() / 1000000u;
}

static void on_done(void *arg, uint64_t cookie, int rc, const struct fg_cluster_reply *r,
		    uint64_t rtt_ns)
{
	struct results *x = arg;

	(void)rtt_ns;
	ck_assert_uint_lt(cookie, 1024);
	x->n_done++;
	x->rc[cookie] = rc;
	if (rc == 0) {
		x->type[cookie] = r->type;
		snprintf(x->val[cookie], sizeof(x->val[cookie]), "%.*s", (int)r->len,
			 r->str ? r->str : "");
		if (r->type == FG_CLUSTER_R_ERROR)
			x->n_err++;
		else
			x->n_ok++;
	}
}

/* Run the client until `n` requests completed; false past the bound. */
static bool run_until_done(struct fg_cluster *c, unsigned n)
{
	uint64_t end = ms_now() + BOUND_MS;

	while (res.n_done < n && ms_now() < end)
		fg_cluster_run(c, 10, on_done, &res);
	return res.n_done >= n;
}

static bool run_until_mapped(struct fg_cluster *c)
{
	struct fg_cluster_stats st;
	uint64_t end = ms_now() + BOUND_MS;

	do {
		fg_cluster_run(c, 10, on_done, &res);
		fg_cluster_get_stats(c, &st);
	} while (st.slots_mapped < FG_CLUSTER_SLOTS && ms_now() < end);
	return st.slots_mapped == FG_CLUSTER_SLOTS;
}

/* Run until the client has taken a slot map after the `before` one: a
 * MOVED asks for one, but no sooner than a request timeout after the last
 * (the client's own pacing), so the map in hand may still be complete. */
static bool run_until_refreshed(struct fg_cluster *c, uint64_t before)
{
	struct fg_cluster_stats st;
	uint64_t end = ms_now() + BOUND_MS;

	do {
		fg_cluster_run(c, 10, on_done, &res);
		fg_cluster_get_stats(c, &st);
	} while (st.map_refreshes <= before && ms_now() < end);
	return st.map_refreshes > before;
}

static int submit2(struct fg_cluster *c, const char *verb, const char *key, uint64_t cookie)
{
	const char *argv[] = { verb, key };
	size_t len[] = { strlen(verb), strlen(key) };

	return fg_cluster_submit(c, 2, argv, len, 1, cookie);
}

static int submit_set(struct fg_cluster *c, const char *key, const char *val, uint64_t cookie)
{
	const char *argv[] = { "SET", key, val };
	size_t len[] = { 3, strlen(key), strlen(val) };

	return fg_cluster_submit(c, 3, argv, len, 1, cookie);
}

static struct fg_cluster *client_timeout(const char *seeds, unsigned timeout_ms)
{
	struct fg_cluster_params p = { .seeds = seeds, .timeout_ms = timeout_ms };
	struct fg_cluster *c = fg_cluster_create(&p);

	ck_assert_ptr_nonnull(c);
	memset(&res, 0, sizeof(res));
	return c;
}

static struct fg_cluster *client(const char *seeds)
{
	return client_timeout(seeds, TIMEOUT_MS);
}

static void seeds_all(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < R.n; i++)
		off += (size_t)snprintf(buf + off, len - off, "127.0.0.1:%d ", R.port[i]);
}

static void cluster_setup(void)
{
	int rc = fg_test_netns_enter();

	if (rc != 0) {
		fprintf(stderr, "test_cluster: cannot enter a network namespace: %s\n",
			strerror(-rc));
		return;
	}
	cluster_up = fg_test_redis_cluster_start(&R, 3, 1, BASE_PORT) == 0;
}

static void cluster_teardown(void)
{
	if (cluster_up)
		fg_test_redis_stop(&R);
	cluster_up = false;
}

/* ---- slots (no cluster needed) ------------------------------------------ */

START_TEST(crc16_and_slots)
{
	/* Redis Cluster spec: the CRC16 of "123456789" is 0x31C3 */
	ck_assert_uint_eq(fg_cluster_crc16("123456789", 9), 0x31C3);
	ck_assert_uint_eq(fg_cluster_slot("foo", 3), 12182);
	ck_assert_uint_eq(fg_cluster_slot("{user1000}.following", 20),
			  fg_cluster_slot("{user1000}.followers", 20));
	ck_assert_uint_eq(fg_cluster_slot("{user1000}.following", 20),
			  fg_cluster_slot("user1000", 8));
	/* the spec's edge cases: an empty {} is no tag; the first { } pair wins */
	ck_assert_uint_eq(fg_cluster_slot("foo{}{bar}", 10),
			  fg_cluster_crc16("foo{}{bar}", 10) & 16383);
	ck_assert_uint_eq(fg_cluster_slot("foo{{bar}}zap", 13), fg_cluster_slot("{bar", 4));
	ck_assert_uint_eq(fg_cluster_slot("foo{bar}{zap}", 13), fg_cluster_slot("bar", 3));
	ck_assert_uint_eq(fg_cluster_slot("{", 1), fg_cluster_crc16("{", 1) & 16383);
	ck_assert_uint_eq(fg_cluster_slot("", 0), 0);
}
END_TEST

START_TEST(redirects_parsed)
{
	static const char *const bad[] = {
		"MOVED", "MOVED ", "MOVED 1", "MOVED 1 ", "MOVED 1 h", "MOVED 1 h:", "MOVED 1 :7",
		"MOVED 16384 h:7", "MOVED x h:7", "MOVED 1 h:0", "MOVED 1 h:65536", "MOVED 1 h:7x",
		"MOVED 1 h\x01:7", "MOVED 1 h :7", "MOVE 1 h:7", "ASK", "moved 1 h:7",
		"MOVED 1  h:7", "MOVED 99999999999999999999 h:7",
	};
	char host[16];
	unsigned slot;
	bool ask;
	int port;

	ck_assert_int_eq(fg_cluster_parse_redirect("MOVED 3999 127.0.0.1:6381", 25, &slot, host,
						   sizeof(host), &port, &ask), 0);
	ck_assert_uint_eq(slot, 3999);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_int_eq(port, 6381);
	ck_assert(!ask);
	ck_assert_int_eq(fg_cluster_parse_redirect("ASK 16383 ::1:7000", 18, &slot, host,
						   sizeof(host), &port, &ask), 0);
	ck_assert_uint_eq(slot, 16383);
	ck_assert_str_eq(host, "::1");
	ck_assert_int_eq(port, 7000);
	ck_assert(ask);
	/* a host longer than the buffer */
	ck_assert_int_eq(fg_cluster_parse_redirect("MOVED 1 a-very-long-host-name:7", 31, &slot,
						   host, sizeof(host), &port, &ask), -EINVAL);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(bad); i++)
		ck_assert_msg(fg_cluster_parse_redirect(bad[i], strlen(bad[i]), &slot, host,
							sizeof(host), &port, &ask) == -EINVAL,
			      "'%s' taken", bad[i]);
}
END_TEST

START_TEST(slots_parsed)
{
	/* two ranges, the second's host unknown ("?"), then one of each bad shape */
	static const char resp[] =
		"*6\r\n"
		"*3\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
		"*4\r\n:5461\r\n:10922\r\n*2\r\n$1\r\n?\r\n:7001\r\n*2\r\n$1\r\nr\r\n:1\r\n"
		"*3\r\n:9\r\n:3\r\n*2\r\n$1\r\nh\r\n:7\r\n"
		"*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:7\r\n"
		"*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:0\r\n"
		"*2\r\n:0\r\n:1\r\n";
	struct fg_cluster_range r[8];

	ck_assert_int_eq(fg_cluster_parse_slots(resp, sizeof(resp) - 1, "10.0.0.9", r, 8), 2);
	ck_assert_uint_eq(r[0].lo, 0);
	ck_assert_uint_eq(r[0].hi, 5460);
	ck_assert_str_eq(r[0].host, "127.0.0.1");
	ck_assert_int_eq(r[0].port, 7000);
	ck_assert_uint_eq(r[1].lo, 5461);
	ck_assert_uint_eq(r[1].hi, 10922);
	ck_assert_str_eq(r[1].host, "10.0.0.9");
	ck_assert_int_eq(r[1].port, 7001);
	ck_assert_int_eq(fg_cluster_parse_slots(resp, sizeof(resp) - 1, "x", r, 1), 1);
	ck_assert_int_eq(fg_cluster_parse_slots(resp, 20, "x", r, 8), -EAGAIN);
	ck_assert_int_eq(fg_cluster_parse_slots("+OK\r\n", 5, "x", r, 8), -EINVAL);
	ck_assert_int_eq(fg_cluster_parse_slots("?\r\n", 3, "x", r, 8), -EINVAL);
	ck_assert_int_eq(fg_cluster_parse_slots("*0\r\n", 4, "x", r, 8), 0);
}
END_TEST

START_TEST(bad_seeds)
{
	const char *bad[] = { "", "nohost", "127.0.0.1:0", "127.0.0.1:70000", ":7000",
			      "127.0.0.1:12x", NULL };

	for (unsigned i = 0; i < FG_ARRAY_SIZE(bad); i++) {
		struct fg_cluster_params p = { .seeds = bad[i] };

		ck_assert_msg(fg_cluster_create(&p) == NULL, "seed list '%s' taken",
			      bad[i] ? bad[i] : "(null)");
	}
}
END_TEST

START_TEST(nothing_listening)
{
	struct fg_cluster_params p = { .seeds = "127.0.0.1:1", .timeout_ms = 20 };
	struct fg_cluster *c = fg_cluster_create(&p);
	struct fg_cluster_stats st;
	uint64_t end = ms_now() + BOUND_MS;
	int rc = 0;

	ck_assert_ptr_nonnull(c);
	memset(&res, 0, sizeof(res));
	/* the refused connection is noticed; a request then fails at once or
	 * ends -ECONNRESET, never hangs */
	while (ms_now() < end) {
		rc = submit2(c, "GET", "k", 0);
		if (rc != 0)
			break;
		ck_assert(run_until_done(c, 1));
		ck_assert_int_eq(res.rc[0], -ECONNRESET);
		res.n_done = 0;
	}
	ck_assert_int_eq(rc, -ENOTCONN);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.nodes_up, 0);
	ck_assert_uint_eq(st.replies, 0);
	fg_cluster_destroy(c, NULL, NULL);
}
END_TEST

/* ---- against the cluster ------------------------------------------------ */

START_TEST(map_and_pipeline)
{
	char seeds[512], key[32], val[32];
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	unsigned n = 600;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	seeds_all(seeds, sizeof(seeds));
	c = client(seeds);
	ck_assert(run_until_mapped(c));
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.masters, 3);
	ck_assert_uint_eq(st.moved, 0);
	/* all in flight at once, answered in order per node */
	for (unsigned i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "pipe:%u", i);
		snprintf(val, sizeof(val), "v%u", i * 7);
		ck_assert_int_eq(submit_set(c, key, val, i), 0);
	}
	ck_assert_uint_eq(fg_cluster_pending(c), n);
	ck_assert(run_until_done(c, n));
	ck_assert_uint_eq(res.n_ok, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_str_eq(res.val[i], "OK");
	memset(&res, 0, sizeof(res));
	for (unsigned i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "pipe:%u", i);
		ck_assert_int_eq(submit2(c, "GET", key, i), 0);
	}
	ck_assert(run_until_done(c, n));
	for (unsigned i = 0; i < n; i++) {
		snprintf(val, sizeof(val), "v%u", i * 7);
		ck_assert_int_eq(res.type[i], FG_CLUSTER_R_STRING);
		ck_assert_str_eq(res.val[i], val);
	}
	/* a key never set: nil */
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(submit2(c, "GET", "never-set", 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_int_eq(res.type[0], FG_CLUSTER_R_NIL);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.moved, 0);
	ck_assert_uint_eq(st.timeouts, 0);
	ck_assert_uint_eq(fg_cluster_pending(c), 0);
	fg_cluster_destroy(c, NULL, NULL);
}
END_TEST

START_TEST(moved_from_one_seed)
{
	char seed[64], key[32];
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	unsigned n = 300;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	snprintf(seed, sizeof(seed), "127.0.0.1:%d", R.port[0]);
	c = client(seed);
	/* submitted before any map: all go to the seed; two thirds come back MOVED */
	for (unsigned i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "moved:%u", i);
		ck_assert_int_eq(submit_set(c, key, "x", i), 0);
	}
	ck_assert(run_until_done(c, n));
	ck_assert_uint_eq(res.n_ok, n);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_gt(st.moved, 0);
	ck_assert_uint_le(st.moved, n);
	ck_assert(run_until_mapped(c));
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.masters, 3);
	fg_cluster_destroy(c, NULL, NULL);
}
END_TEST

static void node_id(unsigned i, char *out, size_t len)
{
	ck_assert_int_eq(fg_test_redis_cli(&R, i, "cluster myid", out, len), 0);
	ck_assert_uint_eq(strlen(out), 40);
}

START_TEST(ask_during_migration)
{
	const char *key = "{askme}k";
	unsigned slot = fg_cluster_slot(key, strlen(key));
	char seeds[512], args[160], out[64], src_id[64], dst_id[64];
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	int src, dst;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	src = fg_test_redis_master_of(&R, slot);
	ck_assert_int_ge(src, 0);
	dst = fg_test_redis_master_of(&R, fg_cluster_slot("foo", 3)) == src
		      ? fg_test_redis_master_of(&R, fg_cluster_slot("bar", 3))
		      : fg_test_redis_master_of(&R, fg_cluster_slot("foo", 3));
	ck_assert_int_ge(dst, 0);
	ck_assert_int_ne(src, dst);
	node_id((unsigned)src, src_id, sizeof(src_id));
	node_id((unsigned)dst, dst_id, sizeof(dst_id));
	snprintf(args, sizeof(args), "cluster setslot %u importing %s", slot, src_id);
	ck_assert_int_eq(fg_test_redis_cli(&R, (unsigned)dst, args, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "OK");
	snprintf(args, sizeof(args), "cluster setslot %u migrating %s", slot, dst_id);
	ck_assert_int_eq(fg_test_redis_cli(&R, (unsigned)src, args, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "OK");

	seeds_all(seeds, sizeof(seeds));
	c = client(seeds);
	ck_assert(run_until_mapped(c));
	/* the key is not on the source: it answers ASK, the target takes it */
	ck_assert_int_eq(submit_set(c, key, "asked", 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_int_eq(res.rc[0], 0);
	ck_assert_str_eq(res.val[0], "OK");
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.ask, 1);
	ck_assert_uint_eq(st.moved, 0);
	snprintf(args, sizeof(args), "cluster countkeysinslot %u", slot);
	ck_assert_int_eq(fg_test_redis_cli(&R, (unsigned)dst, args, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "1");

	/* finish the migration: the slot is the target's now, the map still
	 * says the source, which answers MOVED */
	snprintf(args, sizeof(args), "cluster setslot %u node %s", slot, dst_id);
	for (unsigned i = 0; i < R.n; i++)
		if (fg_test_redis_cli(&R, i, "role", out, sizeof(out)) == 0 &&
		    strcmp(out, "master") == 0)
			ck_assert_int_eq(fg_test_redis_cli(&R, i, args, out, sizeof(out)), 0);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(submit2(c, "GET", key, 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_str_eq(res.val[0], "asked");
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.moved, 1);
	fg_cluster_destroy(c, NULL, NULL);
	ck_assert_int_eq(fg_test_redis_wait_ok(&R, BOUND_MS), 0);
}
END_TEST

START_TEST(stopped_master_times_out_then_reconnects)
{
	const char *key = "{stall}k";
	unsigned slot = fg_cluster_slot(key, strlen(key));
	char seeds[512];
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	uint64_t t0, end;
	int m;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	m = fg_test_redis_master_of(&R, slot);
	ck_assert_int_ge(m, 0);
	seeds_all(seeds, sizeof(seeds));
	c = client_timeout(seeds, STALL_TIMEOUT_MS);
	ck_assert(run_until_mapped(c));
	ck_assert_int_eq(kill(R.pid[m], SIGSTOP), 0);
	t0 = ms_now();
	ck_assert_int_eq(submit_set(c, key, "late", 0), 0);
	ck_assert(run_until_done(c, 1));
	/* continued at once, well before the cluster would fail it over */
	ck_assert_int_eq(kill(R.pid[m], SIGCONT), 0);
	ck_assert_int_eq(res.rc[0], -ETIMEDOUT);
	ck_assert_uint_ge(ms_now() - t0, STALL_TIMEOUT_MS);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.timeouts, 1);
	/* requests go on working: the late reply is dropped, or the stalled
	 * connection was closed and made again */
	end = ms_now() + BOUND_MS;
	do {
		memset(&res, 0, sizeof(res));
		ck_assert_int_ne(submit2(c, "GET", key, 0), -EINVAL);
		run_until_done(c, 1);
	} while (res.rc[0] != 0 && ms_now() < end);
	ck_assert_int_eq(res.rc[0], 0);
	/* the timed-out SET's fate is unknown to the client (the stalled
	 * connection may have been reset before the node read it): either */
	ck_assert_msg(res.type[0] == FG_CLUSTER_R_NIL ||
		      (res.type[0] == FG_CLUSTER_R_STRING && strcmp(res.val[0], "late") == 0),
		      "GET after the stall: type %d '%s'", res.type[0], res.val[0]);
	ck_assert_uint_eq(fg_cluster_pending(c), 0);
	fg_cluster_destroy(c, NULL, NULL);
}
END_TEST

/* The replica of master m (its index), from `cluster nodes` on it. */
static int replica_of(int m)
{
	char out[64], id[64];

	node_id((unsigned)m, id, sizeof(id));
	for (unsigned i = 0; i < R.n; i++) {
		if ((int)i == m || R.pid[i] <= 0)
			continue;
		if (fg_test_redis_cli(&R, i, "role", out, sizeof(out)) == 0 &&
		    strcmp(out, "slave") == 0) {
			char cmd[256], line[512];
			FILE *p;
			bool mine = false;

			snprintf(cmd, sizeof(cmd),
				 "redis-cli -h 127.0.0.1 -p %d cluster nodes | grep myself", R.port[i]);
			p = popen(cmd, "r");
			ck_assert_ptr_nonnull(p);
			while (fgets(line, sizeof(line), p))
				mine |= strstr(line, id) != NULL;
			pclose(p);
			if (mine)
				return (int)i;
		}
	}
	return -1;
}

/* Submit GETs of `key` until one succeeds; returns how many failed. */
static unsigned get_until_ok(struct fg_cluster *c, const char *key, const char *want)
{
	uint64_t end = ms_now() + BOUND_MS;
	unsigned failed = 0;

	for (;;) {
		int rc;

		memset(&res, 0, sizeof(res));
		rc = submit2(c, "GET", key, 0);
		if (rc == 0 && run_until_done(c, 1) && res.rc[0] == 0 &&
		    res.type[0] == FG_CLUSTER_R_STRING) {
			ck_assert_str_eq(res.val[0], want);
			return failed;
		}
		failed++;
		if (ms_now() >= end) {
			/* what each node says of the key, for the failure's log */
			for (unsigned i = 0; i < R.n; i++) {
				char role[64] = "", val[64] = "", cmd[128];

				if (R.pid[i] <= 0)
					continue;
				snprintf(cmd, sizeof(cmd), "get %s", key);
				fg_test_redis_cli(&R, i, "role", role, sizeof(role));
				fg_test_redis_cli(&R, i, cmd, val, sizeof(val));
				fprintf(stderr, "node %d (port %d): %s, get: '%s'\n", i, R.port[i],
					role, val);
			}
		}
		/* the last try's outcome, so that a failure says what it saw */
		ck_assert_msg(ms_now() < end, "no answer for %s within the bound (last try: submit "
			      "%d, rc %d, type %d '%.40s'; %u tries)", key, rc, res.rc[0],
			      (int)res.type[0], res.val[0], failed);
		fg_cluster_run(c, 10, on_done, &res);
	}
}

/* SET key val and WAIT 1 on one connection to node m: the last output
 * line (the WAIT's answer) in out; 0 or -1. */
static int set_and_wait(int m, const char *key, const char *val, char *out, size_t len)
{
	char cmd[400], line[128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "redis-cli -h 127.0.0.1 -p %d > %s/wait.out 2>&1", R.port[m],
		 R.dir);
	p = popen(cmd, "w");
	if (!p)
		return -1;
	fprintf(p, "SET %s %s\nWAIT 1 5000\n", key, val);
	if (pclose(p) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/wait.out", R.dir);
	p = fopen(cmd, "r");
	if (!p)
		return -1;
	out[0] = '\0';
	while (fgets(line, sizeof(line), p))
		snprintf(out, len, "%.*s", (int)strcspn(line, "\n"), line);
	fclose(p);
	return 0;
}

/* A client with the whole map, `key` set to `val` on its master m and
 * replicated (WAIT) to m's replica *rep before anything fails over. */
static struct fg_cluster *replicated_key(const char *key, const char *val, int *m, int *rep)
{
	char seeds[512], out[64];
	struct fg_cluster *c;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	*m = fg_test_redis_master_of(&R, fg_cluster_slot(key, strlen(key)));
	ck_assert_int_ge(*m, 0);
	*rep = replica_of(*m);
	ck_assert_int_ge(*rep, 0);
	seeds_all(seeds, sizeof(seeds));
	c = client(seeds);
	ck_assert(run_until_mapped(c));
	ck_assert_int_eq(submit_set(c, key, val, 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_str_eq(res.val[0], "OK");
	/* WAIT counts replicas up to the offset of its own connection's last
	 * write, so on a connection of its own it waited for nothing: the
	 * replica could be promoted without the key (seen: the new master
	 * answered nil). Write again and WAIT on one connection. */
	ck_assert_int_eq(set_and_wait(*m, key, val, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "1");
	return c;
}

/* What the nodes say of failovers, and their replication offsets: printed
 * when a failover lost a key it must not lose. */
static void failover_evidence(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd),
		 "grep -H -E 'failover|Failover|FAIL message|configEpoch|Lost|MASTER <-> REPLICA' "
		 "'%s'/redis-*.log >&2", R.dir);
	if (system(cmd) != 0)
		fprintf(stderr, "(no failover lines in %s)\n", R.dir);
	for (unsigned i = 0; i < R.n; i++) {
		snprintf(cmd, sizeof(cmd),
			 "redis-cli -h 127.0.0.1 -p %d info replication 2>&1 | "
			 "grep -E 'role|offset' | sed 's/^/node %d: /' >&2", R.port[i], R.port[i]);
		if (system(cmd) != 0)
			fprintf(stderr, "node %d: no answer\n", R.port[i]);
	}
}

START_TEST(manual_failover_followed)
{
	const char *key = "{fail1}k";
	unsigned slot = fg_cluster_slot(key, strlen(key));
	struct fg_cluster_stats st0, st;
	struct fg_cluster *c;
	char out[64];
	uint64_t end;
	int m, rep;

	c = replicated_key(key, "before", &m, &rep);
	fg_cluster_get_stats(c, &st0);
	ck_assert_int_eq(fg_test_redis_cli(&R, (unsigned)rep, "cluster failover", out,
					   sizeof(out)), 0);
	ck_assert_str_eq(out, "OK");
	end = ms_now() + BOUND_MS;
	while (fg_test_redis_master_of(&R, slot) != rep && ms_now() < end)
		usleep(20000);
	ck_assert_int_eq(fg_test_redis_master_of(&R, slot), rep);
	/* the old master answers MOVED; the client follows and maps again.
	 * CLUSTER FAILOVER (without FORCE) loses nothing, as Redis documents
	 * it: the master stops its clients, the replica catches up to its
	 * offset, then takes over; and the key was WAITed to this replica.
	 * So the new master has it. (An earlier version accepted nil here.
	 * The failing runs' logs, printed by failover_evidence, showed the
	 * replicas finishing their first full sync only 5 s after the
	 * cluster was created (Redis's repl-diskless-sync-delay) and the
	 * manual failover coming about 100 ms after that: rediskit's
	 * readiness did not wait for the replicas. It now waits for every
	 * replica's link to be up with no sync in progress, the nodes sync
	 * at once, and their node timeout is 3 s, so no automatic failover
	 * races a manual one on a loaded machine.) */
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(submit2(c, "GET", key, 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_int_eq(res.rc[0], 0);
	if (!(res.type[0] == FG_CLUSTER_R_STRING && strcmp(res.val[0], "before") == 0))
		failover_evidence();
	ck_assert_msg(res.type[0] == FG_CLUSTER_R_STRING && strcmp(res.val[0], "before") == 0,
		      "GET after a manual failover: type %d '%s', not the WAITed 'before' "
		      "(the nodes' failover lines are above)", res.type[0], res.val[0]);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_eq(st.moved, st0.moved + 1);
	ck_assert(run_until_refreshed(c, st0.map_refreshes));
	ck_assert(run_until_mapped(c));
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_gt(st.map_refreshes, st0.map_refreshes);
	fg_cluster_destroy(c, NULL, NULL);
	ck_assert_int_eq(fg_test_redis_wait_ok(&R, BOUND_MS), 0);
}
END_TEST

START_TEST(killed_master_followed)
{
	const char *key = "{kill1}k";
	unsigned slot = fg_cluster_slot(key, strlen(key));
	struct fg_cluster_stats st;
	struct fg_cluster *c;
	unsigned failed;
	int m, rep;

	c = replicated_key(key, "kept", &m, &rep);
	ck_assert_int_eq(kill(R.pid[m], SIGKILL), 0);
	waitpid(R.pid[m], NULL, 0);
	R.pid[m] = 0;
	/* requests fail fast (never hang) until the replica is promoted and
	 * the fresh map names it; then they go on */
	failed = get_until_ok(c, key, "kept");
	ck_assert_uint_gt(failed, 0);
	ck_assert_int_eq(fg_test_redis_master_of(&R, slot), rep);
	fg_cluster_get_stats(c, &st);
	ck_assert_uint_ge(st.disconnects, 1);
	fg_cluster_destroy(c, NULL, NULL);
}
END_TEST

START_TEST(del_with_a_client_of_its_own)
{
	struct fg_cluster_params p = { .timeout_ms = TIMEOUT_MS };
	char seed[64], key[FG_CLUSTER_KEY_LEN + 1], key2[FG_CLUSTER_KEY_LEN + 1];
	struct fg_cluster *c;
	uint64_t t0;

	ck_assert_msg(cluster_up, "the test cluster did not start");
	fg_cluster_key("secret", "<del@x>", 7, key);
	ck_assert_uint_eq(strlen(key), FG_CLUSTER_KEY_LEN);
	fg_cluster_key("secret", "<del@x>", 7, key2);
	ck_assert_str_eq(key, key2);
	fg_cluster_key("other", "<del@x>", 7, key2);
	ck_assert_str_ne(key, key2);
	snprintf(seed, sizeof(seed), "127.0.0.1:%d", R.port[1]);
	c = client(seed);
	ck_assert_int_eq(submit_set(c, key, "b:A", 0), 0);
	ck_assert(run_until_done(c, 1));
	ck_assert_str_eq(res.val[0], "OK");
	fg_cluster_destroy(c, NULL, NULL);
	/* one seed, whichever master has the key: followed */
	p.seeds = seed;
	ck_assert_int_eq(fg_cluster_del(&p, key, BOUND_MS), 1);
	ck_assert_int_eq(fg_cluster_del(&p, key, BOUND_MS), 0);
	/* nothing there: an error within the bound, never a hang */
	p.seeds = "127.0.0.1:1";
	t0 = ms_now();
	ck_assert_int_lt(fg_cluster_del(&p, key, 300), 0);
	ck_assert_uint_lt(ms_now() - t0, BOUND_MS);
	p.seeds = "";
	ck_assert_int_eq(fg_cluster_del(&p, key, 300), -EINVAL);
}
END_TEST

static Suite *cluster_suite(void)
{
	Suite *s = suite_create("cluster");
	TCase *t = tcase_create("slots");
	TCase *live = tcase_create("live");

	tcase_add_test(t, crc16_and_slots);
	tcase_add_test(t, bad_seeds);
	tcase_add_test(t, redirects_parsed);
	tcase_add_test(t, slots_parsed);
	suite_add_tcase(s, t);
	tcase_add_unchecked_fixture(live, cluster_setup, cluster_teardown);
	tcase_set_timeout(live, 120);
	tcase_add_test(live, nothing_listening);
	tcase_add_test(live, map_and_pipeline);
	tcase_add_test(live, moved_from_one_seed);
	tcase_add_test(live, del_with_a_client_of_its_own);
	tcase_add_test(live, ask_during_migration);
	tcase_add_test(live, manual_failover_followed);
	tcase_add_test(live, stopped_master_times_out_then_reconnects);
	tcase_add_test(live, killed_master_followed);
	suite_add_tcase(s, live);
	return s;
}

FG_TEST_MAIN(cluster_suite)
