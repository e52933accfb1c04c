/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c — look ahead at command lines already received, and start
 * loading their history buckets before they run.
 *
 * A CHECK costs one history lookup, and in a table of millions of entries
 * that lookup is a cache miss to DRAM: done one after another, the misses
 * are the whole cost (bench_session). A peer pipelines, so the lines after
 * the one being run are usually in the same input piece already: hashing
 * their Message-IDs and prefetching their bucket pairs a few lines ahead
 * lets those misses overlap (VPP's "prefetch the next four", which the
 * benchmark shows pays here). The key computed ahead is kept, so a line's
 * ID is hashed once.
 *
 * Only complete lines of the current piece are looked at, and only CHECK,
 * TAKETHIS and IHAVE lines with one argument that looks like a Message-ID.
 * After a TAKETHIS the look-ahead stops: what follows is its article, not
 * commands; it goes on from the article's end (a duplicate flood of
 * TAKETHIS gets the next ID's bucket loading while this article's rules
 * run). Everything kept points into the caller's buffers, so it is dropped
 * when fg_session_input() returns.
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

/* Case-insensitive: does the line start with `word` and a blank? */
static bool starts(const char *p, size_t len, const char *word, size_t wlen)
{
	if (len <= wlen || (p[wlen] != ' ' && p[wlen] != '\t'))
		return false;
	for (size_t i = 0; i < wlen; i++)
		if ((p[i] | 0x20) != word[i])
			return false;
	return true;
}

/* One line: push its argument if it is an offer. Returns true for TAKETHIS. */
static bool look(struct fg_session *s, const char *line, size_t len)
{
	struct fg_nntp_pf *pf = &s->pf;
	struct fg_nntp_pf_ent *e;
	size_t skip, a, b;
	bool takethis = false;

	if (starts(line, len, "check", 5))
		skip = 6;
	else if (starts(line, len, "takethis", 8))
		skip = 9, takethis = true;
	else if (starts(line, len, "ihave", 5))
		skip = 6;
	else
		return false;
	for (a = skip; a < len && (line[a] == ' ' || line[a] == '\t'); a++)
		;
	for (b = a; b < len && line[b] != ' ' && line[b] != '\t' && line[b] != '\r'; b++)
		;
	if (b - a < 3 || b - a > FG_MSGID_MAX || line[a] != '<')
		return takethis;
	e = &pf->e[(pf->head + pf->n++) % FG_PF_DEPTH];
	e->arg = line + a;
	e->len = (uint32_t)(b - a);
	fg_history_hash(s->e->h, e->arg, e->len, &e->key);
	fg_history_prefetch(s->e->h, &e->key);
	return takethis;
}

void fg_nntp_pf_ahead(struct fg_session *s, const uint8_t *base, uint32_t from, uint32_t end)
{
	struct fg_nntp_pf *pf = &s->pf;
	uint32_t p = from;

	if (pf->blocked)
		return;
	/* go on where the last look stopped, in this same piece */
	if (pf->base == base && pf->off > from)
		p = pf->off;
	while (pf->n < FG_PF_DEPTH && p < end) {
		const uint8_t *lf = memchr(base + p, '\n', end - p);

		if (!lf)
			break;
		if (look(s, (const char *)base + p, (size_t)(lf - (base + p)))) {
			pf->blocked = true;	/* its article follows */
			p = (uint32_t)(lf - base) + 1;
			break;
		}
		p = (uint32_t)(lf - base) + 1;
	}
	pf->base = base;
	pf->off = p;
}

void fg_nntp_pf_key(struct fg_session *s, const char *arg, uint32_t len,
		    struct fg_history_key *k)
{
	struct fg_nntp_pf *pf = &s->pf;

	/* lines run in order: a match drops the entries before it, which
	 * belonged to lines that ran without asking (a 501, say) */
	for (unsigned i = 0; i < pf->n; i++) {
		const struct fg_nntp_pf_ent *e = &pf->e[(pf->head + i) % FG_PF_DEPTH];

		if (e->arg == arg && e->len == len) {
			*k = e->key;
			pf->head = (pf->head + i + 1) % FG_PF_DEPTH;
			pf->n -= i + 1;
			return;
		}
	}
	fg_history_hash(s->e->h, arg, len, k);
}
