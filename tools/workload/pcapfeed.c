/* SPDX-License-Identifier: MIT */
/*
 * pcapfeed.c — the workload's client side as a capture (contract in
 * pcapgen.h): what feedgen would send if the server gave the model's
 * expected answers instantly.
 *
 * Each flow's bytes are produced in "writes": the greeting is assumed,
 * the first write is CAPABILITIES and/or MODE STREAM (alone, as a client
 * waits for 203), then every write carries the articles owed for the
 * previous write's 238/335 answers followed by up to `window` new offers,
 * and the last one QUIT. The client's ack advances by the octets of the
 * answers the previous write would have drawn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/pcapgen.h"

#define GREETING_LEN 40		/* "200 news.example.net ... ready\r\n" */
#define CAPS_LEN 64		/* 101 + VERSION 2, IHAVE, STREAMING, "." */
#define WRITE_MAX (1u << 20)	/* a write ends once it holds this much */

struct pflow {
	struct fg_pcap_flow fl;
	unsigned peer;
	const uint32_t *list;
	uint64_t n_list, next, stride;
	uint32_t *owed;		/* articles whose 238/335 came back */
	unsigned n_owed;
	size_t answers;		/* octets the server owes for the last write */
	int phase;		/* 0 = setup, 1 = offers, 2 = quit sent, 3 = closed */
};

struct pfeed {
	const struct fg_wl *wl;
	const struct fg_pcapfeed_opts *o;
	struct fg_pcap w;
	struct pflow *f;
	unsigned n;
	uint8_t *seen;		/* one bit per article: offered with a 238 already */
	uint8_t *srv;		/* per article: the in-order server's state (S_*) */
	uint32_t *holder;	/* per article: the flow an S_OWED/S_HELD offer went to */
	char *buf;
	size_t len, cap;
	struct fg_pcapfeed_stats *st;
};

static int buf_add(struct pfeed *p, const char *s, size_t n)
{
	if (p->len + n > p->cap) {
		size_t cap = (p->len + n) * 2;
		char *b = realloc(p->buf, cap);

		if (!b)
			return -ENOMEM;
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	return 0;
}

static bool bit(const uint8_t *set, uint32_t i)
{
	return set[i / 8] & (1u << (i % 8));
}

/*
 * The in-order server's view of one ID (pcapgen.h, fg_pcapfeed_stats):
 * NONE nobody holds it; OWED a 238/335 went out and the article follows
 * in that flow's next write; HELD a 238/335 went out to a flow that will
 * never send the article (the capture's client believed it refused), so
 * others are deferred until that flow ends; FINAL accepted, or rejected
 * and remembered. Which rejects a server remembers is floodgate's rule
 * (docs/rules.md, fg_rules_remember): a too-old article is, one dated too
 * far ahead or looping through our path is not (its ID may yet come good).
 */
enum { S_NONE = 0, S_OWED, S_HELD, S_FINAL };

/* The answer the model expects to an offer, and whether the article
 * follows; counts what an in-order server answers. */
static bool wanted_now(struct pfeed *p, const struct pflow *f, const struct fg_wl_article *a)
{
	uint32_t i = a->index;
	bool want = a->cls != FG_WL_BADID && !bit(p->seen, i);

	if (want)
		p->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	if (a->cls == FG_WL_BADID || p->srv[i] == S_FINAL) {
		p->st->refuse++;
	} else if (p->srv[i] != S_NONE) {
		p->st->defer++;
	} else {
		p->st->want++;
		p->srv[i] = want ? S_OWED : S_HELD;
		p->holder[i] = (uint32_t)(f - p->f);
	}
	return want;
}

/* An article goes out: the first of a wanted ID is accepted. */
static void decided(struct pfeed *p, const struct fg_wl_article *a)
{
	uint32_t i = a->index;

	if (a->cls == FG_WL_WANTED && p->srv[i] != S_FINAL) {
		p->st->accept++;
		p->srv[i] = S_FINAL;
		return;
	}
	p->st->reject++;
	if (p->srv[i] != S_FINAL)
		p->srv[i] = a->cls == FG_WL_OLD ? S_FINAL : S_NONE;
}

/* A flow ends: the offers it held without sending lapse. */
static void flow_ended(struct pfeed *p, const struct pflow *f)
{
	uint32_t me = (uint32_t)(f - p->f);

	for (uint32_t i = 0; i < fg_wl_params(p->wl)->articles; i++)
		if (p->srv[i] == S_HELD && p->holder[i] == me)
			p->srv[i] = S_NONE;
}

static int add_article(struct pfeed *p, const struct fg_wl_article *a, unsigned peer)
{
	char head[FG_WL_HDR_MAX];
	size_t hl = fg_wl_wire_head(p->wl, a, peer, head, sizeof(head));
	int rc = buf_add(p, head, hl);

	if (rc == 0)
		rc = buf_add(p, fg_wl_wire_body(p->wl, a), a->body_len);
	if (rc == 0)
		rc = buf_add(p, ".\r\n", 3);
	p->st->articles++;
	decided(p, a);
	return rc;
}

static int offer(struct pfeed *p, struct pflow *f, uint32_t art)
{
	static const char *const verbs[] = { "CHECK ", "TAKETHIS ", "IHAVE " };
	struct fg_wl_article a;
	char line[FG_WL_ID_MAX + 16];
	int n, rc;

	fg_wl_article(p->wl, art, &a);
	n = snprintf(line, sizeof(line), "%s%s\r\n", verbs[p->o->mode], a.msgid);
	rc = buf_add(p, line, (size_t)n);
	p->st->offers++;
	/* every answer is "NNN <id>\r\n" plus a short text at most; count the core */
	f->answers += 6 + a.msgid_len;
	if (rc == 0 && p->o->mode == FG_PCAPFEED_TAKETHIS)
		rc = add_article(p, &a, f->peer);
	else if (rc == 0 && wanted_now(p, f, &a))
		f->owed[f->n_owed++] = art;
	return rc;
}

/* Build flow f's next write into p->buf. */
static int build_write(struct pfeed *p, struct pflow *f)
{
	unsigned window = p->o->mode == FG_PCAPFEED_IHAVE ? 1 : p->o->window;
	unsigned owed = f->n_owed;
	int rc = 0;

	p->len = 0;
	if (f->phase == 0) {
		f->phase = 1;
		if (p->o->capabilities) {
			rc = buf_add(p, "CAPABILITIES\r\n", 14);
			f->answers += CAPS_LEN;
		}
		if (rc == 0 && p->o->mode_stream) {
			rc = buf_add(p, "MODE STREAM\r\n", 13);
			f->answers += 21;
		}
		if (p->len)
			return rc;
	}
	f->n_owed = 0;
	for (unsigned k = 0; k < owed && rc == 0; k++) {
		struct fg_wl_article a;

		fg_wl_article(p->wl, f->owed[k], &a);
		if (p->o->mode == FG_PCAPFEED_CHECK) {
			char line[FG_WL_ID_MAX + 16];
			int n = snprintf(line, sizeof(line), "TAKETHIS %s\r\n", a.msgid);

			rc = buf_add(p, line, (size_t)n);
		}
		if (rc == 0)
			rc = add_article(p, &a, f->peer);
		f->answers += 6 + a.msgid_len;
	}
	for (unsigned k = 0; k < window && rc == 0 && f->next < f->n_list &&
			     p->len < WRITE_MAX; k++) {
		rc = offer(p, f, f->list[f->next]);
		f->next += f->stride;
	}
	if (rc == 0 && p->len == 0) {
		rc = buf_add(p, "QUIT\r\n", 6);
		f->answers += 14;
		f->phase = 2;
		flow_ended(p, f);
	}
	return rc;
}

static int flows_init(struct pfeed *p)
{
	const struct fg_wl_params *wp = fg_wl_params(p->wl);
	unsigned window = p->o->window ? p->o->window : 1;

	p->n = wp->peers * p->o->conns;
	p->f = calloc(p->n, sizeof(*p->f));
	p->seen = calloc(wp->articles / 8 + 1, 1);
	p->srv = calloc(wp->articles, 1);
	p->holder = calloc(wp->articles, sizeof(*p->holder));
	if (!p->f || !p->seen || !p->srv || !p->holder)
		return -ENOMEM;
	for (unsigned i = 0; i < p->n; i++) {
		struct pflow *f = &p->f[i];
		unsigned peer = i / p->o->conns, k = i % p->o->conns;
		uint32_t caddr = (198u << 24 | 18u << 16) + peer + 1;	/* 198.18.0.0/15 */

		f->peer = peer;
		f->list = fg_wl_peer_offers(p->wl, peer, &f->n_list);
		f->next = k;
		f->stride = p->o->conns;
		f->owed = malloc(sizeof(uint32_t) * window);
		if (!f->owed)
			return -ENOMEM;
		memcpy(f->fl.cmac, (uint8_t[6]){ 0x02, 0, 0, 1, (uint8_t)(peer >> 8), (uint8_t)peer }, 6);
		memcpy(f->fl.smac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 1 }, 6);
		f->fl.caddr = caddr;
		f->fl.saddr = p->o->server_addr;
		f->fl.v6 = p->o->v6;
		f->fl.mss = p->o->v6 ? FG_PCAP_MSS - 20 : 0;	/* the same MTU */
		f->fl.cport = (uint16_t)(40000 + k);
		f->fl.sport = p->o->server_port;
	}
	return 0;
}

static int flow_turn(struct pfeed *p, struct pflow *f)
{
	int rc;

	if (f->phase == 2) {
		fg_pcap_server_sent(&f->fl, f->answers);
		f->phase = 3;
		return fg_pcap_flow_close(&p->w, &f->fl);
	}
	rc = build_write(p, f);
	if (rc < 0)
		return rc;
	/* the answers to the previous write arrived before this one */
	fg_pcap_server_sent(&f->fl, f->answers);
	f->answers = 0;
	return fg_pcap_client_data(&p->w, &f->fl, p->buf, p->len);
}

int fg_pcapfeed_write(const struct fg_wl *wl, const struct fg_pcapfeed_opts *o,
		      const char *path, struct fg_pcapfeed_stats *st)
{
	struct pfeed p = { .wl = wl, .o = o, .st = st };
	const struct fg_wl_params *wp = fg_wl_params(wl);
	unsigned open;
	int rc;

	memset(st, 0, sizeof(*st));
	if (o->conns == 0)
		return -EINVAL;
	rc = flows_init(&p);
	if (rc < 0)
		goto out_free;
	rc = fg_pcap_open(&p.w, path, (uint64_t)wp->now * 1000000000ull);
	if (rc < 0)
		goto out_free;
	for (unsigned i = 0; i < p.n && rc == 0; i++) {
		uint32_t isn = (uint32_t)fg_wl_hash(wp->seed, i, 201);

		rc = fg_pcap_flow_open(&p.w, &p.f[i].fl, isn, isn ^ 0x5a5a5a5a);
		fg_pcap_server_sent(&p.f[i].fl, GREETING_LEN);
	}
	/* flows take turns until every one is closed */
	do {
		open = 0;
		for (unsigned i = 0; i < p.n && rc == 0; i++) {
			if (p.f[i].phase == 3)
				continue;
			rc = flow_turn(&p, &p.f[i]);
			open++;
		}
	} while (open && rc == 0);
	st->flows = p.n;
	st->packets = p.w.packets;
	st->payload_bytes = p.w.payload_bytes;
	{
		int crc = fg_pcap_close(&p.w);

		rc = rc ? rc : crc;
	}
out_free:
	for (unsigned i = 0; p.f && i < p.n; i++)
		free(p.f[i].owed);
	free(p.f);
	free(p.seen);
	free(p.srv);
	free(p.holder);
	free(p.buf);
	return rc;
}
