/* SPDX-License-Identifier: MIT */
/*
 * passive.c — reassembly of captured client streams for passive mode
 * (contract in passive.h).
 *
 * Records: a fixed array of flows and a pool of segment descriptors,
 * both sized at creation; flows are found through a chained hash of the
 * 4-tuple (seeded, so a mirror's crafted ports cannot pile up a chain).
 * A flow is hashed while its stream is alive; it stays allocated until
 * the engine has detached from its session.
 *
 * Per flow: `q` is the in-order payload not yet consumed by the session
 * (q_off octets of the head are consumed), `ooo` the segments ahead of a
 * hole, sorted by sequence number. Each queued segment holds a buffer
 * reference of its own.
 *
 * Sequence arithmetic is modulo 2^32 (RFC 9293 3.4): "a before b" is
 * (int32_t)(a - b) < 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "floodgate/crc32c.h"
#include "floodgate/log.h"
#include "floodgate/passive.h"

#define COMP "passive"
#define NONE UINT32_MAX
#define POOL_MARGIN 64		/* descriptors kept for the rest of a burst */
/* A flow whose session has ended stays hashed (its last segments, the
 * client's FIN, are not "mid-stream") until FIN/RST or this much capture
 * time without a segment: 2 * MSL, as TIME-WAIT (RFC 9293 3.3.2). */
#define LINGER_NS (60ull * 1000000000ull)
#define SWEEP_NS 1000000000ull

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* flow flags */
#define F_USED 0x001u
#define F_HASHED 0x002u		/* its stream is alive: segments find it */
#define F_PAUSED 0x004u		/* the session stopped reading */
#define F_CLOSE_ASKED 0x008u
#define F_DETACHED 0x010u
#define F_ON_WORK 0x020u
#define F_REOFFER 0x040u	/* resumed: deliver from work() */
#define F_FIN 0x080u		/* fin_seq is known */
#define F_EOF_TOLD 0x100u
#define F_BACKLOG 0x200u	/* counted in n_backlogged */

struct pseg {
	uint32_t next;
	uint32_t seq;
	const uint8_t *data;
	uint32_t len;
	void *handle;
};

struct flow {
	uint32_t flags;
	uint32_t hnext;			/* hash chain, NONE at the end */
	uint32_t caddr, saddr;		/* network byte order */
	uint16_t cport, sport;		/* host byte order */
	uint32_t next_seq;		/* next in-order octet */
	uint32_t fin_seq;
	uint32_t q_head, q_tail, q_off;
	uint32_t ooo_head;
	uint32_t n_q, n_ooo;
	struct fg_session *s;
	struct flow *work_next;
	struct fg_passive *p;
	uint64_t last_ns;		/* time of its last segment */
};

struct fg_passive {
	struct fg_engine *e;
	const struct fg_config *cfg;
	const struct fg_port_ops *ops;
	void *port;
	struct fg_stats *st;
	unsigned max_flows, max_segs, max_ooo, n_segs;
	uint32_t seed;			/* keys the flow hash */
	struct flow *flows;
	uint32_t free_flow;		/* index chain through hnext */
	unsigned flows_used;
	uint32_t *bucket;
	uint32_t bucket_mask;
	struct pseg *segs;
	uint32_t free_seg;
	unsigned segs_free;
	unsigned n_backlogged;
	struct flow *work, **work_tail;
	fg_time_t now;
	uint64_t now_ns;
	uint64_t clock_ns;
	uint64_t next_sweep_ns;
	uint16_t listen_port[FG_CONFIG_MAX_LISTEN];
	unsigned n_listen;
};

static bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}


/* ------------------------------------------------------------ set-up */

void fg_passive_set_config(struct fg_passive *p, const struct fg_config *cfg)
{
	p->cfg = cfg;
	p->n_listen = 0;
	for (unsigned i = 0; i < cfg->n_listen; i++)
		p->listen_port[p->n_listen++] = cfg->listen[i].port;
	if (!p->n_listen)
		p->listen_port[p->n_listen++] = 119;	/* RFC 3977 3.1 */
}

static int alloc_tables(struct fg_passive *p)
{
	unsigned nb = 1;

	while (nb < 2 * p->max_flows)
		nb <<= 1;
	p->flows = calloc(p->max_flows, sizeof(*p->flows));
	p->bucket = malloc(nb * sizeof(*p->bucket));
	p->segs = calloc(p->n_segs, sizeof(*p->segs));
	if (!p->flows || !p->bucket || !p->segs)
		return -ENOMEM;
	p->bucket_mask = nb - 1;
	for (unsigned i = 0; i < nb; i++)
		p->bucket[i] = NONE;
	p->free_flow = NONE;
	for (unsigned i = p->max_flows; i-- > 0;) {
		p->flows[i].p = p;
		p->flows[i].hnext = p->free_flow;
		p->free_flow = i;
	}
	p->free_seg = NONE;
	for (unsigned i = p->n_segs; i-- > 0;) {
		p->segs[i].next = p->free_seg;
		p->free_seg = i;
	}
	p->segs_free = p->n_segs;
	return 0;
}

struct fg_passive *fg_passive_create(const struct fg_passive_params *pp)
{
	struct fg_passive *p;

	if (!pp->engine || !pp->cfg || !pp->ops || !pp->stats) {
		FG_LOG_ERR(COMP, "engine, config, port ops and stats are required");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->e = pp->engine;
	p->ops = pp->ops;
	p->port = pp->port;
	p->st = pp->stats;
	p->max_flows = pp->max_flows ? pp->max_flows : 4096;
	p->max_segs = pp->max_segs ? pp->max_segs : 256;
	p->max_ooo = pp->max_ooo ? FG_MIN(pp->max_ooo, p->max_segs) : FG_MIN(64u, p->max_segs);
	p->n_segs = pp->segs ? pp->segs : p->max_flows * 32;
	if (p->n_segs < p->max_segs + POOL_MARGIN)
		p->n_segs = p->max_segs + POOL_MARGIN;
	if (getrandom(&p->seed, sizeof(p->seed), 0) != sizeof(p->seed))
		p->seed = (uint32_t)(uintptr_t)p;
	p->work_tail = &p->work;
	fg_passive_set_config(p, pp->cfg);
	if (alloc_tables(p) < 0) {
		FG_LOG_ERR(COMP, "no memory for %u flows and %u segments", p->max_flows, p->n_segs);
		fg_passive_destroy(p);
		return NULL;
	}
	return p;
}

void fg_passive_destroy(struct fg_passive *p)
{
	if (!p)
		return;
	if (p->flows_used)
		FG_LOG_WARN(COMP, "destroyed with %u flows in use", p->flows_used);
	free(p->flows);
	free(p->bucket);
	free(p->segs);
	free(p);
}

unsigned fg_passive_flows(const struct fg_passive *p)
{
	return p->flows_used;
}

bool fg_passive_backlogged(const struct fg_passive *p)
{
	return p->n_backlogged > 0 || p->segs_free < POOL_MARGIN;
}

uint64_t fg_passive_clock(const struct fg_passive *p)
{
	return p->clock_ns;
}

/* ------------------------------------------------------------ segments */

static uint32_t seg_get(struct fg_passive *p)
{
	uint32_t i = p->free_seg;

	if (i == NONE)
		return NONE;
	p->free_seg = p->segs[i].next;
	p->segs_free--;
	p->segs[i].next = NONE;
	return i;
}

static void seg_put(struct fg_passive *p, uint32_t i)
{
	p->ops->buf_unref(p->port, p->segs[i].handle);
	p->segs[i].next = p->free_seg;
	p->free_seg = i;
	p->segs_free++;
}

static void backlog_update(struct flow *f)
{
	struct fg_passive *p = f->p;
	bool over = f->n_q + f->n_ooo >= p->max_segs;

	if (over && !(f->flags & F_BACKLOG)) {
		f->flags |= F_BACKLOG;
		p->n_backlogged++;
		fg_stats_inc(p->st, FG_CTR_PASSIVE_BACKLOG);
	} else if (!over && (f->flags & F_BACKLOG)) {
		f->flags &= ~F_BACKLOG;
		p->n_backlogged--;
	}
}

static void drop_segments(struct flow *f)
{
	struct fg_passive *p = f->p;

	while (f->q_head != NONE) {
		uint32_t i = f->q_head;

		f->q_head = p->segs[i].next;
		seg_put(p, i);
	}
	while (f->ooo_head != NONE) {
		uint32_t i = f->ooo_head;

		f->ooo_head = p->segs[i].next;
		seg_put(p, i);
	}
	f->q_tail = NONE;
	f->q_off = 0;
	f->n_q = f->n_ooo = 0;
	backlog_update(f);
}

/* ------------------------------------------------------------ flows */

/* CRC-32C of the 4-tuple from a random seed (one instruction per word). */
static uint32_t flow_hash(const struct fg_passive *p, uint32_t caddr, uint32_t saddr,
			  uint16_t cport, uint16_t sport)
{
	uint32_t k[3] = { caddr, saddr, (uint32_t)cport << 16 | sport };

	return fg_crc32c(p->seed, k, sizeof(k)) & p->bucket_mask;
}

static struct flow *flow_find(struct fg_passive *p, uint32_t caddr, uint32_t saddr,
			      uint16_t cport, uint16_t sport)
{
	for (uint32_t i = p->bucket[flow_hash(p, caddr, saddr, cport, sport)]; i != NONE;
	     i = p->flows[i].hnext) {
		struct flow *f = &p->flows[i];

		if (f->caddr == caddr && f->saddr == saddr && f->cport == cport &&
		    f->sport == sport)
			return f;
	}
	return NULL;
}

static void flow_unhash(struct flow *f)
{
	struct fg_passive *p = f->p;
	uint32_t *pp = &p->bucket[flow_hash(p, f->caddr, f->saddr, f->cport, f->sport)];
	uint32_t me = (uint32_t)(f - p->flows);

	if (!(f->flags & F_HASHED))
		return;
	while (*pp != me)
		pp = &p->flows[*pp].hnext;
	*pp = f->hnext;
	f->hnext = NONE;
	f->flags &= ~F_HASHED;
}

static void work_add(struct flow *f)
{
	struct fg_passive *p = f->p;

	if (f->flags & F_ON_WORK)
		return;
	f->flags |= F_ON_WORK;
	f->work_next = NULL;
	*p->work_tail = f;
	p->work_tail = &f->work_next;
}

static void flow_maybe_free(struct flow *f)
{
	struct fg_passive *p = f->p;

	if (f->s || (f->flags & (F_HASHED | F_ON_WORK)) || !(f->flags & F_DETACHED))
		return;
	f->flags = 0;
	f->hnext = p->free_flow;
	p->free_flow = (uint32_t)(f - p->flows);
	p->flows_used--;
}

/* The session is told its connection is gone (never from inside an
 * engine call: callers are the receive path and work()). */
static void session_gone(struct flow *f)
{
	struct fg_session *s = f->s;

	drop_segments(f);
	if (s) {
		f->s = NULL;
		fg_session_closed(s);
	}
}

/* The stream is over: no more segments reach the flow. */
static void flow_end(struct flow *f)
{
	flow_unhash(f);
	session_gone(f);
	flow_maybe_free(f);
}

/* ------------------------------------------------------------ transport */

static int t_send(void *t, const void *buf, uint32_t len)
{
	struct flow *f = t;

	(void)buf;
	fg_stats_add(f->p->st, FG_CTR_PASSIVE_ANSWER_BYTES, len);
	return (int)len;
}

static void t_hold(void *t, const struct fg_iov *seg)
{
	struct flow *f = t;

	f->p->ops->buf_ref(f->p->port, seg->handle);
}

static void t_release(void *t, const struct fg_iov *seg)
{
	struct flow *f = t;

	f->p->ops->buf_unref(f->p->port, seg->handle);
}

static void t_pause(void *t)
{
	struct flow *f = t;

	f->flags |= F_PAUSED;
}

static void t_resume(void *t)
{
	struct flow *f = t;

	f->flags = (f->flags & ~F_PAUSED) | F_REOFFER;
	work_add(f);
}

static void t_close(void *t)
{
	struct flow *f = t;

	f->flags |= F_CLOSE_ASKED;
	work_add(f);
}

static void t_detach(void *t)
{
	struct flow *f = t;

	f->flags |= F_DETACHED;
	work_add(f);
}

static const struct fg_session_transport passive_transport = {
	.send = t_send, .hold = t_hold, .release = t_release, .pause = t_pause,
	.resume = t_resume, .close = t_close, .detach = t_detach,
};

static struct flow *flow_open(struct fg_passive *p, uint32_t caddr, uint32_t saddr,
			      uint16_t cport, uint16_t sport, uint32_t isn)
{
	const struct fg_config_peer *peer;
	struct flow *f;
	uint32_t i = p->free_flow, b;

	if (i == NONE) {
		fg_stats_inc(p->st, FG_CTR_PASSIVE_FLOWS_FULL);
		return NULL;
	}
	f = &p->flows[i];
	p->free_flow = f->hnext;
	p->flows_used++;
	memset(f, 0, sizeof(*f));
	f->p = p;
	f->flags = F_USED | F_HASHED;
	f->caddr = caddr;
	f->saddr = saddr;
	f->cport = cport;
	f->sport = sport;
	f->next_seq = isn + 1;		/* the SYN occupies one sequence number */
	f->q_head = f->q_tail = f->ooo_head = NONE;
	f->last_ns = p->now_ns;
	b = flow_hash(p, caddr, saddr, cport, sport);
	f->hnext = p->bucket[b];
	p->bucket[b] = i;
	fg_stats_inc(p->st, FG_CTR_PASSIVE_FLOWS);
	peer = fg_config_find_peer(p->cfg, AF_INET, &caddr);
	f->s = fg_session_open(p->e, peer, &passive_transport, f, p->now, p->now_ns);
	if (!f->s) {
		/* the engine is full: the flow is followed by nobody */
		fg_stats_inc(p->st, FG_CTR_PASSIVE_FLOWS_FULL);
		f->flags |= F_DETACHED;
		flow_end(f);
		return NULL;
	}
	return f;
}

/* ------------------------------------------------------------ delivery */

static void eof_if_done(struct flow *f)
{
	if ((f->flags & (F_FIN | F_EOF_TOLD)) == F_FIN && f->q_head == NONE &&
	    f->next_seq == f->fin_seq && f->s && !(f->flags & (F_PAUSED | F_CLOSE_ASKED))) {
		f->flags |= F_EOF_TOLD;
		fg_session_eof(f->s, f->p->now, f->p->now_ns);
	}
}

/* Consume `took` octets from the front of the queue. */
static void q_consume(struct flow *f, uint32_t took)
{
	struct fg_passive *p = f->p;

	while (took && f->q_head != NONE) {
		struct pseg *g = &p->segs[f->q_head];
		uint32_t rest = g->len - f->q_off;

		if (took < rest) {
			f->q_off += took;
			return;
		}
		took -= rest;
		f->q_head = g->next;
		if (f->q_head == NONE)
			f->q_tail = NONE;
		f->q_off = 0;
		f->n_q--;
		seg_put(p, (uint32_t)(g - p->segs));
	}
}

/* Offer the queued payload to the session until it stops reading. */
static void deliver(struct flow *f)
{
	struct fg_passive *p = f->p;
	struct fg_iov iov[64];

	while (f->s && f->q_head != NONE && !(f->flags & (F_PAUSED | F_CLOSE_ASKED))) {
		unsigned n = 0;
		uint32_t total = 0, took;

		for (uint32_t i = f->q_head; i != NONE && n < FG_ARRAY_SIZE(iov); i = p->segs[i].next) {
			uint32_t off = i == f->q_head ? f->q_off : 0;

			iov[n].base = p->segs[i].data + off;
			iov[n].len = p->segs[i].len - off;
			iov[n].handle = p->segs[i].handle;
			total += iov[n].len;
			n++;
		}
		took = fg_session_input(f->s, iov, n, p->now, p->now_ns);
		q_consume(f, took);
		/* completions now, not at the next burst: the same capture
		 * decides the same way whatever the burst sizes */
		if (fg_engine_xfers(p->e))
			fg_engine_poll(p->e, p->now, p->now_ns);
		if (took < total)
			break;
	}
	backlog_update(f);
	eof_if_done(f);
}

/* Segment i (starting at next_seq) joins the in-order queue. */
static void q_append(struct flow *f, uint32_t i)
{
	struct fg_passive *p = f->p;

	p->segs[i].next = NONE;
	if (f->q_tail != NONE)
		p->segs[f->q_tail].next = i;
	else
		f->q_head = i;
	f->q_tail = i;
	f->n_q++;
	f->next_seq = p->segs[i].seq + p->segs[i].len;
}

/* Move out-of-order segments that are now in order onto the queue. */
static void ooo_pull(struct flow *f)
{
	struct fg_passive *p = f->p;

	while (f->ooo_head != NONE) {
		uint32_t i = f->ooo_head;
		struct pseg *g = &p->segs[i];
		uint32_t end = g->seq + g->len;

		if (seq_lt(f->next_seq, g->seq))
			return;			/* still a hole */
		f->ooo_head = g->next;
		f->n_ooo--;
		if (!seq_lt(f->next_seq, end)) {
			fg_stats_add(p->st, FG_CTR_PASSIVE_DUP_BYTES, g->len);
			seg_put(p, i);		/* covered already */
			continue;
		}
		fg_stats_add(p->st, FG_CTR_PASSIVE_DUP_BYTES, f->next_seq - g->seq);
		g->data += f->next_seq - g->seq;
		g->len = end - f->next_seq;
		g->seq = f->next_seq;
		q_append(f, i);
	}
}

/* Keep a segment ahead of a hole, sorted; false when the flow cannot. */
static bool ooo_insert(struct flow *f, uint32_t i)
{
	struct fg_passive *p = f->p;
	uint32_t *pp = &f->ooo_head;

	if (f->n_ooo >= p->max_ooo)
		return false;
	while (*pp != NONE && seq_lt(p->segs[*pp].seq, p->segs[i].seq))
		pp = &p->segs[*pp].next;
	p->segs[i].next = *pp;
	*pp = i;
	f->n_ooo++;
	fg_stats_inc(p->st, FG_CTR_PASSIVE_OOO);
	return true;
}

/* RFC 9293 3.10.7.4: trim what was delivered, queue what is next, keep
 * what is ahead. `frame` is the received buffer (a reference is taken
 * for a kept segment). */
static void flow_data(struct flow *f, uint32_t seq, const uint8_t *data, uint32_t len,
		      void *handle)
{
	struct fg_passive *p = f->p;
	uint32_t i;

	if (seq_lt(seq, f->next_seq)) {
		uint32_t old = f->next_seq - seq;

		if (old >= len) {
			fg_stats_add(p->st, FG_CTR_PASSIVE_DUP_BYTES, len);
			return;
		}
		fg_stats_add(p->st, FG_CTR_PASSIVE_DUP_BYTES, old);
		seq += old;
		data += old;
		len -= old;
	}
	i = seg_get(p);
	if (i == NONE) {
		/* the pool ran dry inside a burst: this octet range is lost */
		fg_stats_inc(p->st, FG_CTR_PASSIVE_GAPS);
		flow_end(f);
		return;
	}
	p->ops->buf_ref(p->port, handle);
	p->segs[i] = (struct pseg){ .next = NONE, .seq = seq, .data = data, .len = len,
				    .handle = handle };
	if (seq != f->next_seq) {
		if (!ooo_insert(f, i)) {
			seg_put(p, i);
			fg_stats_inc(p->st, FG_CTR_PASSIVE_GAPS);
			flow_end(f);
		}
		backlog_update(f);
		return;
	}
	q_append(f, i);
	ooo_pull(f);
	deliver(f);
}

/* ------------------------------------------------------------ receive */

struct tcpseg {
	uint32_t saddr, daddr;		/* network byte order */
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t flags;
	const uint8_t *payload;
	uint32_t len;
};

/* Ethernet (one 802.1Q tag allowed) / IPv4 / TCP, lengths checked as a
 * receiving host would (RFC 791, RFC 9293 3.1). Checksums are not: a
 * capture taken on the sending host holds the checksums its NIC had not
 * yet filled in (transmit offload), and a mirror port's frames were
 * checked on the wire already; what was captured is what we judge.
 * 0, or a counter to bump. */
static enum fg_counter parse(const struct fg_rx_frame *fr, struct tcpseg *t)
{
	const uint8_t *d = fr->data, *ip, *th;
	uint32_t avail = fr->len, off = 14, hl, tot, doff;
	uint16_t type;

	if (avail < off + 20)
		return FG_CTR_PASSIVE_NOT_TCP;
	type = rd16(d + 12);
	if (type == 0x8100) {
		type = rd16(d + 16);
		off += 4;
	}
	if (type != 0x0800 || avail < off + 20)
		return FG_CTR_PASSIVE_NOT_TCP;
	ip = d + off;
	avail -= off;
	hl = (ip[0] & 15u) * 4;
	if ((ip[0] >> 4) != 4 || hl < 20 || avail < hl || (tot = rd16(ip + 2)) < hl ||
	    tot > avail)
		return FG_CTR_PASSIVE_BAD;
	if (ip[9] != 6)
		return FG_CTR_PASSIVE_NOT_TCP;
	if (rd16(ip + 6) & 0x3fff)
		return FG_CTR_PASSIVE_BAD;	/* a fragment: no peer sends them */
	th = ip + hl;
	if (tot - hl < 20 || (doff = (th[12] >> 4) * 4u) < 20 || doff > tot - hl)
		return FG_CTR_PASSIVE_BAD;
	memcpy(&t->saddr, ip + 12, 4);
	memcpy(&t->daddr, ip + 16, 4);
	t->sport = rd16(th);
	t->dport = rd16(th + 2);
	t->seq = rd32(th + 4);
	t->flags = th[13];
	t->payload = th + doff;
	t->len = tot - hl - doff;
	return (enum fg_counter)0;
}

static bool is_listen_port(const struct fg_passive *p, uint16_t port)
{
	for (unsigned i = 0; i < p->n_listen; i++)
		if (p->listen_port[i] == port)
			return true;
	return false;
}

static void server_segment(struct fg_passive *p, const struct tcpseg *t)
{
	struct flow *f;

	fg_stats_inc(p->st, FG_CTR_PASSIVE_SERVER_FRAMES);
	if (!(t->flags & TH_RST))
		return;
	f = flow_find(p, t->daddr, t->saddr, t->dport, t->sport);
	if (f) {
		fg_stats_inc(p->st, FG_CTR_PASSIVE_RESETS);
		flow_end(f);
	}
}

static void client_segment(struct fg_passive *p, const struct tcpseg *t, void *handle)
{
	struct flow *f = flow_find(p, t->saddr, t->daddr, t->sport, t->dport);

	if ((t->flags & (TH_SYN | TH_ACK)) == TH_SYN) {
		if (f && f->next_seq == t->seq + 1 && f->q_head == NONE && !(f->flags & F_FIN))
			return;		/* a retransmitted SYN */
		if (f)
			flow_end(f);	/* the 4-tuple is reused: a new connection */
		flow_open(p, t->saddr, t->daddr, t->sport, t->dport, t->seq);
		return;
	}
	if (!f) {
		/* a bare ACK (the last of a closed flow, say) carries nothing */
		if (t->len || (t->flags & TH_FIN))
			fg_stats_inc(p->st, FG_CTR_PASSIVE_MIDSTREAM);
		return;
	}
	f->last_ns = p->now_ns;
	if (!f->s) {
		/* after the session ended: what the client still sends is
		 * not decoded; its FIN or RST ends the flow */
		fg_stats_add(p->st, FG_CTR_PASSIVE_AFTER_CLOSE_BYTES, t->len);
		if (t->flags & (TH_FIN | TH_RST))
			flow_end(f);
		return;
	}
	if (t->flags & TH_RST) {
		fg_stats_inc(p->st, FG_CTR_PASSIVE_RESETS);
		flow_end(f);
		return;
	}
	if (t->flags & TH_FIN) {
		f->flags |= F_FIN;
		f->fin_seq = t->seq + t->len;
	}
	if (t->len)
		flow_data(f, t->seq, t->payload, t->len, handle);
	else
		eof_if_done(f);
}

unsigned fg_passive_rx(struct fg_passive *p, struct fg_rx_frame *frames, unsigned n,
		       const uint64_t *ts_ns, fg_time_t now, uint64_t now_ns)
{
	for (unsigned k = 0; k < n; k++) {
		struct fg_rx_frame *fr = &frames[k];
		struct tcpseg t;
		enum fg_counter bad;

		if (ts_ns && ts_ns[k]) {
			p->clock_ns = ts_ns[k];
			p->now = (fg_time_t)(ts_ns[k] / 1000000000ull);
			p->now_ns = ts_ns[k];
		} else {
			p->now = now;
			p->now_ns = now_ns;
		}
		fg_stats_inc(p->st, FG_CTR_PASSIVE_FRAMES);
		bad = parse(fr, &t);
		if (bad)
			fg_stats_inc(p->st, bad);
		else if (is_listen_port(p, t.dport))
			client_segment(p, &t, fr->handle);
		else
			server_segment(p, &t);
		p->ops->buf_unref(p->port, fr->handle);
	}
	return n;
}

/* ------------------------------------------------------------ work */

/* Unhash flows whose session ended and whose client went quiet. */
static void sweep(struct fg_passive *p)
{
	for (unsigned i = 0; i < p->max_flows; i++) {
		struct flow *f = &p->flows[i];

		if ((f->flags & F_HASHED) && !f->s && p->now_ns - f->last_ns > LINGER_NS)
			flow_end(f);
	}
}

unsigned fg_passive_work(struct fg_passive *p)
{
	unsigned done = 0;

	if (p->now_ns >= p->next_sweep_ns) {
		p->next_sweep_ns = p->now_ns + SWEEP_NS;
		sweep(p);
	}

	while (p->work) {
		struct flow *f = p->work;

		p->work = f->work_next;
		if (!p->work)
			p->work_tail = &p->work;
		f->work_next = NULL;
		f->flags &= ~F_ON_WORK;
		if ((f->flags & F_CLOSE_ASKED) && f->s) {
			session_gone(f);
			if (f->flags & F_FIN)
				flow_unhash(f);	/* the client's FIN came already */
		} else if ((f->flags & F_REOFFER) && !(f->flags & F_PAUSED)) {
			f->flags &= ~F_REOFFER;
			deliver(f);
		}
		flow_maybe_free(f);
		done++;
	}
	return done;
}

void fg_passive_end_all(struct fg_passive *p)
{
	for (unsigned i = 0; i < p->max_flows; i++) {
		struct flow *f = &p->flows[i];

		if ((f->flags & F_USED) && (f->flags & F_HASHED || f->s))
			flow_end(f);
	}
	fg_passive_work(p);
}
