/* SPDX-License-Identifier: MIT */
/*
 * feeds.c — one article against every downstream's feed (feeds.h states
 * the rules and where they come from).
 *
 * The article's header values are read where the scanner left them; the
 * Newsgroups, Distribution and Path values are walked in place, element
 * by element, never copied. The only text built is the control
 * pseudo-group's name, once per article.
 */
#include <string.h>
#include <strings.h>

#include "floodgate/feeds.h"
#include "floodgate/wildmat.h"

static const char *const why_names[] = {
#define FG_FEEDS_WHY_NAME(e, n, h) [FG_FEEDS_##e] = n,
	FG_FEEDS_WHY_TABLE(FG_FEEDS_WHY_NAME)
#undef FG_FEEDS_WHY_NAME
};

static const char *const why_helps[] = {
#define FG_FEEDS_WHY_HELP(e, n, h) [FG_FEEDS_##e] = h,
	FG_FEEDS_WHY_TABLE(FG_FEEDS_WHY_HELP)
#undef FG_FEEDS_WHY_HELP
};

const char *fg_feeds_why_name(enum fg_feeds_why w)
{
	return (unsigned)w < FG_FEEDS_WHY__COUNT ? why_names[w] : NULL;
}

const char *fg_feeds_why_help(enum fg_feeds_why w)
{
	return (unsigned)w < FG_FEEDS_WHY__COUNT ? why_helps[w] : NULL;
}

bool fg_feeds_has(const struct fg_feeds_set *s, uint64_t ident)
{
	if (s->all)
		return true;
	for (unsigned i = 0; i < s->n && i < FG_FEEDS_MAX; i++)
		if (s->ident[i] == ident)
			return true;
	return false;
}

/* ------------------------------------------------------------ elements */

static bool is_sep(const char *seps, char c)
{
	return c != '\0' && strchr(seps, c) != NULL;
}

/* A list walker: the next element of [*p, end) between separators. */
static bool next_elem(const char **p, const char *end, const char *seps, const char **s,
		      size_t *len)
{
	const char *q = *p;

	while (q < end && is_sep(seps, *q))
		q++;
	if (q == end) {
		*p = q;
		return false;
	}
	*s = q;
	while (q < end && !is_sep(seps, *q))
		q++;
	*len = (size_t)(q - *s);
	*p = q;
	return true;
}

/* RFC 5536 3.1.4 / 3.2.4: names separated by "," with FWS around them
 * (as wildmat.h's fg_wildmat_groups reads a Newsgroups value). */
#define LIST_SEPS ", \t\r\n"
/* RFC 5536 3.1.5: path entries separated by "!", FWS around them. */
#define PATH_SEPS "! \t\r\n"

static struct fg_article_value val(const char *p, size_t len)
{
	return (struct fg_article_value){ p, len };
}

/* The end of a value, NULL for an absent one (NULL plus 0 is undefined). */
static const char *val_end(struct fg_article_value v)
{
	return v.ptr ? v.ptr + v.len : NULL;
}

/* ------------------------------------------------------------ the steps */

/* What the article brings to the newsgroups step, computed once. */
struct art_groups {
	struct fg_article_value groups;		/* Newsgroups */
	char control[FG_CONFIG_NAME_MAX + 8];	/* "control.<verb>", or "" */
	size_t control_len;
	struct fg_article_value dist, path;	/* Distribution, Path */
};

/* The Control header's verb names the pseudo-group (RFC 5537 5: the
 * control-command is the first word of the Control field). */
static void art_groups_init(struct art_groups *g, const struct fg_article *art)
{
	struct fg_article_value c = fg_article_find(art, "Control", 7, NULL);
	const char *p, *end, *w;
	size_t wl;

	memset(g, 0, sizeof(*g));
	g->groups = fg_article_get(art, FG_HDR_NEWSGROUPS);
	g->dist = fg_article_find(art, "Distribution", 12, NULL);
	g->path = fg_article_get(art, FG_HDR_PATH);
	if (!c.ptr)
		return;
	p = c.ptr;
	end = c.ptr + c.len;
	if (!next_elem(&p, end, " \t\r\n", &w, &wl))
		wl = 0;
	if (wl > FG_CONFIG_NAME_MAX - 1)
		wl = 0;		/* no such verb: the pseudo-group is "control" */
	memcpy(g->control, "control", 7);
	g->control_len = 7;
	if (wl) {
		g->control[7] = '.';
		for (size_t i = 0; i < wl; i++)	/* verbs are case-insensitive */
			g->control[8 + i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] | 0x20 : w[i]);
		g->control_len = 8 + wl;
	}
	g->control[g->control_len] = '\0';
}

/* One group against the wildmat; fills the decision when it decides. */
static enum fg_wildmat_result judge_group(const char *pat, const char *name, size_t len,
					  struct fg_feeds_decision *d)
{
	size_t at, at_len;
	enum fg_wildmat_result r = fg_wildmat_eval_where(pat, name, len, &at, &at_len);

	if (at_len) {
		d->group = val(name, len);
		d->pattern = val(pat + at, at_len);
	}
	return at_len ? r : FG_WILDMAT_NONE;
}

/* Step 1. The decision holds the group that decided: the poisoned one,
 * else the first selected one, else the first a "!" refused. */
static enum fg_feeds_why step_groups(const struct fg_config_downstream *ds,
				     const struct art_groups *g, struct fg_feeds_decision *d)
{
	struct fg_feeds_decision first = { 0 }, cur;
	bool selected = false, refused = false;
	const char *p = g->groups.ptr, *end = val_end(g->groups), *s;
	size_t len, at, at_len;
	enum fg_wildmat_result r;

	if (g->control_len) {
		size_t n = g->control_len;

		cur = (struct fg_feeds_decision){ 0 };
		r = fg_wildmat_eval_where(ds->newsgroups, g->control, n, &at, &at_len);
		if (at_len == 0 && n > 7) {
			n = 7;		/* "control" stands for control.<verb> */
			r = fg_wildmat_eval_where(ds->newsgroups, g->control, n, &at, &at_len);
		}
		if (at_len) {
			cur.group = val(g->control, n);
			cur.pattern = val(ds->newsgroups + at, at_len);
		}
		/* innd poisons by the article's own groups only: an "@" that
		 * decides for the pseudo-group just does not select it */
		if (at_len) {
			first = cur;
			selected = r == FG_WILDMAT_MATCH;
			refused = !selected;
		}
	}
	while (p && next_elem(&p, end, LIST_SEPS, &s, &len)) {
		cur = (struct fg_feeds_decision){ 0 };
		r = judge_group(ds->newsgroups, s, len, &cur);
		if (r == FG_WILDMAT_POISON) {
			*d = cur;
			return FG_FEEDS_POISONED;
		}
		if (r == FG_WILDMAT_MATCH && !selected) {
			first = cur;
			selected = true;
		} else if (cur.pattern.ptr && !selected && !refused) {
			first = cur;
			refused = true;
		}
	}
	*d = first;
	return selected ? FG_FEEDS_SENT : FG_FEEDS_NO_GROUP;
}

/* Step 2: newsfeeds(5), "distributions", rules 1-4 per article word,
 * a logical or over the words. */
static enum fg_feeds_why step_distributions(const struct fg_config_downstream *ds,
					    const struct art_groups *g,
					    struct fg_feeds_decision *d)
{
	const char *p = g->dist.ptr, *end = val_end(g->dist), *s;
	bool negations = false, any_word = false;
	size_t len;

	if (ds->n_distributions == 0 || !p)
		return FG_FEEDS_SENT;
	for (unsigned i = 0; i < ds->n_distributions; i++)
		negations |= ds->distributions[i][0] == '!';
	while (next_elem(&p, end, LIST_SEPS, &s, &len)) {
		bool listed = false, negated = false;

		any_word = true;
		for (unsigned i = 0; i < ds->n_distributions; i++) {
			const char *w = ds->distributions[i];
			bool neg = w[0] == '!';

			w += neg;
			if (strlen(w) == len && strncasecmp(w, s, len) == 0) {
				listed |= !neg;
				negated |= neg;
			}
		}
		if (listed || (!negated && negations)) {
			d->item = val(NULL, 0);	/* the refused words before it decided nothing */
			return FG_FEEDS_SENT;
		}
		if (!d->item.ptr)
			d->item = val(s, len);
	}
	/* a Distribution header with no word in it restricts nothing */
	return any_word ? FG_FEEDS_DISTRIBUTION : FG_FEEDS_SENT;
}

/* Step 4: an exclude-path identity as a whole element of Path. */
static enum fg_feeds_why step_exclude(const struct fg_config_downstream *ds,
				      const struct art_groups *g, struct fg_feeds_decision *d)
{
	const char *p = g->path.ptr, *end = val_end(g->path), *s;
	size_t len;

	if (ds->n_exclude_path == 0 || !p)
		return FG_FEEDS_SENT;
	while (next_elem(&p, end, PATH_SEPS, &s, &len))
		for (unsigned i = 0; i < ds->n_exclude_path; i++)
			if (strlen(ds->exclude_path[i]) == len &&
			    strncasecmp(ds->exclude_path[i], s, len) == 0) {
				d->item = val(s, len);
				return FG_FEEDS_EXCLUDED_PATH;
			}
	return FG_FEEDS_SENT;
}

static enum fg_feeds_why decide(const struct fg_config_downstream *ds,
				const struct art_groups *g, uint64_t size,
				struct fg_feeds_decision *d)
{
	struct fg_feeds_decision groups;
	enum fg_feeds_why w = step_groups(ds, g, &groups);

	*d = groups;
	if (w != FG_FEEDS_SENT)
		return w;
	if ((w = step_distributions(ds, g, d)) != FG_FEEDS_SENT)
		return w;
	if (ds->max_article_size && size > ds->max_article_size)
		return FG_FEEDS_TOO_BIG;
	if (ds->min_article_size && size < ds->min_article_size)
		return FG_FEEDS_TOO_SMALL;
	return step_exclude(ds, g, d);
}

unsigned fg_feeds_select(const struct fg_config *cfg, const struct fg_article *art,
			 uint64_t size, struct fg_feeds_set *out, struct fg_feeds_decision *why)
{
	struct art_groups g;

	art_groups_init(&g, art);
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < cfg->n_downstream && i < FG_FEEDS_MAX; i++) {
		struct fg_feeds_decision d = { 0 };

		d.why = decide(&cfg->downstream[i], &g, size, &d);
		if (d.why == FG_FEEDS_SENT)
			out->ident[out->n++] = cfg->downstream[i].ident;
		if (why) {
			why[i] = d;
			memset(why[i].pseudo, 0, sizeof(why[i].pseudo));
			if (d.group.ptr == g.control) {
				memcpy(why[i].pseudo, g.control, d.group.len);
				why[i].group = val(NULL, 0);
			}
		}
	}
	return out->n;
}
