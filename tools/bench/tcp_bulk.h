/* SPDX-License-Identifier: MIT */
/*
 * tcp_bulk.h — one bulk transfer between two TCP instances in one
 * process, over a memlink (floodgate/memlink.h) in simulated time: the
 * lossy-link unit test (tests/unit/test_tcp_sack.c) and the loss-recovery
 * benchmark (bench_tcp_loss.c) share it. Header-only.
 *
 *   side 0: net 198.18.0.1 (2001:db8::1), the client: fg_tcp_connect to
 *           side 1's port 119, sends `bytes` of a pattern, closes;
 *   side 1: net 198.18.0.2 (2001:db8::2), listens, checks every byte
 *           against the pattern as it arrives, in order, and closes at EOF.
 *
 * The clock is the simulation's: the loop jumps to the earliest of the
 * link's next arrival and both nets' deadlines, so a run takes the CPU
 * time its segments cost, whatever the simulated RTT or RTO, and repeats
 * exactly (seeded drops). The client learns the server's MAC by ARP or
 * Neighbour Discovery across the link, as on a real one.
 */
#ifndef FG_TCP_BULK_H
#define FG_TCP_BULK_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "floodgate/memlink.h"
#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

#define BULK_BUF (4u << 20)		/* send ring and receive window */
#define BULK_PORT_BUFS 16384u
#define BULK_CHUNK 65536u
#define BULK_SIM_LIMIT_NS (600ull * 1000000000ull)	/* a stalled run ends here */

struct bulk_cfg {
	uint64_t bytes;
	uint32_t loss_ppm;
	bool no_sack;		/* NewReno on both sides */
	bool v6;
	uint64_t delay_ns;	/* one way */
	uint64_t rate_bps;
	uint64_t seed;
};

struct bulk_result {
	uint64_t received;	/* octets that arrived in order and matched */
	uint64_t mismatch;	/* octets that did not match the pattern */
	bool eof;		/* the server saw the client's FIN after them */
	uint64_t sim_ns;	/* from the open to the last octet */
	uint64_t tx_bytes;	/* the client's payload octets sent, again included */
	uint64_t dropped;	/* data segments the link dropped */
	struct fg_stats st[2];	/* each side's counters */
};

struct bulk {
	const struct bulk_cfg *cfg;
	struct bulk_result *r;
	struct fg_memlink *link;
	struct fg_memport *mp[2];
	struct fg_net *net[2];
	struct fg_tcp *tcp[2];
	struct fg_tcp_conn *client;
	uint64_t sent, now, t_open, t_last;
	bool closed_client, closed_server;
	uint8_t chunk[BULK_CHUNK];
};

/* The pattern: octet i of the stream, a mix of its offset (a segment in
 * the wrong place does not match). */
static inline uint8_t bulk_octet(uint64_t i)
{
	uint32_t w = (uint32_t)(i >> 2) * 0x9e3779b1u;

	return (uint8_t)((w ^ (w >> 15)) >> (8 * (i & 3)));
}

static void bulk_fill(struct bulk *b)
{
	while (b->client && b->sent < b->cfg->bytes) {
		uint32_t n = (uint32_t)(b->cfg->bytes - b->sent < BULK_CHUNK ?
					b->cfg->bytes - b->sent : BULK_CHUNK);
		int got;

		for (uint32_t i = 0; i < n; i++)
			b->chunk[i] = bulk_octet(b->sent + i);
		got = fg_tcp_send(b->client, b->chunk, n);
		if (got <= 0)
			return;		/* on_writable follows */
		b->sent += (uint32_t)got;
	}
	if (b->client && b->sent == b->cfg->bytes) {
		fg_tcp_close(b->client);
		b->client = NULL;
	}
}

static void bulk_on_connect(void *ctx, struct fg_tcp_conn *c)
{
	struct bulk *b = ctx;

	b->client = c;
	bulk_fill(b);
}

static void bulk_on_writable(void *ctx, struct fg_tcp_conn *c)
{
	(void)c;
	bulk_fill(ctx);
}

static void *bulk_on_accept(void *app, struct fg_tcp_conn *c, const struct fg_endpoint *peer,
			    const struct fg_endpoint *local)
{
	(void)c, (void)peer, (void)local;
	return app;
}

static uint32_t bulk_on_data(void *ctx, struct fg_tcp_conn *c, const struct fg_iov *iov,
			     unsigned n)
{
	struct bulk *b = ctx;
	uint32_t took = 0;

	(void)c;
	for (unsigned k = 0; k < n; k++) {
		const uint8_t *p = iov[k].base;

		for (uint32_t i = 0; i < iov[k].len; i++)
			b->r->mismatch += p[i] != bulk_octet(b->r->received + i);
		b->r->received += iov[k].len;
		took += iov[k].len;
	}
	b->t_last = b->now;
	return took;
}

static void bulk_on_eof(void *ctx, struct fg_tcp_conn *c)
{
	struct bulk *b = ctx;

	b->r->eof = true;
	fg_tcp_close(c);
}

static void bulk_on_close(void *ctx, struct fg_tcp_conn *c, enum fg_tcp_close_reason why)
{
	struct bulk *b = ctx;

	(void)why;
	if (fg_tcp_conn_ctx(c) == b && c == b->client)
		b->client = NULL;
}

static const struct fg_tcp_app_ops bulk_client_ops = {
	.on_accept = bulk_on_accept, .on_data = bulk_on_data, .on_eof = bulk_on_eof,
	.on_writable = bulk_on_writable, .on_close = bulk_on_close, .on_connect = bulk_on_connect,
};

static int bulk_side(struct bulk *b, unsigned s)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;

	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, (const uint8_t[]){ 2, 0, 0, 0, 0, (uint8_t)(s + 1) }, 6);
	inet_pton(AF_INET, s ? "198.18.0.2" : "198.18.0.1", &nc.ipv4[0]);
	nc.n_ipv4 = 1;
	if (b->cfg->v6) {
		inet_pton(AF_INET6, s ? "2001:db8::2" : "2001:db8::1", nc.ipv6[0]);
		nc.n_ipv6 = 1;
	}
	nc.hash_seed = 42 + s;
	b->mp[s] = fg_memport_create(BULK_PORT_BUFS, 2048, fg_memlink_sink,
				     fg_memlink_end(b->link, s));
	if (!b->mp[s])
		return -1;
	b->net[s] = fg_net_create(&nc, fg_memport_ops(), b->mp[s], &b->r->st[s]);
	if (!b->net[s])
		return -1;
	fg_memlink_attach(b->link, s, b->mp[s], b->net[s]);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 4;
	tc.sndbuf = BULK_BUF;
	tc.rcvbuf = BULK_BUF;
	tc.rx_segs = BULK_PORT_BUFS / 2;
	tc.rx_segs_per_conn = BULK_PORT_BUFS / 2;
	tc.ooo_segs_per_conn = BULK_PORT_BUFS / 4;
	tc.no_sack = b->cfg->no_sack;
	tc.secret = 7 + s;
	if (s) {
		tc.listen[0].family = b->cfg->v6 ? AF_INET6 : AF_INET;
		tc.listen[0].port = 119;
		tc.n_listen = 1;
	}
	b->tcp[s] = fg_tcp_create(b->net[s], &tc, &bulk_client_ops, b);
	return b->tcp[s] ? 0 : -1;
}

static uint64_t bulk_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* One transfer; 0, or -1 when it could not be set up (nothing ran). */
static int bulk_run(const struct bulk_cfg *cfg, struct bulk_result *r)
{
	struct fg_memlink_config lc = {
		.delay_ns = cfg->delay_ns, .rate_bps = cfg->rate_bps, .loss_ppm = cfg->loss_ppm,
		.seed = cfg->seed,
	};
	static struct bulk bs;
	struct bulk *b = &bs;
	struct fg_endpoint local = { .port = 0 }, peer = { .port = 119 };
	int rc = -1, err = 0;

	memset(b, 0, sizeof(*b));
	memset(r, 0, sizeof(*r));
	b->cfg = cfg;
	b->r = r;
	b->now = 1000000000ull;
	b->link = fg_memlink_create(&lc);
	if (!b->link || bulk_side(b, 0) < 0 || bulk_side(b, 1) < 0)
		goto out;
	local.family = peer.family = cfg->v6 ? AF_INET6 : AF_INET;
	if (cfg->v6) {
		inet_pton(AF_INET6, "2001:db8::1", local.addr);
		inet_pton(AF_INET6, "2001:db8::2", peer.addr);
	} else {
		inet_pton(AF_INET, "198.18.0.1", local.addr);
		inet_pton(AF_INET, "198.18.0.2", peer.addr);
	}
	fg_memlink_set_now(b->link, b->now);
	if (!fg_tcp_connect(b->tcp[0], &local, &peer, b, b->now, &err))
		goto out;
	b->t_open = b->now;
	fg_net_poll(b->net[0], b->now);
	while (!(r->eof && r->received == cfg->bytes) && b->now - b->t_open < BULK_SIM_LIMIT_NS) {
		uint64_t next = bulk_min(fg_memlink_next(b->link),
					 bulk_min(fg_net_next_deadline(b->net[0]),
						  fg_net_next_deadline(b->net[1])));

		if (next == UINT64_MAX)
			break;		/* nothing will ever happen again: stalled */
		if (next > b->now)
			b->now = next;
		fg_memlink_set_now(b->link, b->now);
		fg_memlink_deliver(b->link, b->now);
		fg_net_poll(b->net[0], b->now);
		fg_net_poll(b->net[1], b->now);
	}
	r->sim_ns = b->t_last - b->t_open;
	r->tx_bytes = r->st[0].ctr[FG_CTR_TCP_TX_BYTES];
	r->dropped = fg_memlink_stats(b->link, 0)->dropped;
	rc = 0;
out:
	for (unsigned s = 0; s < 2; s++) {
		fg_tcp_destroy(b->tcp[s]);
		fg_net_destroy(b->net[s]);
		fg_memport_destroy(b->mp[s]);
	}
	fg_memlink_destroy(b->link);
	return rc;
}

#endif /* FG_TCP_BULK_H */
