/* SPDX-License-Identifier: MIT */
/*
 * report.c — the daily report's samples (writer and reader of the format
 * report.h tables), their sums over a window, and the three renderings.
 *
 * Reading (fg_report_parse), line by line:
 *   1. the first line is `floodgate-report V`: V == 1 reads on, another V
 *      refuses the file (-EPROTONOSUPPORT), anything else -EINVAL;
 *   2. `S t i` opens a sample (one still open is dropped as damaged);
 *   3. `P` and `D` lines fill it; one that does not parse, or comes
 *      outside a sample, or one too many, damages the open sample;
 *   4. `E t` with the S line's time closes an undamaged sample: fn sees it;
 *   5. at the end, a sample still open (a torn last write) is damaged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/report.h"

/* ---- taking a sample ---- */

static void hist_copy(struct fg_hist *to, const struct fg_hist *from)
{
	memset(to, 0, sizeof(*to));
	memcpy(to->bucket, from->bucket, sizeof(to->bucket));
	to->negative = from->negative;
}

/* Nothing counted yet: such a peer is left out of the sample (a reader
 * takes a peer it does not find as all zeros). */
static bool peer_idle(const struct fg_report_peer *p)
{
	uint64_t any = p->offers | p->accepted | p->octets | p->injection.negative |
		       p->propagation.negative;

	for (unsigned x = 0; x < FG_REASON__COUNT; x++)
		any |= p->refused[x];
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++)
		any |= p->injection.bucket[i] | p->propagation.bucket[i];
	return any == 0;
}

int fg_report_sample_take(struct fg_region *r, const struct fg_ds_status *ds, unsigned n_ds,
			  fg_time_t now, int64_t interval, struct fg_report_sample *s)
{
	struct fg_region_wstats *st = malloc(sizeof(*st));
	unsigned np;

	if (!st)
		return -ENOMEM;
	fg_region_sum(r, st);
	memset(s, 0, sizeof(*s));
	s->time = now;
	s->interval = interval;
	np = fg_region_npeers(r);
	for (unsigned p = 0; p < np && s->n_peers < FG_REGION_PEERS; p++) {
		struct fg_report_peer *o = &s->peer[s->n_peers++];

		snprintf(o->name, sizeof(o->name), "%s", fg_region_peer_name(r, p));
		o->offers = st->peer[p].ctr[FG_CTR_NNTP_OFFERS];
		o->accepted = st->peer[p].ctr[FG_CTR_NNTP_ARTICLES_ACCEPTED];
		o->octets = st->peer[p].ctr[FG_CTR_NNTP_ARTICLE_BYTES];
		memcpy(o->refused, st->peer[p].rejected, sizeof(o->refused));
		o->refused[FG_REASON_NONE] = 0;
		hist_copy(&o->injection, &st->peer_delay[p].injection_delay);
		hist_copy(&o->propagation, &st->peer_delay[p].propagation_delay);
		if (peer_idle(o)) {
			memset(o, 0, sizeof(*o));
			s->n_peers--;
		}
	}
	for (unsigned i = 0; i < n_ds && i < FG_CONFIG_MAX_DOWNSTREAMS; i++) {
		struct fg_report_ds *o = &s->ds[s->n_ds++];

		snprintf(o->name, sizeof(o->name), "%s", ds[i].name);
		o->sent = ds[i].sent;
		o->delivered = ds[i].accepted;
		o->refused = ds[i].refused;
		o->lag_records = ds[i].lag_records;
		o->lag_seconds = ds[i].lag_seconds;
	}
	free(st);
	return 0;
}

/* ---- writing ---- */

static void format_hist(struct fg_sbuf *out, const struct fg_hist *h)
{
	const char *sep = "";

	if (h->negative) {
		fg_sbuf_printf(out, " neg=%" PRIu64, h->negative);
		sep = ",";
	}
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		fg_sbuf_printf(out, "%s%u=%" PRIu64, *sep ? sep : " ", i, h->bucket[i]);
		sep = ",";
	}
	if (!*sep)
		fg_sbuf_puts(out, " -");
}

void fg_report_format(struct fg_sbuf *out, const struct fg_report_sample *s)
{
	fg_sbuf_printf(out, "S %" PRId64 " %" PRId64 "\n", (int64_t)s->time, s->interval);
	for (unsigned p = 0; p < s->n_peers; p++) {
		const struct fg_report_peer *o = &s->peer[p];
		const char *sep = " ";

		fg_sbuf_printf(out, "P %s %" PRIu64 " %" PRIu64 " %" PRIu64, o->name, o->offers,
			       o->accepted, o->octets);
		for (unsigned x = 1; x < FG_REASON__COUNT; x++) {
			if (!o->refused[x])
				continue;
			fg_sbuf_printf(out, "%s%s=%" PRIu64, sep, fg_reason_name(x), o->refused[x]);
			sep = ",";
		}
		if (*sep == ' ')
			fg_sbuf_puts(out, " -");
		format_hist(out, &o->injection);
		format_hist(out, &o->propagation);
		fg_sbuf_puts(out, "\n");
	}
	for (unsigned i = 0; i < s->n_ds; i++) {
		const struct fg_report_ds *o = &s->ds[i];

		fg_sbuf_printf(out, "D %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			       o->name, o->sent, o->delivered, o->refused, o->lag_records,
			       o->lag_seconds);
	}
	fg_sbuf_printf(out, "E %" PRId64 "\n", (int64_t)s->time);
}

static void day_name(fg_time_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d", &tm);
}

/* Delete the day files before the `keep` newest days up to `now`'s. */
static void prune(const char *rdir, fg_time_t now, unsigned keep)
{
	char oldest[16];
	struct dirent *e;
	DIR *d = opendir(rdir);

	if (!d)
		return;
	day_name(now - (fg_time_t)(keep - 1) * 86400, oldest, sizeof(oldest));
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != 10 || e->d_name[4] != '-' || e->d_name[7] != '-' ||
		    strcmp(e->d_name, oldest) >= 0)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int fg_report_append(const char *dir, const struct fg_report_sample *s, unsigned keep)
{
	char rdir[FG_CONFIG_PATH_MAX + 16], path[FG_CONFIG_PATH_MAX + 32], day[16];
	struct fg_sbuf b;
	struct stat sb;
	int fd, rc = 0;

	snprintf(rdir, sizeof(rdir), "%s/%s", dir, FG_REPORT_DIR);
	if (mkdir(rdir, 0755) != 0 && errno != EEXIST)
		return -errno;
	day_name(s->time, day, sizeof(day));
	snprintf(path, sizeof(path), "%s/%s", rdir, day);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fg_sbuf_init(&b);
	if (fstat(fd, &sb) == 0 && sb.st_size == 0)
		fg_sbuf_printf(&b, "%s %d\n", FG_REPORT_MAGIC, FG_REPORT_VERSION);
	fg_report_format(&b, s);
	/* one write: a crash tears at most this sample, which readers drop */
	if (b.failed)
		rc = -ENOMEM;
	else if (b.len && write(fd, b.p, b.len) != (ssize_t)b.len)
		rc = errno ? -errno : -EIO;
	fg_sbuf_free(&b);
	close(fd);
	prune(rdir, s->time, keep ? keep : 1);
	return rc;
}

/* ---- reading ---- */

struct words {
	const char *w[8];
	size_t n[8];
	unsigned count;
};

/* Split a line on single spaces; false when there are more than 8 words
 * or an empty one. */
static bool split(const char *l, size_t len, struct words *w)
{
	size_t i = 0;

	w->count = 0;
	while (i <= len) {
		size_t s = i;

		while (i < len && l[i] != ' ')
			i++;
		if (i == s || w->count == 8)
			return false;
		w->w[w->count] = l + s;
		w->n[w->count++] = i - s;
		i++;
	}
	return true;
}

static bool num(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* A time or an interval: decimal, at most 2^62. */
static bool num_i64(const char *s, size_t n, int64_t *out)
{
	uint64_t v;

	if (!num(s, n, &v) || v > (UINT64_C(1) << 62))
		return false;
	*out = (int64_t)v;
	return true;
}

/* A name: printable, no space, shorter than `max`. The renderers escape. */
static bool name(const char *s, size_t n, char *out, size_t max)
{
	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* "k=v,k=v" or "-": each pair to fn; false on a malformed list. */
static bool pairs(const char *s, size_t n, bool (*fn)(void *arg, const char *k, size_t kn,
						       uint64_t v), void *arg)
{
	size_t i = 0;

	if (n == 1 && s[0] == '-')
		return true;
	while (i < n) {
		size_t k = i, eq, e;
		uint64_t v;

		while (i < n && s[i] != '=' && s[i] != ',')
			i++;
		if (i == n || s[i] != '=' || i == k)
			return false;
		eq = i++;
		while (i < n && s[i] != ',')
			i++;
		e = i;
		if (!num(s + eq + 1, e - eq - 1, &v) || !fn(arg, s + k, eq - k, v))
			return false;
		if (i < n && ++i == n)
			return false;	/* a trailing comma */
	}
	return true;
}

static bool take_reason(void *arg, const char *k, size_t kn, uint64_t v)
{
	uint64_t *refused = arg;
	char buf[64];
	int x;

	if (kn >= sizeof(buf))
		return true;	/* no such reason here */
	memcpy(buf, k, kn);
	buf[kn] = '\0';
	x = fg_reason_parse(buf);
	if (x > 0)
		refused[x] = v;
	return true;
}

static bool take_bucket(void *arg, const char *k, size_t kn, uint64_t v)
{
	struct fg_hist *h = arg;
	uint64_t i;

	if (kn == 3 && memcmp(k, "neg", 3) == 0) {
		h->negative = v;
		return true;
	}
	if (!num(k, kn, &i) || i >= FG_HIST_BUCKETS)
		return false;
	h->bucket[i] = v;
	return true;
}

static bool parse_peer(const struct words *w, struct fg_report_peer *p)
{
	memset(p, 0, sizeof(*p));
	return w->count == 8 && name(w->w[1], w->n[1], p->name, sizeof(p->name)) &&
	       num(w->w[2], w->n[2], &p->offers) && num(w->w[3], w->n[3], &p->accepted) &&
	       num(w->w[4], w->n[4], &p->octets) &&
	       pairs(w->w[5], w->n[5], take_reason, p->refused) &&
	       pairs(w->w[6], w->n[6], take_bucket, &p->injection) &&
	       pairs(w->w[7], w->n[7], take_bucket, &p->propagation);
}

static bool parse_ds(const struct words *w, struct fg_report_ds *d)
{
	memset(d, 0, sizeof(*d));
	return w->count == 7 && name(w->w[1], w->n[1], d->name, sizeof(d->name)) &&
	       num(w->w[2], w->n[2], &d->sent) && num(w->w[3], w->n[3], &d->delivered) &&
	       num(w->w[4], w->n[4], &d->refused) && num(w->w[5], w->n[5], &d->lag_records) &&
	       num(w->w[6], w->n[6], &d->lag_seconds);
}

/* The first line: 0, -EINVAL or -EPROTONOSUPPORT. */
static int parse_head(const char *l, size_t n)
{
	size_t m = strlen(FG_REPORT_MAGIC);
	uint64_t v;

	if (n <= m + 1 || memcmp(l, FG_REPORT_MAGIC, m) != 0 || l[m] != ' ' ||
	    !num(l + m + 1, n - m - 1, &v))
		return -EINVAL;
	return v == FG_REPORT_VERSION ? 0 : -EPROTONOSUPPORT;
}

enum sample_state { NONE, OPEN, DAMAGED };

int fg_report_parse(const char *text, size_t len, struct fg_report_sample *s,
		    int (*fn)(void *arg, const struct fg_report_sample *s), void *arg,
		    unsigned *damaged)
{
	enum sample_state st = NONE;
	size_t off = 0;
	bool head = true;
	int rc;

	*damaged = 0;
	while (off < len) {
		const char *l = text + off, *nl = memchr(l, '\n', len - off);
		size_t n = nl ? (size_t)(nl - l) : len - off;
		struct words w;
		int64_t t;

		off += n + (nl ? 1 : 0);
		if (head) {
			rc = parse_head(l, n);
			if (rc)
				return rc;
			head = false;
			continue;
		}
		if (!nl || !split(l, n, &w) || w.n[0] != 1) {
			/* a torn last line, or one of no known shape */
			if (st == OPEN)
				st = DAMAGED;
			continue;
		}
		switch (w.w[0][0]) {
		case 'S':
			if (st != NONE)
				(*damaged)++;
			memset(s, 0, offsetof(struct fg_report_sample, peer));
			st = w.count == 3 && num_i64(w.w[1], w.n[1], &s->time) &&
			     num_i64(w.w[2], w.n[2], &s->interval) ? OPEN : DAMAGED;
			break;
		case 'P':
			if (st == OPEN && (s->n_peers == FG_REGION_PEERS ||
					   !parse_peer(&w, &s->peer[s->n_peers++])))
				st = DAMAGED;
			break;
		case 'D':
			if (st == OPEN && (s->n_ds == FG_CONFIG_MAX_DOWNSTREAMS ||
					   !parse_ds(&w, &s->ds[s->n_ds++])))
				st = DAMAGED;
			break;
		case 'E':
			if (st == NONE)
				break;
			if (st == OPEN && w.count == 2 && num_i64(w.w[1], w.n[1], &t) &&
			    t == s->time) {
				rc = fn(arg, s);
				if (rc)
					return rc;
			} else {
				(*damaged)++;
			}
			st = NONE;
			break;
		default:
			if (st == OPEN)
				st = DAMAGED;
		}
	}
	if (head)
		return -EINVAL;
	if (st != NONE)
		(*damaged)++;
	return 0;
}

/* ---- sums ---- */

struct fg_report *fg_report_new(fg_time_t from, fg_time_t to)
{
	struct fg_report *r = calloc(1, sizeof(*r));

	if (r) {
		r->from = from;
		r->to = to;
	}
	return r;
}

void fg_report_free(struct fg_report *r)
{
	free(r);
}

/* now - before, or now when the counter went back (a reset). */
static uint64_t diff(uint64_t now, uint64_t before, bool *reset)
{
	if (now >= before)
		return now - before;
	*reset = true;
	return now;
}

static void hist_diff(struct fg_hist *sum, const struct fg_hist *now, const struct fg_hist *b,
		      bool *reset)
{
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		uint64_t d = diff(now->bucket[i], b ? b->bucket[i] : 0, reset);

		sum->bucket[i] += d;
		sum->count += d;
	}
	sum->negative += diff(now->negative, b ? b->negative : 0, reset);
	sum->count += diff(now->negative, b ? b->negative : 0, reset);
}

/* The lookups by name try the same position first: samples list the
 * peers in the region's order, so a day of a few hundred peers is read
 * in linear time. */
static const struct fg_report_peer *prev_peer(const struct fg_report_sample *p, const char *n,
					      unsigned hint)
{
	if (hint < p->n_peers && strcmp(p->peer[hint].name, n) == 0)
		return &p->peer[hint];
	for (unsigned i = 0; i < p->n_peers; i++)
		if (strcmp(p->peer[i].name, n) == 0)
			return &p->peer[i];
	return NULL;
}

static const struct fg_report_ds *prev_ds(const struct fg_report_sample *p, const char *n)
{
	for (unsigned i = 0; i < p->n_ds; i++)
		if (strcmp(p->ds[i].name, n) == 0)
			return &p->ds[i];
	return NULL;
}

static struct fg_report_peer *sum_peer(struct fg_report *r, const char *n, unsigned hint)
{
	if (hint < r->n_peers && strcmp(r->peer[hint].name, n) == 0)
		return &r->peer[hint];
	for (unsigned i = 0; i < r->n_peers; i++)
		if (strcmp(r->peer[i].name, n) == 0)
			return &r->peer[i];
	if (r->n_peers == FG_REGION_PEERS)
		return NULL;
	snprintf(r->peer[r->n_peers].name, sizeof(r->peer[0].name), "%s", n);
	return &r->peer[r->n_peers++];
}

static struct fg_report_ds_sum *sum_ds(struct fg_report *r, const char *n)
{
	for (unsigned i = 0; i < r->n_ds; i++)
		if (strcmp(r->ds[i].d.name, n) == 0)
			return &r->ds[i];
	if (r->n_ds == FG_CONFIG_MAX_DOWNSTREAMS)
		return NULL;
	snprintf(r->ds[r->n_ds].d.name, sizeof(r->ds[0].d.name), "%s", n);
	return &r->ds[r->n_ds++];
}

/* The differences from r->prev to s, into the sums. */
static void add_diffs(struct fg_report *r, const struct fg_report_sample *s)
{
	bool reset = false;

	for (unsigned i = 0; i < s->n_peers; i++) {
		const struct fg_report_peer *n = &s->peer[i];
		const struct fg_report_peer *b = prev_peer(&r->prev, n->name, i);
		struct fg_report_peer *o = sum_peer(r, n->name, i);

		if (!o)
			continue;
		o->offers += diff(n->offers, b ? b->offers : 0, &reset);
		o->accepted += diff(n->accepted, b ? b->accepted : 0, &reset);
		o->octets += diff(n->octets, b ? b->octets : 0, &reset);
		for (unsigned x = 1; x < FG_REASON__COUNT; x++)
			o->refused[x] += diff(n->refused[x], b ? b->refused[x] : 0, &reset);
		hist_diff(&o->injection, &n->injection, b ? &b->injection : NULL, &reset);
		hist_diff(&o->propagation, &n->propagation, b ? &b->propagation : NULL, &reset);
	}
	for (unsigned i = 0; i < s->n_ds; i++) {
		const struct fg_report_ds *n = &s->ds[i];
		const struct fg_report_ds *b = prev_ds(&r->prev, n->name);
		struct fg_report_ds_sum *o = sum_ds(r, n->name);

		if (!o)
			continue;
		o->d.sent += diff(n->sent, b ? b->sent : 0, &reset);
		o->d.delivered += diff(n->delivered, b ? b->delivered : 0, &reset);
		o->d.refused += diff(n->refused, b ? b->refused : 0, &reset);
		o->d.lag_records = n->lag_records;
		o->d.lag_seconds = n->lag_seconds;
		if (n->lag_seconds > o->lag_seconds_max)
			o->lag_seconds_max = n->lag_seconds;
		if (n->lag_records > o->lag_records_max)
			o->lag_records_max = n->lag_records;
	}
	if (reset)
		r->resets++;
}

void fg_report_add(struct fg_report *r, const struct fg_report_sample *s)
{
	if (s->time > r->to || (r->have_prev && s->time <= r->prev.time))
		return;
	if (s->time >= r->from) {
		if (r->have_prev) {
			int64_t iv = s->interval > r->prev.interval ? s->interval : r->prev.interval;

			if (s->time - r->prev.time > 2 * iv + 1) {
				if (r->n_gaps < FG_REPORT_GAPS_MAX) {
					r->gap[r->n_gaps].from = r->prev.time;
					r->gap[r->n_gaps].to = s->time;
				}
				r->n_gaps++;
			}
			add_diffs(r, s);
		}
		if (!r->first)
			r->first = s->time;
		r->last = s->time;
		r->samples++;
	}
	memcpy(&r->prev, s, sizeof(*s));
	r->have_prev = true;
}

static int add_cb(void *arg, const struct fg_report_sample *s)
{
	fg_report_add(arg, s);
	return 0;
}

static int load_file(struct fg_report *r, const char *path, struct fg_report_sample *s,
		     unsigned *newer)
{
	unsigned damaged = 0;
	struct stat sb;
	char *text;
	ssize_t got;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &sb) != 0) {
		rc = -errno;
		goto out_close;
	}
	text = malloc((size_t)sb.st_size + 1);
	if (!text) {
		rc = -ENOMEM;
		goto out_close;
	}
	got = read(fd, text, (size_t)sb.st_size);
	if (got < 0) {
		rc = -errno;
		goto out_free;
	}
	r->files++;
	rc = fg_report_parse(text, (size_t)got, s, add_cb, r, &damaged);
	r->damaged += damaged;
	if (rc == -EPROTONOSUPPORT)
		(*newer)++;
	rc = rc == -EINVAL || rc == -EPROTONOSUPPORT ? 0 : rc;
out_free:
	free(text);
out_close:
	close(fd);
	return rc;
}

int fg_report_load(struct fg_report *r, const char *dir, unsigned *newer)
{
	struct fg_report_sample *s = malloc(sizeof(*s));
	char last[16];
	int rc = 0;

	*newer = 0;
	if (!s)
		return -ENOMEM;

	day_name(r->to, last, sizeof(last));
	/* from the day before the window: its last sample is the base */
	for (fg_time_t day = r->from - 86400; rc == 0; day += 86400) {
		char path[FG_CONFIG_PATH_MAX + 32], dname[16];

		day_name(day, dname, sizeof(dname));
		if (strcmp(dname, last) > 0)
			break;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, FG_REPORT_DIR, dname);
		rc = load_file(r, path, s, newer);
	}
	free(s);
	return rc;
}

bool fg_report_percentile(const struct fg_hist *h, double q, int64_t *out)
{
	uint64_t total = h->negative, want, seen;

	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++)
		total += h->bucket[i];
	if (!total)
		return false;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want == 0)
		want = 1;
	seen = h->negative;
	if (seen >= want) {
		*out = -1;
		return true;
	}
	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= want) {
			*out = i + 1 < FG_HIST_BUCKETS ? fg_hist_bucket_le(i) - 1 : INT64_MAX;
			return true;
		}
	}
	*out = INT64_MAX;
	return true;
}
