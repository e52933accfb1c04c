/* SPDX-License-Identifier: MIT */
/*
 * tcp_fixture.h — a net + TCP instance on a memory port for the unit
 * tests: crafted frames in (with correct checksums unless asked not to),
 * transmitted frames captured and parsed, a recording test app, and a
 * clock the test drives. Header-only (test_tcp.c; test_net.c has its own
 * recording L4 handler instead of TCP).
 */
#ifndef FG_TCP_FIXTURE_H
#define FG_TCP_FIXTURE_H

#include <arpa/inet.h>
#include <string.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"
#include "fgtest.h"

#define FX_MAX_TX 512
#define FX_PEER_PORT 40000
#define FX_MS 1000000ull

struct fx_tx {
	uint8_t frame[2048];
	uint32_t len;
	/* parsed TCP fields (when it is TCP) */
	int is_tcp;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t wnd, sport, dport;
	uint32_t plen;
	const uint8_t *payload;
	uint16_t mss;		/* SYN option */
	int ws;			/* SYN option, -1 none */
	int sack_ok;		/* SYN option SACK-permitted */
	unsigned n_sack;	/* SACK blocks */
	uint32_t sack[8];
};

struct fx {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	uint64_t now;
	uint8_t mac[6], peer_mac[6];
	uint32_t addr, peer;
	/* IPv6 mode (fx_setup6): the peer's segments come over IPv6 */
	int v6;
	uint8_t addr6[16], peer6[16];
	struct fx_tx tx[FX_MAX_TX];
	uint32_t tx_flags[FX_MAX_TX];	/* FG_TX_* of each */
	unsigned n_tx;
	/* app side */
	struct fg_tcp_conn *conn;
	void *ctx_token;
	int refuse;
	unsigned accepts, closes, eofs, writables;
	struct fg_endpoint peer_seen, local_seen;
	enum fg_tcp_close_reason close_why;
	uint8_t rx[1 << 16];
	uint32_t rx_len;
	uint32_t consume_limit;		/* UINT32_MAX = take all */
	int hold_all;			/* hold every iov it consumes */
	struct fg_iov held[256];
	unsigned n_held;
	/* peer sequence state */
	uint32_t pseq;			/* next sequence number the peer sends */
	uint32_t our_seq;		/* our ISS + 1 after the handshake */
};

static struct fx *FX;

static void fx_parse(struct fx_tx *t)
{
	const uint8_t *ip = t->frame + 14, *th;
	unsigned ihl, doff, tot;

	t->ws = -1;
	if (t->len >= 74 && t->frame[12] == 0x86 && t->frame[13] == 0xdd && ip[6] == 6) {
		ihl = 40;
		tot = 40u + (uint32_t)(ip[4] << 8 | ip[5]);
	} else if (t->len >= 54 && t->frame[12] == 0x08 && t->frame[13] == 0 && ip[9] == 6) {
		ihl = (ip[0] & 15u) * 4;
		tot = (uint32_t)(ip[2] << 8 | ip[3]);
	} else {
		return;
	}
	th = ip + ihl;
	t->is_tcp = 1;
	t->sport = (uint16_t)(th[0] << 8 | th[1]);
	t->dport = (uint16_t)(th[2] << 8 | th[3]);
	t->seq = (uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7];
	t->ack = (uint32_t)th[8] << 24 | (uint32_t)th[9] << 16 | (uint32_t)th[10] << 8 | th[11];
	doff = (th[12] >> 4) * 4u;
	t->flags = th[13];
	t->wnd = (uint16_t)(th[14] << 8 | th[15]);
	t->payload = th + doff;
	t->plen = tot - ihl - doff;
	for (unsigned i = 20; i < doff;) {
		if (th[i] == 0)
			break;
		if (th[i] == 1) {
			i++;
			continue;
		}
		if (th[i] == 2)
			t->mss = (uint16_t)(th[i + 2] << 8 | th[i + 3]);
		if (th[i] == 3)
			t->ws = th[i + 2];
		if (th[i] == 4)
			t->sack_ok = 1;
		if (th[i] == 5) {
			t->n_sack = (th[i + 1] - 2u) / 8;
			for (unsigned k = 0; k < 2 * t->n_sack && k < 8; k++)
				t->sack[k] = (uint32_t)th[i + 2 + 4 * k] << 24 |
					     (uint32_t)th[i + 3 + 4 * k] << 16 |
					     (uint32_t)th[i + 4 + 4 * k] << 8 | th[i + 5 + 4 * k];
		}
		i += th[i + 1];
	}
}

static void fx_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct fx *f = arg;
	struct fx_tx *t;

	ck_assert_uint_lt(f->n_tx, FX_MAX_TX);
	f->tx_flags[f->n_tx] = flags;
	t = &f->tx[f->n_tx++];
	memset(t, 0, sizeof(*t));
	memcpy(t->frame, frame, len);
	t->len = len;
	fx_parse(t);
}

/* ---- test app: records everything ---- */

static void *fx_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
		       const struct fg_endpoint *local)
{
	struct fx *f = app;

	f->peer_seen = *peer;
	f->local_seen = *local;
	f->accepts++;
	if (f->refuse)
		return NULL;
	f->conn = c;
	return &f->ctx_token;
}

static uint32_t fx_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov, unsigned n)
{
	struct fx *f = FX;
	uint32_t took = 0;

	ck_assert_ptr_eq(ctx, &f->ctx_token);
	ck_assert_ptr_eq(c, f->conn);
	for (unsigned i = 0; i < n && took < f->consume_limit; i++) {
		uint32_t k = FG_MIN(iov[i].len, f->consume_limit - took);

		ck_assert_uint_le(f->rx_len + k, sizeof(f->rx));
		memcpy(f->rx + f->rx_len, iov[i].base, k);
		f->rx_len += k;
		took += k;
		if (f->hold_all && k == iov[i].len) {
			ck_assert_uint_lt(f->n_held, 256);
			fg_tcp_hold(c, &iov[i]);
			f->held[f->n_held++] = iov[i];
		}
	}
	return took;
}

static void fx_eof(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx, (void)c;
	FX->eofs++;
}

static void fx_writable(void *ctx, struct fg_tcp_conn *c)
{
	(void)ctx, (void)c;
	FX->writables++;
}

static void fx_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	struct fx *f = FX;

	ck_assert_ptr_eq(ctx, &f->ctx_token);
	/* the conn is valid here: holds can be released */
	for (unsigned i = 0; i < f->n_held; i++)
		fg_tcp_release(c, &f->held[i]);
	f->n_held = 0;
	f->closes++;
	f->close_why = why;
	f->conn = NULL;
}

static const struct fg_tcp_app_ops fx_ops = {
	.on_accept = fx_accept, .on_data = fx_data, .on_eof = fx_eof,
	.on_writable = fx_writable, .on_close = fx_close,
};

/* The next fixture is IPv6 (fx_setup6 sets it; every setup clears it). */
static int fx_next_v6;
/* The next fixture's net chains TX frames of up to this many buffers
 * (fg_net_config.tx_max_segs; 0: one buffer a frame). */
static unsigned fx_next_tx_segs __attribute__((unused));
/* The next fixture's port segments TCP frames of up to this many payload
 * octets (fg_net_config.tso_max; 0: no TSO). */
static uint32_t fx_next_tso __attribute__((unused));

static void fx_setup_bufs(struct fg_tcp_config *tc, unsigned n_bufs)
{
	static struct fx fx_storage;
	struct fx *f = &fx_storage;
	struct fg_net_config nc;

	memset(f, 0, sizeof(*f));
	FX = f;
	f->v6 = fx_next_v6;
	f->consume_limit = UINT32_MAX;
	f->now = 1000 * FX_MS;
	memcpy(f->mac, (const uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
	memcpy(f->peer_mac, (const uint8_t[]){ 2, 0, 0, 0, 0, 1 }, 6);
	inet_pton(AF_INET, "198.18.0.2", &f->addr);
	inet_pton(AF_INET, "198.18.0.1", &f->peer);
	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, f->mac, 6);
	nc.ipv4[0] = f->addr;
	nc.n_ipv4 = 1;
	nc.hash_seed = 42;
	nc.tx_max_segs = fx_next_tx_segs;
	nc.tso_max = fx_next_tso;
	inet_pton(AF_INET6, "2001:db8::2", f->addr6);
	inet_pton(AF_INET6, "2001:db8::1", f->peer6);
	if (f->v6) {
		/* an MTU 20 octets larger than IPv4's keeps the MSS of 1460
		 * every test here reckons with */
		memcpy(nc.ipv6[0], f->addr6, 16);
		nc.n_ipv6 = 1;
		nc.mtu = 1520;
	}
	f->mp = fg_memport_create(n_bufs, 2048, fx_sink, f);
	ck_assert_ptr_nonnull(f->mp);
	f->net = fg_net_create(&nc, fg_memport_ops(), f->mp, &f->st);
	ck_assert_ptr_nonnull(f->net);
	if (!tc->n_listen) {
		tc->listen[0].port = 119;
		tc->listen[0].family = f->v6 ? AF_INET6 : AF_INET;
		tc->n_listen = 1;
	}
	tc->secret = 7;
	f->tcp = fg_tcp_create(f->net, tc, &fx_ops, f);
	ck_assert_ptr_nonnull(f->tcp);
}

static void fx_setup_cfg(struct fg_tcp_config *tc)
{
	fx_setup_bufs(tc, 4096);
}

static void fx_setup(void)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 64;
	fx_setup_cfg(&tc);
}

/* The same over IPv6: every later fx_reconfig() of the test stays IPv6. */
static void fx_setup6(void)
{
	fx_next_v6 = 1;
	fx_setup();
}

static void fx_setup4(void)
{
	fx_next_v6 = 0;
	fx_setup();
}

/* The peer's and our address as the app sees them (4 or 16 octets). */
static const void *fx_peer_addr(void)
{
	return FX->v6 ? (const void *)FX->peer6 : (const void *)&FX->peer;
}

static const void *fx_our_addr(void)
{
	return FX->v6 ? (const void *)FX->addr6 : (const void *)&FX->addr;
}

static size_t fx_alen(void)
{
	return FX->v6 ? 16 : 4;
}

static void fx_teardown(void)
{
	struct fx *f = FX;

	fg_tcp_destroy(f->tcp);
	fg_net_destroy(f->net);
	/* every buffer the modules took a reference on was given back */
	ck_assert_uint_eq(fg_memport_in_use(f->mp), 0);
	fg_memport_destroy(f->mp);
}

/* Replace the fixture's instance with one built from `tc`. */
static void fx_reconfig(struct fg_tcp_config *tc)
{
	fx_teardown();
	fx_setup_cfg(tc);
}

static uint16_t fx_csum(const uint8_t *p, size_t n, uint32_t sum)
{
	return fg_csum_fold(fg_csum_add(sum, p, n));
}

/* Build and feed a TCP segment from the peer; opts appended raw. */
static void fx_seg_full(uint16_t sport, uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack,
			uint16_t wnd, const void *data, uint32_t len, const uint8_t *opts,
			unsigned optlen, int bad_csum)
{
	struct fx *f = FX;
	struct fg_rx_frame fr;
	struct fg_craft_tcp c = {
		.dst_mac = f->mac, .src_mac = f->peer_mac, .src = f->peer, .dst = f->addr,
		.sport = sport, .dport = dport, .seq = seq, .ack = ack, .flags = flags, .wnd = wnd,
		.opts = opts, .optlen = optlen, .data = data, .len = len,
	};

	if (f->v6) {
		c.src6 = f->peer6;
		c.dst6 = f->addr6;
	}
	ck_assert_int_eq(fg_memport_rx_frame(f->mp, NULL, 74 + optlen + len, &fr), 0);
	fr.len = fg_craft_tcp_frame(fr.data, &c);
	if (bad_csum)
		fr.data[(f->v6 ? 74 : 54) - 4] ^= 0x5a;	/* the TCP checksum */
	fg_net_rx(f->net, &fr, 1, f->now);
}

static void fx_seg(uint8_t flags, uint32_t seq, uint32_t ack, uint16_t wnd, const void *data,
		   uint32_t len)
{
	fx_seg_full(FX_PEER_PORT, 119, flags, seq, ack, wnd, data, len, NULL, 0, 0);
}

static void fx_advance(uint64_t ns)
{
	FX->now += ns;
	fg_net_poll(FX->net, FX->now);
}

static struct fx_tx *fx_last(void)
{
	return FX->n_tx ? &FX->tx[FX->n_tx - 1] : NULL;
}

/* A SYN with MSS 1460 and window scale 7 (when ws >= 0). */
static void fx_syn(uint32_t isn, int ws)
{
	const uint8_t opts[8] = { 2, 4, 0x05, 0xb4, 1, 3, 3, (uint8_t)(ws < 0 ? 0 : ws) };

	fx_seg_full(FX_PEER_PORT, 119, 0x02, isn, 0, 65535, NULL, 0, opts, ws < 0 ? 4 : 8, 0);
}

/* Three-way handshake; the connection is ESTABLISHED after it. */
static void fx_handshake(void)
{
	struct fx *f = FX;
	struct fx_tx *sa;

	f->pseq = 1000;
	fx_syn(f->pseq - 1, -1);
	sa = fx_last();
	ck_assert_ptr_nonnull(sa);
	ck_assert_uint_eq(sa->flags, 0x12);
	ck_assert_uint_eq(sa->ack, f->pseq);
	f->our_seq = sa->seq + 1;
	fx_seg(0x10, f->pseq, f->our_seq, 65535, NULL, 0);
	ck_assert_ptr_nonnull(f->conn);
	ck_assert_int_eq(fg_tcp_conn_state(f->conn), FG_TCP_ESTABLISHED);
	f->n_tx = 0;
}

#endif
