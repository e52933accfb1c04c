/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tcp_rx.c — arbitrary frames into the receive path (net + TCP) of
 * an instance that already holds three established connections it
 * accepted and two it opened itself: one established, one still in
 * SYN-SENT (its SYN unanswered), so the active open's checks are fuzzed
 * too.
 *
 * Input: a sequence of records
 *     op (1)  len (2, big-endian)  body (len)
 * op & 0x0f  advances the clock by that many 50 ms steps first (timers,
 *            retransmissions, persist, TIME-WAIT, idle all get to run);
 * op & 0x30  0: body is a whole Ethernet frame, fed as is;
 *            1..3: body is a TCP header + payload for connection 1..3:
 *            the harness wraps it in Ethernet/IPv4, makes SEQ and ACK
 *            relative to what the module last sent on that connection
 *            (and so the edges of SACK blocks) and fixes the checksum,
 *            so mutations reach the state machine instead of dying at
 *            the checksum; connections 2 and 3, and the established one
 *            we opened, agreed to SACK (the sender's recovery, tcp_sack.c);
 * op & 0x40  with op & 0x30 == 0: marks the frame "checksums verified by
 *            the NIC"; with 1..3: the body is for an opened connection
 *            instead (1: the one in SYN-SENT, 2: the established one,
 *            3: the one in SYN-SENT again);
 * op & 0x80  the app closes (or, with 0x01, aborts) that connection; with
 *            op & 0x30 == 0 instead: the body is a merged packet (GRO's,
 *            FG_RX_MORE): byte 0 names the connection (its value mod 5;
 *            0x80: checksums not verified, 0x40: IP total length off by
 *            one, both refused by net), byte 1 & 7 the number of pieces
 *            - 1, the rest a TCP header + payload wrapped as for 1..3,
 *            whose payload is then cut into the frame's own part and
 *            equal pieces, each in its own buffer.
 * The app consumes a varying amount, holds some buffers and answers
 * with data. The port has a kernel side (the exception path, a small
 * rate): frames not for port 119 or not TCP go there or are rate-limited.
 * At the end every packet buffer must be back in the pool.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

#define NPASSIVE 3		/* accepted: conn[0..2], peer ports 50001..50003 */
#define NCONN 5			/* opened: conn[3] in SYN-SENT, conn[4] established */
#define MAX_HOLD 16

struct fz {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	uint64_t now;
	struct fg_tcp_conn *conn[NCONN];
	uint32_t last_seq[NCONN], last_ack[NCONN];	/* from our side */
	struct fg_iov held[MAX_HOLD];
	struct fg_tcp_conn *held_conn[MAX_HOLD];
	unsigned n_held;
	unsigned toggle;
};

static struct fz Z;
static const uint8_t our_mac[6] = { 2, 0, 0, 0, 0, 2 }, peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t our_ip[4] = { 198, 18, 0, 2 }, peer_ip[4] = { 198, 18, 0, 1 };

static int conn_index(uint16_t port)
{
	return port >= 50001 && port <= 50000 + NCONN ? port - 50001 : -1;
}

static void sink(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	int k;

	(void)arg, (void)flags;
	if (len < 54 || f[23] != 6)
		return;
	k = conn_index((uint16_t)(f[36] << 8 | f[37]));
	if (k < 0)
		return;
	Z.last_seq[k] = (uint32_t)f[38] << 24 | (uint32_t)f[39] << 16 | (uint32_t)f[40] << 8 | f[41];
	Z.last_ack[k] = (uint32_t)f[42] << 24 | (uint32_t)f[43] << 16 | (uint32_t)f[44] << 8 | f[45];
	if (f[47] & 0x02)
		Z.last_seq[k]++;	/* SYN or SYN-ACK: the next byte follows it */
}

static void release_holds(struct fg_tcp_conn *c)
{
	for (unsigned i = 0; i < Z.n_held;) {
		if (!c || Z.held_conn[i] == c) {
			fg_tcp_release(Z.held_conn[i], &Z.held[i]);
			Z.held[i] = Z.held[--Z.n_held];
			Z.held_conn[i] = Z.held_conn[Z.n_held];
		} else {
			i++;
		}
	}
}

static void *on_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	int k = conn_index(peer->port);

	(void)app, (void)local;
	if (k >= 0)
		Z.conn[k] = c;
	return &Z;
}

static uint32_t on_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	uint32_t total = 0;

	(void)ctx;
	Z.toggle++;
	if (Z.toggle % 7 == 0)
		return 0;	/* leave it queued: the window shrinks */
	if (Z.toggle % 5 == 0 && Z.n_held < MAX_HOLD) {
		fg_tcp_hold(c, &iov[0]);
		Z.held[Z.n_held] = iov[0];
		Z.held_conn[Z.n_held++] = c;
	}
	for (unsigned i = 0; i < n; i++)
		total += iov[i].len;
	fg_tcp_send(c, iov[0].base, iov[0].len > 100 ? 100 : iov[0].len);
	return Z.toggle % 3 == 0 ? total / 2 : total;
}

static void forget(struct fg_tcp_conn *c)
{
	release_holds(c);
	for (int k = 0; k < NCONN; k++)
		if (Z.conn[k] == c)
			Z.conn[k] = NULL;
}

static void on_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)why;
	forget(c);
}

static void on_eof(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx;
	fg_tcp_close(c);
}

static void on_connect(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx;
	fg_tcp_send(c, "MODE STREAM\r\n", 13);
}

static const struct fg_tcp_app_ops ops = {
	.on_accept = on_accept, .on_data = on_data, .on_eof = on_eof, .on_close = on_close,
	.on_connect = on_connect,
};

static void feed(const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct fg_rx_frame fr;

	if (fg_memport_rx_frame(Z.mp, frame, len, &fr) < 0)
		return;
	fr.flags = flags;
	fg_net_rx(Z.net, &fr, 1, Z.now);
}

/* SACK blocks (kind 5) made relative to `base` as SEQ and ACK are, so
 * mutated blocks land near what is in flight. */
static void sack_relative(uint8_t *o, uint32_t len, uint32_t base)
{
	for (uint32_t i = 0; i < len;) {
		uint32_t olen = o[i] <= 1 ? 1 : (i + 1 < len ? o[i + 1] : 0);

		if (olen < 1 || i + olen > len)
			return;
		if (o[i] == 5)
			for (uint32_t e = i + 2; e + 4 <= i + olen; e += 4) {
				uint32_t v = ((uint32_t)o[e] << 24 | (uint32_t)o[e + 1] << 16 |
					      (uint32_t)o[e + 2] << 8 | o[e + 3]) + base;

				o[e] = (uint8_t)(v >> 24);
				o[e + 1] = (uint8_t)(v >> 16);
				o[e + 2] = (uint8_t)(v >> 8);
				o[e + 3] = (uint8_t)v;
			}
		i += olen;
	}
}

/* Wrap a TCP header + payload for connection k into a valid frame. */
static uint32_t wrap(uint8_t *f, int k, const uint8_t *tcp, uint32_t len, bool relative)
{
	uint8_t opts[40];
	uint32_t hl = (uint32_t)(tcp[12] >> 4) * 4, seq, ack;
	struct fg_craft_tcp c = {
		.dst_mac = our_mac, .src_mac = peer_mac, .sport = (uint16_t)(50001 + k), .dport = 119,
		.flags = tcp[13], .wnd = (uint16_t)(tcp[14] << 8 | tcp[15]),
	};
	uint32_t n;

	memcpy(&c.src, peer_ip, 4);
	memcpy(&c.dst, our_ip, 4);
	seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
	ack = (uint32_t)tcp[8] << 24 | (uint32_t)tcp[9] << 16 | (uint32_t)tcp[10] << 8 | tcp[11];
	c.seq = relative ? Z.last_ack[k] + seq : seq;
	c.ack = relative ? Z.last_seq[k] + ack : ack;
	/* options as given (whole words, within the header), the rest payload */
	if (hl < 20 || hl > len)
		hl = 20;
	c.optlen = (hl - 20) & ~3u;
	memcpy(opts, tcp + 20, c.optlen);
	if (relative)
		sack_relative(opts, c.optlen, Z.last_seq[k]);
	c.opts = opts;
	c.data = tcp + 20 + c.optlen;
	c.len = len - 20 - c.optlen;
	n = fg_craft_tcp_frame(f, &c);
	f[14 + 20 + 13] = tcp[13];	/* all eight flag bits, as fuzzed */
	return n;
}

/* A merged packet (see the head comment) from a record's body. */
static void feed_merged(const uint8_t *b, uint32_t len)
{
	static uint8_t f[2048];
	struct fg_rx_frame fr;
	struct fg_rx_piece pc[8];
	uint32_t flen, hdr, n, cut;
	unsigned pieces = 0;

	if (len < 22 || len > 1402)
		return;
	flen = wrap(f, b[0] % NCONN, b + 2, len - 2, true);
	hdr = 14 + 20 + (uint32_t)(f[14 + 20 + 12] >> 4) * 4;
	n = (b[1] & 7u) + 1;
	cut = (flen - hdr) / (n + 1);
	if (!cut) {
		feed(f, flen, 0);
		return;
	}
	if (fg_memport_rx_frame(Z.mp, f, flen - n * cut, &fr) < 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct fg_rx_frame p;

		if (fg_memport_rx_frame(Z.mp, f + flen - (n - i) * cut, cut, &p) < 0)
			break;	/* fewer pieces than the length says: refused */
		pc[pieces++] = (struct fg_rx_piece){ p.data, p.len, p.handle };
	}
	fr.flags = FG_RX_MORE | ((b[0] & 0x80) ? 0 : FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK);
	fr.more = pc;
	fr.n_more = (uint16_t)pieces;
	if (b[0] & 0x40)
		fr.data[17] ^= 1;	/* the IP total length's low bit */
	fg_net_rx(Z.net, &fr, 1, Z.now);
}

/* The kernel side: what reaches it is counted, nothing more. */
static void kernel_sink(void *arg, const uint8_t *f, uint32_t len, uint32_t flags)
{
	(void)f, (void)len, (void)flags;
	(*(unsigned long *)arg)++;
}

static unsigned long to_kernel;

/* An ARP request from the peer: its MAC is learned, opens send at once. */
static void peer_arp(void)
{
	uint8_t f[60];
	uint32_t src, dst;

	memcpy(&src, peer_ip, 4);
	memcpy(&dst, our_ip, 4);
	feed(f, fg_craft_arp_request(f, peer_mac, src, dst), 0);
}

/* conn[k] opened from our port 119 to the peer's 50001 + k. */
static void open_conn(int k)
{
	struct fg_endpoint local = { .family = AF_INET, .port = 119 };
	struct fg_endpoint peer = { .family = AF_INET, .port = (uint16_t)(50001 + k) };

	memcpy(local.addr, our_ip, 4);
	memcpy(peer.addr, peer_ip, 4);
	Z.conn[k] = fg_tcp_connect(Z.tcp, &local, &peer, &Z, Z.now, NULL);
	if (!Z.conn[k])
		abort();
	fg_net_flush(Z.net);
}

static void setup(void)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;
	uint8_t tcp[24] = { 0 }, f[128];

	memset(&Z, 0, sizeof(Z));
	Z.now = 1000000000ull;
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, our_mac, 6);
	memcpy(&nc.ipv4[0], our_ip, 4);
	nc.n_ipv4 = 1;
	nc.arp_entries = 16;
	nc.kernel_rate = 100;
	nc.kernel_burst = 4;
	memset(&tc, 0, sizeof(tc));
	tc.listen[0].port = 119;
	tc.listen[0].family = AF_INET;
	tc.n_listen = 1;
	tc.max_conns = 8;
	tc.syn_backlog = 4;
	tc.syn_backlog_per_peer = 4;
	tc.sndbuf = 4096;
	tc.rcvbuf = 16384;
	tc.rx_segs = 64;
	tc.rx_segs_per_conn = 32;
	tc.ooo_segs_per_conn = 8;
	tc.timer_slots = 64;
	tc.secret = 1;
	Z.mp = fg_memport_create(256, 2048, sink, NULL);
	fg_memport_set_kernel(Z.mp, kernel_sink, &to_kernel);
	Z.net = fg_net_create(&nc, fg_memport_ops(), Z.mp, &Z.st);
	Z.tcp = fg_tcp_create(Z.net, &tc, &ops, NULL);
	if (!Z.tcp)
		abort();
	for (int k = 0; k < NPASSIVE; k++) {
		tcp[12] = k ? 0x60 : 0x50;	/* 2 and 3: SACK-permitted (NOP NOP 4 2) */
		memcpy(tcp + 20, (const uint8_t[]){ 1, 1, 4, 2 }, 4);
		tcp[13] = 0x02;	/* SYN, absolute seq 0 */
		tcp[14] = 0xff;
		tcp[15] = 0xff;
		feed(f, wrap(f, k, tcp, k ? 24 : 20, false), 0);
		Z.last_ack[k] = 1;
		tcp[12] = 0x50;
		tcp[13] = 0x10;	/* ACK of the SYN-ACK, relative to what we sent */
		memset(tcp + 4, 0, 8);
		feed(f, wrap(f, k, tcp, 20, true), 0);
		if (!Z.conn[k])
			abort();	/* the harness must start from established connections */
	}
	peer_arp();
	open_conn(3);
	open_conn(4);
	tcp[12] = 0x60;		/* SYN-ACK with SACK-permitted: absolute seq 0, */
	tcp[13] = 0x12;		/* acknowledging our SYN */
	memset(tcp + 4, 0, 8);
	feed(f, wrap(f, 4, tcp, 24, true), 0);
	if (!Z.conn[3] || !Z.conn[4] || fg_tcp_conn_state(Z.conn[4]) != FG_TCP_ESTABLISHED)
		abort();
}

static void teardown(void)
{
	release_holds(NULL);
	fg_tcp_destroy(Z.tcp);
	fg_net_destroy(Z.net);
	/* every reference the modules took was dropped */
	if (fg_memport_in_use(Z.mp) != 0)
		abort();
	fg_memport_destroy(Z.mp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[2048];
	size_t i = 0;

	setup();
	while (i + 3 <= size) {
		uint8_t op = data[i];
		uint32_t len = (uint32_t)data[i + 1] << 8 | data[i + 2];
		unsigned target = (op >> 4) & 3;
		/* 1..3 name a connection; with 0x40 one of those we opened */
		int k = !target ? -1 : !(op & 0x40) ? (int)target - 1 : target == 2 ? 4 : 3;

		i += 3;
		if (len > size - i)
			len = (uint32_t)(size - i);
		if (op & 0x0f) {
			Z.now += (op & 0x0fu) * 50000000ull;
			fg_net_poll(Z.net, Z.now);
		}
		if (target == 0 && (op & 0x80)) {
			feed_merged(data + i, len);
		} else if (target == 0) {
			feed(data + i, len, (op & 0x40) ? FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK : 0);
		} else if (len >= 20 && len <= 1400) {
			feed(f, wrap(f, k, data + i, len, true), 0);
		}
		if ((op & 0x80) && k >= 0 && Z.conn[k]) {
			struct fg_tcp_conn *c = Z.conn[k];

			if (op & 1) {
				forget(c);
				fg_tcp_abort(c);
			} else {
				fg_tcp_close(c);
			}
			fg_net_poll(Z.net, Z.now);
		}
		i += len;
	}
	Z.now += 700ull * 1000000000ull;	/* let every timer run out */
	fg_net_poll(Z.net, Z.now);
	teardown();
	return 0;
}
