/* SPDX-License-Identifier: MIT */
/*
 * fuzz_feeds.c — the per-downstream feed decision (feeds.h) on arbitrary
 * articles and feed keys.
 *
 * Input: three lines, then an article (wire or plain form, as detected):
 *   line 1  downstream a's newsgroups
 *   line 2  its distributions
 *   line 3  its exclude-path, then optionally " <max> <min>" sizes
 * Lines the config refuses are dropped (a's key keeps its default).
 * Downstream b has every default. Beyond "no crash, no overread":
 *   - the set, the count and each decision agree, and every identifier
 *     in the set is a configured downstream's;
 *   - every value a decision points to lies in the article or the
 *     config's pattern; a pseudo-group decision has no article group;
 *   - with no Control field and no other key set, a's answer is what
 *     fg_wildmat_groups (an independent walk of the Newsgroups value)
 *     says: poisoned, selected or not;
 *   - b (newsgroups "*") gets the article exactly when Newsgroups names a
 *     group or the article is a control article.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/feeds.h"
#include "floodgate/wildmat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next line of the input (without its "\n"); NULL at the end. */
static const char *line(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	*len = nl ? (size_t)(nl - s) : (size_t)(end - s);
	*p = nl ? nl + 1 : end;
	return (const char *)s;
}

/* Try one key line on a's section; the config as it was when refused. */
static struct fg_config *with_key(struct fg_config *cfg, char *text, size_t cap, size_t *len,
				  const char *key, const char *val, size_t vlen)
{
	struct fg_config_errors errs;
	struct fg_config *next;
	size_t before = *len;
	int n;

	if (!val || vlen == 0 || vlen > 1500 || memchr(val, '\0', vlen) || memchr(val, '\r', vlen))
		return cfg;
	n = snprintf(text + *len, cap - *len, "%s %.*s\n", key, (int)vlen, val);
	if (n < 0 || (size_t)n >= cap - *len)
		return cfg;
	*len += (size_t)n;
	next = fg_config_load_text("fuzz", text, *len, &errs);
	if (!next) {
		if (errs.total == 0)
			abort();	/* a refusal always says why */
		*len = before;
		text[before] = '\0';
		return cfg;
	}
	fg_config_free(cfg);
	return next;
}

static bool inside(struct fg_article_value v, const void *base, size_t len)
{
	const char *b = base;

	return !v.ptr || (v.ptr >= b && v.ptr + v.len <= b + len);
}

static bool groups_named(struct fg_article_value g)
{
	for (size_t i = 0; g.ptr && i < g.len; i++)
		if (g.ptr[i] == '\0' || !strchr(", \t\r\n", g.ptr[i]))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[8192];
	const uint8_t *p = data, *end = data + size;
	const char *l1, *l2, *l3, *sp;
	size_t n1 = 0, n2 = 0, n3 = 0, tlen, alen;
	struct fg_config_errors errs;
	struct fg_feeds_decision why[FG_FEEDS_MAX];
	struct fg_feeds_set set;
	struct fg_article art;
	struct fg_config *cfg;
	unsigned n, sent = 0;
	bool control, plain_a;

	l1 = line(&p, end, &n1);
	l2 = line(&p, end, &n2);
	l3 = line(&p, end, &n3);
	tlen = (size_t)snprintf(text, sizeof(text), "[downstream b]\naddress 127.0.0.1:2\n"
				"[downstream a]\naddress 127.0.0.1:1\n");
	cfg = fg_config_load_text("fuzz", text, tlen, &errs);
	if (!cfg)
		abort();
	cfg = with_key(cfg, text, sizeof(text), &tlen, "newsgroups", l1, n1);
	cfg = with_key(cfg, text, sizeof(text), &tlen, "distributions", l2, n2);
	sp = l3 ? memchr(l3, ' ', n3) : NULL;
	cfg = with_key(cfg, text, sizeof(text), &tlen, "exclude-path", l3,
		       sp ? (size_t)(sp - l3) : n3);
	if (sp) {
		const char *sp2 = memchr(sp + 1, ' ', (size_t)(l3 + n3 - sp - 1));

		cfg = with_key(cfg, text, sizeof(text), &tlen, "max-article-size", sp + 1,
			       sp2 ? (size_t)(sp2 - sp - 1) : (size_t)(l3 + n3 - sp - 1));
		if (sp2)
			cfg = with_key(cfg, text, sizeof(text), &tlen, "min-article-size", sp2 + 1,
				       (size_t)(l3 + n3 - sp2 - 1));
	}

	alen = (size_t)(end - p);
	fg_article_init(&art, fg_article_detect((const char *)p, alen));
	fg_article_scan(&art, (const char *)p, alen);
	n = fg_feeds_select(cfg, &art, alen, &set, why);

	if (set.all || set.n != n || n > cfg->n_downstream)
		abort();
	for (unsigned i = 0; i < cfg->n_downstream; i++) {
		const struct fg_config_downstream *ds = &cfg->downstream[i];

		if ((unsigned)why[i].why >= FG_FEEDS_WHY__COUNT ||
		    fg_feeds_has(&set, ds->ident) != (why[i].why == FG_FEEDS_SENT))
			abort();
		sent += why[i].why == FG_FEEDS_SENT;
		if (!inside(why[i].pattern, ds->newsgroups, strlen(ds->newsgroups)) ||
		    !inside(why[i].item, p, alen) ||
		    !inside(why[i].group, p, alen) ||
		    (why[i].group.ptr && why[i].pseudo[0]) ||
		    !inside(fg_feeds_group(&why[i]), why[i].group.ptr ? (const void *)p :
			    why[i].pseudo, why[i].group.ptr ? alen : sizeof(why[i].pseudo)))
			abort();
	}
	if (sent != n)
		abort();

	control = fg_article_find(&art, "Control", 7, NULL).ptr != NULL;
	/* b: every default */
	if ((why[0].why == FG_FEEDS_SENT) !=
	    (groups_named(fg_article_get(&art, FG_HDR_NEWSGROUPS)) || control))
		abort();
	/* a, when only its newsgroups decide */
	plain_a = !control && cfg->downstream[1].n_distributions == 0 &&
		  cfg->downstream[1].n_exclude_path == 0 && !cfg->downstream[1].max_article_size &&
		  !cfg->downstream[1].min_article_size;
	if (plain_a) {
		struct fg_article_value g = fg_article_get(&art, FG_HDR_NEWSGROUPS);
		enum fg_wildmat_result r = g.ptr ? fg_wildmat_groups(cfg->downstream[1].newsgroups,
								     g.ptr, g.len) : FG_WILDMAT_NONE;

		if ((r == FG_WILDMAT_POISON) != (why[1].why == FG_FEEDS_POISONED) ||
		    (r == FG_WILDMAT_MATCH) != (why[1].why == FG_FEEDS_SENT))
			abort();
	}
	fg_config_free(cfg);
	return 0;
}
