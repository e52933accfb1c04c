/* SPDX-License-Identifier: MIT */
/*
 * shadowrep.c — shadow mode's report: adding workers' figures, and the
 * report file (format in shadowrep.h), written by the dataplane and read
 * by `floodctl shadow`.
 *
 * The reader takes a whole file's text, line by line; every line must be
 * one of the header's kinds with every field present and in range (counts
 * decimal and below 2^64, codes three digits, reasons and classes by
 * name, a sample's ID up to FG_SHADOW_ID_MAX printable octets), or the
 * file is refused at that line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "floodgate/shadowrep.h"

static const char *const class_names[FG_SHADOW__CLASSES] = {
	[FG_SHADOW_AGREE] = "agree",
	[FG_SHADOW_REFUSED_TOOK] = "refused-took",
	[FG_SHADOW_TOOK_REFUSED] = "took-refused",
	[FG_SHADOW_TIMING] = "timing",
};

const char *fg_shadow_class_name(enum fg_shadow_class c)
{
	return (unsigned)c < FG_SHADOW__CLASSES ? class_names[c] : "?";
}

int fg_shadow_class_parse(const char *name, size_t len)
{
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++)
		if (strlen(class_names[c]) == len && !memcmp(class_names[c], name, len))
			return (int)c;
	return -1;
}

void fg_shadow_report_add(struct fg_shadow_report *dst, const struct fg_shadow_report *src)
{
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		dst->n[c] += src->n[c];
		for (unsigned i = 0; i < src->n_samples[c] && dst->n_samples[c] < FG_SHADOW_SAMPLES; i++)
			dst->samples[c][dst->n_samples[c]++] = src->samples[c][i];
	}
	for (unsigned r = 0; r < FG_REASON__COUNT; r++)
		dst->refused_took[r] += src->refused_took[r];
	dst->not_compared += src->not_compared;
	dst->followups += src->followups;
	dst->gaps += src->gaps;
	dst->flows += src->flows;
	dst->unanchored += src->unanchored;
}

/* ------------------------------------------------------------ writing */

int fg_shadow_report_write(const struct fg_shadow_report *r, int64_t now, FILE *f)
{
	fprintf(f, "%s %d %" PRId64 "\n", FG_SHADOW_MAGIC, FG_SHADOW_VERSION, now);
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++)
		fprintf(f, "count %s %" PRIu64 "\n", class_names[c], r->n[c]);
	for (unsigned k = 0; k < FG_REASON__COUNT; k++)
		if (r->refused_took[k])
			fprintf(f, "reason %s %" PRIu64 "\n", fg_reason_name((enum fg_reason)k),
				r->refused_took[k]);
	fprintf(f, "not-compared %" PRIu64 "\nfollowups %" PRIu64 "\ngaps %" PRIu64
		   "\nflows %" PRIu64 "\nunanchored %" PRIu64 "\n",
		r->not_compared, r->followups, r->gaps, r->flows, r->unanchored);
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++)
		for (unsigned i = 0; i < r->n_samples[c] && i < FG_SHADOW_SAMPLES; i++) {
			const struct fg_shadow_sample *s = &r->samples[c][i];

			fprintf(f, "sample %s %03u %03u %s %s\n", class_names[c], s->ours, s->theirs,
				fg_reason_name((enum fg_reason)s->reason), s->id);
		}
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------ reading */

struct fields {
	const char *p[6];
	size_t n[6];
	unsigned count;
};

/* Split on single spaces; a line with more than 6 fields is refused. */
static bool split(const char *p, size_t len, struct fields *fl)
{
	size_t i = 0;

	fl->count = 0;
	while (i < len) {
		size_t s = i;

		while (i < len && p[i] != ' ')
			i++;
		if (i == s || fl->count == 6)
			return false;
		fl->p[fl->count] = p + s;
		fl->n[fl->count++] = i - s;
		if (i < len && ++i == len)
			return false;	/* a trailing space */
	}
	return fl->count > 0;
}

static bool is(const struct fields *fl, unsigned i, const char *word)
{
	return fl->n[i] == strlen(word) && !memcmp(fl->p[i], word, fl->n[i]);
}

static bool number(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool code(const char *p, size_t n, uint16_t *out)
{
	uint64_t v;

	if (n != 3 || !number(p, n, &v) || v < 100)
		return false;
	*out = (uint16_t)v;
	return true;
}

static int reason_of(const char *p, size_t n)
{
	char name[64];

	if (n >= sizeof(name))
		return -1;
	memcpy(name, p, n);
	name[n] = '\0';
	if (!strcmp(name, "none"))
		return FG_REASON_NONE;
	return fg_reason_parse(name);
}

static bool header(const struct fields *fl)
{
	uint64_t v, t;

	return fl->count == 3 && is(fl, 0, FG_SHADOW_MAGIC) && number(fl->p[1], fl->n[1], &v) &&
	       v == FG_SHADOW_VERSION && number(fl->p[2], fl->n[2], &t);
}

static bool sample_line(const struct fields *fl, struct fg_shadow_report *out)
{
	struct fg_shadow_sample s = { 0 };
	int c, r;

	if (fl->count != 6 || (c = fg_shadow_class_parse(fl->p[1], fl->n[1])) < 0 ||
	    !code(fl->p[2], fl->n[2], &s.ours) || !code(fl->p[3], fl->n[3], &s.theirs) ||
	    (r = reason_of(fl->p[4], fl->n[4])) < 0 || fl->n[5] > FG_SHADOW_ID_MAX)
		return false;
	for (size_t i = 0; i < fl->n[5]; i++)
		if (fl->p[5][i] < '!' || fl->p[5][i] > '~')
			return false;	/* RFC 5536 3.1.3: printable US-ASCII */
	s.reason = (uint8_t)r;
	memcpy(s.id, fl->p[5], fl->n[5]);
	if (out->n_samples[c] < FG_SHADOW_SAMPLES)
		out->samples[c][out->n_samples[c]++] = s;
	return true;
}

static bool item(const struct fields *fl, struct fg_shadow_report *out)
{
	static const struct { const char *name; size_t off; } singles[] = {
		{ "not-compared", offsetof(struct fg_shadow_report, not_compared) },
		{ "followups", offsetof(struct fg_shadow_report, followups) },
		{ "gaps", offsetof(struct fg_shadow_report, gaps) },
		{ "flows", offsetof(struct fg_shadow_report, flows) },
		{ "unanchored", offsetof(struct fg_shadow_report, unanchored) },
	};
	uint64_t v;
	int k;

	if (is(fl, 0, "sample"))
		return sample_line(fl, out);
	if (is(fl, 0, "count")) {
		if (fl->count != 3 || (k = fg_shadow_class_parse(fl->p[1], fl->n[1])) < 0 ||
		    !number(fl->p[2], fl->n[2], &v))
			return false;
		out->n[k] = v;
		return true;
	}
	if (is(fl, 0, "reason")) {
		if (fl->count != 3 || (k = reason_of(fl->p[1], fl->n[1])) < 0 ||
		    !number(fl->p[2], fl->n[2], &v))
			return false;
		out->refused_took[k] = v;
		return true;
	}
	for (unsigned i = 0; i < sizeof(singles) / sizeof(singles[0]); i++)
		if (is(fl, 0, singles[i].name)) {
			if (fl->count != 2 || !number(fl->p[1], fl->n[1], &v))
				return false;
			memcpy((char *)out + singles[i].off, &v, sizeof(v));
			return true;
		}
	return false;
}

int fg_shadow_report_parse(const char *text, size_t len, struct fg_shadow_report *out,
			   unsigned *line)
{
	size_t i = 0;
	unsigned n = 0;

	memset(out, 0, sizeof(*out));
	*line = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		struct fields fl;

		*line = ++n;
		if (!split(text + i, e - i, &fl) || (n == 1 ? !header(&fl) : !item(&fl, out)))
			return -EINVAL;
		i = e + 1;
	}
	return n ? 0 : -EINVAL;
}
