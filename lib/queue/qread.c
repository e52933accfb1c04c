/* SPDX-License-Identifier: MIT */
/*
 * qread.c — the queue as other processes see it: floodctld's restore
 * source (re-insert the IDs of queued articles), the settling of a dead
 * writer's transfers, and the status behind the queue and relay metrics. Both only read, and both tolerate a writer
 * appending at the same time: a scan ends at the last sound record, and
 * the head file is read slot by slot with checksums.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/article.h"
#include "floodgate/datadir.h"
#include "floodgate/date.h"
#include "floodgate/log.h"
#include "floodgate/queue.h"

#define COMP "queue"

int fg_queue_article_date(const uint8_t *art, size_t len, fg_time_t *out)
{
	static const enum fg_hdr order[] = { FG_HDR_INJECTION_DATE, FG_HDR_DATE };
	struct fg_article *a = malloc(sizeof(*a));
	int rc = -ENOENT;

	if (!a)
		return -ENOMEM;
	fg_article_init(a, FG_ARTICLE_WIRE);
	/* an article without a body never completes its scan: the fields
	 * found stay readable all the same */
	fg_article_scan(a, (const char *)art, len);
	/* RFC 5537 3.3: the article's date is Injection-Date, else Date; read
	 * strictly, else as innd does (date-syntax inn accepted it so) */
	for (unsigned i = 0; i < FG_ARRAY_SIZE(order) && rc != 0; i++) {
		struct fg_article_value v = fg_article_get(a, order[i]);

		if (v.ptr && (fg_date_parse(v.ptr, v.len, out) == 0 ||
			      fg_date_parse_inn(v.ptr, v.len, out, NULL) == 0))
			rc = 0;
	}
	free(a);
	return rc;
}

/* A segment mapped read-only. */
struct segmap {
	int fd;
	void *map;
	size_t len;
};

static int seg_map(const char *dir, uint64_t num, struct segmap *m)
{
	char path[PATH_MAX];
	struct stat st;
	int rc;

	m->fd = -1;
	m->map = NULL;
	m->len = 0;
	if ((rc = fg_queue_segment_path(dir, num, path, sizeof(path))) != 0)
		return rc;
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0 || fstat(m->fd, &st) != 0) {
		rc = -errno;
		goto out_close;
	}
	if (st.st_size == 0)
		return 0;
	m->len = (size_t)st.st_size;
	m->map = mmap(NULL, m->len, PROT_READ, MAP_SHARED, m->fd, 0);
	if (m->map == MAP_FAILED) {
		rc = -errno;
		m->map = NULL;
		goto out_close;
	}
	return 0;
out_close:
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	return rc;
}

static void seg_unmap(struct segmap *m)
{
	if (m->map)
		munmap(m->map, m->len);
	if (m->fd >= 0)
		close(m->fd);
}

/*
 * A segment copied into memory. Settling reads while a restarted writer
 * opens the queue and may cut a torn tail off the newest segment: a
 * mapping would fault (SIGBUS) on pages the cut removed, a copy only
 * comes out shorter. *buf is NULL for an empty file.
 */
static int seg_read(const char *dir, uint64_t num, uint8_t **buf, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n = 0;
	int fd, rc;

	*buf = NULL;
	*len = 0;
	if ((rc = fg_queue_segment_path(dir, num, path, sizeof(path))) != 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		goto out_close;
	}
	if (st.st_size > 0 && !(*buf = malloc((size_t)st.st_size))) {
		rc = -ENOMEM;
		goto out_close;
	}
	while (*len < (size_t)st.st_size &&
	       (n = pread(fd, *buf + *len, (size_t)st.st_size - *len, (off_t)*len)) > 0)
		*len += (size_t)n;
	rc = n < 0 ? -errno : 0;
out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ------------------------------------------------------------ restore */

struct replay {
	struct fg_history *h;
	fg_time_t from, now;
	int64_t inserted, present, skipped;
};

static int replay_one(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	struct replay *rp = arg;
	struct fg_history_key k;
	fg_time_t date;
	int rc;

	(void)pos;
	if (r->arrival < rp->from)
		return 0;
	if (fg_queue_article_date(r->art, r->art_len, &date) != 0)
		date = r->arrival;
	fg_history_hash(rp->h, r->id, r->id_len, &k);
	rc = fg_history_insert_final(rp->h, &k, FG_HISTORY_ACCEPTED, date, r->arrival, rp->now,
				     NULL);
	if (rc == 0)
		rp->inserted++;
	else if (rc == -EEXIST)
		rp->present++;
	else
		rp->skipped++;	/* too old to keep, or the table is full */
	return 0;
}

int64_t fg_queue_replay(void *arg, struct fg_history *h, fg_time_t since, fg_time_t now)
{
	const char *dir = arg;
	struct replay rp = { h, since ? since - FG_QUEUE_REPLAY_SLACK : INT64_MIN, now, 0, 0, 0 };
	uint64_t *nums = NULL;
	size_t n = 0;
	int rc;

	rc = fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n);
	if (rc != 0)
		return rc == -ENOENT ? 0 : rc;
	for (size_t i = 0; i < n; i++) {
		struct fg_queue_scan sc;
		struct segmap m;

		if (seg_map(dir, nums[i], &m) != 0 || !m.map) {
			seg_unmap(&m);
			continue;
		}
		if (fg_queue_seg_scan(m.map, m.len, replay_one, &rp, &sc) != 0)
			FG_LOG_WARN(COMP, "queue segment %llu: %s: not replayed",
				    (unsigned long long)nums[i], sc.why);
		seg_unmap(&m);
	}
	free(nums);
	if (rp.skipped)
		FG_LOG_WARN(COMP, "queue replay: %lld IDs not re-inserted (too old, or the table "
			    "is full)", (long long)rp.skipped);
	FG_LOG_INFO(COMP, "queue replay: %lld inserted, %lld already present",
		    (long long)rp.inserted, (long long)rp.present);
	return rp.inserted;
}

/* ------------------------------------------------------------ settle */

struct settle {
	struct fg_history *h;
	unsigned owner;
	fg_time_t since, now;
	const struct fg_queue_settle_hooks *hooks;
	uint64_t left;			/* the owner's ACCEPTING entries not yet settled */
	int64_t settled;
	fg_time_t newest;		/* newest arrival of the segment being read */
};

static int settle_one(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	struct settle *st = arg;
	const struct fg_queue_settle_hooks *hk = st->hooks;
	struct fg_history_key k;
	fg_time_t date;
	int rc;

	(void)pos;
	st->newest = FG_MAX(st->newest, r->arrival);
	if (r->arrival < st->since)
		return 0;
	fg_history_hash(st->h, r->id, r->id_len, &k);
	/* a lookup first: the date parse is for the few that are ACCEPTING */
	if (fg_history_lookup(st->h, &k, st->now, NULL) != FG_HISTORY_ACCEPTING)
		return 0;
	if (hk && (rc = hk->reserve(hk->arg)) != 0)
		return rc;
	if (fg_queue_article_date(r->art, r->art_len, &date) != 0)
		date = r->arrival;
	if (fg_history_settle(st->h, &k, st->owner, date, r->arrival, st->now) != 0) {
		if (hk)
			hk->unreserve(hk->arg);
		return 0;
	}
	if (hk)
		hk->settled(hk->arg, r, &k, date);
	st->settled++;
	return --st->left == 0 ? 1 : 0;
}

int64_t fg_queue_settle(const char *dir, struct fg_history *h, unsigned owner, fg_time_t since,
			fg_time_t now, const struct fg_queue_settle_hooks *hooks)
{
	struct settle st = { .h = h, .owner = owner, .now = now, .hooks = hooks,
			     .since = since > INT64_MIN + FG_QUEUE_REPLAY_SLACK
					      ? since - FG_QUEUE_REPLAY_SLACK : INT64_MIN };
	struct fg_history_owned owned;
	uint64_t *nums = NULL;
	size_t n = 0;
	int rc;

	fg_history_count_owned(h, owner, &owned);
	st.left = owned.accepting;
	if (st.left == 0)
		return 0;
	rc = fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n);
	if (rc != 0)
		return rc == -ENOENT ? 0 : rc;
	rc = 0;
	for (size_t i = n; i-- > 0 && rc == 0 && st.left > 0;) {
		struct fg_queue_scan sc;
		uint8_t *buf;
		size_t len;

		rc = seg_read(dir, nums[i], &buf, &len);
		if (rc != 0 || !buf) {
			free(buf);
			rc = rc == -ENOENT ? 0 : rc;	/* deleted meanwhile */
			continue;
		}
		st.newest = INT64_MIN;
		rc = fg_queue_seg_scan(buf, len, settle_one, &st, &sc);
		free(buf);
		if (rc == -EINVAL)
			rc = 0;		/* no sound header: nothing of it was ever durable */
		if (rc == 0 && st.newest != INT64_MIN && st.newest < st.since)
			break;		/* this one and all older ones predate the owner */
	}
	free(nums);
	if (rc < 0)
		return rc;
	return st.settled;
}

/* ------------------------------------------------------------ inspect */

static int read_slots(const char *path, const char magic[8], struct fg_queue_slot *s)
{
	uint8_t buf[2 * FG_QUEUE_SLOT];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (r <= 0)
		return -ENOENT;
	return fg_queue_slots_pick(buf, (size_t)r, magic, s);
}

struct seghead {
	uint64_t num;
	struct fg_queue_seg_info info;
};

/* Arrival of the record at pos, found through the segments' bases. */
static int arrival_at(const char *dir, const struct seghead *sh, size_t n, uint64_t pos,
		      fg_time_t *out)
{
	uint8_t hdr[FG_QUEUE_REC_HEADER];
	struct fg_queue_rec r;
	char path[PATH_MAX];
	const char *why;
	size_t i = n;
	int fd, rc;

	while (i > 0 && sh[i - 1].info.base > pos)
		i--;
	if (i == 0 || fg_queue_segment_path(dir, sh[i - 1].num, path, sizeof(path)) != 0)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fg_datadir_pread_all(fd, hdr, sizeof(hdr),
				  FG_QUEUE_SEG_HEADER + (pos - sh[i - 1].info.base));
	close(fd);
	if (rc == 0)
		rc = fg_queue_rec_header_decode(hdr, sizeof(hdr), &r, &why);
	if (rc == 0)
		*out = r.arrival;
	return rc;
}

static int seg_heads(const char *dir, struct fg_queue_status *out, struct seghead **shp,
		     size_t *nsh)
{
	uint64_t *nums = NULL;
	struct seghead *sh;
	size_t n = 0, k = 0;
	int rc;

	rc = fg_datadir_list(dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n);
	if (rc != 0)
		return rc;
	sh = calloc(n ? n : 1, sizeof(*sh));
	if (!sh) {
		free(nums);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t hdr[FG_QUEUE_SEG_HEADER];
		char path[PATH_MAX];
		const char *why;
		struct stat st;
		int fd;

		if (fg_queue_segment_path(dir, nums[i], path, sizeof(path)) != 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 &&
		    fg_datadir_pread_all(fd, hdr, sizeof(hdr), 0) == 0 &&
		    fg_queue_seg_header_decode(hdr, sizeof(hdr), &sh[k].info, &why) == 0) {
			sh[k++].num = nums[i];
			out->bytes += (uint64_t)st.st_size;
		}
		close(fd);
	}
	free(nums);
	out->segments = k;
	*shp = sh;
	*nsh = k;
	return 0;
}

int fg_queue_inspect(const char *dir, const struct fg_config *cfg, fg_time_t now,
		     struct fg_queue_status *out)
{
	struct fg_queue_slot head, cs;
	struct seghead *sh = NULL;
	char path[PATH_MAX];
	size_t nsh = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = fg_queue_head_path(dir, path, sizeof(path))) != 0)
		return rc;
	rc = read_slots(path, FG_QUEUE_HEAD_MAGIC, &head);
	if (rc == -EPROTONOSUPPORT)
		return rc;	/* a newer dataplane's: its figures are not ours to read */
	if (rc != 0)
		return 0;
	out->present = true;
	out->limit_bytes = cfg->queue_limit;
	out->max_age_seconds = cfg->queue_max_age;
	out->end = head.c;
	if ((rc = seg_heads(dir, out, &sh, &nsh)) != 0)
		return rc;
	if (nsh) {
		out->begin.pos = sh[0].info.base;
		out->begin.recno = sh[0].info.first_recno;
	}
	for (unsigned d = 0; d < cfg->n_downstream; d++) {
		struct fg_queue_status_consumer *c = &out->consumer[out->n_consumers++];
		fg_time_t arrival = now;

		strcpy(c->name, cfg->downstream[d].name);
		/* the cursor file is named for its id (the name by default) */
		if (fg_queue_cursor_path(dir, cfg->downstream[d].id, path, sizeof(path)) != 0)
			continue;
		rc = read_slots(path, FG_QUEUE_CURSOR_MAGIC, &cs);
		if (rc == -EPROTONOSUPPORT) {
			free(sh);
			return rc;
		}
		if (rc != 0)
			continue;
		c->found = true;
		c->c = cs.c;
		if (cs.c.pos >= out->end.pos)
			continue;
		c->lag_bytes = out->end.pos - cs.c.pos;
		c->lag_records = out->end.recno - cs.c.recno;
		if (arrival_at(dir, sh, nsh, cs.c.pos, &arrival) == 0)
			c->lag_seconds = FG_MAX(now - arrival, (int64_t)0);
		out->oldest_seconds = FG_MAX(out->oldest_seconds, c->lag_seconds);
	}
	free(sh);
	return 0;
}
