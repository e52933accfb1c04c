/* SPDX-License-Identifier: MIT */
/*
 * test_tcpsess.c — NNTP sessions on the userspace TCP (dataplane/tcpsess):
 * the net, TCP and session-engine modules wired as a worker wires them, on
 * a memory port, driven by scripted clients that speak TCP segment by
 * segment.
 *
 * Covered: a whole streaming session (greeting to FIN) with answers in
 * order; a host that is no peer (502); draining (400 to new connections,
 * open ones go on); octets held for a slow sink closing the window and
 * opening it again (the per-connection quota); a connection reset while
 * its article is still being made durable (the hold outlives it, no
 * reference leaks); shutdown (400 and close to every session); the
 * connection list for `floodctl peers`.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/memport.h"
#include "floodgate/session.h"
#include "floodgate/tcpsess.h"
#include "fgtest.h"

#define NOW ((fg_time_t)1790000000)
#define MS 1000000ull
#define OUR_IP 0x0a000002u	/* 10.0.0.2 */

static const char conf_text[] =
	"[site]\nlisten 10.0.0.2:119\npath-identity filter.test\n"
	"[session]\nclock-skew-limit 0\n"
	"[peer feeder]\naddress 10.0.0.0/25\n";

struct cli {
	uint32_t addr;		/* host order */
	uint16_t port;
	uint32_t seq, ack;	/* next to send, next expected */
	uint16_t peer_wnd;	/* the window the server last advertised */
	bool fin_seen, rst_seen;
	char rx[65536];
	size_t rx_len;
};

struct fx {
	struct fg_config *cfg;
	void *hmem;
	struct fg_history *h;
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_tcpsess *ts;
	struct fg_nntp_engine *e;
	struct fg_sink_mem *sink;
	struct fg_nntp_counters st;
	struct fg_nntp_counters *pst;
	fg_time_t now;
	uint64_t now_ns;
	struct cli *clis[8];
	unsigned n_clis;
	uint32_t max_frame;		/* the longest frame transmitted */
};

static struct fx X;

/* ------------------------------------------------------------ wire */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

static void wr16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

static void wr32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* Frames the stack transmits go to the client they are addressed to. */
static void on_tx(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	const uint8_t *ip = f + 14, *th;
	uint32_t dst, hl, tot, doff, plen, seq;
	struct cli *c = NULL;

	(void)arg;
	(void)flags;
	X.max_frame = FG_MAX(X.max_frame, len);
	if (len < 54 || rd16(f + 12) != 0x0800 || ip[9] != 6)
		return;
	hl = (ip[0] & 15u) * 4;
	tot = rd16(ip + 2);
	th = ip + hl;
	dst = rd32(ip + 16);
	for (unsigned i = 0; i < X.n_clis; i++)
		if (X.clis[i]->addr == dst && X.clis[i]->port == rd16(th + 2))
			c = X.clis[i];
	if (!c)
		return;
	doff = (th[12] >> 4) * 4u;
	plen = tot - hl - doff;
	seq = rd32(th + 4);
	c->peer_wnd = rd16(th + 14);
	if (th[13] & 0x04)
		c->rst_seen = true;
	if (th[13] & 0x02)
		c->ack = seq + 1;		/* SYN-ACK */
	if (plen && seq == c->ack && c->rx_len + plen <= sizeof(c->rx)) {
		memcpy(c->rx + c->rx_len, th + doff, plen);
		c->rx_len += plen;
		c->ack += plen;
	}
	if ((th[13] & 0x01) && seq + plen == c->ack) {
		c->fin_seen = true;
		c->ack++;
	}
}

static void pump(void)
{
	for (int i = 0; i < 4; i++) {
		fg_tcpsess_set_time(X.ts, X.now, X.now_ns);
		fg_nntp_engine_poll(X.e, X.now, X.now_ns);
		fg_tcpsess_work(X.ts);
		fg_net_poll(X.net, X.now_ns);
		fg_tcpsess_work(X.ts);
	}
}

static void advance(uint64_t ns)
{
	X.now_ns += ns;
	X.now = (fg_time_t)(X.now_ns / 1000000000ull);
	pump();
}

/* One segment from c as a received frame (not yet given to the stack). */
static void build_seg(struct cli *c, uint8_t flags, const void *data, size_t len,
		      struct fg_rx_frame *fr)
{
	/* a SYN offers MSS 1460 and SACK (RFC 2018), as Linux does */
	static const uint8_t syn_opts[8] = { 2, 4, 0x05, 0xb4, 4, 2, 1, 1 };
	uint8_t f[2048] = { 0 }, *ip = f + 14, *th = ip + 20, ph[12];
	uint32_t hl = (flags & 0x02) ? 28 : 20, sum;

	ck_assert_uint_le(len, 1400);
	memcpy(f, (uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	memcpy(f + 6, (uint8_t[]){ 2, 0, 0, 0, 0, 1 }, 6);
	wr16(f + 12, 0x0800);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(20 + hl + len));
	ip[8] = 64;
	ip[9] = 6;
	wr32(ip + 12, c->addr);
	wr32(ip + 16, OUR_IP);
	wr16(ip + 10, fg_csum_fold(fg_csum_add(0, ip, 20)));
	wr16(th, c->port);
	wr16(th + 2, 119);
	wr32(th + 4, c->seq);
	wr32(th + 8, c->ack);
	th[12] = (uint8_t)((hl / 4) << 4);
	th[13] = flags;
	wr16(th + 14, 65535);
	if (hl > 20)
		memcpy(th + 20, syn_opts, sizeof(syn_opts));
	if (len)
		memcpy(th + hl, data, len);
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	wr16(ph + 10, (uint16_t)(hl + len));
	sum = fg_csum_add(0, ph, 12);
	wr16(th + 16, fg_csum_fold(fg_csum_add(sum, th, hl + len)));
	ck_assert_int_eq(fg_memport_rx_frame(X.mp, f, (uint32_t)(34 + hl + len), fr), 0);
	c->seq += (uint32_t)len + ((flags & 0x03) ? 1 : 0);
}

static void send_seg(struct cli *c, uint8_t flags, const void *data, size_t len)
{
	struct fg_rx_frame fr;

	build_seg(c, flags, data, len, &fr);
	fg_tcpsess_set_time(X.ts, X.now, X.now_ns);
	fg_net_rx(X.net, &fr, 1, X.now_ns);
	pump();
}

static struct cli *connect_from(uint32_t addr, uint16_t port)
{
	struct cli *c = calloc(1, sizeof(*c));

	c->addr = addr;
	c->port = port;
	c->seq = 1000;
	X.clis[X.n_clis++] = c;
	send_seg(c, 0x02, NULL, 0);		/* SYN */
	ck_assert_uint_ne(c->ack, 0);
	send_seg(c, 0x10, NULL, 0);		/* ACK */
	return c;
}

static void say(struct cli *c, const char *text)
{
	for (size_t off = 0, n = strlen(text); off < n;) {
		size_t k = FG_MIN(n - off, (size_t)1400);

		send_seg(c, 0x18, text + off, k);
		off += k;
	}
}

/* The client's received text holds `line` (a whole line). */
static bool heard(const struct cli *c, const char *line)
{
	char want[300];

	snprintf(want, sizeof(want), "%s\r\n", line);
	return memmem(c->rx, c->rx_len, want, strlen(want)) != NULL;
}

/* ------------------------------------------------------------ set-up */

static void fx_up(bool slow_sink)
{
	struct fg_config_errors errs;
	struct fg_history_params hp = { .capacity = 10000, .alarm_load_pct = 90, .now = NOW };
	struct fg_net_config nc = { .mac = { 2, 0, 0, 0, 0, 2 }, .n_ipv4 = 1 };
	struct fg_tcp_config tc = { .n_listen = 1, .max_conns = 16, .rcvbuf = 16384, .secret = 7 };
	struct fg_sink_mem_params mp = { .hold = true, .delay_ns = slow_sink ? 1000 * MS : 0 };
	struct fg_nntp_engine_params ep = { 0 };
	struct fg_tcpsess_params sp = { 0 };
	size_t hl;

	memset(&X, 0, sizeof(X));
	X.cfg = fg_config_load_text("test", conf_text, strlen(conf_text), &errs);
	ck_assert_ptr_nonnull(X.cfg);
	tc.listen[0] = X.cfg->listen[0];
	hl = fg_history_region_size(hp.capacity, 0);
	X.hmem = aligned_alloc(64, hl);
	fg_history_seed_random(hp.seed);
	X.h = fg_history_create(X.hmem, hl, &hp);
	X.mp = fg_memport_create(4096, 2048, on_tx, NULL);
	nc.ipv4[0] = htonl(OUR_IP);
	X.net = fg_net_create(&nc, fg_memport_ops(), X.mp, &X.st.s);
	X.sink = fg_sink_mem_create(&mp);
	X.pst = calloc(X.cfg->n_peer + 1, sizeof(*X.pst));
	ep.cfg = X.cfg;
	ep.history = X.h;
	ep.sink_ops = &fg_sink_mem_ops;
	ep.sink = X.sink;
	ep.stats = &X.st;
	ep.peer_stats = X.pst;
	ep.max_sessions = 16;
	X.e = fg_nntp_engine_create(&ep);
	sp.net = X.net;
	sp.engine = X.e;
	sp.cfg = X.cfg;
	sp.stats = &X.st.s;
	sp.max_conns = 32;
	X.ts = fg_tcpsess_create(&sp);
	X.tcp = fg_tcp_create(X.net, &tc, &fg_tcpsess_app_ops, X.ts);
	ck_assert_ptr_nonnull(X.tcp);
	X.now = NOW;
	X.now_ns = (uint64_t)NOW * 1000000000ull;
}

static void fx_down(void)
{
	fg_tcpsess_abort_all(X.ts);
	for (int i = 0; i < 10; i++)
		advance(1000 * MS);
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	ck_assert_uint_eq(fg_nntp_engine_xfers(X.e), 0);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 0);
	fg_tcp_destroy(X.tcp);
	fg_tcpsess_destroy(X.ts);
	fg_net_destroy(X.net);
	ck_assert_uint_eq(fg_memport_in_use(X.mp), 0);
	fg_nntp_engine_destroy(X.e);
	fg_sink_mem_destroy(X.sink);
	fg_memport_destroy(X.mp);
	fg_history_detach(X.h);
	free(X.hmem);
	free(X.pst);
	for (unsigned i = 0; i < X.n_clis; i++)
		free(X.clis[i]);
	fg_config_free(X.cfg);
}

static char *article(const char *id, size_t body)
{
	static char buf[65536];
	int n = snprintf(buf, sizeof(buf),
			 "TAKETHIS %s\r\nPath: a!b\r\nFrom: x@y\r\nNewsgroups: t.est\r\n"
			 "Subject: s\r\nMessage-ID: %s\r\nDate: Mon, 21 Sep 2026 10:00:00 +0000\r\n\r\n",
			 id, id);

	while (body >= 64 && (size_t)n + 70 < sizeof(buf)) {
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%62s\r\n", "line of text");
		body -= 64;
	}
	snprintf(buf + n, sizeof(buf) - (size_t)n, ".\r\n");
	return buf;
}

/* ------------------------------------------------------------ tests */

START_TEST(test_whole_session)
{
	struct cli *c;
	struct fg_tcpsess_info info[4];

	fx_up(false);
	c = connect_from(0x0a000001, 40000);
	ck_assert(strncmp(c->rx, "200 ", 4) == 0);
	say(c, "MODE STREAM\r\nCHECK <a@t>\r\nCHECK <b@t>\r\n");
	say(c, article("<a@t>", 3000));
	ck_assert(heard(c, "203 Streaming permitted"));
	ck_assert(heard(c, "238 <a@t>"));
	ck_assert(heard(c, "238 <b@t>"));
	ck_assert(heard(c, "239 <a@t>"));
	ck_assert(memmem(c->rx, c->rx_len, "238 <b@t>", 9) < memmem(c->rx, c->rx_len, "239 <a@t>", 9));
	ck_assert_uint_eq(fg_tcpsess_list(X.ts, info, 4), 1);
	ck_assert_str_eq(info[0].peer, "feeder");
	ck_assert_int_eq(info[0].remote.family, AF_INET);
	ck_assert_int_eq(memcmp(info[0].remote.addr, &(uint32_t){ htonl(0x0a000001) }, 4), 0);
	ck_assert_uint_eq(info[0].remote.port, 40000);
	ck_assert_uint_eq(info[0].state, FG_TCPSESS_OPEN);
	ck_assert_uint_gt(info[0].bytes_in, 3000);
	ck_assert_uint_eq(info[0].bytes_out, c->rx_len);
	say(c, "QUIT\r\n");
	ck_assert(heard(c, "205 Bye"));
	ck_assert(c->fin_seen);
	send_seg(c, 0x11, NULL, 0);		/* our FIN */
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 0);
	fx_down();
}
END_TEST

START_TEST(test_not_a_peer)
{
	struct cli *c;

	fx_up(false);
	c = connect_from(0x0a0000c8, 40001);		/* 10.0.0.200: outside /25 */
	ck_assert(strncmp(c->rx, "502 ", 4) == 0);
	ck_assert(c->fin_seen);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_NNTP_SESSIONS_NOT_PEER], 1);
	send_seg(c, 0x11, NULL, 0);
	fx_down();
}
END_TEST

START_TEST(test_draining)
{
	struct cli *a, *b;

	fx_up(false);
	a = connect_from(0x0a000001, 40002);
	fg_tcpsess_set_draining(X.ts, true);
	b = connect_from(0x0a000001, 40003);
	ck_assert(strncmp(b->rx, "400 ", 4) == 0 && strstr(b->rx, "draining"));
	ck_assert(b->fin_seen);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_DP_SESSIONS_REFUSED_DRAIN], 1);
	/* the open session goes on */
	say(a, "CHECK <d@t>\r\n");
	ck_assert(heard(a, "238 <d@t>"));
	send_seg(b, 0x11, NULL, 0);
	say(a, "QUIT\r\n");
	send_seg(a, 0x11, NULL, 0);
	fx_down();
}
END_TEST

/* Reload: the sessions on an endpoint no longer listened on drain and
 * close; while it is listened on, none is touched. */
START_TEST(test_retire_unlistened)
{
	struct fg_endpoint ep;
	struct cli *a;

	fx_up(false);
	a = connect_from(0x0a000001, 40004);
	ck_assert_uint_eq(fg_tcpsess_retire_unlistened(X.ts, X.tcp), 0);
	say(a, "CHECK <u1@t>\r\n");
	ck_assert(heard(a, "238 <u1@t>"));
	ep = X.cfg->listen[0];
	ep.port = 120;
	ck_assert_int_eq(fg_tcp_set_listen(X.tcp, &ep, 1), 0);
	ck_assert_uint_eq(fg_tcpsess_retire_unlistened(X.ts, X.tcp), 1);
	pump();
	ck_assert(heard(a, "400 This address is no longer served, try another"));
	ck_assert(a->fin_seen);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_NNTP_SESSIONS_RETIRED], 1);
	send_seg(a, 0x11, NULL, 0);
	fx_down();
}
END_TEST

/* While floodctld restores: 400 with the reason, closed, and what the
 * client sends at once is never answered (no session is opened). The
 * reason wins over a drain; once cleared, sessions open again. */
START_TEST(test_restoring)
{
	static const char line[] =
		"400 floodgate: the history is being restored (floodctld), try again later\r\n";
	struct cli *b, *c;
	size_t got;

	fx_up(false);
	fg_tcpsess_set_restoring(X.ts, true);
	fg_tcpsess_set_draining(X.ts, true);
	b = connect_from(0x0a000001, 40003);
	ck_assert_uint_eq(b->rx_len, sizeof(line) - 1);
	ck_assert(memcmp(b->rx, line, sizeof(line) - 1) == 0);
	ck_assert(b->fin_seen);
	got = b->rx_len;
	say(b, "MODE STREAM\r\nCHECK <d@t>\r\n");
	ck_assert_uint_eq(b->rx_len, got);
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_DP_SESSIONS_REFUSED_RESTORING], 1);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_DP_SESSIONS_REFUSED_DRAIN], 0);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_NNTP_SESSIONS_OPENED], 0);
	send_seg(b, 0x11, NULL, 0);
	fg_tcpsess_set_restoring(X.ts, false);
	fg_tcpsess_set_draining(X.ts, false);
	c = connect_from(0x0a000001, 40005);
	ck_assert(strncmp(c->rx, "200 ", 4) == 0);
	say(c, "CHECK <d@t>\r\n");
	ck_assert(heard(c, "238 <d@t>"));
	say(c, "QUIT\r\n");
	send_seg(c, 0x11, NULL, 0);
	fx_down();
}
END_TEST

/* The sink keeps the article's buffers for a second: they count against
 * the connection's window until the article is safe. */
START_TEST(test_holds_close_the_window)
{
	struct cli *c;
	struct fg_tcpsess_info info;
	uint16_t open_wnd;

	fx_up(true);
	c = connect_from(0x0a000001, 40004);
	open_wnd = c->peer_wnd;
	say(c, article("<h@t>", 8000));
	ck_assert(!heard(c, "239 <h@t>"));
	ck_assert_uint_eq(fg_tcpsess_list(X.ts, &info, 1), 1);
	ck_assert_uint_gt(info.held, 8000);
	send_seg(c, 0x10, NULL, 0);
	ck_assert_uint_lt(c->peer_wnd, open_wnd - 8000);
	advance(1100 * MS);
	ck_assert(heard(c, "239 <h@t>"));
	ck_assert_uint_eq(fg_tcpsess_list(X.ts, &info, 1), 1);
	ck_assert_uint_eq(info.held, 0);
	send_seg(c, 0x10, NULL, 0);
	ck_assert_uint_ge(c->peer_wnd, open_wnd - 1024);
	fx_down();
}
END_TEST

/* An article larger than the receive window, into a sink that holds: the
 * connection holds at most half its buffer, the rest is copied, and the
 * article completes (a window filled by holds would never let its end in). */
START_TEST(test_article_larger_than_window)
{
	struct cli *c;
	struct fg_tcpsess_info info;
	struct fg_sink_mem_stats ms;
	const char *art = article("<big@t>", 48000);

	fx_up(true);
	c = connect_from(0x0a000001, 40008);
	for (size_t off = 0, n = strlen(art); off < n;) {
		size_t k = FG_MIN(n - off, (size_t)1400);

		send_seg(c, 0x18, art + off, k);
		off += k;
		ck_assert_uint_eq(fg_tcpsess_list(X.ts, &info, 1), 1);
		ck_assert_uint_le(info.held, 16384 / 2);
		ck_assert_uint_gt(c->peer_wnd, 0);
	}
	fg_sink_mem_stats(X.sink, &ms);
	ck_assert_uint_gt(ms.holds, 0);
	ck_assert_uint_gt(ms.copies, 0);
	ck_assert_uint_ge(ms.appended_bytes, 48000);
	ck_assert(!heard(c, "239 <big@t>"));
	advance(1100 * MS);
	ck_assert(heard(c, "239 <big@t>"));
	ck_assert_uint_eq(fg_tcpsess_list(X.ts, &info, 1), 1);
	ck_assert_uint_eq(info.held, 0);
	fx_down();
}
END_TEST

/* A reset while the article is still being made durable: the hold moves
 * off the connection and is dropped when the sink is done. */
START_TEST(test_reset_while_held)
{
	struct cli *c;

	fx_up(true);
	c = connect_from(0x0a000001, 40005);
	say(c, article("<r@t>", 4000));
	ck_assert_uint_gt(fg_memport_in_use(X.mp), 0);
	send_seg(c, 0x04, NULL, 0);		/* RST */
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_DP_HOLDS_ORPHANED], 1);
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	ck_assert_uint_eq(fg_nntp_engine_xfers(X.e), 1);	/* still being made safe */
	advance(1100 * MS);
	ck_assert_uint_eq(fg_nntp_engine_xfers(X.e), 0);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 0);
	ck_assert_uint_eq(fg_memport_in_use(X.mp), 0);
	fx_down();
}
END_TEST

START_TEST(test_shutdown_and_abort)
{
	struct cli *a, *b;

	fx_up(false);
	a = connect_from(0x0a000001, 40006);
	b = connect_from(0x0a000002, 40007);
	say(a, "CHECK <s@t>\r\n");
	fg_nntp_engine_shutdown(X.e);
	pump();
	ck_assert(heard(a, "238 <s@t>"));
	ck_assert(heard(a, "400 Server shutting down, try again later"));
	ck_assert(heard(b, "400 Server shutting down, try again later"));
	ck_assert(a->fin_seen && b->fin_seen);
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	/* a answers with its FIN; b acknowledges ours but never sends its
	 * own: nothing of ours is in flight to b any more */
	send_seg(a, 0x11, NULL, 0);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 1);
	ck_assert_uint_eq(fg_tcpsess_unfinished(X.ts), 1);
	send_seg(b, 0x10, NULL, 0);
	ck_assert_uint_eq(fg_tcpsess_unfinished(X.ts), 0);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 1);
	ck_assert_uint_eq(fg_tcpsess_abort_all(X.ts), 1);
	pump();
	ck_assert(b->rst_seen);
	ck_assert_uint_eq(fg_tcpsess_in_use(X.ts), 0);
	ck_assert_uint_eq(X.st.s.ctr[FG_CTR_DP_CONNS_ABORTED], 1);
	fx_down();
}
END_TEST

/* Answers fill whole segments while the client's data has a hole: the
 * SACK blocks our segments carry must not push a frame past the MTU. */
START_TEST(test_full_segments_stay_within_mtu)
{
	char batch[1400];
	struct fg_rx_frame burst[3];
	struct cli *c;
	size_t n = 0;
	uint32_t next;

	fx_up(false);
	c = connect_from(0x0a000001, 40008);
	for (unsigned i = 0; n + 20 < sizeof(batch); i++)
		n += (size_t)snprintf(batch + n, sizeof(batch) - n, "CHECK <m%u@t>\r\n", i);
	/* a segment far ahead: it stays out of order (SACKed) throughout */
	next = c->seq;
	c->seq = next + 3 * (uint32_t)n + 100;
	say(c, "QUIT\r\n");
	c->seq = next;
	/* three segments in one burst: their ~3300 octets of answers go out
	 * together, in full segments */
	for (int k = 0; k < 3; k++)
		build_seg(c, 0x18, batch, n, &burst[k]);
	fg_net_rx(X.net, burst, 3, X.now_ns);
	pump();
	send_seg(c, 0x10, NULL, 0);
	ck_assert_uint_gt(c->rx_len, 3000);
	ck_assert_uint_le(X.max_frame, 14 + 1500);
	send_seg(c, 0x04, NULL, 0);
	fx_down();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tcpsess");
	TCase *t = tcase_create("sessions");

	tcase_add_test(t, test_whole_session);
	tcase_add_test(t, test_not_a_peer);
	tcase_add_test(t, test_draining);
	tcase_add_test(t, test_retire_unlistened);
	tcase_add_test(t, test_restoring);
	tcase_add_test(t, test_holds_close_the_window);
	tcase_add_test(t, test_article_larger_than_window);
	tcase_add_test(t, test_reset_while_held);
	tcase_add_test(t, test_shutdown_and_abort);
	tcase_add_test(t, test_full_segments_stay_within_mtu);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(suite)
