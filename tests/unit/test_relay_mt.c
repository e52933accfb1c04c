/* SPDX-License-Identifier: MIT */
/*
 * test_relay_mt.c — the relay against a scripted downstream on loopback
 * (the relay's thread, the queue's writer and a server thread per
 * connection: also run under TSan): handshake variants (streaming, a
 * server that does not stream, check-first), every answer (239, 439, 431
 * then 239, 438, IHAVE's 335/235/435/437/436), articles relayed byte for
 * byte, each exactly once in queue order, a connection dropped with
 * articles in flight (only those are sent again, at most the window), a
 * 400 from the server, a restart from the durable cursor that re-sends
 * nothing, the window bound, the queue's segments deleted once delivered,
 * routes (each downstream gets what its feed selected at queue time),
 * damaged segments (the relay starts and delivers every sound record),
 * and the warm-up questions (answers, timeouts, nobody to ask).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/datadir.h"
#include "floodgate/relay.h"
#include "nntpsrv.h"

/* ------------------------------------------------------------ the server */

#define MAX_SEEN 4096

struct server {
	struct fg_test_srv srv;		/* first: serve() gets it */
	/* script */
	bool streaming;			/* list STREAMING, accept MODE STREAM */
	int drop_after;			/* close (no answer) after this many articles; -1 never */
	bool say_400;			/* answer the drop_after-th article with 400 instead */
	bool mute_checks;		/* never answer a CHECK */
	/* record */
	pthread_mutex_t lock;
	char seen[MAX_SEEN][64];	/* IDs of articles received, in order */
	unsigned nseen;
	unsigned later_tries;		/* 431/436 given */
	_Atomic unsigned checks;
	bool bytes_ok;
	int max_in_flight;
};

static const char *const ART =
	"Path: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.test\r\nSubject: s\r\n"
	"Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n\r\nbody\r\n..a dot-stuffed line\r\n";

/* The article up to its terminator; false if the connection ended. The
 * wire octets must be the queued article's exactly. */
static bool read_article(struct server *s, struct fg_test_rd *r)
{
	char got[4096];
	size_t gl;

	if (fg_test_srv_article(&s->srv, r, got, sizeof(got), &gl) < 0)
		return false;
	if (gl != strlen(ART) || memcmp(got, ART, gl) != 0) {
		pthread_mutex_lock(&s->lock);
		s->bytes_ok = false;
		pthread_mutex_unlock(&s->lock);
	}
	return true;
}

/* 431/436 on the first try of an ID holding "later", and count it. */
static bool later(struct server *s, const char *id)
{
	bool first = true;

	if (!strstr(id, "later"))
		return false;
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->nseen; i++)
		if (strcmp(s->seen[i], id) == 0)
			first = false;
	if (first && s->nseen < MAX_SEEN)
		snprintf(s->seen[s->nseen++], 64, "%s", id);
	s->later_tries += first;
	pthread_mutex_unlock(&s->lock);
	return first;
}

/* Record an article; returns how many this connection has taken. */
static unsigned seen(struct server *s, const char *id)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	if (s->nseen < MAX_SEEN)
		snprintf(s->seen[s->nseen++], 64, "%s%s", strstr(id, "later") ? "+" : "", id);
	n = s->nseen;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void serve(struct fg_test_srv *srv, int fd)
{
	struct server *s = (struct server *)srv;
	struct fg_test_rd *r = calloc(1, sizeof(*r));
	char line[1024], id[300];
	int taken = 0;

	r->fd = fd;
	fg_test_say(fd, "200 test server ready%s\r\n", "");
	while (fg_test_srv_line(srv, r, line, sizeof(line)) > 0) {
		if (sscanf(line, "CHECK %299s", id) == 1) {
			atomic_fetch_add(&s->checks, 1);
			if (s->mute_checks)
				continue;
			fg_test_say(fd, strstr(id, "have") ? "438 %s\r\n" :
					later(s, id) ? "431 %s\r\n" : "238 %s\r\n", id);
		} else if (sscanf(line, "TAKETHIS %299s", id) == 1) {
			if (!read_article(s, r))
				break;
			if (s->drop_after >= 0 && ++taken > s->drop_after) {
				if (s->say_400)
					fg_test_say(fd, "400 going away%s\r\n", "");
				break;
			}
			if (later(s, id)) {
				fg_test_say(fd, "431 %s\r\n", id);
				continue;
			}
			seen(s, id);
			fg_test_say(fd, strstr(id, "rej") ? "439 %s\r\n" : "239 %s\r\n", id);
		} else if (sscanf(line, "IHAVE %299s", id) == 1) {
			if (strstr(id, "have")) {
				fg_test_say(fd, "435 %s\r\n", id);
				continue;
			}
			if (later(s, id)) {
				fg_test_say(fd, "436 %s\r\n", id);
				continue;
			}
			fg_test_say(fd, "335 %s\r\n", id);
			if (!read_article(s, r))
				break;
			seen(s, id);
			fg_test_say(fd, strstr(id, "rej") ? "437 %s\r\n" : "235 %s\r\n", id);
		} else if (!fg_test_srv_common(fd, line, s->streaming)) {
			break;
		}
	}
	free(r);
}

static void server_start(struct server *s)
{
	pthread_mutex_init(&s->lock, NULL);
	s->bytes_ok = true;
	s->srv.serve = serve;	/* a restart takes the same port again */
	fg_test_srv_start(&s->srv);
}

static void server_stop(struct server *s)
{
	fg_test_srv_stop(&s->srv);
}

/* ------------------------------------------------------------ the rig */

static char dir[64];
static struct fg_config *cfg;
static struct fg_queue *q;
static struct fg_queue_sink *sink;
static struct fg_relay *relay;
static unsigned done_n;
static struct fg_queue_open_info open_info;	/* what the last rig_up's open found */

static void on_done(void *ctx, uint64_t cookie, int status)
{
	(void)ctx;
	(void)cookie;
	ck_assert_int_eq(status, 0);
	done_n++;
}

static void load_cfg(uint16_t port, const char *extra)
{
	struct fg_config_errors errs;
	char text[512];

	snprintf(text, sizeof(text), "[downstream d]\naddress 127.0.0.1:%u\n%s", port, extra);
	cfg = fg_config_load_text("t", text, strlen(text), &errs);
	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
}

/* The warm-up questions' timeout of the next rig_up. */
#define ASK_TIMEOUT_NS 300000000ull
static uint64_t ask_timeout_ns = ASK_TIMEOUT_NS;

/* Queue, relay, one handle; an asker too when max_asks (before the start). */
static struct fg_relay_asker *rig_up_with(uint16_t port, const char *extra, unsigned max_asks)
{
	struct fg_queue_params qp = { .commit_ns = 1000000, .segment_bytes = FG_QUEUE_SEGMENT_MIN };
	struct fg_queue_sink_params sp = { 0 };
	struct fg_relay_params rp = { .reconnect_min_ns = 20000000, .reconnect_max_ns = 200000000,
				      .retry_min_ns = 20000000, .retry_max_ns = 100000000,
				      .ask_timeout_ns = ask_timeout_ns };
	struct fg_relay_asker *a = NULL;
	int err;

	if (!cfg)
		load_cfg(port, extra);
	qp.dir = dir;
	q = fg_queue_open(&qp, &open_info, &err);
	ck_assert_msg(q != NULL, "queue: %s", strerror(-err));
	rp.cfg = cfg;
	rp.q = q;
	relay = fg_relay_create(&rp, &err);
	ck_assert_msg(relay != NULL, "relay: %s", strerror(-err));
	if (max_asks)
		a = fg_relay_asker_create(relay, max_asks, NULL, NULL);
	fg_queue_set_notify(q, fg_relay_notify, relay);
	sink = fg_queue_sink_create(q, &sp);
	ck_assert_ptr_nonnull(sink);
	ck_assert_int_eq(fg_queue_start(q), 0);
	ck_assert_int_eq(fg_relay_start(relay), 0);
	done_n = 0;
	return a;
}

static void rig_up(uint16_t port, const char *extra)
{
	rig_up_with(port, extra, 0);
}

static void rig_down(void)
{
	fg_relay_stop(relay);
	fg_queue_stop(q);
	fg_queue_sink_destroy(sink);
	fg_relay_destroy(relay);
	fg_queue_close(q);
}

/* The sink polled: are `*want` articles made safe? */
static bool sink_done(void *want)
{
	fg_queue_sink_ops.poll(sink, fg_mono_ns(), on_done, NULL);
	return done_n >= *(unsigned *)want;
}

static void offer(const char *fmt, unsigned n)
{
	unsigned first = done_n, want = first + n;
	char id[64];

	for (unsigned i = 0; i < n; i++) {
		struct fg_iov seg = { (const uint8_t *)ART, (uint32_t)strlen(ART), NULL };
		void *h;

		snprintf(id, sizeof(id), fmt, i);
		while (fg_queue_sink_ops.begin(sink, id, strlen(id), 0, &h) != 0)
			fg_queue_sink_ops.poll(sink, fg_mono_ns(), on_done, NULL);
		ck_assert_int_eq(fg_queue_sink_ops.append(sink, h, &seg, false), 0);
		ck_assert_int_eq(fg_queue_sink_ops.commit(sink, h, i), 0);
	}
	ck_assert_msg(fg_test_wait_until(sink_done, &want, 30000), "%u of %u articles made safe",
		      done_n - first, n);
}

/* The bound the relay's own timeouts are set against (a failure bound) */
#define WAIT_NS ((uint64_t)FG_TEST_WAIT_S * 1000000000)

struct cond {
	bool (*fn)(void);
};

static bool call_cond(void *arg)
{
	return ((struct cond *)arg)->fn();
}

/* Until cond() holds; fails naming `what` after the deadline
 * (fg_test_wait_until). */
static void wait_until(bool (*cond)(void), const char *what)
{
	struct cond c = { cond };

	ck_assert_msg(fg_test_wait_until(call_cond, &c, 30000), "timed out waiting for %s", what);
}

static bool delivered(void *arg)
{
	struct fg_relay_ds_status *st = arg;
	struct fg_queue_cursor end;

	fg_queue_durable(q, &end);
	ck_assert_int_eq(fg_relay_status(relay, 0, st), 0);
	return st->acked.recno >= end.recno;
}

/* Wait until the downstream has acknowledged every queued record. */
static void wait_delivered(void)
{
	struct fg_relay_ds_status st;
	struct fg_queue_cursor end;

	fg_test_wait_until(delivered, &st, 2000);
	fg_queue_durable(q, &end);
	ck_assert_uint_eq(st.acked.recno, end.recno);
	ck_assert_uint_eq(st.acked.pos, end.pos);
}

static void setup(void)
{
	strcpy(dir, "/tmp/fgr-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	cfg = NULL;
}

static void teardown(void)
{
	char cmd[128];

	fg_config_free(cfg);
	cfg = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Each of ids "<fmt i>" seen exactly once, in order among themselves. */
static void assert_once_in_order(struct server *s, const char *fmt, unsigned n)
{
	unsigned next = 0;
	char want[64];

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->nseen; i++) {
		snprintf(want, sizeof(want), fmt, next);
		if (next < n && strcmp(s->seen[i], want) == 0) {
			next++;
			continue;
		}
		for (unsigned k = 0; k < next; k++) {
			snprintf(want, sizeof(want), fmt, k);
			ck_assert_msg(strcmp(s->seen[i], want) != 0, "%s relayed twice", want);
		}
	}
	pthread_mutex_unlock(&s->lock);
	ck_assert_uint_eq(next, n);
}

/* ------------------------------------------------------------ tests */

static bool one_segment_left(void)
{
	uint64_t *nums;
	size_t nseg;

	ck_assert_int_eq(fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums,
					 &nseg), 0);
	free(nums);
	return nseg == 1;
}

static bool window_full(void)
{
	struct fg_relay_ds_status st;

	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	return st.in_window == 15;
}

START_TEST(streaming_exactly_once_byte_for_byte)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "window 16\n");
	offer("<a%u@t>", 600);
	wait_delivered();
	assert_once_in_order(&s, "<a%u@t>", 600);
	ck_assert(s.bytes_ok);
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert(st.streaming);
	ck_assert_uint_eq(st.ready, 1);
	ck_assert_uint_eq(st.accepted, 600);
	ck_assert_uint_eq(st.sent, 600);
	ck_assert_uint_eq(s.checks, 0);
	/* delivered: the sealed segments go (64 KiB segments, ~120 KiB queued) */
	wait_until(one_segment_left, "the delivered segments to be deleted");
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(answers_refused_deferred)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "");
	offer("<b%u@t>", 5);
	offer("<rej%u@t>", 3);
	offer("<later%u@t>", 2);
	offer("<c%u@t>", 5);
	wait_delivered();
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.accepted, 12);
	ck_assert_uint_eq(st.refused, 3);
	ck_assert_uint_eq(st.deferred, 2);
	ck_assert_uint_eq(s.later_tries, 2);
	/* the deferred ones were sent again and taken */
	assert_once_in_order(&s, "+<later%u@t>", 2);
	assert_once_in_order(&s, "<c%u@t>", 5);
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(check_first)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "check-first on\n");
	offer("<e%u@t>", 10);
	offer("<have%u@t>", 4);
	offer("<later%u@t>", 1);
	wait_delivered();
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.accepted, 11);
	ck_assert_uint_eq(st.not_wanted, 4);
	ck_assert_uint_eq(st.deferred, 1);
	ck_assert_uint_ge(s.checks, 16);
	assert_once_in_order(&s, "<e%u@t>", 10);
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(ihave_when_not_streaming)
{
	static struct server s = { .streaming = false, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "window 8\n");
	offer("<f%u@t>", 20);
	offer("<have%u@t>", 2);
	offer("<rej%u@t>", 2);
	offer("<later%u@t>", 1);
	wait_delivered();
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert(!st.streaming);
	ck_assert_uint_eq(st.accepted, 21);
	ck_assert_uint_eq(st.not_wanted, 2);
	ck_assert_uint_eq(st.refused, 2);
	ck_assert_uint_eq(st.deferred, 1);
	assert_once_in_order(&s, "<f%u@t>", 20);
	ck_assert(s.bytes_ok);
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(dropped_connection_resends_only_in_flight)
{
	static struct server s = { .streaming = true, .drop_after = 50 };
	struct fg_relay_ds_status st;
	unsigned dup = 0;

	server_start(&s);
	rig_up(s.srv.port, "window 8\n");
	offer("<g%u@t>", 200);
	wait_delivered();
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.accepted, 200);
	ck_assert_uint_ge(s.srv.conns, 4);
	/* the server saw each article once: the unanswered one went again */
	assert_once_in_order(&s, "<g%u@t>", 200);
	/* at most the window was in flight at each drop */
	ck_assert_uint_le(st.sent - 200, 8 * (s.srv.conns - 1));
	(void)dup;
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(server_400_reconnects)
{
	static struct server s = { .streaming = true, .drop_after = 30, .say_400 = true };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "window 4\nconnections 2\n");
	offer("<h%u@t>", 100);
	wait_delivered();
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.accepted, 100);
	ck_assert_uint_ge(st.reconnects, 3);
	rig_down();
	server_stop(&s);
}
END_TEST

static bool cursor_published(void)
{
	struct fg_relay_ds_status st;

	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	return st.acked.recno != 0;
}

START_TEST(restart_resumes_from_cursor)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&s);
	rig_up(s.srv.port, "");
	offer("<i%u@t>", 50);
	wait_delivered();
	rig_down();
	/* the downstream is away while more arrives */
	server_stop(&s);
	rig_up(s.srv.port, "");
	offer("<j%u@t>", 40);
	/* nobody listens on the port: no connection can be ready and nothing
	 * be acknowledged, whenever we look — once the relay has published
	 * its state at all (its thread may not have run yet on a busy box):
	 * the cursor's 50 */
	wait_until(cursor_published, "the restarted relay to publish its cursor");
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.ready, 0);
	ck_assert_uint_eq(st.acked.recno, 50);
	rig_down();
	/* back: everything not acknowledged goes, nothing twice */
	server_start(&s);
	rig_up(s.srv.port, "");
	wait_delivered();
	assert_once_in_order(&s, "<i%u@t>", 50);
	assert_once_in_order(&s, "<j%u@t>", 40);
	ck_assert_uint_eq(s.nseen, 90);
	rig_down();
	server_stop(&s);
}
END_TEST

START_TEST(window_bound_from_durable_cursor)
{
	struct fg_relay_ds_status st;
	struct server s = { 0 };
	int lfd;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);

	/* a server that accepts and never says a word: nothing is taken
	 * beyond the window, which stays full */
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&sin, &sl);
	(void)s;
	rig_up(ntohs(sin.sin_port), "window 5\nconnections 3\n");
	offer("<k%u@t>", 40);
	/* the three windows fill at once from the 40 queued records; taking
	 * more would happen in the same pass, so once full it stays at 15 */
	wait_until(window_full, "three windows of 5 in flight");
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.in_window, 15);
	ck_assert_uint_eq(st.acked.recno, 0);
	ck_assert_uint_eq(st.next.recno, 15);
	rig_down();
	close(lfd);
}
END_TEST

START_TEST(a_lost_segment_is_skipped)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_queue_segref a, b, c;
	char path[256];
	unsigned lost = 0;

	/* everything queued while the downstream is away */
	rig_up(1, "");
	offer("<n%u@t>", 800);
	ck_assert_int_eq(fg_queue_segment_at(q, 0, &a), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, a.end, &b), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, b.end, &c), 0);
	rig_down();
	fg_queue_segment_path(dir, b.segment, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	fg_config_free(cfg);
	cfg = NULL;
	server_start(&s);
	rig_up(s.srv.port, "");
	wait_delivered();
	/* what was in segment 1 is gone; the rest arrived, in order */
	pthread_mutex_lock(&s.lock);
	ck_assert_uint_eq(s.nseen, 800 - (c.first_recno - b.first_recno));
	pthread_mutex_unlock(&s.lock);
	for (uint64_t r = b.first_recno; r < b.first_recno + 10; r++) {
		char id[32];

		snprintf(id, sizeof(id), "<n%llu@t>", (unsigned long long)r);
		for (unsigned i = 0; i < s.nseen; i++)
			lost += strcmp(s.seen[i], id) == 0;
	}
	ck_assert_uint_eq(lost, 0);
	rig_down();
	server_stop(&s);
}
END_TEST

/* The whole of segment num's file (malloc'd), *len its size. */
static uint8_t *segment_bytes(uint64_t num, size_t *len)
{
	char path[256];
	struct stat st;
	uint8_t *b;
	int fd;

	fg_queue_segment_path(dir, num, path, sizeof(path));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	b = malloc(*len);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(read(fd, b, *len), (ssize_t)*len);
	close(fd);
	return b;
}

/* Overwrite n octets at off of segment num's file (off == its size: append). */
static void segment_poke(uint64_t num, size_t off, const void *p, size_t n)
{
	char path[256];
	int fd;

	fg_queue_segment_path(dir, num, path, sizeof(path));
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

struct find_rec {
	uint64_t recno;
	const uint8_t *base;
	size_t art_off;
};

static int find_rec(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	struct find_rec *f = arg;

	(void)pos;
	if (r->recno != f->recno)
		return 0;
	f->art_off = (size_t)(r->art - f->base);
	return 1;
}

/* No damage to a segment keeps the queue from opening or the relay from
 * starting: a record damaged in the middle of the oldest segment (the
 * rest of it lost, counted), a segment whose header is damaged (set
 * aside as .bad) and junk after the newest one's last record (cut). The
 * relay then delivers every sound record, once, in order. (A sound
 * header of a newer format version is not damage: test_compat's
 * newer_queue_files_refused.) */
START_TEST(damaged_segments_do_not_stop_the_relay)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	struct fg_queue_segref a, b, c, last;
	struct fg_queue_cursor end;
	struct fg_queue_scan sc;
	struct find_rec fr;
	uint64_t next = 0;
	char path[256], bad[300];
	uint8_t *buf, flip;
	size_t len;

	/* everything queued while the downstream is away */
	rig_up(1, "");
	offer("<m%u@t>", 800);
	fg_queue_durable(q, &end);
	ck_assert_int_eq(fg_queue_segment_at(q, 0, &a), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, a.end, &b), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, b.end, &c), 0);
	ck_assert_int_eq(fg_queue_segment_at(q, end.pos - 1, &last), 0);
	ck_assert_uint_gt(last.segment, b.segment);
	rig_down();

	/* a: record 5's article altered */
	buf = segment_bytes(a.segment, &len);
	fr = (struct find_rec){ .recno = a.first_recno + 5, .base = buf };
	ck_assert_int_eq(fg_queue_seg_scan(buf, len, find_rec, &fr, &sc), 0);
	ck_assert_uint_gt(fr.art_off, 0);
	flip = buf[fr.art_off] ^ 0x20;
	segment_poke(a.segment, fr.art_off, &flip, 1);
	free(buf);
	/* b: its header */
	buf = segment_bytes(b.segment, &len);
	flip = buf[20] ^ 0x01;
	segment_poke(b.segment, 20, &flip, 1);
	free(buf);
	/* the newest: junk after its last record */
	buf = segment_bytes(last.segment, &len);
	segment_poke(last.segment, len, "garbage!", 8);
	free(buf);

	fg_config_free(cfg);
	cfg = NULL;
	server_start(&s);
	rig_up(s.srv.port, "");
	ck_assert_uint_eq(open_info.damaged, 1);
	ck_assert_uint_eq(open_info.set_aside, 1);
	ck_assert_uint_eq(open_info.torn_cut, 1);
	ck_assert_uint_eq(open_info.cut_bytes, 8);
	ck_assert_uint_eq(open_info.records, 5 + (800 - c.first_recno));
	fg_queue_segment_path(dir, b.segment, path, sizeof(path));
	snprintf(bad, sizeof(bad), "%s.bad", path);
	ck_assert_int_eq(access(bad, F_OK), 0);
	wait_delivered();
	/* a's first five, then c onwards: once each, in order */
	pthread_mutex_lock(&s.lock);
	ck_assert_uint_eq(s.nseen, 5 + (800 - c.first_recno));
	for (unsigned i = 0; i < s.nseen; i++) {
		char want[32];

		if (next == a.first_recno + 5)
			next = c.first_recno;
		snprintf(want, sizeof(want), "<m%llu@t>", (unsigned long long)next++);
		ck_assert_str_eq(s.seen[i], want);
	}
	pthread_mutex_unlock(&s.lock);
	rig_down();
	server_stop(&s);
}
END_TEST

/* ------------------------------------------------------------ routes */

/* Record i goes to: 0 a, 1 b, 2 both, 3 neither (accepted, no feed wants it). */
static void route_of(unsigned i, struct fg_feeds_set *r)
{
	*r = (struct fg_feeds_set){ 0 };
	if (i % 4 == 0 || i % 4 == 2)
		r->ident[r->n++] = fg_config_ident("a");
	if (i % 4 == 1 || i % 4 == 2)
		r->ident[r->n++] = fg_config_ident("b");
}

/* rig_up with this config (two ports), in place of the one it had. */
static void rig_up_text(const char *fmt, unsigned p1, unsigned p2)
{
	struct fg_config_errors errs;
	char text[256];

	snprintf(text, sizeof(text), fmt, p1, p2);
	fg_config_free(cfg);
	cfg = fg_config_load_text("t", text, strlen(text), &errs);
	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	rig_up(0, "");
}

static void offer_routed(const char *fmt, unsigned n)
{
	unsigned first = done_n, want = first + n;
	char id[64];

	for (unsigned i = 0; i < n; i++) {
		struct fg_iov seg = { (const uint8_t *)ART, (uint32_t)strlen(ART), NULL };
		struct fg_feeds_set r;
		void *h;

		snprintf(id, sizeof(id), fmt, i);
		while (fg_queue_sink_ops.begin(sink, id, strlen(id), 0, &h) != 0)
			fg_queue_sink_ops.poll(sink, fg_mono_ns(), on_done, NULL);
		ck_assert_int_eq(fg_queue_sink_ops.append(sink, h, &seg, false), 0);
		route_of(i, &r);
		fg_queue_sink_ops.route(sink, h, &r);
		ck_assert_int_eq(fg_queue_sink_ops.commit(sink, h, i), 0);
	}
	ck_assert_msg(fg_test_wait_until(sink_done, &want, 30000), "%u of %u articles made safe",
		      done_n - first, n);
}

static bool all_acked(void)
{
	struct fg_relay_ds_status st;
	struct fg_queue_cursor end;

	fg_queue_durable(q, &end);
	for (unsigned d = 0; d < 2; d++) {
		ck_assert_int_eq(fg_relay_status(relay, d, &st), 0);
		if (st.acked.pos != end.pos)
			return false;
	}
	return true;
}

/* Exactly the records routed to server `which` (0 a, 1 b), in order. */
static void assert_routed(struct server *s, unsigned which, unsigned n)
{
	unsigned k = 0;
	char want[64];

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < n; i++) {
		struct fg_feeds_set r;

		route_of(i, &r);
		if (!fg_feeds_has(&r, fg_config_ident(which ? "b" : "a")))
			continue;
		snprintf(want, sizeof(want), "<r%u@t>", i);
		ck_assert_msg(k < s->nseen && strcmp(s->seen[k], want) == 0, "%s: %s at %u",
			      which ? "b" : "a", want, k);
		k++;
	}
	ck_assert_uint_eq(s->nseen, k);
	pthread_mutex_unlock(&s->lock);
}

/* Each downstream gets the records whose route names its id, in queue
 * order, and passes over the rest; so does a restart, and a renamed
 * section that keeps its id. */
START_TEST(routes_pick_downstreams)
{
	static struct server sa = { .streaming = true, .drop_after = -1 };
	static struct server sb = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;

	server_start(&sa);
	server_start(&sb);
	rig_up_text("[downstream a]\naddress 127.0.0.1:%u\n[downstream b]\naddress 127.0.0.1:%u\n",
		    sa.srv.port, sb.srv.port);
	offer_routed("<r%u@t>", 400);
	wait_until(all_acked, "both downstreams to pass every record");
	assert_routed(&sa, 0, 400);
	assert_routed(&sb, 1, 400);
	ck_assert_int_eq(fg_relay_status(relay, 0, &st), 0);
	ck_assert_uint_eq(st.sent, 200);
	ck_assert_uint_eq(st.not_routed, 200);
	ck_assert_int_eq(fg_relay_status(relay, 1, &st), 0);
	ck_assert_uint_eq(st.accepted, 200);
	ck_assert_uint_eq(st.not_routed, 200);
	rig_down();

	/* reordered, "b" renamed (its id kept): nothing again, and new records
	 * still go where their routes say */
	rig_up_text("[downstream bee]\nid b\naddress 127.0.0.1:%u\n[downstream a]\n"
		    "address 127.0.0.1:%u\n", sb.srv.port, sa.srv.port);
	offer_routed("<s%u@t>", 8);
	wait_until(all_acked, "both downstreams to pass the new records");
	pthread_mutex_lock(&sa.lock);
	ck_assert_uint_eq(sa.nseen, 204);
	ck_assert_str_eq(sa.seen[200], "<s0@t>");
	ck_assert_str_eq(sa.seen[203], "<s6@t>");
	pthread_mutex_unlock(&sa.lock);
	pthread_mutex_lock(&sb.lock);
	ck_assert_uint_eq(sb.nseen, 204);
	ck_assert_str_eq(sb.seen[200], "<s1@t>");
	pthread_mutex_unlock(&sb.lock);
	rig_down();
	server_stop(&sa);
	server_stop(&sb);
}
END_TEST

/* A paused downstream falls behind past its backlog limit and is parked;
 * past its cap (backlog-full drop) its oldest is given up; the other is
 * fed all along and nothing is refused; resumed, it gets what is left,
 * in order, and is unparked. */
/* a has everything, and the writer saw it (a's lag 0 in its pass: read
 * first, so that b's state read after is of that pass or a later one);
 * b dropped, under its cap, and no drop is pending: none will come, b
 * being paused and nothing new queued. */
static bool a_done_b_dropped(void)
{
	struct fg_relay_ds_status sa_st, sb_st;
	struct fg_queue_cursor end;

	fg_queue_durable(q, &end);
	ck_assert_int_eq(fg_relay_status(relay, 0, &sa_st), 0);
	ck_assert_int_eq(fg_relay_status(relay, 1, &sb_st), 0);
	return sa_st.acked.pos == end.pos && sa_st.q.lag_records == 0 && sb_st.q.parked &&
	       sb_st.dropped > 0 && sb_st.q.backlog_bytes <= (256 << 10) &&
	       sb_st.q.drop_to.pos <= sb_st.acked.pos;
}

static bool b_caught_up(void)
{
	struct fg_relay_ds_status st;
	struct fg_queue_cursor end;

	fg_queue_durable(q, &end);
	ck_assert_int_eq(fg_relay_status(relay, 1, &st), 0);
	return st.acked.pos == end.pos && !st.q.parked;
}

START_TEST(paused_parked_dropped_resumed)
{
	static struct server sa = { .streaming = true, .drop_after = -1 };
	static struct server sb = { .streaming = true, .drop_after = -1 };
	struct fg_relay_ds_status st;
	uint64_t dropped;
	char want[32];

	server_start(&sa);
	server_start(&sb);
	rig_up_text("[downstream a]\naddress 127.0.0.1:%u\n[downstream b]\naddress 127.0.0.1:%u\n"
		    "backlog-bytes 64K\nbacklog-disk 256K\nbacklog-full drop\n", sa.srv.port, sb.srv.port);
	ck_assert_int_eq(fg_relay_find(relay, "b"), 1);
	ck_assert_int_eq(fg_relay_find(relay, "nope"), -ENOENT);
	ck_assert_int_eq(fg_relay_pause(relay, 1, true), 0);
	ck_assert_int_eq(fg_relay_pause(relay, 7, true), -ENOENT);
	offer("<p%u@t>", 3000);
	wait_until(a_done_b_dropped, "a fed to the end, b parked and past its cap");
	ck_assert(!fg_queue_refusing(q, NULL));
	ck_assert_int_eq(fg_relay_status(relay, 1, &st), 0);
	ck_assert(st.paused);
	ck_assert_uint_eq(st.sent, 0);
	ck_assert_uint_le(st.q.backlog_bytes, 256 << 10);
	/* the status table's QUEUE rows are the queue's view (dstatus.h) */
	ck_assert_uint_eq(st.parked, 1);
	ck_assert_uint_eq(st.backlog_bytes, st.q.backlog_bytes);
	ck_assert_uint_ge(st.parks, 1);
	ck_assert_uint_eq(st.connections, 1);
	ck_assert_int_eq(fg_relay_pause(relay, 1, false), 0);
	wait_until(b_caught_up, "b to catch up and be unparked");
	ck_assert_int_eq(fg_relay_status(relay, 1, &st), 0);
	dropped = st.dropped;
	ck_assert_uint_ge(st.drops, 1);
	ck_assert_uint_eq(st.accepted, 3000 - dropped);
	/* b: exactly what was not dropped, in order; a: everything */
	pthread_mutex_lock(&sb.lock);
	ck_assert_uint_eq(sb.nseen, 3000 - dropped);
	for (unsigned i = 0; i < sb.nseen; i++) {
		snprintf(want, sizeof(want), "<p%llu@t>", (unsigned long long)(dropped + i));
		ck_assert_str_eq(sb.seen[i], want);
	}
	pthread_mutex_unlock(&sb.lock);
	assert_once_in_order(&sa, "<p%u@t>", 3000);
	rig_down();
	server_stop(&sa);
	server_stop(&sb);
}
END_TEST

/* ------------------------------------------------------------ warm-up asks */

struct answers {
	unsigned n;
	int got[64];
};

static void on_answer(void *arg, uint64_t cookie, enum fg_relay_answer a)
{
	struct answers *x = arg;

	ck_assert_uint_lt(cookie, 64);
	x->got[cookie] = (int)a;
	x->n++;
}

struct answering {
	struct fg_relay_asker *a;
	struct answers *x;
	unsigned want;
};

static bool answered(void *arg)
{
	struct answering *w = arg;

	fg_relay_answers(w->a, on_answer, w->x);
	return w->x->n >= w->want;
}

static void wait_answers(struct fg_relay_asker *a, struct answers *x, unsigned want)
{
	struct answering w = { a, x, want };

	fg_test_wait_until(answered, &w, 1000);
	ck_assert_uint_eq(x->n, want);
}

/* rig_up, with an asker registered before the relay starts */
static struct fg_relay_asker *rig_up_asking(uint16_t port, const char *extra, unsigned max)
{
	if (cfg) {
		fg_config_free(cfg);
		cfg = NULL;
	}
	return rig_up_with(port, extra, max);
}

START_TEST(asks_answered_by_check)
{
	static struct server s = { .streaming = true, .drop_after = -1 };
	static struct answers x;
	struct fg_relay_asker *a;
	const char *ids[] = { "<new1@t>", "<have1@t>", "<later1@t>", "<have2@t>", "<new2@t>" };
	uint64_t until;

	server_start(&s);
	a = rig_up_asking(s.srv.port, "", 4);
	ck_assert_ptr_nonnull(a);
	/* the asking connection comes up; until then questions get UNKNOWN */
	until = fg_mono_ns() + WAIT_NS;
	do {
		memset(&x, 0, sizeof(x));
		ck_assert_int_eq(fg_relay_ask(a, "<probe@t>", 9, 0), 0);
		wait_answers(a, &x, 1);
	} while (x.got[0] == FG_RELAY_UNKNOWN && fg_mono_ns() < until);
	ck_assert_int_eq(x.got[0], FG_RELAY_WANTED);
	memset(&x, 0, sizeof(x));
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(fg_relay_ask(a, ids[i], strlen(ids[i]), i), 0);
	/* at most max_pending questions open */
	ck_assert_int_eq(fg_relay_ask(a, ids[4], strlen(ids[4]), 4), -EAGAIN);
	wait_answers(a, &x, 4);
	ck_assert_int_eq(fg_relay_ask(a, ids[4], strlen(ids[4]), 4), 0);
	wait_answers(a, &x, 5);
	ck_assert_int_eq(x.got[0], FG_RELAY_WANTED);
	ck_assert_int_eq(x.got[1], FG_RELAY_HAVE);
	ck_assert_int_eq(x.got[2], FG_RELAY_LATER);
	ck_assert_int_eq(x.got[3], FG_RELAY_HAVE);
	ck_assert_int_eq(x.got[4], FG_RELAY_WANTED);
	/* feeding goes on beside the asking */
	offer("<m%u@t>", 20);
	wait_delivered();
	rig_down();
	fg_relay_asker_destroy(a);
	server_stop(&s);
}
END_TEST

static struct server *mute;
static unsigned checks_want;

static bool mute_server_checked(void)
{
	return atomic_load(&mute->checks) >= checks_want;
}

START_TEST(asks_unknown_when_nobody_answers)
{
	static struct server s = { .streaming = true, .drop_after = -1, .mute_checks = true };
	static struct answers x;
	struct fg_relay_asker *a;
	uint64_t t0, until;
	unsigned checks;

	/* nobody listening: UNKNOWN at once, not by the timeout: with a
	 * timeout longer than wait_answers waits, an answer at all is one
	 * that did not wait for it */
	ask_timeout_ns = 2 * WAIT_NS;
	a = rig_up_asking(1, "", 16);
	ask_timeout_ns = ASK_TIMEOUT_NS;
	memset(&x, 0, sizeof(x));
	t0 = fg_mono_ns();
	ck_assert_int_eq(fg_relay_ask(a, "<a@t>", 5, 7), 0);
	wait_answers(a, &x, 1);
	ck_assert_int_eq(x.got[7], FG_RELAY_UNKNOWN);
	ck_assert_uint_lt(fg_mono_ns() - t0, 2 * WAIT_NS);
	rig_down();
	fg_relay_asker_destroy(a);
	fg_config_free(cfg);
	cfg = NULL;
	/* a server that never answers a CHECK: UNKNOWN after the ask timeout.
	 * The asking connection is up once a question reaches the server
	 * (before that, a question is answered UNKNOWN at once, unsent) */
	server_start(&s);
	a = rig_up_asking(s.srv.port, "", 16);
	until = fg_mono_ns() + WAIT_NS;
	do {
		memset(&x, 0, sizeof(x));
		ck_assert_int_eq(fg_relay_ask(a, "<probe@t>", 9, 0), 0);
		wait_answers(a, &x, 1);
		ck_assert_int_eq(x.got[0], FG_RELAY_UNKNOWN);
	} while (atomic_load(&s.checks) == 0 && fg_mono_ns() < until);
	checks = atomic_load(&s.checks);
	ck_assert_uint_ge(checks, 1);
	memset(&x, 0, sizeof(x));
	t0 = fg_mono_ns();
	ck_assert_int_eq(fg_relay_ask(a, "<b@t>", 5, 3), 0);
	wait_answers(a, &x, 1);
	ck_assert_int_eq(x.got[3], FG_RELAY_UNKNOWN);
	ck_assert_uint_ge(fg_mono_ns() - t0, ASK_TIMEOUT_NS - 50000000ull);
	/* it was asked: the server reads the CHECK (in its own time) */
	mute = &s;
	checks_want = checks + 1;
	wait_until(mute_server_checked, "the server to read the CHECK");
	rig_down();
	fg_relay_asker_destroy(a);
	server_stop(&s);
}
END_TEST

START_TEST(no_asker_without_a_streaming_downstream)
{
	struct fg_relay_params rp = { 0 };
	struct fg_queue_params qp = { .commit_ns = 0 };
	int err;

	load_cfg(1, "mode ihave\n");
	qp.dir = dir;
	q = fg_queue_open(&qp, NULL, &err);
	rp.cfg = cfg;
	rp.q = q;
	relay = fg_relay_create(&rp, &err);
	ck_assert_ptr_nonnull(relay);
	ck_assert_ptr_null(fg_relay_asker_create(relay, 16, NULL, NULL));
	fg_relay_destroy(relay);
	fg_queue_close(q);
}
END_TEST

static Suite *relay_suite(void)
{
	Suite *s = suite_create("relay");
	TCase *tc = tcase_create("relay");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, streaming_exactly_once_byte_for_byte);
	tcase_add_test(tc, answers_refused_deferred);
	tcase_add_test(tc, check_first);
	tcase_add_test(tc, ihave_when_not_streaming);
	tcase_add_test(tc, dropped_connection_resends_only_in_flight);
	tcase_add_test(tc, server_400_reconnects);
	tcase_add_test(tc, restart_resumes_from_cursor);
	tcase_add_test(tc, window_bound_from_durable_cursor);
	tcase_add_test(tc, a_lost_segment_is_skipped);
	tcase_add_test(tc, damaged_segments_do_not_stop_the_relay);
	tcase_add_test(tc, routes_pick_downstreams);
	tcase_add_test(tc, paused_parked_dropped_resumed);
	tcase_add_test(tc, asks_answered_by_check);
	tcase_add_test(tc, asks_unknown_when_nobody_answers);
	tcase_add_test(tc, no_asker_without_a_streaming_downstream);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(relay_suite)
