/* SPDX-License-Identifier: MIT */
/*
 * memwire.h — two net + TCP stacks on memory ports wired back to back
 * (a frame one transmits is queued for the other; deliver() hands the
 * queue over), for the tests and the fuzz target of a TCP client against
 * a scripted server (test_portack.c, fuzz_portack.c). Header-only; the
 * includer defines nothing but uses these. A full queue drops the frame,
 * as a lossy wire would: TCP sends it again.
 */
#ifndef FG_MEMWIRE_H
#define FG_MEMWIRE_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/tcp.h"

#define MW_MAXQ 4096

struct mw_side {
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_stats st;
	struct mw_side *other;
	uint8_t *q[MW_MAXQ];		/* frames on their way to this side */
	uint32_t qlen[MW_MAXQ];
	unsigned qn;
};

static void mw_to_side(void *arg, const uint8_t *frame, uint32_t len, uint32_t flags)
{
	struct mw_side *to = ((struct mw_side *)arg)->other;

	(void)flags;
	if (to->qn == MW_MAXQ || !(to->q[to->qn] = malloc(len)))
		return;
	memcpy(to->q[to->qn], frame, len);
	to->qlen[to->qn++] = len;
}

/* Hand the queued frames to the side's stack; true when there were any. */
static bool mw_deliver(struct mw_side *s, uint64_t now)
{
	unsigned n = s->qn;

	s->qn = 0;
	for (unsigned i = 0; i < n; i++) {
		struct fg_rx_frame fr;

		if (fg_memport_rx_frame(s->mp, s->q[i], s->qlen[i], &fr) == 0)
			fg_net_rx(s->net, &fr, 1, now);
		free(s->q[i]);
	}
	return n > 0;
}

/* A side at `addr`/24 (MAC 02:..:last), chaining up to 17 buffers a frame
 * as a DPDK port does; a listener on port 119 when ops has on_accept.
 * 0, or -1 (no memory). */
static int mw_side_up(struct mw_side *s, struct mw_side *other, const char *addr,
		      unsigned last, const struct fg_tcp_app_ops *ops, unsigned n_bufs)
{
	struct fg_net_config nc;
	struct fg_tcp_config tc;

	memset(s, 0, sizeof(*s));
	s->other = other;
	memset(&nc, 0, sizeof(nc));
	nc.mac[0] = 2;
	nc.mac[5] = (uint8_t)last;
	inet_pton(AF_INET, addr, &nc.ipv4[0]);
	nc.plen[0] = 24;
	nc.n_ipv4 = 1;
	nc.hash_seed = last;
	nc.tx_max_segs = 17;
	s->mp = fg_memport_create(n_bufs, 2048, mw_to_side, s);
	s->net = s->mp ? fg_net_create(&nc, fg_memport_ops(), s->mp, &s->st) : NULL;
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 16;
	tc.secret = last;
	tc.rcvbuf = 64 << 10;
	if (ops->on_accept) {
		tc.listen[0].family = AF_INET;
		tc.listen[0].port = 119;
		tc.n_listen = 1;
	}
	s->tcp = s->net ? fg_tcp_create(s->net, &tc, ops, NULL) : NULL;
	return s->tcp ? 0 : -1;
}

/* Take the side down; returns the buffers still referenced (0 expected). */
static unsigned mw_side_down(struct mw_side *s)
{
	unsigned left;

	fg_tcp_destroy(s->tcp);
	fg_net_destroy(s->net);
	for (unsigned i = 0; i < s->qn; i++)
		free(s->q[i]);
	left = fg_memport_in_use(s->mp);
	fg_memport_destroy(s->mp);
	return left;
}

#endif /* FG_MEMWIRE_H */
