/* SPDX-License-Identifier: MIT */
/*
 * shadow.c — floodgate's decisions against the captured server's answers
 * (contract and classes in shadow.h), in four steps per flow:
 *
 *   1. flow     a record per client endpoint, made by the server's SYN (the
 *               anchor of its half) or by floodgate's first decision; a
 *               server SYN on a live record starts the connection again
 *               (the port pair was reused): the old one's leftovers are
 *               counted not compared
 *   2. stream   the server's text in sequence order: retransmitted octets
 *               trimmed, a segment past RCV.NXT is a hole (shadow_gaps):
 *               the partial line is dropped and octets are skipped up to
 *               the next line start, where answers pair again
 *   3. lines    "<code> [<id>]": the streaming codes with an ID, IHAVE's
 *               codes by the flow's IHAVE stage; every other line (the
 *               greeting, MODE STREAM's 203, 205) is no offer's answer,
 *               and the lines of a multi-line answer (RFC 3977 3.1.1:
 *               HELP's 100, CAPABILITIES' 101, LIST's 215, ... up to the
 *               lone ".") are none either
 *   4. pair     an answer and a decision of the same kind (and ID) meet
 *               in whichever order they come; the one that comes first
 *               waits in its side's list (FG_SHADOW_WAIT a side; the
 *               oldest is given up, not compared, when it overflows)
 *
 * Flow records live until the next SYN of their endpoint, the table's
 * need of a free record (a closed one first), or fg_shadow_end_all.
 */
#include <errno.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/shadow.h"

#define FG_SHADOW_WAIT 64		/* answers waiting for their pair, a side */
#define LINE_MAX_OCTETS 512		/* RFC 3977 3.1: 512 with the CRLF */
#define DIFFERED_MAX 64			/* CHECKs that differed, remembered */

enum kind { K_NONE, K_CHECK, K_TAKETHIS, K_IHAVE, K_IHAVE_XFER };

struct wait {
	uint64_t h;			/* the ID's hash; 0 for IHAVE */
	uint16_t code;
	uint8_t kind, reason;
	uint16_t id_len;
	char id[FG_SHADOW_ID_MAX];
};

struct side {
	struct wait w[FG_SHADOW_WAIT];
	unsigned head, n;
};

struct flow {
	struct fg_endpoint client;
	bool used, anchored, closed, resync, ihave_off, multi;
	bool ihave_xfer, ours_xfer;	/* theirs', ours: the last IHAVE answer was 335 */
	uint32_t nxt;			/* the server's next sequence number */
	uint16_t line_len;
	char line[LINE_MAX_OCTETS];
	struct side ours, theirs;
	uint64_t differed[DIFFERED_MAX];
	unsigned n_differed;
	uint64_t last_use;
	uint32_t next;			/* hash chain: index + 1, 0 ends */
};

struct fg_shadow {
	struct fg_stats *st;
	struct fg_shadow_report r;
	unsigned max_flows;
	uint64_t tick;
	struct flow *flows;
	uint32_t *heads;		/* hash chains' heads: index + 1 */
	uint32_t mask;
	unsigned n_used, hint;
};

/* ------------------------------------------------------------ 1. flows */

struct fg_shadow *fg_shadow_create(unsigned max_flows, struct fg_stats *stats)
{
	struct fg_shadow *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->st = stats;
	sh->max_flows = max_flows ? max_flows : 64;
	sh->mask = 1;
	while (sh->mask < 2 * sh->max_flows)
		sh->mask <<= 1;
	sh->flows = calloc(sh->max_flows, sizeof(*sh->flows));
	sh->heads = calloc(sh->mask, sizeof(*sh->heads));
	sh->mask--;
	if (!sh->flows || !sh->heads) {
		fg_shadow_destroy(sh);
		return NULL;
	}
	return sh;
}

void fg_shadow_destroy(struct fg_shadow *sh)
{
	if (!sh)
		return;
	free(sh->heads);
	free(sh->flows);
	free(sh);
}

static void count(struct fg_shadow *sh, enum fg_counter c, uint64_t n)
{
	if (sh->st)
		fg_stats_add(sh->st, c, n);
}

static void not_compared(struct fg_shadow *sh, uint64_t n)
{
	sh->r.not_compared += n;
	count(sh, FG_CTR_SHADOW_NOT_COMPARED, n);
}

static bool ep_eq(const struct fg_endpoint *a, const struct fg_endpoint *b)
{
	size_t alen = a->family == AF_INET6 ? 16 : 4;

	return a->family == b->family && a->port == b->port && !memcmp(a->addr, b->addr, alen);
}

static uint32_t *chain_of(struct fg_shadow *sh, const struct fg_endpoint *c)
{
	uint64_t h = c->port * 0x9e3779b97f4a7c15ull;
	unsigned alen = c->family == AF_INET6 ? 16 : 4;

	for (unsigned i = 0; i < alen; i++)
		h = (h ^ c->addr[i]) * 0x100000001b3ull;
	return &sh->heads[(h ^ (h >> 29)) & sh->mask];
}

/* Its leftovers are answers nobody will pair. */
static void flow_end(struct fg_shadow *sh, struct flow *f)
{
	uint32_t *pp = chain_of(sh, &f->client), idx = (uint32_t)(f - sh->flows) + 1;

	while (*pp && *pp != idx)
		pp = &sh->flows[*pp - 1].next;
	if (*pp)
		*pp = f->next;
	not_compared(sh, f->ours.n + f->theirs.n);
	memset(f, 0, sizeof(*f));
	sh->n_used--;
}

static struct flow *flow_find(struct fg_shadow *sh, const struct fg_endpoint *c)
{
	for (uint32_t i = *chain_of(sh, c); i; i = sh->flows[i - 1].next)
		if (ep_eq(&sh->flows[i - 1].client, c))
			return &sh->flows[i - 1];
	return NULL;
}

/* A free record, else the least recently used closed one (a scan: only
 * when every record is in use). */
static struct flow *flow_new(struct fg_shadow *sh, const struct fg_endpoint *c)
{
	struct flow *f = NULL;
	uint32_t *head;

	if (sh->n_used < sh->max_flows) {
		for (unsigned k = 0; k < sh->max_flows && !f; k++) {
			struct flow *g = &sh->flows[(sh->hint + k) % sh->max_flows];

			if (!g->used)
				f = g;
		}
	}
	for (unsigned i = 0; i < sh->max_flows && !f; i++) {
		struct flow *g = &sh->flows[i];

		if (g->closed && (!f || g->last_use < f->last_use))
			f = g;
	}
	if (!f) {
		count(sh, FG_CTR_SHADOW_FLOWS_FULL, 1);
		return NULL;
	}
	if (f->used)
		flow_end(sh, f);
	sh->n_used++;
	sh->hint = (unsigned)(f - sh->flows) + 1;
	f->used = true;
	f->client = *c;
	head = chain_of(sh, c);
	f->next = *head;
	*head = (uint32_t)(f - sh->flows) + 1;
	return f;
}

/* ------------------------------------------------------------ 4. pairs */

static uint64_t id_hash(const char *id, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)id[i]) * 0x100000001b3ull;
	return h | 1;				/* 0 means "no ID" */
}

enum answer { A_TAKE, A_REFUSE, A_DEFER, A_OTHER };

static enum answer answer_of(unsigned code)
{
	switch (code) {
	case 238: case 239: case 335: case 235:
		return A_TAKE;
	case 438: case 439: case 435: case 437:
		return A_REFUSE;
	case 431: case 436: case 400:
		return A_DEFER;
	default:
		return A_OTHER;
	}
}

static void sample(struct fg_shadow *sh, enum fg_shadow_class c, const struct wait *o,
		   const struct wait *t)
{
	const struct wait *named = o->id_len ? o : t;
	struct fg_shadow_sample *s;

	if (sh->r.n_samples[c] >= FG_SHADOW_SAMPLES)
		return;
	s = &sh->r.samples[c][sh->r.n_samples[c]++];
	memcpy(s->id, named->id, named->id_len);
	s->id[named->id_len] = '\0';
	s->ours = o->code;
	s->theirs = t->code;
	s->reason = o->reason;
}

static bool differed_before(const struct flow *f, uint64_t h)
{
	unsigned n = FG_MIN(f->n_differed, (unsigned)DIFFERED_MAX);

	for (unsigned i = 0; i < n; i++)
		if (f->differed[i] == h)
			return true;
	return false;
}

static enum fg_shadow_class classify(const struct wait *o, const struct wait *t)
{
	enum answer a = answer_of(o->code), b = answer_of(t->code);

	if (a == b)
		return FG_SHADOW_AGREE;
	if (a == A_DEFER || b == A_DEFER || a == A_OTHER || b == A_OTHER)
		return FG_SHADOW_TIMING;
	return a == A_REFUSE ? FG_SHADOW_REFUSED_TOOK : FG_SHADOW_TOOK_REFUSED;
}

static const enum fg_counter class_ctr[FG_SHADOW__CLASSES] = {
	[FG_SHADOW_AGREE] = FG_CTR_SHADOW_AGREE,
	[FG_SHADOW_REFUSED_TOOK] = FG_CTR_SHADOW_REFUSED_TOOK,
	[FG_SHADOW_TOOK_REFUSED] = FG_CTR_SHADOW_TOOK_REFUSED,
	[FG_SHADOW_TIMING] = FG_CTR_SHADOW_TIMING,
};

static void compare(struct fg_shadow *sh, struct flow *f, const struct wait *o,
		    const struct wait *t)
{
	enum fg_shadow_class c = classify(o, t);

	if (o->kind == K_TAKETHIS && differed_before(f, o->h)) {
		sh->r.followups++;
		count(sh, FG_CTR_SHADOW_FOLLOWUPS, 1);
		return;
	}
	/* a deferred CHECK's article is decided afresh: only a refusal of
	 * what the server took is the same decision again at TAKETHIS */
	if (c == FG_SHADOW_REFUSED_TOOK && o->kind == K_CHECK)
		f->differed[f->n_differed++ % DIFFERED_MAX] = o->h;
	sh->r.n[c]++;
	count(sh, class_ctr[c], 1);
	if (c == FG_SHADOW_REFUSED_TOOK && o->reason < FG_REASON__COUNT)
		sh->r.refused_took[o->reason]++;
	if (c != FG_SHADOW_AGREE)
		sample(sh, c, o, t);
	/* IHAVE: the client sends an article only after the server's 335 */
	if ((o->kind == K_IHAVE) && ((o->code == 335) != (t->code == 335)))
		f->ihave_off = true;
}

static struct wait *side_at(struct side *s, unsigned i)
{
	return &s->w[(s->head + i) % FG_SHADOW_WAIT];
}

static void side_drop(struct side *s, unsigned i)
{
	for (unsigned j = i; j + 1 < s->n; j++)
		*side_at(s, j) = *side_at(s, j + 1);
	s->n--;
}

/* The first waiting entry that pairs with `w`: same kind, and for the
 * streaming kinds the same ID. */
static int side_match(struct side *s, const struct wait *w)
{
	for (unsigned i = 0; i < s->n; i++) {
		const struct wait *x = side_at(s, i);

		if (x->kind == w->kind && x->h == w->h)
			return (int)i;
	}
	return -1;
}

static void side_push(struct fg_shadow *sh, struct side *s, const struct wait *w)
{
	if (s->n == FG_SHADOW_WAIT) {
		s->head = (s->head + 1) % FG_SHADOW_WAIT;
		s->n--;
		not_compared(sh, 1);
	}
	*side_at(s, s->n++) = *w;
}

/* `w` came from one side (ours: from floodgate); pair it or let it wait. */
static void arrive(struct fg_shadow *sh, struct flow *f, const struct wait *w, bool ours)
{
	struct side *mine = ours ? &f->ours : &f->theirs, *other = ours ? &f->theirs : &f->ours;
	int i;

	f->last_use = ++sh->tick;
	if ((w->kind == K_IHAVE || w->kind == K_IHAVE_XFER) && f->ihave_off) {
		not_compared(sh, 1);
		return;
	}
	i = side_match(other, w);
	if (i < 0) {
		side_push(sh, mine, w);
		return;
	}
	if (ours)
		compare(sh, f, w, side_at(other, (unsigned)i));
	else
		compare(sh, f, side_at(other, (unsigned)i), w);
	side_drop(other, (unsigned)i);
}

void fg_shadow_ours(struct fg_shadow *sh, const struct fg_verdict_rec *r)
{
	struct wait w = { .code = (uint16_t)r->code, .reason = (uint8_t)r->reason };
	struct flow *f;

	if (!r->remote)
		return;
	switch (r->verb) {
	case FG_NNTP_VERB_CHECK:
		w.kind = K_CHECK;
		break;
	case FG_NNTP_VERB_TAKETHIS:
		w.kind = K_TAKETHIS;
		break;
	case FG_NNTP_VERB_IHAVE:
		w.kind = K_IHAVE;	/* or its transfer: by the flow's stage, below */
		break;
	default:
		return;
	}
	w.id_len = (uint16_t)FG_MIN(r->msgid_len, FG_SHADOW_ID_MAX);
	memcpy(w.id, r->msgid, w.id_len);
	if (w.kind == K_CHECK || w.kind == K_TAKETHIS)
		w.h = id_hash(r->msgid, r->msgid_len);
	f = flow_find(sh, r->remote);
	if (!f) {
		/* a decision on a flow whose server half was never anchored */
		not_compared(sh, 1);
		return;
	}
	if (w.kind == K_IHAVE) {
		/* 436 ends an offer or a transfer: the stage says which */
		if (f->ours_xfer)
			w.kind = K_IHAVE_XFER;
		f->ours_xfer = w.code == 335;
	}
	arrive(sh, f, &w, true);
}

/* ------------------------------------------------------------ 3. lines */

/* RFC 3977's multi-line answers a feed's server may give (211 is one
 * only after LISTGROUP, which a feed does not send). */
static bool multi_line(unsigned code)
{
	switch (code) {
	case 100: case 101: case 215: case 220: case 221: case 222: case 224: case 225:
	case 230: case 231:
		return true;
	default:
		return false;
	}
}

/* "<code> <id> ..." -> the answer's kind and ID; K_NONE: no offer's. */
static void line_input(struct fg_shadow *sh, struct flow *f, const char *p, size_t len)
{
	struct wait w = { 0 };
	size_t i = 4, s;

	if (f->multi) {
		f->multi = !(len == 1 && p[0] == '.');
		return;
	}
	if (len < 3 || p[0] < '1' || p[0] > '5' || p[1] < '0' || p[1] > '9' || p[2] < '0' ||
	    p[2] > '9' || (len > 3 && p[3] != ' '))
		return;
	w.code = (uint16_t)((p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0'));
	f->multi = multi_line(w.code);
	switch (w.code) {
	case 238: case 431: case 438:
		w.kind = K_CHECK;
		break;
	case 239: case 439:
		w.kind = K_TAKETHIS;
		break;
	case 335: case 435:
		w.kind = K_IHAVE;
		break;
	case 235: case 437:
		w.kind = K_IHAVE_XFER;
		break;
	case 436:
		w.kind = f->ihave_xfer ? K_IHAVE_XFER : K_IHAVE;
		break;
	default:
		return;
	}
	if (w.kind == K_IHAVE || w.kind == K_IHAVE_XFER) {
		f->ihave_xfer = w.code == 335;
		arrive(sh, f, &w, false);
		return;
	}
	/* RFC 4644 2.4.1, 2.5.1: the ID follows the code */
	s = i;
	while (i < len && p[i] != ' ')
		i++;
	if (s >= len || i == s) {
		not_compared(sh, 1);
		return;
	}
	w.id_len = (uint16_t)FG_MIN(i - s, (size_t)FG_SHADOW_ID_MAX);
	memcpy(w.id, p + s, w.id_len);
	w.h = id_hash(p + s, i - s);
	arrive(sh, f, &w, false);
}

/* ------------------------------------------------------------ 2. the stream */

static void text_input(struct fg_shadow *sh, struct flow *f, const uint8_t *d, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++) {
		char c = (char)d[k];

		if (c == '\n') {
			if (!f->resync) {
				size_t n = f->line_len;

				if (n && f->line[n - 1] == '\r')
					n--;
				line_input(sh, f, f->line, n);
			}
			f->resync = false;
			f->line_len = 0;
		} else if (!f->resync && f->line_len < LINE_MAX_OCTETS) {
			f->line[f->line_len++] = c;
		}
	}
}

void fg_shadow_theirs(struct fg_shadow *sh, const struct fg_endpoint *client, uint32_t seq,
		      uint8_t flags, const uint8_t *data, uint32_t len)
{
	struct flow *f = flow_find(sh, client);
	int32_t ahead;

	if (flags & FG_SHADOW_SYN) {
		if (f && f->anchored && seq + 1 == f->nxt && !f->line_len)
			return;		/* the same SYN again */
		if (f)
			flow_end(sh, f);
		f = flow_new(sh, client);
		if (!f)
			return;
		f->anchored = true;
		f->nxt = seq + 1;
		f->last_use = ++sh->tick;
		sh->r.flows++;
		count(sh, FG_CTR_SHADOW_FLOWS, 1);
		return;		/* a SYN's text comes again after the handshake */
	}
	if (!f || !f->anchored) {
		if (len) {
			sh->r.unanchored++;
			count(sh, FG_CTR_SHADOW_UNANCHORED, 1);
		}
		return;
	}
	ahead = (int32_t)(seq - f->nxt);
	if (ahead < 0) {		/* retransmitted octets */
		if ((uint32_t)-ahead >= len)
			len = 0;
		else {
			data += (uint32_t)-ahead;
			len -= (uint32_t)-ahead;
			seq = f->nxt;
		}
	} else if (ahead > 0) {		/* a hole no segment of ours will fill */
		sh->r.gaps++;
		count(sh, FG_CTR_SHADOW_GAPS, 1);
		f->resync = true;
		f->multi = false;	/* a lost "." must not hide every later answer */
		f->ihave_off = true;
		f->line_len = 0;
		f->nxt = seq;
	}
	text_input(sh, f, data, len);
	f->nxt += len;
	if ((flags & FG_SHADOW_FIN) && !f->closed)
		f->nxt++;		/* a FIN takes a sequence number */
	if (flags & (FG_SHADOW_FIN | FG_SHADOW_RST))
		f->closed = true;
}

void fg_shadow_end_all(struct fg_shadow *sh)
{
	for (unsigned i = 0; i < sh->max_flows; i++)
		if (sh->flows[i].used)
			flow_end(sh, &sh->flows[i]);
}

void fg_shadow_report(const struct fg_shadow *sh, struct fg_shadow_report *out)
{
	*out = sh->r;
}
