/* SPDX-License-Identifier: MIT */
/*
 * memlink.c — two memory ports joined by a simulated wire (memlink.h).
 *
 * A frame, in steps:
 *   1. Side s's port transmits it (the memport sink): it is counted; a
 *      TCP segment with payload is dropped with probability loss_ppm by
 *      a seeded xorshift64* (the drops repeat run after run).
 *   2. Otherwise it is copied and stamped: it leaves the wire's sending
 *      end once the frames before it have (rate_bps: len * 8 / rate
 *      each) and arrives delay_ns later; it joins the FIFO of direction s
 *      (a constant delay keeps the FIFO in time order). Full: overflow.
 *   3. fg_memlink_deliver(now): the due frames of each direction become
 *      received frames of the other side's port (a copy in one of its
 *      buffers) and go to its net in bursts of up to FG_MEMLINK_BURST.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/memlink.h"
#include "floodgate/wire.h"

#define FG_MEMLINK_BURST 32
#define DEFAULT_MAX_FRAMES 65536u
#define NS_PER_S 1000000000ull

struct link_frame {
	uint64_t at;		/* arrival */
	uint32_t len;
	uint8_t data[];
};

struct fg_memlink_end {
	struct fg_memlink *l;
	unsigned side;
	struct link_frame **q;	/* FIFO ring of max_frames */
	unsigned head, n;
	uint64_t wire_free;	/* when the sending end is free again */
	struct fg_memport *mp;	/* this side's port and net (the receiver) */
	struct fg_net *net;
	struct fg_memlink_stats st;
};

struct fg_memlink {
	struct fg_memlink_config cfg;
	uint64_t rng;
	uint64_t now;
	struct fg_memlink_end end[2];
};

struct fg_memlink *fg_memlink_create(const struct fg_memlink_config *cfg)
{
	struct fg_memlink *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->cfg = *cfg;
	if (!l->cfg.max_frames)
		l->cfg.max_frames = DEFAULT_MAX_FRAMES;
	l->rng = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
	for (unsigned s = 0; s < 2; s++) {
		l->end[s].l = l;
		l->end[s].side = s;
		l->end[s].q = calloc(l->cfg.max_frames, sizeof(*l->end[s].q));
		if (!l->end[s].q) {
			fg_memlink_destroy(l);
			return NULL;
		}
	}
	return l;
}

void fg_memlink_destroy(struct fg_memlink *l)
{
	if (!l)
		return;
	for (unsigned s = 0; s < 2; s++) {
		struct fg_memlink_end *e = &l->end[s];

		for (unsigned i = 0; e->q && i < e->n; i++)
			free(e->q[(e->head + i) % l->cfg.max_frames]);
		free(e->q);
	}
	free(l);
}

struct fg_memlink_end *fg_memlink_end(struct fg_memlink *l, unsigned side)
{
	return &l->end[side & 1];
}

void fg_memlink_attach(struct fg_memlink *l, unsigned side, struct fg_memport *mp,
		       struct fg_net *net)
{
	l->end[side & 1].mp = mp;
	l->end[side & 1].net = net;
}

void fg_memlink_set_now(struct fg_memlink *l, uint64_t now_ns)
{
	l->now = now_ns;
}

const struct fg_memlink_stats *fg_memlink_stats(const struct fg_memlink *l, unsigned side)
{
	return &l->end[side & 1].st;
}

/* xorshift64* (Vigna): uniform enough for a drop decision, and repeatable */
static uint64_t next_rand(struct fg_memlink *l)
{
	l->rng ^= l->rng >> 12;
	l->rng ^= l->rng << 25;
	l->rng ^= l->rng >> 27;
	return l->rng * 0x2545f4914f6cdd1dull;
}

/* Step 1: a TCP segment (IPv4 or IPv6, no extension headers) with payload. */
static bool tcp_data(const uint8_t *f, uint32_t len)
{
	uint32_t l3 = FG_ETH_HLEN, ihl, tot, doff;
	uint16_t type;

	if (len < FG_ETH_HLEN + FG_IP_HLEN + FG_TCP_HLEN)
		return false;
	type = fg_rd16(f + 12);
	if (type == 0x0800 && f[l3 + 9] == FG_IP_PROTO_TCP) {
		ihl = (f[l3] & 15u) * 4;
		tot = fg_rd16(f + l3 + 2);
	} else if (type == 0x86dd && len >= FG_ETH_HLEN + FG_IP6_HLEN + FG_TCP_HLEN &&
		   f[l3 + 6] == FG_IP_PROTO_TCP) {
		ihl = FG_IP6_HLEN;
		tot = FG_IP6_HLEN + fg_rd16(f + l3 + 4);
	} else {
		return false;
	}
	if (l3 + ihl + FG_TCP_HLEN > len || tot < ihl + FG_TCP_HLEN)
		return false;
	doff = (f[l3 + ihl + 12] >> 4) * 4u;
	return tot > ihl + doff;
}

void fg_memlink_sink(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct fg_memlink_end *e = arg;
	struct fg_memlink *l = e->l;
	struct link_frame *lf;
	uint64_t start, ser;

	(void)flags;
	e->st.frames++;
	if (tcp_data(frame, len)) {
		e->st.data_segs++;
		/* step 1: the seeded drop */
		if (l->cfg.loss_ppm && next_rand(l) % 1000000u < l->cfg.loss_ppm) {
			e->st.dropped++;
			return;
		}
	}
	if (e->n == l->cfg.max_frames || !(lf = malloc(sizeof(*lf) + len))) {
		e->st.overflow++;
		return;
	}
	/* step 2: serialised behind the frames before it, then the delay */
	ser = l->cfg.rate_bps ? (uint64_t)len * 8 * NS_PER_S / l->cfg.rate_bps : 0;
	start = e->wire_free > l->now ? e->wire_free : l->now;
	e->wire_free = start + ser;
	lf->at = e->wire_free + l->cfg.delay_ns;
	lf->len = len;
	memcpy(lf->data, frame, len);
	e->q[(e->head + e->n) % l->cfg.max_frames] = lf;
	e->n++;
}

uint64_t fg_memlink_next(const struct fg_memlink *l)
{
	uint64_t next = UINT64_MAX;

	for (unsigned s = 0; s < 2; s++) {
		const struct fg_memlink_end *e = &l->end[s];

		if (e->n && e->q[e->head]->at < next)
			next = e->q[e->head]->at;
	}
	return next;
}

/* Step 3 for the frames side `s` sent: received by the other side. */
static unsigned deliver_dir(struct fg_memlink *l, unsigned s, uint64_t now)
{
	struct fg_memlink_end *e = &l->end[s], *to = &l->end[s ^ 1];
	struct fg_rx_frame burst[FG_MEMLINK_BURST];
	unsigned total = 0;

	while (e->n && e->q[e->head]->at <= now) {
		unsigned n = 0;

		while (n < FG_MEMLINK_BURST && e->n && e->q[e->head]->at <= now) {
			struct link_frame *lf = e->q[e->head];

			e->head = (e->head + 1) % l->cfg.max_frames;
			e->n--;
			if (fg_memport_rx_frame(to->mp, lf->data, lf->len, &burst[n]) == 0) {
				n++;
				e->st.delivered++;
			} else {
				e->st.overflow++;
			}
			free(lf);
		}
		if (n)
			fg_net_rx(to->net, burst, n, now);
		total += n;
	}
	return total;
}

unsigned fg_memlink_deliver(struct fg_memlink *l, uint64_t now_ns)
{
	unsigned n = 0;

	if (now_ns > l->now)
		l->now = now_ns;
	n += deliver_dir(l, 0, now_ns);
	n += deliver_dir(l, 1, now_ns);
	return n;
}
