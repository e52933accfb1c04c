/* SPDX-License-Identifier: MIT */
/*
 * test_ack_mt.c — end-to-end acknowledgement (acksink.h, relay.h, rack.c)
 * against a scripted downstream on loopback: the relay's thread, the
 * queue's writer and a server thread per connection (also run under TSan).
 *
 * Each cause of the state machine, one article at a time, by the
 * Message-ID's prefix (the server misbehaves on an ID's first TAKETHIS
 * only, so the spilled copy the queue relays later is taken):
 *   ok-     239 at once: done 0, nothing written to the queue
 *   defer-  431: spilled (refused), done 0 after the sync, delivered later
 *   err-    501: spilled (refused), likewise
 *   bye-    400 and close: spilled (refused)
 *   eof-    close without an answer: spilled (eof)
 *   mute-   the connection goes silent: spilled at ack-timeout (timeout),
 *           and the downstream is no longer taken straight until it answers
 *   stall-  the server stops reading: a 32 MiB article is still being
 *           written at ack-timeout, the connection is closed (no octet
 *           read after the result) and the article spilled (timeout); an
 *           article behind it is not queued on that connection (4 MiB
 *           unwritten) and spills without being part of that close
 *   rejkeep-   439, then 438 to CHECK: FG_SINK_REFUSED (remember)
 *   rejforget- 439, then 238 to CHECK: FG_SINK_REFUSED_FORGET
 * an article whose route names an IHAVE-only downstream takes the
 * queue's path at once; and with a second streaming downstream that does
 * not acknowledge (its server `quiet`: silent on IDs holding "quiet"),
 * the acknowledging one's 239 still waits for it, then spills the article
 * for that one only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fgtest.h"
#include "floodgate/acksink.h"
#include "floodgate/relay.h"
#include "nntpsrv.h"

/* ------------------------------------------------------------ the server */

#define MAX_IDS 256
#define ACK_TIMEOUT_MS 300
/* How long a wait below may take before the test fails: a bound for a
 * machine under load (TSan, a busy neighbour), never a figure tested. */
#define WAIT_MS 30000

#define BIG_LEN (72u * 466034u)
static char *big;			/* a 32 MiB article, lines of 72 octets: more
					 * than loopback's socket buffers hold */

static const char *const ART =
	"Path: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.test\r\nSubject: s\r\n"
	"Date: Mon, 02 Mar 2026 12:00:00 +0000\r\n\r\nbody\r\n..a dot-stuffed line\r\n";

struct server {
	struct fg_test_srv srv;		/* first: serve() gets it */
	pthread_mutex_t lock;
	char id[MAX_IDS][300];		/* TAKETHIS received, per ID */
	unsigned times[MAX_IDS];
	unsigned accepted[MAX_IDS];	/* 239 given */
	unsigned nid;
	_Atomic unsigned checks;
	_Atomic bool bytes_bad;
	bool quiet;			/* silent at the first TAKETHIS of a "quiet" ID */
};

/* The article up to its terminator, compared with ART byte for byte (a
 * big one: its length). */
static bool read_article(struct server *s, struct fg_test_rd *r, bool is_big)
{
	char got[4096];
	size_t gl;
	long total = fg_test_srv_article(&s->srv, r, got, sizeof(got), &gl);

	if (total < 0)
		return false;
	if (is_big ? total != (long)BIG_LEN : gl != strlen(ART) || memcmp(got, ART, gl) != 0)
		atomic_store(&s->bytes_bad, true);
	return true;
}

/* An ID's row (added when new); under the lock. */
static unsigned row(struct server *s, const char *id)
{
	unsigned i;

	for (i = 0; i < s->nid && strcmp(s->id[i], id) != 0; i++)
		;
	if (i == s->nid && s->nid < MAX_IDS)
		snprintf(s->id[s->nid++], sizeof(s->id[0]), "%s", id);
	return i;
}

/* How many times this ID came with TAKETHIS, this one included. */
static unsigned note(struct server *s, const char *id)
{
	unsigned i, n;

	pthread_mutex_lock(&s->lock);
	i = row(s, id);
	n = i < MAX_IDS ? ++s->times[i] : 0;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* 239, counted once said. */
static void accept_id(struct server *s, int fd, const char *id)
{
	unsigned i;

	pthread_mutex_lock(&s->lock);
	i = row(s, id);
	if (i < MAX_IDS)
		s->accepted[i]++;
	pthread_mutex_unlock(&s->lock);
	fg_test_say(fd, "239 %s\r\n", id);
}

static unsigned times_of(struct server *s, const char *id, bool accepted)
{
	unsigned n = 0;

	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->nid; i++)
		if (strcmp(s->id[i], id) == 0)
			n = accepted ? s->accepted[i] : s->times[i];
	pthread_mutex_unlock(&s->lock);
	return n;
}

static bool first(const char *id, const char *prefix, unsigned n)
{
	return n == 1 && strncmp(id + 1, prefix, strlen(prefix)) == 0;
}

/* One connection. */
static void serve(struct fg_test_srv *srv, int fd)
{
	struct server *s = (struct server *)srv;
	struct fg_test_rd *r = calloc(1, sizeof(*r));
	char line[1024], id[300];
	bool silent = false;

	r->fd = fd;
	fg_test_say(fd, "200 test server ready%s\r\n", "");
	while (fg_test_srv_line(srv, r, line, sizeof(line)) > 0) {
		if (silent)
			continue;
		if (sscanf(line, "CHECK %299s", id) == 1) {
			atomic_fetch_add(&s->checks, 1);
			fg_test_say(fd, strstr(id, "rejkeep") ? "438 %s\r\n" : "238 %s\r\n", id);
		} else if (sscanf(line, "TAKETHIS %299s", id) == 1) {
			unsigned n;

			if (strncmp(id, "<stall-", 7) == 0 && times_of(s, id, false) == 0) {
				/* read nothing more, as a stopped innd */
				note(s, id);
				while (!atomic_load(&srv->stop))
					usleep(10000);
				break;
			}
			if (!read_article(s, r, strstr(id, "big") != NULL))
				break;
			n = note(s, id);
			if (first(id, "defer-", n)) {
				fg_test_say(fd, "431 %s\r\n", id);
			} else if (first(id, "err-", n)) {
				fg_test_say(fd, "501 %s\r\n", id);
			} else if (first(id, "bye-", n)) {
				fg_test_say(fd, "400 going away%s\r\n", "");
				break;
			} else if (first(id, "eof-", n)) {
				break;
			} else if (first(id, "mute-", n) || (s->quiet && n == 1 && strstr(id, "quiet"))) {
				silent = true;
			} else if (strstr(id, "rej")) {
				fg_test_say(fd, "439 %s\r\n", id);
			} else {
				accept_id(s, fd, id);
			}
		} else if (!fg_test_srv_common(fd, line, true)) {
			break;
		}
	}
	free(r);
}

static void server_start(struct server *s, bool quiet)
{
	memset(s, 0, sizeof(*s));
	s->quiet = quiet;
	pthread_mutex_init(&s->lock, NULL);
	s->srv.serve = serve;
	fg_test_srv_start(&s->srv);
}

static void server_stop(struct server *s)
{
	fg_test_srv_stop(&s->srv);
	pthread_mutex_destroy(&s->lock);
}

/* ------------------------------------------------------------ the rig */

static char dir[64];
static struct fg_config *cfg;
static struct fg_queue *q;
static struct fg_relay *relay;
static struct fg_relay_acker *acker;
static struct fg_ack_sink *sink;
static struct fg_stats qstats, rstats, estats;
static struct server srv, srv2;

enum other { OTHER_NONE, OTHER_IHAVE, OTHER_STREAM };

#define MAX_DONE 64
static int status_of[MAX_DONE];
static uint64_t done_at[MAX_DONE];
static unsigned done_n;

static void on_done(void *ctx, uint64_t cookie, int status)
{
	(void)ctx;
	ck_assert_uint_lt(cookie, MAX_DONE);
	status_of[cookie] = status;
	done_at[cookie] = fg_mono_ns();
	done_n++;
}

/* `d` acknowledges; `other` (when asked for: IHAVE-only and down, or a
 * second server that streams, srv2, `quiet`) does not. */
/* Octets the relay may hold for the sink (rig_up); tests may lower it. */
static uint64_t rig_max_held = 64ull << 20;

static void rig_up(enum other two)
{
	char text[512], other[128] = "";
	struct fg_config_errors errs;
	struct fg_queue_params qp = { .commit_ns = 1000000, .segment_bytes = FG_QUEUE_SEGMENT_MIN,
				      .stats = &qstats };
	struct fg_queue_sink_params sp = { .max_articles = 64 };
	struct fg_relay_params rp = { .reconnect_min_ns = 20000000, .reconnect_max_ns = 200000000,
				      .retry_min_ns = 20000000, .retry_max_ns = 100000000,
				      .stats = &rstats };
	struct fg_queue_sink *qs;
	int err;

	strcpy(dir, "/tmp/fgack-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(&qstats, 0, sizeof(qstats));
	memset(&rstats, 0, sizeof(rstats));
	memset(&estats, 0, sizeof(estats));
	server_start(&srv, false);
	if (two == OTHER_STREAM) {
		server_start(&srv2, true);
		snprintf(other, sizeof(other), "[downstream other]\naddress 127.0.0.1:%u\n",
			 srv2.srv.port);
	} else if (two == OTHER_IHAVE) {
		snprintf(other, sizeof(other), "[downstream other]\naddress 127.0.0.2:9\nmode ihave\n");
	}
	snprintf(text, sizeof(text),
		 "[persistence]\nack-timeout %ums\n"
		 "[downstream d]\naddress 127.0.0.1:%u\nacknowledges on\nwindow 8\n%s", ACK_TIMEOUT_MS,
		 srv.srv.port, other);
	cfg = fg_config_load_text("t", text, strlen(text), &errs);
	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	qp.dir = dir;
	q = fg_queue_open(&qp, NULL, &err);
	ck_assert_ptr_nonnull(q);
	rp.cfg = cfg;
	rp.q = q;
	relay = fg_relay_create(&rp, &err);
	ck_assert_msg(relay != NULL, "relay: %s", strerror(-err));
	fg_queue_set_notify(q, fg_relay_notify, relay);
	qs = fg_queue_sink_create(q, &sp);
	ck_assert_ptr_nonnull(qs);
	acker = fg_relay_acker_create(relay, 64, NULL, NULL);
	ck_assert_ptr_nonnull(acker);
	sink = fg_ack_sink_create(qs, acker, &estats, (uint64_t)ACK_TIMEOUT_MS * 1000000,
				  rig_max_held);
	ck_assert_ptr_nonnull(sink);
	ck_assert_int_eq(fg_queue_start(q), 0);
	ck_assert_int_eq(fg_relay_start(relay), 0);
	memset(status_of, 0x7f, sizeof(status_of));
	done_n = 0;
}

static void rig_down(void)
{
	char cmd[128];

	fg_relay_stop(relay);
	fg_queue_stop(q);
	fg_ack_sink_ops.destroy(sink);
	fg_relay_destroy(relay);
	fg_queue_close(q);
	server_stop(&srv);
	if (srv2.srv.serve)
		server_stop(&srv2);
	memset(&srv2, 0, sizeof(srv2));
	fg_config_free(cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static bool poll_done(void *want)
{
	fg_ack_sink_ops.poll(sink, fg_mono_ns(), on_done, NULL);
	return done_n >= *(unsigned *)want;
}

static bool can_ack(void *route)
{
	return fg_relay_ack_can(acker, route);
}

/* The #ack connection is up and keeping up (articles routed so go
 * straight; NULL: to every downstream). */
static void wait_straight_for(const struct fg_feeds_set *route)
{
	ck_assert_msg(fg_test_wait_until(can_ack, (void *)(uintptr_t)route, WAIT_MS),
		      "the acknowledging downstream never became ready");
}

static void wait_straight(void)
{
	wait_straight_for(NULL);
}

/* One article (`text`) through the sink (route: `route`, or every
 * downstream), committed; its done() comes from poll_done. */
static void commit_text(const char *id, unsigned cookie, const struct fg_feeds_set *route,
			const char *text, size_t len)
{
	struct fg_iov seg = { (const uint8_t *)text, (uint32_t)len, NULL };
	void *h;

	ck_assert_int_eq(fg_ack_sink_ops.begin(sink, id, strlen(id), 0, &h), 0);
	/* held, as the engine's receive buffers are: sent in place */
	ck_assert_int_eq(fg_ack_sink_ops.append(sink, h, &seg, true), FG_SINK_HOLD);
	if (route)
		fg_ack_sink_ops.route(sink, h, route);
	ck_assert_int_eq(fg_ack_sink_ops.commit(sink, h, cookie), 0);
}

/* The same, waiting for its done(); returns its status. */
static int offer_text(const char *id, unsigned cookie, const struct fg_feeds_set *route,
		      const char *text, size_t len)
{
	unsigned want = done_n + 1;

	commit_text(id, cookie, route, text, len);
	ck_assert_msg(fg_test_wait_until(poll_done, &want, WAIT_MS), "no done() for %s", id);
	return status_of[cookie];
}

static int offer_one(const char *id, unsigned cookie, const struct fg_feeds_set *route)
{
	return offer_text(id, cookie, route, ART, strlen(ART));
}

struct seen_arg {
	const char *id;
	unsigned n;
};

static bool accepted_n(void *arg)
{
	struct seen_arg *a = arg;

	return times_of(&srv, a->id, true) >= a->n;
}

static bool accepted_n2(void *arg)
{
	struct seen_arg *a = arg;

	return times_of(&srv2, a->id, true) >= a->n;
}

/* The queue's relay delivered the spilled copy. */
static void wait_delivered(const char *id)
{
	struct seen_arg a = { id, 1 };

	ck_assert_msg(fg_test_wait_until(accepted_n, &a, WAIT_MS), "%s never accepted downstream",
		      id);
}

/* ------------------------------------------------------------ tests */

START_TEST(accepted_end_to_end_writes_nothing)
{
	char id[64];

	rig_up(OTHER_NONE);
	wait_straight();
	for (unsigned i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "<ok-%u@t>", i);
		ck_assert_int_eq(offer_one(id, i, NULL), 0);
		ck_assert_uint_eq(times_of(&srv, id, true), 1);
	}
	rig_down();
	ck_assert(!atomic_load(&srv.bytes_bad));
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 20);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 0);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_BYTES], 0);
	ck_assert_uint_eq(estats.ctr[FG_CTR_RELAY_ACK_QUEUED], 0);
}
END_TEST

/* A spill: done 0 only after its record is on disk, then the queue's
 * relay delivers it. */
static void spill_case(const char *id, enum fg_counter cause)
{
	rig_up(OTHER_NONE);
	wait_straight();
	ck_assert_int_eq(offer_one(id, 0, NULL), 0);
	/* the record was written before the done() that answered 239 */
	wait_delivered(id);
	ck_assert_uint_eq(times_of(&srv, id, false), 2);
	rig_down();
	ck_assert(!atomic_load(&srv.bytes_bad));
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 1);
	ck_assert_uint_ge(qstats.ctr[FG_CTR_QUEUE_COMMITS], 1);
	ck_assert_uint_eq(rstats.ctr[cause], 1);
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 0);
}

START_TEST(spill_on_431)
{
	spill_case("<defer-1@t>", FG_CTR_RELAY_ACK_SPILL_REFUSED);
}
END_TEST

START_TEST(spill_on_5xx)
{
	spill_case("<err-1@t>", FG_CTR_RELAY_ACK_SPILL_REFUSED);
}
END_TEST

START_TEST(spill_on_400)
{
	spill_case("<bye-1@t>", FG_CTR_RELAY_ACK_SPILL_REFUSED);
}
END_TEST

START_TEST(spill_on_eof)
{
	spill_case("<eof-1@t>", FG_CTR_RELAY_ACK_SPILL_EOF);
}
END_TEST

/* Silent downstream: the 239 comes after ack-timeout (plus the sync), not
 * before; the next article takes the queue's path at once. */
START_TEST(spill_on_timeout_then_queue_path)
{
	uint64_t t0, waited;

	rig_up(OTHER_NONE);
	wait_straight();
	t0 = fg_mono_ns();
	ck_assert_int_eq(offer_one("<mute-1@t>", 0, NULL), 0);
	waited = done_at[0] - t0;
	ck_assert_uint_ge(waited, (uint64_t)ACK_TIMEOUT_MS * 1000000);
	/* overdue now: straight to the queue, without waiting */
	ck_assert(!fg_relay_ack_can(acker, NULL));
	ck_assert_int_eq(offer_one("<ok-after@t>", 1, NULL), 0);
	wait_delivered("<mute-1@t>");
	wait_delivered("<ok-after@t>");
	rig_down();
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
	ck_assert_uint_eq(estats.ctr[FG_CTR_RELAY_ACK_QUEUED], 1);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 2);
}
END_TEST

/* The relay's share of held octets: an article that would pass it spills
 * to the queue at commit (relay_ack_spill_cap, not queued: the downstream
 * was straight), done 0 after the sync; the octets come back with the
 * result of the one the relay held. */
START_TEST(spill_at_the_held_cap)
{
	unsigned want = 2;

	rig_max_held = strlen(ART);
	rig_up(OTHER_NONE);
	wait_straight();
	commit_text("<mute-cap@t>", 0, NULL, ART, strlen(ART));
	ck_assert_uint_eq(fg_ack_sink_relay_held(sink), strlen(ART));
	commit_text("<over-cap@t>", 1, NULL, ART, strlen(ART));
	ck_assert_uint_eq(fg_ack_sink_relay_held(sink), strlen(ART));
	ck_assert_uint_eq(estats.ctr[FG_CTR_RELAY_ACK_SPILL_CAP], 1);
	ck_assert_msg(fg_test_wait_until(poll_done, &want, 3000), "no done() for both");
	ck_assert_int_eq(status_of[0], 0);
	ck_assert_int_eq(status_of[1], 0);
	ck_assert_uint_eq(fg_ack_sink_relay_held(sink), 0);
	wait_delivered("<over-cap@t>");
	rig_down();
	rig_max_held = 64ull << 20;
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
	ck_assert_uint_eq(estats.ctr[FG_CTR_RELAY_ACK_QUEUED], 0);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 2);
}
END_TEST

/* The server stops reading with the article half written: at the deadline
 * the connection is closed before the result (the octets are the engine's
 * again after it), the article spilled, then delivered by the queue. */
START_TEST(spill_half_written_closes_the_connection)
{
	uint64_t t0;

	rig_up(OTHER_NONE);
	wait_straight();
	t0 = fg_mono_ns();
	ck_assert_int_eq(offer_text("<stall-big@t>", 0, NULL, big, BIG_LEN), 0);
	ck_assert_uint_ge(done_at[0] - t0, (uint64_t)ACK_TIMEOUT_MS * 1000000);
	wait_delivered("<stall-big@t>");
	rig_down();
	ck_assert(!atomic_load(&srv.bytes_bad));
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
	ck_assert_uint_ge(rstats.ctr[FG_CTR_RELAY_CONNECTION_FAILURES], 1);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 1);
}
END_TEST

struct stalled {
	uint64_t not_before;
};

/* The server stalls on the first article, and half an ack-timeout has
 * passed (so that the second one's deadline is well after the first's). */
static bool stalled_a_while(void *arg)
{
	struct stalled *st = arg;

	return times_of(&srv, "<stall-big2@t>", false) == 1 && fg_mono_ns() >= st->not_before;
}

/* Behind a stalled 32 MiB article an article is not added to the
 * connection (ACK_UNSENT_MAX): when the first one's deadline closes the
 * connection, the second (committed half an ack-timeout later) is not
 * among what that close spills (cause timeout, as without the cap): it
 * spills unsent (no connection up: eof) or, reconnected by then, is
 * accepted. */
START_TEST(unsent_article_is_not_caught_in_the_close)
{
	struct stalled st;
	unsigned want = 2;

	rig_up(OTHER_NONE);
	wait_straight();
	st.not_before = fg_mono_ns() + (uint64_t)ACK_TIMEOUT_MS * 1000000 / 2;
	commit_text("<stall-big2@t>", 0, NULL, big, BIG_LEN);
	ck_assert_msg(fg_test_wait_until(stalled_a_while, &st, WAIT_MS), "the server never stalled");
	commit_text("<ok-behind@t>", 1, NULL, ART, strlen(ART));
	ck_assert_msg(fg_test_wait_until(poll_done, &want, WAIT_MS), "no done() for both");
	ck_assert_int_eq(status_of[0], 0);
	ck_assert_int_eq(status_of[1], 0);
	wait_delivered("<stall-big2@t>");
	wait_delivered("<ok-behind@t>");
	rig_down();
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_EOF] +
			  rstats.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 1);
}
END_TEST

START_TEST(refused_439_confirmed_or_not)
{
	rig_up(OTHER_NONE);
	wait_straight();
	ck_assert_int_eq(offer_one("<rejkeep-1@t>", 0, NULL), FG_SINK_REFUSED);
	ck_assert_int_eq(offer_one("<rejforget-1@t>", 1, NULL), FG_SINK_REFUSED_FORGET);
	ck_assert_uint_eq(atomic_load(&srv.checks), 2);
	rig_down();
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_REFUSED], 2);
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_REMEMBERED], 1);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 0);
}
END_TEST

/* A route with an IHAVE-only downstream: the queue's path, at once. */
START_TEST(ihave_downstream_takes_the_queue_path)
{
	struct fg_feeds_set both = { .n = 2 }, only_d = { .n = 1 };

	rig_up(OTHER_IHAVE);
	both.ident[0] = only_d.ident[0] = cfg->downstream[0].ident;
	both.ident[1] = cfg->downstream[1].ident;
	wait_straight_for(&only_d);
	ck_assert(!fg_relay_ack_can(acker, &both));
	ck_assert_int_eq(offer_one("<ok-both@t>", 0, &both), 0);
	ck_assert_int_eq(offer_one("<ok-d@t>", 1, &only_d), 0);
	rig_down();
	ck_assert_uint_eq(estats.ctr[FG_CTR_RELAY_ACK_QUEUED], 1);
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 1);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 1);
}
END_TEST

/* Two streaming downstreams, one acknowledging: both answer, no disk; the
 * other silent: 239 after ack-timeout, spilled for it alone. */
START_TEST(other_downstream_silent_spills_for_it_only)
{
	struct seen_arg once = { "<quiet-1@t>", 1 };

	rig_up(OTHER_STREAM);
	wait_straight();
	ck_assert_int_eq(offer_one("<ok-both@t>", 0, NULL), 0);
	ck_assert_uint_eq(times_of(&srv2, "<ok-both@t>", true), 1);
	ck_assert_int_eq(offer_one("<quiet-1@t>", 1, NULL), 0);
	ck_assert_uint_eq(times_of(&srv, "<quiet-1@t>", true), 1);
	/* the queue's copy goes to the silent one only */
	ck_assert_msg(fg_test_wait_until(accepted_n2, &once, WAIT_MS), "never reached the other");
	ck_assert_uint_eq(times_of(&srv, "<quiet-1@t>", false), 1);
	rig_down();
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_ACCEPTED], 1);
	ck_assert_uint_eq(rstats.ctr[FG_CTR_RELAY_ACK_SPILL_TIMEOUT], 1);
	ck_assert_uint_eq(qstats.ctr[FG_CTR_QUEUE_RECORDS], 1);
}
END_TEST

static Suite *ack_suite(void)
{
	Suite *s = suite_create("ack");
	TCase *tc = tcase_create("ack");

	big = malloc(BIG_LEN);
	for (size_t i = 0; i < BIG_LEN; i += 72) {
		memset(big + i, 'a' + (char)(i / 72 % 26), 70);
		memcpy(big + i + 70, "\r\n", 2);
	}

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, accepted_end_to_end_writes_nothing);
	tcase_add_test(tc, spill_on_431);
	tcase_add_test(tc, spill_on_5xx);
	tcase_add_test(tc, spill_on_400);
	tcase_add_test(tc, spill_on_eof);
	tcase_add_test(tc, spill_on_timeout_then_queue_path);
	tcase_add_test(tc, spill_at_the_held_cap);
	tcase_add_test(tc, spill_half_written_closes_the_connection);
	tcase_add_test(tc, unsent_article_is_not_caught_in_the_close);
	tcase_add_test(tc, refused_439_confirmed_or_not);
	tcase_add_test(tc, ihave_downstream_takes_the_queue_path);
	tcase_add_test(tc, other_downstream_silent_spills_for_it_only);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(ack_suite)
