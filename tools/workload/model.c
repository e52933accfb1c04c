/* SPDX-License-Identifier: MIT */
/*
 * model.c — the workload model: parameters, per-article derivation and the
 * per-peer offer orders (the design is in workload.h).
 *
 * Each derived value draws on its own salt of fg_wl_hash(seed, i, salt), so
 * changing one share does not reshuffle the others: the class of article i
 * depends only on the class shares, its size only on the size parameters.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "workload/workload.h"
#include "wl_int.h"

enum salt {
	SALT_CLASS = 1, SALT_INJ, SALT_OFFLINE, SALT_VERSION, SALT_DATE,
	SALT_DATEGAP, SALT_SIZE, SALT_BODY, SALT_BADID, SALT_NEAR,
	SALT_BINARY, SALT_SHUFFLE, SALT_DUPS,
};

uint64_t fg_wl_hash(uint64_t seed, uint64_t i, uint64_t salt)
{
	uint64_t z = seed ^ (i * 0x9e3779b97f4a7c15ull) ^ (salt * 0xd1b54a32d192ed03ull);

	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) from the top 53 bits. */
static double unit(uint64_t h)
{
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi] (hi >= lo). */
static int64_t span(uint64_t h, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(h % (uint64_t)(hi - lo + 1));
}

void fg_wl_params_default(struct fg_wl_params *p)
{
	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->articles = 10000;
	p->peers = 10;
	p->dups = 10;
	p->spread = 32;
	p->size_mode = FG_WL_SIZE_FIXED;
	p->size = 2048;
	p->binary_size = 700 * 1000;
	p->p_binary = 0.02;
	p->p_old = 0.02;
	p->p_future = 0.01;
	p->p_pathloop = 0.01;
	p->p_badid = 0.005;
	p->p_no_injdate = 0.3;
	p->p_offline = 0.02;
	p->p_version = 0.01;
	p->p_near_future = 0.02;
	p->cutoff = 10 * 86400;		/* INN's artcutoff default */
	p->future_margin = 86400;	/* RFC 5537 3.3 */
	fg_wl_params_set_groups(p, "fg.test.text,fg.test.binaries");
}

int fg_wl_params_set_groups(struct fg_wl_params *p, const char *list)
{
	unsigned n = 0;
	const char *s = list;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= FG_WL_NAME_MAX || n == FG_WL_MAX_GROUPS)
			return -EINVAL;
		memcpy(p->groups[n], s, len);
		p->groups[n][len] = '\0';
		n++;
		s += len;
		if (*s == ',')
			s++;
	}
	if (n == 0)
		return -EINVAL;
	p->n_groups = n;
	return 0;
}

int fg_wl_params_set_dups(struct fg_wl_params *p, const char *spec)
{
	unsigned k[FG_WL_DUPS_MAX], n = 0, kmax = 0;
	double w[FG_WL_DUPS_MAX], sum = 0.0;
	const char *s = spec;
	char *end;

	if (!spec || !*spec)
		return -EINVAL;
	while (*s) {
		unsigned long v;

		if (n == FG_WL_DUPS_MAX || *s < '0' || *s > '9')
			return -EINVAL;
		v = strtoul(s, &end, 10);
		if (v == 0 || v > FG_WL_MAX_PEERS)
			return -EINVAL;
		k[n] = (unsigned)v;
		w[n] = 1.0;
		s = end;
		if (*s == ':') {
			s++;
			if ((*s < '0' || *s > '9') && *s != '.')
				return -EINVAL;
			w[n] = strtod(s, &end);
			if (end == s || !(w[n] > 0.0) || w[n] > 1e9)
				return -EINVAL;
			s = end;
		} else if (n > 0 || *s == ',') {
			return -EINVAL;	/* a list needs a weight for every entry */
		}
		for (unsigned j = 0; j < n; j++)
			if (k[j] == k[n])
				return -EINVAL;
		sum += w[n];
		kmax = FG_MAX(kmax, k[n]);
		n++;
		if (*s == ',') {
			s++;
			if (!*s)
				return -EINVAL;
		} else if (*s) {
			return -EINVAL;
		}
	}
	p->dups = kmax;
	p->n_dups = 0;
	if (n == 1 && strchr(spec, ':') == NULL)
		return 0;	/* "K": fixed, as before */
	for (unsigned j = 0; j < n; j++) {
		p->dups_k[j] = k[j];
		p->dups_w[j] = w[j] / sum;
	}
	p->n_dups = n;
	return 0;
}

int fg_wl_dups_format(const struct fg_wl_params *p, char *buf, size_t len)
{
	int o = 0;

	if (p->n_dups == 0)
		return snprintf(buf, len, "%u", p->dups);
	if (len)
		buf[0] = '\0';
	for (unsigned j = 0; j < p->n_dups; j++) {
		int r = snprintf(buf + FG_MIN((size_t)o, len), len > (size_t)o ? len - (size_t)o : 0,
				 "%s%u:%.4f", j ? "," : "", p->dups_k[j], p->dups_w[j]);

		if (r < 0)
			return r;
		o += r;
	}
	return o;
}

/* K_i: the fixed dups, or a draw from the distribution by the article's
 * own hash; never more than the peers. */
static unsigned derive_dups(const struct fg_wl_params *p, uint32_t i)
{
	double u, acc = 0.0;
	unsigned k = p->dups;

	if (p->n_dups > 0) {
		u = unit(fg_wl_hash(p->seed, i, SALT_DUPS));
		k = p->dups_k[p->n_dups - 1];
		for (unsigned j = 0; j < p->n_dups; j++) {
			acc += p->dups_w[j];
			if (u < acc) {
				k = p->dups_k[j];
				break;
			}
		}
	}
	return FG_MIN(k, p->peers);
}

static bool share_ok(double v)
{
	return v >= 0.0 && v <= 1.0;
}

/* Rejects what would make the model lie about its own expectations: dates
 * too close to a boundary to be classified safely, overlapping shares. */
static int params_check(const struct fg_wl_params *p)
{
	double classes = p->p_old + p->p_future + p->p_pathloop + p->p_badid;

	double dsum = 0.0;

	if (p->articles == 0 || p->peers == 0 || p->peers > FG_WL_MAX_PEERS ||
	    p->dups == 0 || p->spread == 0 || p->n_dups > FG_WL_DUPS_MAX)
		return -EINVAL;
	for (unsigned j = 0; j < p->n_dups; j++) {
		if (p->dups_k[j] == 0 || p->dups_k[j] > p->dups || !(p->dups_w[j] > 0.0))
			return -EINVAL;
		dsum += p->dups_w[j];
	}
	if (p->n_dups > 0 && (dsum < 0.999 || dsum > 1.001))
		return -EINVAL;
	if (!share_ok(p->p_old) || !share_ok(p->p_future) || !share_ok(p->p_pathloop) ||
	    !share_ok(p->p_badid) || !share_ok(p->p_no_injdate) || !share_ok(p->p_offline) ||
	    !share_ok(p->p_version) || !share_ok(p->p_binary) || !share_ok(p->p_near_future) ||
	    classes > 1.0)
		return -EINVAL;
	/* two hours of margin on every date boundary (see derive_dates) */
	if (p->cutoff < 4 * 3600 || p->future_margin < 0 || p->future_margin > 86400)
		return -EINVAL;
	if (p->size < 256 || p->size > FG_WL_MAX_SIZE || p->binary_size < 256 ||
	    p->binary_size > FG_WL_MAX_SIZE || p->n_groups == 0)
		return -EINVAL;
	return 0;
}

static enum fg_wl_class derive_class(const struct fg_wl_params *p, uint32_t i)
{
	double u = unit(fg_wl_hash(p->seed, i, SALT_CLASS));
	double pathloop = p->path_identity[0] ? p->p_pathloop : 0.0;

	if (u < p->p_badid)
		return FG_WL_BADID;
	u -= p->p_badid;
	if (u < p->p_old)
		return FG_WL_OLD;
	u -= p->p_old;
	if (u < p->p_future)
		return FG_WL_FUTURE;
	u -= p->p_future;
	if (u < pathloop)
		return FG_WL_PATHLOOP;
	return FG_WL_WANTED;
}

/*
 * Article dates keep at least an hour from every boundary the server
 * checks (now - cutoff, now + margin), so the few seconds between this
 * model's `now` and the server's clock never change a verdict.
 */
static void derive_dates(const struct fg_wl_params *p, struct fg_wl_article *a)
{
	uint64_t h = fg_wl_hash(p->seed, a->index, SALT_DATE);
	int64_t recent = FG_MIN(p->cutoff - 3600, 2 * 86400);
	fg_time_t d;

	if (a->cls == FG_WL_OLD)
		d = p->now - p->cutoff - span(h, 3600, 3 * 86400);
	else if (a->cls == FG_WL_FUTURE)
		d = p->now + p->future_margin + span(h, 3600, 3 * 86400);
	else if (p->future_margin > 2 * 3600 &&
		 unit(fg_wl_hash(p->seed, a->index, SALT_NEAR)) < p->p_near_future)
		d = p->now + span(h, 60, p->future_margin - 3600);
	else
		d = p->now - span(h, 60, recent);
	a->article_date = d;
	a->has_injdate = unit(fg_wl_hash(p->seed, a->index, SALT_INJ)) >= p->p_no_injdate;
	a->offline = false;
	if (!a->has_injdate) {
		a->date = d;
		return;
	}
	a->injection_date = d;
	h = fg_wl_hash(p->seed, a->index, SALT_DATEGAP);
	/* seed 002: written offline long ago, injected now; still wanted */
	if (unit(fg_wl_hash(p->seed, a->index, SALT_OFFLINE)) < p->p_offline) {
		a->offline = true;
		a->date = d - p->cutoff - p->future_margin - span(h, 3600, 5 * 86400);
	} else {
		a->date = d - span(h, 0, 600);
	}
}

/*
 * Size feed: a full Usenet feed's article sizes, from published figures
 * (Newsdemon's feed size, 220 TiB a day in August 2023; one site's 4.8-day
 * capture of a binary and a text peer, as issue 33 quotes them):
 *   binary: median 740,484 octets; 84.7 % of them 700-768 KiB; P99
 *           2.06 MB; largest 4.16 MB; articles of 700 KiB and more carry
 *           97 % of the octets;
 *   text:   0.35 % of the octets, median 2,139 octets.
 * A binary size is the piecewise-linear quantile function through the
 * knots below (the 7.3 % under 700 KiB are the short last parts of posts,
 * from 60 KB up; 7 % between 768 KiB and the P99; 1 % above it); a text
 * size is log-uniform over [800, 5719] (median sqrt(800 * 5719) = 2,139).
 * The binary share of articles is what makes text 0.35 % of the octets
 * with these means (about 47 %): derived, not typed, below.
 */
static const double feed_u[] = { 0.0, 0.073, 0.5, 0.92, 0.99, 1.0 };
static const double feed_size[] = { 60000, 716800, 740484, 786432, 2060000, 4160000 };
#define FEED_KNOTS (sizeof(feed_u) / sizeof(feed_u[0]))
#define FEED_TEXT_LO 800.0
#define FEED_TEXT_HI 5719.0

uint32_t fg_wl_feed_binary_size(double u)
{
	unsigned i = 1;

	while (i < FEED_KNOTS - 1 && u > feed_u[i])
		i++;
	return (uint32_t)(feed_size[i - 1] + (feed_size[i] - feed_size[i - 1]) *
			  (u - feed_u[i - 1]) / (feed_u[i] - feed_u[i - 1]));
}

uint32_t fg_wl_feed_text_size(double u)
{
	return (uint32_t)(FEED_TEXT_LO * exp(u * log(FEED_TEXT_HI / FEED_TEXT_LO)));
}

double fg_wl_feed_binary_share(void)
{
	double bin = 0, text = (FEED_TEXT_HI - FEED_TEXT_LO) / log(FEED_TEXT_HI / FEED_TEXT_LO);
	double r;

	for (unsigned i = 1; i < FEED_KNOTS; i++)	/* the mean of the quantile function */
		bin += (feed_u[i] - feed_u[i - 1]) * (feed_size[i] + feed_size[i - 1]) / 2;
	/* text share of octets t = (1-p) text / ((1-p) text + p bin): solve for p */
	r = FG_WL_FEED_TEXT_BYTES / (1 - FG_WL_FEED_TEXT_BYTES) * bin / text;	/* (1-p)/p */
	return 1 / (1 + r);
}

static void derive_size(const struct fg_wl *wl, struct fg_wl_article *a)
{
	const struct fg_wl_params *p = &wl->p;
	uint64_t h = fg_wl_hash(p->seed, a->index, SALT_SIZE);
	uint32_t size;

	if (p->size_mode == FG_WL_SIZE_FIXED) {
		size = p->size;
		a->binary = size >= FG_WL_BINARY_MIN;
	} else if (p->size_mode == FG_WL_SIZE_FEED) {
		a->binary = unit(fg_wl_hash(p->seed, a->index, SALT_BINARY)) <
			    fg_wl_feed_binary_share();
		size = a->binary ? fg_wl_feed_binary_size(unit(h)) : fg_wl_feed_text_size(unit(h));
	} else if (unit(fg_wl_hash(p->seed, a->index, SALT_BINARY)) < p->p_binary) {
		/* binary parts vary by +-7 %, as yEnc parts of one post do not */
		size = (uint32_t)span(h, p->binary_size - p->binary_size / 14,
				      p->binary_size + p->binary_size / 14);
		size = FG_MIN(size, FG_WL_MAX_SIZE);
		a->binary = true;
	} else {
		/* text posts: log-uniform between 800 and 8000 octets */
		size = (uint32_t)(800.0 * exp(unit(h) * 2.302585093));
		a->binary = false;
	}
	a->group = (a->binary && p->n_groups > 1) ? p->n_groups - 1 :
		   (unsigned)(h % (p->n_groups > 1 ? p->n_groups - 1 : 1));
	fg_wl_pick_body(wl, a, size, fg_wl_hash(p->seed, a->index, SALT_BODY));
}

void fg_wl_article(const struct fg_wl *wl, uint32_t i, struct fg_wl_article *a)
{
	const struct fg_wl_params *p = &wl->p;

	memset(a, 0, offsetof(struct fg_wl_article, msgid));
	a->index = i;
	a->cls = derive_class(p, i);
	derive_dates(p, a);
	a->is_version = a->cls != FG_WL_BADID && i > 0 &&
			unit(fg_wl_hash(p->seed, i, SALT_VERSION)) < p->p_version;
	derive_size(wl, a);
	fg_wl_make_ids(wl, a, fg_wl_hash(p->seed, i, SALT_BADID));
}

enum fg_wl_class fg_wl_class_of(const struct fg_wl *wl, uint32_t i)
{
	return derive_class(&wl->p, i);
}

const char *fg_wl_class_name(enum fg_wl_class c)
{
	static const char *const names[FG_WL__CLASSES] = {
		[FG_WL_WANTED] = "wanted", [FG_WL_OLD] = "old", [FG_WL_FUTURE] = "future",
		[FG_WL_PATHLOOP] = "path-loop", [FG_WL_BADID] = "bad-id",
	};

	return (unsigned)c < FG_WL__CLASSES ? names[c] : "?";
}

/* Shuffle each block of `spread` offers (Fisher-Yates, per-peer stream). */
static void shuffle_blocks(const struct fg_wl_params *p, unsigned peer, uint32_t *v, uint64_t n)
{
	uint64_t ctr = 0;

	if (p->spread < 2)
		return;
	for (uint64_t b = 0; b < n; b += p->spread) {
		uint64_t len = FG_MIN((uint64_t)p->spread, n - b);

		for (uint64_t k = len - 1; k > 0; k--) {
			uint64_t j = fg_wl_hash(p->seed ^ peer, ctr++, SALT_SHUFFLE) % (k + 1);
			uint32_t t = v[b + k];

			v[b + k] = v[b + j];
			v[b + j] = t;
		}
	}
}

static int build_offers(struct fg_wl *wl)
{
	const struct fg_wl_params *p = &wl->p;
	unsigned d = FG_MIN(p->dups, p->peers);
	int rc = 0;

	for (unsigned k = 0; k < p->peers; k++) {
		/* each peer gets about articles * d / peers; exact count below */
		wl->offers[k] = malloc(sizeof(uint32_t) * ((uint64_t)p->articles * d / p->peers + d + 1));
		if (!wl->offers[k]) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (uint32_t i = 0; i < p->articles; i++) {
		/* rotating start: every peer gets its share, never more than +d */
		unsigned first = i % p->peers, di = derive_dups(p, i);

		for (unsigned k = 0; k < di; k++) {
			unsigned peer = (first + k) % p->peers;

			wl->offers[peer][wl->n_offers[peer]++] = i;
		}
	}
	for (unsigned k = 0; k < p->peers; k++)
		shuffle_blocks(p, k, wl->offers[k], wl->n_offers[k]);
out:
	return rc;
}

struct fg_wl *fg_wl_create(const struct fg_wl_params *p)
{
	struct fg_wl *wl;

	if (params_check(p) < 0) {
		FG_LOG_ERR("workload", "invalid workload parameters");
		return NULL;
	}
	wl = calloc(1, sizeof(*wl));
	if (!wl)
		return NULL;
	wl->p = *p;
	if (wl->p.now == 0)
		wl->p.now = time(NULL);
	if (wl->p.id_prefix[0] == '\0')
		snprintf(wl->p.id_prefix, sizeof(wl->p.id_prefix), "fg%llu",
			 (unsigned long long)p->seed);
	if (fg_wl_pools_init(wl) < 0)
		goto out_free;
	if (build_offers(wl) < 0)
		goto out_free;
	for (uint32_t i = 0; i < p->articles; i++)
		wl->class_count[derive_class(&wl->p, i)]++;
	return wl;
out_free:
	FG_LOG_ERR("workload", "out of memory building the workload");
	fg_wl_free(wl);
	return NULL;
}

void fg_wl_free(struct fg_wl *wl)
{
	if (!wl)
		return;
	for (unsigned k = 0; k < FG_WL_MAX_PEERS; k++)
		free(wl->offers[k]);
	fg_wl_pools_free(wl);
	free(wl);
}

const struct fg_wl_params *fg_wl_params(const struct fg_wl *wl)
{
	return &wl->p;
}

uint64_t fg_wl_class_count(const struct fg_wl *wl, enum fg_wl_class c)
{
	return (unsigned)c < FG_WL__CLASSES ? wl->class_count[c] : 0;
}

const uint32_t *fg_wl_peer_offers(const struct fg_wl *wl, unsigned p, uint64_t *n)
{
	if (p >= wl->p.peers) {
		*n = 0;
		return NULL;
	}
	*n = wl->n_offers[p];
	return wl->offers[p];
}

unsigned fg_wl_dups_of(const struct fg_wl *wl, uint32_t i)
{
	return i < wl->p.articles ? derive_dups(&wl->p, i) : 0;
}

uint64_t fg_wl_total_offers(const struct fg_wl *wl)
{
	uint64_t t = 0;

	for (unsigned k = 0; k < wl->p.peers; k++)
		t += wl->n_offers[k];
	return t;
}
