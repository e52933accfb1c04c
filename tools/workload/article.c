/* SPDX-License-Identifier: MIT */
/*
 * article.c — what an article of the workload looks like on the wire.
 *
 * Bodies come from two pregenerated pools (4 MiB each) of CRLF-ended lines
 * that are already dot-stuffed (RFC 3977 3.1.1): a text pool of words,
 * with lines that start with "." (and lines that are only ".") so every
 * server's unstuffing is exercised, and a binary pool of yEnc-like 128-
 * octet lines of 8-bit data. An article's body is a run of whole lines
 * picked by hash, so generating one costs two binary searches and no
 * random numbers per byte; the sender copies it straight from the pool.
 *
 * Headers (RFC 5536 3.1: Path, From, Newsgroups, Subject, Message-ID, Date
 * mandatory; Injection-Date 3.2.8; Supersedes 3.2.12) are formatted per
 * offer because Path names the sending peer.
 *
 * Message-IDs:
 *   ordinary   <PREFIX.I.HHHHHHHH@feedgen.example>
 *   version    <PREFIX.J.HHHHHHHH$v=N$rHHHHHHHHxI@feedgen.example>, with
 *              Supersedes naming article J's ordinary ID (seed 000: the
 *              random-dollars-sequence starts with "$r", never "$<l>=")
 *   bad        one of <PREFIX.I.H> (no "@"), <PREFIX.I.H..x@feedgen.example>
 *              (".." in dot-atom-text), <PREFIX.I.H@> (empty id-right):
 *              valid RFC 3977 arguments, invalid RFC 5536 3.1.3 IDs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/workload.h"
#include "wl_int.h"

#define POOL_SIZE (4u << 20)
#define HEAD_ESTIMATE 400	/* typical header octets: a fixed size is the whole article */
#define ID_DOMAIN "feedgen.example"

static const char *const words[] = {
	"the", "news", "server", "article", "history", "peer", "feed", "stream", "offer",
	"transit", "cutoff", "duplicate", "message", "identifier", "header", "path",
	"injection", "date", "relay", "spool", "batch", "group", "binaries", "text",
	"usenet", "flood", "fill", "window", "check", "takethis", "ihave", "expire",
	"of", "a", "to", "in", "and", "is", "was", "for", "on", "with", "as", "by",
};

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Appends one text line (stuffed) at buf[*off]; returns false when full. */
static bool text_line(char *buf, uint32_t *off, uint64_t *rng)
{
	char line[96];
	size_t n = 0;
	uint64_t r = xorshift(rng);

	if (r % 41 == 0) {
		n = (size_t)snprintf(line, sizeof(line), ".");	/* a lone dot */
	} else if (r % 53 == 0) {
		n = 0;						/* an empty line */
	} else {
		if (r % 37 == 0)
			line[n++] = '.';			/* ".word ..." */
		while (n < 60) {
			const char *w = words[xorshift(rng) % FG_ARRAY_SIZE(words)];
			size_t wl = strlen(w);

			memcpy(line + n, w, wl);
			n += wl;
			line[n++] = ' ';
		}
		n--;
	}
	if (*off + n + 4 > POOL_SIZE)
		return false;
	if (n > 0 && line[0] == '.')
		buf[(*off)++] = '.';				/* RFC 3977 3.1.1 */
	memcpy(buf + *off, line, n);
	*off += (uint32_t)n;
	buf[(*off)++] = '\r';
	buf[(*off)++] = '\n';
	return true;
}

/* yEnc-like: 128 octets of 0x21..0xff (no NUL, CR, LF), stuffed. */
static bool binary_line(char *buf, uint32_t *off, uint64_t *rng)
{
	unsigned char line[128];

	if (*off + sizeof(line) + 3 > POOL_SIZE)
		return false;
	for (size_t k = 0; k < sizeof(line); k++)
		line[k] = (unsigned char)(0x21 + xorshift(rng) % (0x100 - 0x21));
	if (line[0] == '.')
		buf[(*off)++] = '.';
	memcpy(buf + *off, line, sizeof(line));
	*off += sizeof(line);
	buf[(*off)++] = '\r';
	buf[(*off)++] = '\n';
	return true;
}

static int pool_fill(struct fg_wl_pool *pool, uint64_t seed,
		     bool (*line)(char *, uint32_t *, uint64_t *))
{
	uint64_t rng = seed | 1;
	uint32_t off = 0, cap = POOL_SIZE / 2 + 1, n = 0;

	pool->buf = malloc(POOL_SIZE);
	pool->line_off = malloc(sizeof(uint32_t) * cap);
	if (!pool->buf || !pool->line_off)
		return -ENOMEM;
	for (;;) {
		pool->line_off[n] = off;
		if (n + 1 == cap || !line(pool->buf, &off, &rng))
			break;
		n++;
	}
	pool->n_lines = n;
	return 0;
}

int fg_wl_pools_init(struct fg_wl *wl)
{
	int rc = pool_fill(&wl->text, fg_wl_hash(wl->p.seed, 0, 101), text_line);

	if (rc == 0)
		rc = pool_fill(&wl->binary, fg_wl_hash(wl->p.seed, 0, 102), binary_line);
	return rc;
}

void fg_wl_pools_free(struct fg_wl *wl)
{
	free(wl->text.buf);
	free(wl->text.line_off);
	free(wl->binary.buf);
	free(wl->binary.line_off);
}

/* First line whose offset is >= off. */
static uint32_t line_at(const struct fg_wl_pool *pool, uint32_t off)
{
	uint32_t lo = 0, hi = pool->n_lines;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pool->line_off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void fg_wl_pick_body(const struct fg_wl *wl, struct fg_wl_article *a, uint32_t size, uint64_t h)
{
	const struct fg_wl_pool *pool = a->binary ? &wl->binary : &wl->text;
	uint32_t end_off = pool->line_off[pool->n_lines];
	uint32_t want = size > HEAD_ESTIMATE + 64 ? size - HEAD_ESTIMATE : 64;
	uint32_t first, last;

	want = FG_MIN(want, end_off - 1024);
	first = line_at(pool, (uint32_t)(h % (end_off - want - 512)));
	last = line_at(pool, pool->line_off[first] + want);
	a->body_off = pool->line_off[first];
	a->body_len = pool->line_off[last] - a->body_off;
}

static size_t ordinary_left(const struct fg_wl *wl, uint32_t i, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "%s.%u.%08x", wl->p.id_prefix, i,
				(unsigned)fg_wl_hash(wl->p.seed, i, 99));
}

void fg_wl_make_ids(const struct fg_wl *wl, struct fg_wl_article *a, uint64_t h)
{
	char left[FG_WL_ID_MAX];
	size_t n = ordinary_left(wl, a->index, left, sizeof(left));
	int len;

	a->supersedes_len = 0;
	if (a->cls == FG_WL_BADID) {
		static const char *const fmt[3] = { "<%s>", "<%s..x@" ID_DOMAIN ">", "<%s@>" };

		len = snprintf(a->msgid, sizeof(a->msgid), fmt[h % 3], left);
	} else if (a->is_version) {
		uint32_t base = a->index - 1 - (uint32_t)(h % FG_MIN(a->index, 64u));

		n = ordinary_left(wl, base, left, sizeof(left));
		len = snprintf(a->supersedes, sizeof(a->supersedes), "<%s@" ID_DOMAIN ">", left);
		a->supersedes_len = (size_t)len;
		len = snprintf(a->msgid, sizeof(a->msgid), "<%.*s$v=%u$r%08xx%u@" ID_DOMAIN ">",
			       (int)n, left, 1 + (unsigned)((h >> 16) % 4), (unsigned)(h >> 32),
			       a->index);
	} else {
		len = snprintf(a->msgid, sizeof(a->msgid), "<%s@" ID_DOMAIN ">", left);
	}
	a->msgid_len = (size_t)len;
}

size_t fg_wl_format_date(fg_time_t t, char *buf, size_t len)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	time_t tt = (time_t)t;
	struct tm tm;
	int n;

	gmtime_r(&tt, &tm);
	n = snprintf(buf, len, "%.3s, %02d %.3s %04d %02d:%02d:%02d +0000",
		     days + 3 * tm.tm_wday, tm.tm_mday, months + 3 * tm.tm_mon,
		     tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return n < 0 ? 0 : FG_MIN((size_t)n, len - 1);
}

size_t fg_wl_wire_head(const struct fg_wl *wl, const struct fg_wl_article *a,
		       unsigned peer, char *buf, size_t len)
{
	const struct fg_wl_params *p = &wl->p;
	char date[64], inj[96] = "", sup[FG_WL_ID_MAX + 16] = "", loop[FG_WL_NAME_MAX + 2] = "";
	char subj[128];
	int n;

	fg_wl_format_date(a->date, date, sizeof(date));
	if (a->has_injdate) {
		memcpy(inj, "Injection-Date: ", 16);
		fg_wl_format_date(a->injection_date, inj + 16, sizeof(inj) - 18);
		strcat(inj, "\r\n");
	}
	if (a->supersedes_len)
		snprintf(sup, sizeof(sup), "Supersedes: %s\r\n", a->supersedes);
	if (a->cls == FG_WL_PATHLOOP)
		snprintf(loop, sizeof(loop), "%s!", p->path_identity);
	if (a->binary)
		snprintf(subj, sizeof(subj), "[%u/50] \"%s.%u.part%02u.rar\" yEnc (1/%u)",
			 a->index % 50 + 1, p->id_prefix, a->index / 50, a->index % 50,
			 a->body_len / 4096 + 1);
	else
		snprintf(subj, sizeof(subj), "feedgen %s article %u", p->id_prefix, a->index);
	n = snprintf(buf, len,
		     "Path: peer%u.feedgen.example!%shub%u.feedgen.example!not-for-mail\r\n"
		     "From: Poster %u <poster%u@feedgen.example>\r\n"
		     "Newsgroups: %s\r\n"
		     "Subject: %s\r\n"
		     "Message-ID: %s\r\n"
		     "Date: %s\r\n"
		     "%s%s"
		     "Organization: feedgen workload\r\n"
		     "\r\n",
		     peer, loop, a->index % 4, a->index % 1000, a->index % 1000,
		     p->groups[a->group], subj, a->msgid, date, inj, sup);
	return n < 0 ? 0 : FG_MIN((size_t)n, len - 1);
}

const char *fg_wl_wire_body(const struct fg_wl *wl, const struct fg_wl_article *a)
{
	return (a->binary ? wl->binary.buf : wl->text.buf) + a->body_off;
}

size_t fg_wl_wire_len(const struct fg_wl *wl, const struct fg_wl_article *a, unsigned peer)
{
	char head[FG_WL_HDR_MAX];

	return fg_wl_wire_head(wl, a, peer, head, sizeof(head)) + a->body_len + 3;
}

long fg_wl_unstuff(const char *wire, size_t len, char *out)
{
	size_t i = 0, o = 0;

	while (i < len) {
		const char *eol = memchr(wire + i, '\n', len - i);
		size_t n;

		if (!eol || eol == wire + i || eol[-1] != '\r')
			return -EINVAL;
		n = (size_t)(eol - (wire + i)) + 1;
		if (n == 3 && wire[i] == '.')
			return i + n == len ? (long)o : -EINVAL;	/* the terminator */
		if (wire[i] == '.') {				/* RFC 3977 3.1.1 */
			i++;
			n--;
		}
		memcpy(out + o, wire + i, n);
		o += n;
		i += n;
	}
	return -EINVAL;
}
