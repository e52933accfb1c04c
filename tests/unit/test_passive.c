/* SPDX-License-Identifier: MIT */
/*
 * test_passive.c — passive mode (dataplane/passive: net, TCP and tcpsess in
 * their observe-only mode) with the real session engine, history and null
 * sink on a memory port.
 *
 * Replays: feedgen's workload written as a capture (fg_pcapfeed_write),
 * read back with libpcap and fed in bursts of several sizes; the engine's
 * answers must equal the in-order answers the workload model predicts
 * (fg_pcapfeed_stats), whatever the burst size, and no buffer reference
 * may be left behind. Reassembly: hand-made segments out of order,
 * retransmitted, overlapping, a stream without its SYN, frames with bad
 * checksums (kept: captures hold them) or bad lengths (dropped), a hole that
 * never fills, resets from either side, a session that stops reading
 * (back-pressure) and goes on, and a mirror port's frames (another MAC, a
 * VLAN tag). Shadow mode: both halves of an exchange, the server's answers
 * compared with the engine's decisions (one pair of each kind).
 */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/memport.h"
#include "floodgate/passive.h"
#include "workload/pcapgen.h"
#include "floodgate/session.h"
#include "floodgate/shadow.h"
#include "workload/workload.h"
#include "fgtest.h"

#define NOW ((fg_time_t)1790000000)
#define SERVER 0xc6130001u	/* 198.19.0.1 */
#define CLIENT 0xc6120001u	/* 198.18.0.1 */

static const char conf_text[] =
	"[site]\npath-identity floodgate.test\nlisten 198.19.0.1:119\n"
	"[session]\nclock-skew-limit 0\n"
	"[history]\ncapacity 100000\n"
	"[peer feeders]\naddress 198.18.0.0/15\n";

struct fx {
	struct fg_config *cfg;
	void *hmem;
	struct fg_history *h;
	struct fg_memport *mp;
	struct fg_nntp_counters *st;
	struct fg_nntp_counters *pst;
	const struct fg_sink_ops *sink_ops;
	void *sink;
	struct fg_nntp_engine *e;
	struct fg_passive *pv;
	fg_time_t now;
	uint64_t now_ns;
};

static struct fx X;
static bool shadow_mode;	/* fx_up: shadow mode (the server's half compared) */

static void fx_up(const char *extra, bool slow_sink, unsigned max_segs)
{
	struct fg_config_errors errs;
	struct fg_history_params hp = { .capacity = 100000, .full_policy = FG_FULL_DEFER,
					.alarm_load_pct = 90, .now = NOW };
	struct fg_nntp_engine_params ep = { 0 };
	struct fg_passive_params pp = { 0 };
	char text[1024];
	size_t hlen;

	memset(&X, 0, sizeof(X));
	snprintf(text, sizeof(text), "%s%s", conf_text, extra);
	X.cfg = fg_config_load_text("test", text, strlen(text), &errs);
	ck_assert_msg(X.cfg, "config: %s", errs.n ? errs.err[0].text : "?");
	hlen = fg_history_region_size(hp.capacity, 0);
	X.hmem = aligned_alloc(64, hlen);
	ck_assert_ptr_nonnull(X.hmem);
	ck_assert_int_eq(fg_history_seed_random(hp.seed), 0);
	X.h = fg_history_create(X.hmem, hlen, &hp);
	ck_assert_ptr_nonnull(X.h);
	X.mp = fg_memport_create(20000, 2048, NULL, NULL);
	X.st = calloc(1, sizeof(*X.st));
	X.pst = calloc(X.cfg->n_peer + 1, sizeof(*X.pst));
	if (slow_sink) {
		struct fg_sink_mem_params mp = { .delay_ns = 1000000000ull };

		X.sink_ops = &fg_sink_mem_ops;
		X.sink = fg_sink_mem_create(&mp);
	} else {
		X.sink_ops = &fg_sink_null_ops;
		X.sink = fg_sink_null_create(0);
	}
	ep.cfg = X.cfg;
	ep.history = X.h;
	ep.sink_ops = X.sink_ops;
	ep.sink = X.sink;
	ep.stats = X.st;
	ep.peer_stats = X.pst;
	X.e = fg_nntp_engine_create(&ep);
	ck_assert_ptr_nonnull(X.e);
	pp.engine = X.e;
	pp.cfg = X.cfg;
	pp.ops = fg_memport_ops();
	pp.port = X.mp;
	pp.stats = &X.st->s;
	pp.max_segs = max_segs;
	pp.shadow = shadow_mode;
	X.pv = fg_passive_create(&pp);
	ck_assert_ptr_nonnull(X.pv);
	X.now = NOW;
	X.now_ns = (uint64_t)NOW * 1000000000ull;
}

/* Everything ends and is freed; no buffer reference may survive. */
static void fx_down(void)
{
	fg_passive_end_all(X.pv);
	for (int i = 0; i < 100 && (fg_nntp_engine_xfers(X.e) || fg_passive_flows(X.pv)); i++) {
		X.now_ns += 2000000000ull;
		fg_nntp_engine_poll(X.e, X.now + 100, X.now_ns);
		fg_passive_work(X.pv);
	}
	ck_assert_uint_eq(fg_passive_flows(X.pv), 0);
	ck_assert_uint_eq(fg_nntp_engine_sessions(X.e), 0);
	ck_assert_uint_eq(fg_memport_in_use(X.mp), 0);
	fg_passive_destroy(X.pv);
	fg_nntp_engine_destroy(X.e);
	X.sink_ops->destroy(X.sink);
	fg_memport_destroy(X.mp);
	fg_history_detach(X.h);
	free(X.hmem);
	free(X.st);
	free(X.pst);
	fg_config_free(X.cfg);
}

static uint64_t code(unsigned number)
{
	for (unsigned i = 0; i < FG_NNTP_CODE__COUNT; i++)
		if (fg_nntp_code_number(i) == number)
			return X.st->n.code[i];
	return 0;
}

static uint64_t ctr(enum fg_counter c)
{
	return X.st->s.ctr[c];
}

/* ------------------------------------------------------------ replays */

/* Feed a capture in bursts of `burst` frames, with their capture times. */
static void replay(const char *path, unsigned burst)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct fg_rx_frame fr[64];
	uint64_t ts[64];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned n = 0;

	ck_assert_ptr_nonnull(pc);
	for (;;) {
		int more = pcap_next_ex(pc, &h, &data) == 1;

		if (more) {
			ck_assert_int_eq(fg_memport_rx_frame(X.mp, data, h->caplen, &fr[n]), 0);
			ts[n++] = (uint64_t)h->ts.tv_sec * 1000000000ull +
				  (uint64_t)h->ts.tv_usec * 1000ull;
		}
		if (n == burst || (!more && n)) {
			fg_passive_rx(X.pv, fr, n, ts, 0, 0);
			X.now_ns = fg_passive_clock(X.pv);
			X.now = (fg_time_t)(X.now_ns / 1000000000ull);
			fg_nntp_engine_poll(X.e, X.now, X.now_ns);
			fg_passive_work(X.pv);
			n = 0;
		}
		if (!more)
			break;
	}
	pcap_close(pc);
}

static void check_replay(enum fg_pcapfeed_mode mode, unsigned window, unsigned spread)
{
	static const unsigned bursts[] = { 1, 7, 32 };
	struct fg_wl_params wp;
	struct fg_wl *wl;
	struct fg_pcapfeed_opts o = { .conns = 2, .window = window, .mode = mode,
				      .mode_stream = mode != FG_PCAPFEED_IHAVE,
				      .server_addr = SERVER, .server_port = 119 };
	struct fg_pcapfeed_stats st;
	char path[] = "/tmp/fg_passive_XXXXXX";
	int fd = mkstemp(path);
	bool ihave = mode == FG_PCAPFEED_IHAVE;

	ck_assert_int_ge(fd, 0);
	close(fd);
	fg_wl_params_default(&wp);
	wp.articles = 1500;
	wp.peers = 4;
	wp.dups = 4;
	wp.spread = spread;
	wp.now = NOW;
	if (ihave)
		wp.p_future = 0;	/* an unremembered reject desyncs a lock-step capture */
	else
		strcpy(wp.path_identity, "floodgate.test");
	wl = fg_wl_create(&wp);
	ck_assert_ptr_nonnull(wl);
	ck_assert_int_eq(fg_pcapfeed_write(wl, &o, path, &st), 0);
	for (unsigned b = 0; b < FG_ARRAY_SIZE(bursts); b++) {
		fx_up("", false, 0);
		ck_assert_ptr_null(fg_passive_shadow(X.pv));	/* passive mode: no comparison */
		replay(path, bursts[b]);
		ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_FLOWS), st.flows);
		ck_assert_uint_eq(code(ihave ? 335 : 238), st.want);
		ck_assert_uint_eq(code(ihave ? 436 : 431), st.defer);
		ck_assert_uint_eq(code(ihave ? 435 : 438), st.refuse);
		ck_assert_uint_eq(code(ihave ? 235 : 239), st.accept);
		ck_assert_uint_eq(code(ihave ? 437 : 439), st.reject);
		ck_assert_uint_eq(code(200), st.flows);
		ck_assert_uint_eq(code(205), st.flows);
		ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_MIDSTREAM), 0);
		ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_GAPS), 0);
		fx_down();
	}
	fg_wl_free(wl);
	unlink(path);
}

START_TEST(test_replay_check)
{
	check_replay(FG_PCAPFEED_CHECK, 16, 32);	/* offers race their articles: 431s */
	check_replay(FG_PCAPFEED_CHECK, 4, 600);	/* articles come first: 438s */
}
END_TEST

START_TEST(test_replay_takethis)
{
	check_replay(FG_PCAPFEED_TAKETHIS, 16, 32);
}
END_TEST

START_TEST(test_replay_ihave)
{
	check_replay(FG_PCAPFEED_IHAVE, 1, 64);
}
END_TEST

/* ------------------------------------------------------------ hand-made segments */

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

/* big-endian stores */
static void put16(uint8_t *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

/* One frame from src:sport to dst:dport, checksums right unless `bad`;
 * `mirror`: addressed to another host's MAC, inside an 802.1Q tag. */
static void seg_frame(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
		      uint8_t flags, uint32_t seq, const char *data, bool bad, bool mirror)
{
	uint8_t f[1600] = { 0 }, *ip = f + (mirror ? 18 : 14), *th = ip + 20;
	size_t len = data ? strlen(data) : 0;
	struct fg_rx_frame fr;

	if (mirror) {
		memcpy(f, "\x02\x00\x5e\x10\x20\x30", 6);
		put16(f + 12, 0x8100);
		put16(f + 14, 42);
	}
	put16(ip - 2, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(40 + len));
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	put16(ip + 10, fg_pcap_ip_checksum(ip, 20));
	put16(th, sport);
	put16(th + 2, dport);
	put32(th + 4, seq);
	put32(th + 8, 1);
	th[12] = 5 << 4;
	th[13] = flags;
	put16(th + 14, 65535);
	memcpy(th + 20, data ? data : "", len);
	put16(th + 16, fg_pcap_tcp_checksum(src, dst, th, 20 + len) ^ (bad ? 0x1111 : 0));
	ck_assert_int_eq(fg_memport_rx_frame(X.mp, f, (uint32_t)(th + 20 + len - f), &fr), 0);
	fg_passive_rx(X.pv, &fr, 1, NULL, X.now, X.now_ns);
	fg_nntp_engine_poll(X.e, X.now, X.now_ns);
	fg_passive_work(X.pv);
}

static void seg(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint8_t flags,
		uint32_t seq, const char *data, bool bad)
{
	seg_frame(src, sport, dst, dport, flags, seq, data, bad, false);
}

static void cseg(uint16_t port, uint8_t flags, uint32_t seq, const char *data)
{
	seg(CLIENT, port, SERVER, 119, flags, seq, data, false);
}

START_TEST(test_out_of_order_and_retransmits)
{
	const uint32_t isn = 0xfffffff0u;	/* the stream wraps past 2^32 */

	fx_up("", false, 0);
	cseg(40000, TH_SYN, isn, NULL);
	seg(SERVER, 119, CLIENT, 40000, TH_SYN | TH_ACK, 7, NULL, false);
	/* "MODE STREAM\r\n" (13) "CHECK <a@b>\r\n" (13) "CHECK <c@d>\r\n" (13) "QUIT\r\n" */
	cseg(40000, TH_ACK, isn + 14, "CHECK <a@b>\r\n");		/* ahead: kept */
	cseg(40000, TH_ACK, isn + 27, "CHECK <c@d>\r\n");		/* ahead: kept */
	ck_assert_uint_eq(code(203), 0);
	cseg(40000, TH_ACK, isn + 1, "MODE STREAM\r\nCHECK");		/* fills, overlaps */
	ck_assert_uint_eq(code(203), 1);
	ck_assert_uint_eq(code(238), 2);
	cseg(40000, TH_ACK, isn + 1, "MODE STREAM\r\n");		/* old: trimmed */
	cseg(40000, TH_ACK, isn + 20, "<a@b>\r\nCHECK <c@d>\r\nQUIT\r\n");	/* partly old */
	ck_assert_uint_eq(code(238), 2);
	ck_assert_uint_eq(code(205), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_OOO), 2);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_DUP_BYTES), 5 + 13 + 20);
	cseg(40000, TH_FIN | TH_ACK, isn + 46, NULL);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_MIDSTREAM), 0);
	ck_assert_uint_eq(fg_passive_flows(X.pv), 0);
	fx_down();
}
END_TEST

START_TEST(test_midstream_bad_and_server_side)
{
	uint64_t answers;

	fx_up("", false, 0);
	cseg(40001, TH_ACK, 5000, "CHECK <x@y>\r\n");		/* no SYN seen */
	cseg(40001, TH_ACK, 5013, "CHECK <z@y>\r\n");
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_MIDSTREAM), 2);
	ck_assert_uint_eq(ctr(FG_CTR_NNTP_SESSIONS_OPENED), 0);
	/* a checksum the sender's NIC never filled in is what was captured */
	seg(CLIENT, 40002, SERVER, 119, TH_SYN, 100, NULL, true);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_BAD), 0);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_FLOWS), 1);
	/* a frame shorter than its IPv4 header says */
	{
		uint8_t f[60] = { 0 };
		struct fg_rx_frame fr;

		put16(f + 12, 0x0800);
		f[14] = 0x45;
		put16(f + 16, 400);
		f[23] = 6;
		ck_assert_int_eq(fg_memport_rx_frame(X.mp, f, sizeof(f), &fr), 0);
		fg_passive_rx(X.pv, &fr, 1, NULL, X.now, X.now_ns);
	}
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_BAD), 1);
	/* the captured server's own answers are not ours to judge */
	answers = ctr(FG_CTR_PASSIVE_ANSWER_BYTES);
	seg(SERVER, 119, CLIENT, 40003, TH_ACK, 1, "200 hello\r\n", false);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_SERVER_FRAMES), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_ANSWER_BYTES), answers);
	fx_down();
}
END_TEST

START_TEST(test_resets_end_flows)
{
	fx_up("", false, 0);
	cseg(40010, TH_SYN, 1000, NULL);
	cseg(40011, TH_SYN, 2000, NULL);
	ck_assert_uint_eq(fg_passive_flows(X.pv), 2);
	cseg(40010, TH_ACK, 1001, "MODE STREAM\r\nCHECK <r@s>\r\n");
	ck_assert_uint_eq(code(238), 1);
	cseg(40010, TH_RST, 1027, NULL);			/* the client resets */
	seg(SERVER, 119, CLIENT, 40011, TH_RST, 9, NULL, false);	/* the server resets */
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_RESETS), 2);
	ck_assert_uint_eq(fg_passive_flows(X.pv), 0);
	/* the reset session's 238 was released: another may have it */
	cseg(40012, TH_SYN, 3000, NULL);
	cseg(40012, TH_ACK, 3001, "CHECK <r@s>\r\n");
	ck_assert_uint_eq(code(238), 2);
	fx_down();
}
END_TEST

START_TEST(test_hole_that_never_fills)
{
	char line[32];

	fx_up("", false, 0);
	cseg(40020, TH_SYN, 0, NULL);
	cseg(40020, TH_ACK, 1, "MODE STREAM\r\n");
	/* octets 14..26 never come; 64 segments wait beyond them, the next
	 * one overflows the out-of-order list: the stream is given up */
	for (unsigned i = 0; i <= 64; i++) {
		snprintf(line, sizeof(line), "CHECK <%03u@h>\r\n", i);	/* 15 octets */
		cseg(40020, TH_ACK, 27 + 15 * i, line);
	}
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_GAPS), 1);
	ck_assert_uint_eq(code(238), 0);
	ck_assert_uint_eq(ctr(FG_CTR_NNTP_SESSIONS_CLOSED), 1);
	fx_down();
}
END_TEST

/* A session that stops reading: its flow's segments wait (references
 * held), the port is told to stop, and it all goes on once the sink
 * completes. */
START_TEST(test_backpressure)
{
	char art[512];
	uint32_t seq = 1;

	fx_up("[session]\nmax-pending-commands 4\n", true, 8);
	cseg(40030, TH_SYN, 0, NULL);
	cseg(40030, TH_ACK, seq, "MODE STREAM\r\n");
	seq += 13;
	for (unsigned i = 0; i < 12; i++) {
		int n = snprintf(art, sizeof(art),
				 "TAKETHIS <bp%u@t>\r\nPath: x\r\nFrom: a@b\r\nNewsgroups: t\r\n"
				 "Subject: s\r\nMessage-ID: <bp%u@t>\r\n"
				 "Date: Sat, 20 Sep 2026 10:00:00 +0000\r\n\r\nbody\r\n.\r\n", i, i);

		cseg(40030, TH_ACK, seq, art);
		seq += (uint32_t)n;
	}
	/* the sink holds the first articles for a second: reading stopped */
	ck_assert(fg_passive_backlogged(X.pv));
	ck_assert_uint_gt(ctr(FG_CTR_PASSIVE_BACKLOG), 0);
	ck_assert_uint_lt(code(239), 12);
	for (int i = 0; i < 40 && code(239) < 12; i++) {
		X.now_ns += 500000000ull;
		fg_nntp_engine_poll(X.e, X.now, X.now_ns);
		fg_passive_work(X.pv);
	}
	ck_assert_uint_eq(code(239), 12);
	ck_assert(!fg_passive_backlogged(X.pv));
	fx_down();
}
END_TEST

/* A mirror port's frames are addressed to the observed server's MAC and
 * may carry a VLAN tag: decoded as a capture's are. A session that ends
 * first leaves its flow lingering: the client's last octets are not a
 * stream seen mid-way, and its FIN ends the flow. */
START_TEST(test_mirror_frames_and_linger)
{
	fx_up("", false, 0);
	seg_frame(CLIENT, 40040, SERVER, 119, TH_SYN, 500, NULL, false, true);
	seg_frame(CLIENT, 40040, SERVER, 119, TH_ACK, 501, "MODE STREAM\r\nCHECK <m@v>\r\nQUIT\r\n",
		  false, true);
	ck_assert_uint_eq(code(203), 1);
	ck_assert_uint_eq(code(238), 1);
	ck_assert_uint_eq(code(205), 1);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_NOT_TCP), 0);
	ck_assert_uint_eq(fg_passive_flows(X.pv), 0);	/* the session is over */
	seg_frame(CLIENT, 40040, SERVER, 119, TH_ACK, 533, "junk\r\n", false, true);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_AFTER_CLOSE_BYTES), 6);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_MIDSTREAM), 0);
	seg_frame(CLIENT, 40040, SERVER, 119, TH_FIN | TH_ACK, 539, NULL, false, true);
	seg_frame(CLIENT, 40040, SERVER, 119, TH_ACK, 540, "more\r\n", false, true);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_AFTER_CLOSE_BYTES), 6);
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_MIDSTREAM), 1);	/* the FIN ended it */
	/* not IP at all, IPv6 but not TCP, and an IPv6 header of zeros: counted */
	{
		uint8_t f[3][80] = { { 0 } };
		struct fg_rx_frame fr;
		uint64_t bad = ctr(FG_CTR_PASSIVE_BAD);

		put16(f[0] + 12, 0x0806);
		put16(f[1] + 12, 0x86dd);
		f[1][14] = 0x60;
		f[1][14 + 5] = 8;		/* payload length */
		f[1][14 + 6] = 58;		/* ICMPv6 */
		put16(f[2] + 12, 0x86dd);
		for (unsigned i = 0; i < 3; i++) {
			ck_assert_int_eq(fg_memport_rx_frame(X.mp, f[i], sizeof(f[i]), &fr), 0);
			fg_passive_rx(X.pv, &fr, 1, NULL, X.now, X.now_ns);
		}
		ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_BAD), bad + 1);
	}
	ck_assert_uint_eq(ctr(FG_CTR_PASSIVE_NOT_TCP), 2);
	fx_down();
}
END_TEST

/* Shadow mode through the whole stack: the server's half reaches the
 * comparison through TCP, floodgate's decisions through the engine. */
START_TEST(test_shadow_both_halves)
{
	static const char old_article[] =
		"TAKETHIS <s1@t>\r\nPath: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.est\r\n"
		"Subject: s\r\nMessage-ID: <s1@t>\r\nDate: Mon, 01 Jan 2024 00:00:00 +0000\r\n\r\n"
		"body\r\n.\r\n";
	const char *cmds[] = { "MODE STREAM\r\n", "CHECK <s1@t>\r\nCHECK <s2@t>\r\n",
			       old_article, "QUIT\r\n" };
	const char *answers[] = { "200 ready\r\n", "203 ok\r\n", "238 <s1@t>\r\n438 <s2@t>\r\n",
				  "239 <s1@t>\r\n", "205 bye\r\n" };
	uint32_t c = 1001, sv = 5001;
	struct fg_shadow_report r;

	shadow_mode = true;
	fx_up("", false, 0);
	shadow_mode = false;
	ck_assert_ptr_nonnull(fg_passive_shadow(X.pv));
	cseg(41000, TH_SYN, 1000, NULL);
	seg(SERVER, 119, CLIENT, 41000, TH_SYN | TH_ACK, 5000, NULL, false);
	for (unsigned i = 0; i < FG_ARRAY_SIZE(answers); i++) {
		seg(SERVER, 119, CLIENT, 41000, TH_ACK | TH_PSH, sv, answers[i], false);
		sv += (uint32_t)strlen(answers[i]);
		if (i < FG_ARRAY_SIZE(cmds)) {
			cseg(41000, TH_ACK | TH_PSH, c, cmds[i]);
			c += (uint32_t)strlen(cmds[i]);
		}
	}
	seg(SERVER, 119, CLIENT, 41000, TH_FIN | TH_ACK, sv, NULL, false);
	cseg(41000, TH_FIN | TH_ACK, c, NULL);
	ck_assert_uint_eq(code(439), 1);
	fg_passive_end_all(X.pv);
	fg_shadow_report(fg_passive_shadow(X.pv), &r);
	ck_assert_uint_eq(r.n[FG_SHADOW_AGREE], 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_TOOK_REFUSED], 1);
	ck_assert_uint_eq(r.n[FG_SHADOW_REFUSED_TOOK], 1);
	ck_assert_uint_eq(r.refused_took[FG_REASON_TOO_OLD], 1);
	ck_assert_str_eq(r.samples[FG_SHADOW_REFUSED_TOOK][0].id, "<s1@t>");
	ck_assert_str_eq(r.samples[FG_SHADOW_TOOK_REFUSED][0].id, "<s2@t>");
	ck_assert_uint_eq(r.n[FG_SHADOW_TIMING], 0);
	ck_assert_uint_eq(r.not_compared, 0);
	ck_assert_uint_eq(r.gaps, 0);
	ck_assert_uint_eq(ctr(FG_CTR_SHADOW_FLOWS), 1);
	ck_assert_uint_eq(ctr(FG_CTR_SHADOW_REFUSED_TOOK), 1);
	fx_down();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("passive");
	TCase *t = tcase_create("replay");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_replay_check);
	tcase_add_test(t, test_replay_takethis);
	tcase_add_test(t, test_replay_ihave);
	suite_add_tcase(s, t);
	t = tcase_create("reassembly");
	tcase_add_test(t, test_out_of_order_and_retransmits);
	tcase_add_test(t, test_midstream_bad_and_server_side);
	tcase_add_test(t, test_resets_end_flows);
	tcase_add_test(t, test_hole_that_never_fills);
	tcase_add_test(t, test_backpressure);
	tcase_add_test(t, test_mirror_frames_and_linger);
	tcase_add_test(t, test_shadow_both_halves);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(suite)
