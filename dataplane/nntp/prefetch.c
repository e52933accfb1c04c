/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c — look ahead at command lines already received: parse them,
 * hash their Message-IDs and start loading their history buckets before
 * they run.
 *
 * A CHECK costs one history lookup, and in a table of millions of entries
 * that lookup is a cache miss to DRAM: done one after another, the misses
 * are the whole cost (bench_session). A peer pipelines, so the lines after
 * the one being run are usually in the same input piece already: hashing
 * their Message-IDs and prefetching their bucket pairs ahead lets those
 * misses overlap (VPP's "prefetch the next four").
 *
 * The look-ahead works in batches: when fewer than FG_PF_LOW lines are
 * prepared, it takes the next lines up to FG_PF_DEPTH in one loop (line
 * end, parse, hash), then prefetches all their buckets in another. On a
 * machine where a prefetch that misses the TLB holds the pipeline while
 * its page walk runs (this one: docs/protocol.md, "Speed"), prefetches
 * issued back to back walk in parallel, while one prefetch per command
 * walks alone — the history's burst lookup and the benchmark's bound do
 * the same.
 *
 * Each line is looked at once: the session runs a line the look-ahead
 * prepared from its entry (its end, its parse, its key) instead of
 * finding its end and parsing it again. Only complete lines of the
 * current piece that fit max-line are prepared; anything else takes the
 * session's ordinary path. After a TAKETHIS the look-ahead stops: what
 * follows is its article, not commands; it goes on from the article's end
 * (a duplicate flood of TAKETHIS gets the next ID's bucket loading while
 * this article's rules run). Entries of lines the session did not run
 * from the look-ahead (it read an article over them) are dropped as it
 * passes them. Everything kept points into the caller's buffers, so it is
 * dropped when fg_nntp_session_input() returns.
 */
#include <string.h>

#include "nntp_int.h"

void fg_nntp_pf_reset(struct fg_nntp_pf *pf)
{
	pf->head = pf->n = 0;
	pf->base = NULL;
	pf->off = 0;
	pf->blocked = false;
}

/* One complete line [line, line + len) without its LF: parse it into a
 * new entry, hash an offer's ID. Returns true for TAKETHIS. */
static bool look(struct fg_nntp_session *s, const char *line, uint32_t len)
{
	struct fg_nntp_pf *pf = &s->pf;
	struct fg_nntp_pf_ent *e = &pf->e[(pf->head + pf->n++) % FG_PF_DEPTH];
	struct fg_nntp_cmd *c = &e->cmd;

	e->line = line;
	e->len = len;
	e->bare = len == 0 || line[len - 1] != '\r';
	fg_nntp_cmd_parse(line, e->bare ? len : len - 1, c);
	if ((c->verb == FG_NNTP_VERB_CHECK || c->verb == FG_NNTP_VERB_TAKETHIS ||
	     c->verb == FG_NNTP_VERB_IHAVE) && c->argc == 1 && !c->bad_char &&
	    c->arg_len[0] >= 3 && c->arg_len[0] <= FG_MSGID_MAX && c->arg[0][0] == '<') {
		fg_history_hash(s->e->h, c->arg[0], c->arg_len[0], &e->key);
		c->key = &e->key;
	}
	return c->verb == FG_NNTP_VERB_TAKETHIS;
}

void fg_nntp_pf_ahead(struct fg_nntp_session *s, const uint8_t *base, uint32_t from, uint32_t end)
{
	struct fg_nntp_pf *pf = &s->pf;
	uint32_t p = from;
	unsigned first = pf->n;

	if (pf->blocked || pf->n >= FG_PF_LOW)
		return;
	/* go on where the last look stopped, in this same piece */
	if (pf->base == base && pf->off > from)
		p = pf->off;
	while (pf->n < FG_PF_DEPTH && p < end) {
		const uint8_t *lf = memchr(base + p, '\n', end - p);
		uint32_t len;

		if (!lf)
			break;
		len = (uint32_t)(lf - (base + p));
		if (len + 1 > s->e->cfg->max_line)
			break;	/* the session's own path answers it */
		if (look(s, (const char *)base + p, len)) {
			pf->blocked = true;	/* its article follows */
			p += len + 1;
			break;
		}
		p += len + 1;
	}
	pf->base = base;
	pf->off = p;
	/* all the hashes first, then all the prefetches: see the top */
	for (unsigned i = first; i < pf->n; i++) {
		const struct fg_nntp_pf_ent *e = &pf->e[(pf->head + i) % FG_PF_DEPTH];

		if (e->cmd.key)
			fg_history_prefetch(s->e->h, e->cmd.key);
	}
}

const struct fg_nntp_pf_ent *fg_nntp_pf_line(struct fg_nntp_session *s, const char *line)
{
	struct fg_nntp_pf *pf = &s->pf;

	while (pf->n) {
		const struct fg_nntp_pf_ent *e = &pf->e[pf->head];

		if (e->line == line)
			return e;
		if (e->line > line)
			return NULL;
		pf->head = (pf->head + 1) % FG_PF_DEPTH;
		pf->n--;
	}
	return NULL;
}

void fg_nntp_pf_pop(struct fg_nntp_session *s)
{
	struct fg_nntp_pf *pf = &s->pf;

	FG_ASSERT(pf->n > 0);
	pf->head = (pf->head + 1) % FG_PF_DEPTH;
	pf->n--;
}
