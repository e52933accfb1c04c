/* SPDX-License-Identifier: MIT */
/*
 * test_portack.c — end-to-end acknowledgement over the worker's own TCP
 * (portack.h): two net + TCP stacks on memory ports wired back to back,
 * floodgate's (the acker's, 198.18.0.1) and a scripted NNTP server's
 * (198.18.0.2:119), on a clock the test drives. The server answers each
 * TAKETHIS by the ID's local part: "ok" 239, "refuse" 439 (its CHECK
 * then 438 or 238 as `check_code`), "defer" 431, "err" 503, "bye" 400,
 * "quiet" nothing, "eof" closes the connection at the command; with
 * `stopped` it reads nothing (its window closes, as a SIGSTOPped innd's).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/memwire.h"
#include "fgtest.h"
#include "floodgate/portack.h"

#define MS 1000000ull
#define TIMEOUT_NS (250 * MS)
struct sconn {
	struct fg_tcp_conn *tc;
	char line[1024];
	size_t len;
	int body;			/* reading an article */
	char id[256];
	size_t art;			/* its octets so far, the terminator excluded */
};

static struct mw_side A, B;
static uint64_t now;
static struct fg_config *cfg;
static struct fg_portack *pa;
static struct fg_relay_acker *ak;
static struct sconn sc[16];
static unsigned nsc, greet = 200, mode_code = 203, check_code = 438, takethis_seen;
static int stopped;
static char last_body[1 << 20];
static size_t last_len;

struct got {
	unsigned n;
	struct fg_relay_ack_result r[64];
};
static struct got got;

/* ---------------------------------------------------------------- wire */

/* Frames, timers and the acker until nothing moves. */
static void pump(void)
{
	for (unsigned rounds = 0; rounds < 10000; rounds++) {
		bool moved;

		fg_portack_set_time(pa, now);
		moved = mw_deliver(&A, now) | mw_deliver(&B, now);
		fg_net_poll(A.net, now);
		fg_net_poll(B.net, now);
		fg_portack_poll(pa, now);
		if (!moved && !A.qn && !B.qn)
			return;
	}
	ck_abort_msg("the wire never settled");
}

/* Advance the clock by `ms`, a millisecond at a time. */
static void run_ms(unsigned ms)
{
	for (unsigned i = 0; i < ms; i++) {
		now += MS;
		pump();
	}
}

/* ---------------------------------------------------------------- server */

static void ssend(struct sconn *c, const char *text)
{
	ck_assert_int_eq(fg_tcp_send(c->tc, text, (uint32_t)strlen(text)), (int)strlen(text));
}

static void *s_accept(void *app, struct fg_tcp_conn *tc, const struct fg_endpoint *peer,
		      const struct fg_endpoint *local)
{
	struct sconn *c = &sc[nsc++ % 16];
	char g[32];

	(void)app, (void)peer, (void)local;
	memset(c, 0, sizeof(*c));
	c->tc = tc;
	snprintf(g, sizeof(g), "%u test server\r\n", greet);
	ssend(c, g);
	return c;
}

static void s_answer(struct sconn *c)
{
	char a[300];
	int code = strstr(c->id, "<ok") ? 239 : strstr(c->id, "<refuse") ? 439 :
		   strstr(c->id, "<defer") ? 431 : strstr(c->id, "<err") ? 503 :
		   strstr(c->id, "<bye") ? 400 : 0;

	if (!code)
		return;
	if (code == 400)
		snprintf(a, sizeof(a), "400 going away\r\n");
	else
		snprintf(a, sizeof(a), "%d %s\r\n", code, c->id);
	ssend(c, a);
}

/* One line; false: the connection was closed. */
static bool s_line(struct sconn *c)
{
	char a[300];

	if (c->body) {
		if (strcmp(c->line, ".") == 0) {
			c->body = 0;
			s_answer(c);
			return true;
		}
		memcpy(last_body + c->art, c->line, c->len);
		memcpy(last_body + c->art + c->len, "\r\n", 2);
		c->art += c->len + 2;
		last_len = c->art;
		return true;
	}
	if (strcmp(c->line, "MODE STREAM") == 0) {
		snprintf(a, sizeof(a), "%u ok\r\n", mode_code);
		ssend(c, a);
	} else if (strncmp(c->line, "TAKETHIS ", 9) == 0) {
		snprintf(c->id, sizeof(c->id), "%s", c->line + 9);
		takethis_seen++;
		if (strstr(c->id, "<eof")) {
			fg_tcp_abort(c->tc);
			c->tc = NULL;
			return false;
		}
		c->body = 1;
		c->art = 0;
	} else if (strncmp(c->line, "CHECK ", 6) == 0) {
		snprintf(a, sizeof(a), "%u %s\r\n", check_code, c->line + 6);
		ssend(c, a);
	}
	return true;
}

static uint32_t s_data(void *ctx, struct fg_tcp_conn *tc, const struct fg_iov *iov, unsigned n)
{
	struct sconn *c = ctx;
	uint32_t took = 0;

	(void)tc;
	if (stopped)
		return 0;
	for (unsigned k = 0; k < n; k++)
		for (uint32_t j = 0; j < iov[k].len; j++) {
			char ch = (char)iov[k].base[j];

			took++;
			if (ch != '\n') {
				ck_assert_uint_lt(c->len, sizeof(c->line) - 1);
				c->line[c->len++] = ch;
				continue;
			}
			if (c->len && c->line[c->len - 1] == '\r')
				c->len--;
			c->line[c->len] = '\0';
			if (!s_line(c))
				return took;
			c->len = 0;
		}
	return took;
}

static void s_close(void *ctx, struct fg_tcp_conn *tc, enum fg_tcp_close_reason why)
{
	(void)tc, (void)why;
	((struct sconn *)ctx)->tc = NULL;
}

static const struct fg_tcp_app_ops server_ops = {
	.on_accept = s_accept, .on_data = s_data, .on_close = s_close,
};

/* ---------------------------------------------------------------- set-up */

static char article[800 << 10];

/* The article: lines of text, CRLF, ending in CRLF (dot-stuffed already). */
static void make_article(void)
{
	for (size_t i = 0; i < sizeof(article); i++)
		article[i] = (i % 100 == 98) ? '\r' : (i % 100 == 99) ? '\n' : (char)('a' + i % 26);
}

static void setup_with(const char *extra)
{
	struct fg_config_errors errs;
	struct fg_portack_params pp = { 0 };
	struct fg_endpoint local = { .family = AF_INET };
	char text[1024];

	now = 1000 * MS;
	nsc = 0;
	takethis_seen = 0;
	stopped = 0;
	got.n = 0;
	snprintf(text, sizeof(text),
		 "[dataplane]\naddress 198.18.0.1/24\n"
		 "[downstream d]\naddress 198.18.0.2:119\nacknowledges on\nwindow 4\n"
		 "connections 2\n%s", extra);
	cfg = fg_config_load_text("t", text, strlen(text), &errs);
	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	ck_assert_int_eq(mw_side_up(&A, &B, "198.18.0.1", 1, &fg_portack_tcp_ops, 8192), 0);
	ck_assert_int_eq(mw_side_up(&B, &A, "198.18.0.2", 2, &server_ops, 8192), 0);
	pp.cfg = cfg;
	pp.stats = &A.st;
	pp.max_pending = 64;
	pp.reconnect_min_ns = 100 * MS;
	pp.reconnect_max_ns = 400 * MS;
	pa = fg_portack_create(&pp);
	ck_assert_ptr_nonnull(pa);
	inet_pton(AF_INET, "198.18.0.1", local.addr);
	fg_portack_attach(pa, A.tcp, &local);
	ak = fg_portack_acker(pa);
	ck_assert_ptr_nonnull(ak);
}

static void setup(void)
{
	greet = 200;
	mode_code = 203;
	check_code = 438;
	make_article();
	setup_with("");
}

static void teardown(void)
{
	fg_portack_abort_all(pa);
	fg_relay_acker_destroy(ak);	/* destroys pa */
	ck_assert_uint_eq(mw_side_down(&A), 0);
	ck_assert_uint_eq(mw_side_down(&B), 0);
	fg_config_free(cfg);
}

/* ---------------------------------------------------------------- helpers */

static void on_res(void *arg, const struct fg_relay_ack_result *r)
{
	struct got *g = arg;

	ck_assert_uint_lt(g->n, 64);
	g->r[g->n++] = *r;
}

static uint64_t ctr(enum fg_counter c)
{
	return A.st.ctr[c];
}

/* Both connections ready. */
static void up(void)
{
	pump();
	run_ms(2);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 2);
	ck_assert(fg_relay_ack_can(ak, NULL));
}


/* Hand over `len` octets of article (in pieces of 1000) under `id`. */
static void offer(const char *id, size_t len, uint64_t cookie)
{
	struct fg_iov v[1024];
	unsigned n = 0;
	struct fg_relay_ack_art a = { .cookie = cookie, .id = id, .id_len = strlen(id) };

	for (size_t off = 0; off < len; off += 1000, n++)
		v[n] = (struct fg_iov){ (const uint8_t *)article + off,
					(uint32_t)FG_MIN(1000u, len - off), NULL };
	a.piece = v;
	a.npiece = n;
	a.deadline_ns = now + TIMEOUT_NS;
	ck_assert_int_eq(fg_relay_ack_send(ak, &a), 0);
}

/* Wait (in clock steps) until `n` results came; returns the last. */
static const struct fg_relay_ack_result *wait_results(unsigned n)
{
	for (unsigned i = 0; i < 2000 && got.n < n; i++) {
		fg_relay_ack_results(ak, on_res, &got);
		if (got.n < n)
			run_ms(1);
	}
	ck_assert_uint_eq(got.n, n);
	return &got.r[n - 1];
}

/* Up, one article of 100 octets, its result `what`. */
static void one(const char *id, enum fg_relay_ack what)
{
	up();
	offer(id, 100, 1);
	ck_assert_uint_eq(wait_results(1)->what, what);
}

/* ---------------------------------------------------------------- tests */

START_TEST(accepted_octet_for_octet)
{
	up();
	offer("<ok1@x>", 3000, 7);
	ck_assert_uint_eq(wait_results(1)->what, FG_RELAY_ACK_ACCEPTED);
	ck_assert_uint_eq(got.r[0].cookie, 7);
	ck_assert_uint_eq(last_len, 3000);
	ck_assert_mem_eq(last_body, article, 3000);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_ACCEPTED), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_OFFERED), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_ART_OCTETS_COPIED) +
				  ctr(FG_CTR_PORTACK_ART_OCTETS_REFERENCED), 3000);
	ck_assert_uint_eq(fg_relay_ack_out(ak), 0);
}
END_TEST

START_TEST(by_reference_to_receive_buffers)
{
	enum { PIECES = 700, LEN = 1000 };
	static struct fg_iov v[PIECES];
	struct fg_relay_ack_art a = { .cookie = 9, .id = "<ok-ref@x>", .id_len = 10 };
	unsigned base;

	up();
	base = fg_memport_in_use(A.mp);
	/* the article in 700 receive buffers of floodgate's port, as TCP
	 * gives them to the engine */
	for (unsigned i = 0; i < PIECES; i++) {
		struct fg_rx_frame fr;

		ck_assert_int_eq(fg_memport_rx_frame(A.mp, article + i * LEN, LEN, &fr), 0);
		v[i] = (struct fg_iov){ fr.data, LEN, fr.handle };
	}
	a.piece = v;
	a.npiece = PIECES;
	a.deadline_ns = now + TIMEOUT_NS;
	ck_assert_int_eq(fg_relay_ack_send(ak, &a), 0);
	ck_assert_uint_eq(wait_results(1)->what, FG_RELAY_ACK_ACCEPTED);
	ck_assert_uint_eq(last_len, PIECES * LEN);
	ck_assert_mem_eq(last_body, article, PIECES * LEN);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_ART_OCTETS_REFERENCED), PIECES * LEN);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_ART_OCTETS_COPIED), 0);
	ck_assert_uint_ge(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), PIECES * LEN);
	ck_assert_uint_ge(fg_memport_tx_attached(A.mp), PIECES);
	/* the engine drops its holds at the result; TCP has dropped its own
	 * once the server acknowledged the octets */
	for (unsigned i = 0; i < PIECES; i++)
		fg_net_buf_unref(A.net, v[i].handle);
	run_ms(50);
	ck_assert_uint_eq(fg_memport_in_use(A.mp), base);
}
END_TEST

START_TEST(pipelined_window)
{
	char id[32];

	up();
	for (unsigned i = 0; i < 16; i++) {
		snprintf(id, sizeof(id), "<ok%u@x>", i);
		offer(id, 5000, i);
	}
	wait_results(16);
	for (unsigned i = 0; i < 16; i++)
		ck_assert_uint_eq(got.r[i].what, FG_RELAY_ACK_ACCEPTED);
	ck_assert_uint_eq(takethis_seen, 16);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONN_FAILURES), 0);
}
END_TEST

START_TEST(refused_remembered_on_438)
{
	one("<refuse1@x>", FG_RELAY_ACK_REFUSED);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_REMEMBERED), 1);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_REFUSED_439), 1);
}
END_TEST

START_TEST(refused_forgotten_without_438)
{
	check_code = 238;
	one("<refuse2@x>", FG_RELAY_ACK_REFUSED_FORGET);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_REFUSED), 1);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_REMEMBERED), 0);
}
END_TEST

START_TEST(deferred_and_5xx_spill)
{
	const struct fg_relay_ack_result *r;

	up();
	offer("<defer1@x>", 100, 1);
	r = wait_results(1);
	ck_assert_uint_eq(r->what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(r->spill.n, 1);
	ck_assert_uint_eq(r->spill.ident[0], cfg->downstream[0].ident);
	offer("<err1@x>", 100, 2);
	ck_assert_uint_eq(wait_results(2)->what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_REFUSED), 2);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_DEFERRED), 1);
	/* neither broke the connection */
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONN_FAILURES), 0);
}
END_TEST

START_TEST(bye_400_spills_and_reconnects)
{
	one("<bye1@x>", FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_REFUSED), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONN_FAILURES), 1);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 1);
	run_ms(150);	/* past reconnect-min */
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 2);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_READY), 3);
}
END_TEST

START_TEST(quiet_times_out_and_stops_new_ones)
{
	const struct fg_relay_ack_result *r;
	uint64_t t0 = now;

	up();
	offer("<quiet1@x>", 100, 1);
	run_ms(100);
	fg_relay_ack_results(ak, on_res, &got);
	ck_assert_uint_eq(got.n, 0);	/* had its chance, not yet due */
	r = wait_results(1);
	ck_assert_uint_eq(r->what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_ge(now - t0, TIMEOUT_NS);
	ck_assert_uint_le(now - t0, TIMEOUT_NS + 10 * MS);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_TIMEOUT), 1);
	/* an answer overdue: new articles take the queue's path */
	ck_assert(!fg_relay_ack_can(ak, NULL));
	/* it was written whole: the connection stays */
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_ABORTED), 0);
}
END_TEST

START_TEST(stopped_server_aborts_half_written)
{
	up();
	stopped = 1;
	offer("<ok-big@x>", 700000, 1);
	ck_assert_uint_eq(wait_results(1)->what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_TIMEOUT), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_ABORTED), 1);
	ck_assert_uint_eq(fg_relay_ack_out(ak), 0);
	/* resumed, it is fed again after the reconnect */
	stopped = 0;
	run_ms(150);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 2);
	offer("<ok-after@x>", 700000, 2);
	ck_assert_uint_eq(wait_results(2)->what, FG_RELAY_ACK_ACCEPTED);
	ck_assert_uint_eq(last_len, 700000);
	ck_assert_mem_eq(last_body, article, 700000);
}
END_TEST

/* A downstream that stops reading: each connection takes articles only
 * while less than PA_BACKLOG_MAX (2 MiB) is on its way, so of eight 700 KB
 * articles on two connections (window 4: room for all eight) at most
 * three each are started; the ones that waited for room spill alone at
 * their deadline, without a connection of their own to abort. */
START_TEST(backlog_bounds_what_is_started)
{
	char id[32];

	up();
	stopped = 1;
	for (unsigned i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "<bl%u@x>", i);
		offer(id, 700000, i + 1);
	}
	run_ms(5);
	ck_assert_uint_ge(ctr(FG_CTR_PORTACK_OFFERED), 2);	/* they had their chance */
	ck_assert_uint_le(ctr(FG_CTR_PORTACK_OFFERED), 6);
	ck_assert_uint_eq(fg_relay_ack_out(ak), 8);
	wait_results(8);
	for (unsigned i = 0; i < 8; i++)
		ck_assert_uint_eq(got.r[i].what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_le(ctr(FG_CTR_PORTACK_ABORTED), 2);
	ck_assert_uint_eq(fg_relay_ack_out(ak), 0);
}
END_TEST

START_TEST(eof_mid_send_spills_and_reconnects)
{
	one("<eof1@x>", FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_EOF) + ctr(FG_CTR_RELAY_ACK_SPILL_TIMEOUT), 1);
	ck_assert_uint_ge(ctr(FG_CTR_PORTACK_CONN_FAILURES), 1);
	run_ms(150);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 2);
}
END_TEST

START_TEST(not_streaming_takes_queue_path)
{
	mode_code = 501;
	pump();
	run_ms(2);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 0);
	ck_assert_uint_ge(ctr(FG_CTR_PORTACK_NOT_STREAMING), 1);
	ck_assert(!fg_relay_ack_can(ak, NULL));
	/* and it is not tried again */
	run_ms(500);
	ck_assert_uint_le(ctr(FG_CTR_PORTACK_CONNECTS), 2);
}
END_TEST

START_TEST(greeting_refused_backs_off)
{
	greet = 400;
	pump();
	run_ms(50);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONNECTS), 2);
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONN_FAILURES), 2);
	run_ms(100);	/* the first backoff, 100 ms */
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONNECTS), 4);
	run_ms(150);	/* the second is 200 ms: not yet */
	ck_assert_uint_eq(ctr(FG_CTR_PORTACK_CONNECTS), 4);
	greet = 200;
	run_ms(100);
	ck_assert_uint_eq(fg_portack_ready(pa, 0), 2);
	ck_assert(fg_relay_ack_can(ak, NULL));
}
END_TEST

START_TEST(no_connection_spills_at_once)
{
	/* before any handshake: can() says no; handed over anyway, it spills */
	ck_assert(!fg_relay_ack_can(ak, NULL));
	offer("<ok-early@x>", 100, 1);
	ck_assert_uint_eq(wait_results(1)->what, FG_RELAY_ACK_SPILL);
	ck_assert_uint_eq(ctr(FG_CTR_RELAY_ACK_SPILL_EOF), 1);
}
END_TEST

START_TEST(which_path)
{
	struct fg_config_errors errs;
	static const char text[] =
		"[dataplane]\naddress 198.18.0.1/24\n"
		"[downstream near]\naddress 198.18.0.9:119\nacknowledges on\n"
		"[downstream far]\naddress 192.0.2.9:119\nacknowledges on\n"
		"[downstream farport]\naddress 192.0.2.10:119\nacknowledges on\npath port\n"
		"[downstream nearkernel]\naddress 198.18.0.10:119\nacknowledges on\npath kernel\n"
		"[downstream self]\naddress 198.18.0.1:119\nacknowledges on\n"
		"[downstream plain]\naddress 198.18.0.11:119\n"
		"[downstream loop]\naddress 127.0.0.1:119\nacknowledges on\n";
	struct fg_config *c = fg_config_load_text("t", text, strlen(text), &errs);

	ck_assert_msg(c != NULL, "config: %s", errs.n ? errs.err[0].text : "?");
	ck_assert(fg_portack_takes(c, &c->downstream[0]));
	ck_assert(!fg_portack_takes(c, &c->downstream[1]));
	ck_assert(fg_portack_takes(c, &c->downstream[2]));
	ck_assert(!fg_portack_takes(c, &c->downstream[3]));
	ck_assert(!fg_portack_takes(c, &c->downstream[4]));
	ck_assert(!fg_portack_takes(c, &c->downstream[5]));
	ck_assert(!fg_portack_takes(c, &c->downstream[6]));
	ck_assert(fg_portack_any(c));
	fg_config_free(c);
}
END_TEST

static Suite *portack_suite(void)
{
	Suite *s = suite_create("portack");
	TCase *t = tcase_create("wire");
	TCase *p = tcase_create("path");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, accepted_octet_for_octet);
	tcase_add_test(t, by_reference_to_receive_buffers);
	tcase_add_test(t, pipelined_window);
	tcase_add_test(t, refused_remembered_on_438);
	tcase_add_test(t, refused_forgotten_without_438);
	tcase_add_test(t, deferred_and_5xx_spill);
	tcase_add_test(t, bye_400_spills_and_reconnects);
	tcase_add_test(t, quiet_times_out_and_stops_new_ones);
	tcase_add_test(t, stopped_server_aborts_half_written);
	tcase_add_test(t, backlog_bounds_what_is_started);
	tcase_add_test(t, eof_mid_send_spills_and_reconnects);
	tcase_add_test(t, not_streaming_takes_queue_path);
	tcase_add_test(t, greeting_refused_backs_off);
	tcase_add_test(t, no_connection_spills_at_once);
	suite_add_tcase(s, t);
	tcase_add_test(p, which_path);
	suite_add_tcase(s, p);
	return s;
}

FG_TEST_MAIN(portack_suite)
