/* SPDX-License-Identifier: MIT */
/*
 * qwriter.c — the queue's writer thread: records in, group commit, completions
 * out, and the decision to refuse new articles.
 *
 * One pass of the loop:
 *   1. take every committed article from every handle's ring and append it
 *      to the current segment (pwritev straight from the held buffers;
 *      the checksum is computed here, off the engine's thread). Stop
 *      taking once the oldest record taken has waited `commit_ns`: the
 *      interval bounds how long a group may grow, nothing more;
 *   2. if anything was appended, fdatasync the segment at once and push
 *      each record's completion to its handle's `done` ring, then wake
 *      that handle's thread;
 *   3. persist the consumers' cursors that moved, rewrite the head file,
 *      rotate a full segment, delete the segments nobody needs, and
 *      re-evaluate the refusal (queue.h, REFUSAL);
 *   4. sleep on an eventfd until the next deadline or a kick, unless
 *      articles arrived meanwhile.
 * Group commit without a wait: the first article to reach an idle writer
 * is synced at once; the articles committed while that fdatasync runs wait
 * in the rings and are synced together by the next pass (one sync for all
 * of them). Under light load every 239 costs one sync; under heavy load
 * the groups grow by themselves to what arrives during one sync, and the
 * syncs per second stay what the disk can do. `commit_ns` 0 takes one
 * article per group (a sync each).
 *
 * A segment is only ever sealed right after a successful commit, so a
 * sealed segment is durable to its last octet.
 *
 * Failures. A failed append is cut off again (ftruncate to the record's
 * start) and fails that article; ENOSPC/EDQUOT also enters the disk-full
 * state (refusing) until a probe finds room. A failed fdatasync fails every
 * article of that commit (their pages may be gone: fsync errors are not
 * retried, after the PostgreSQL "fsyncgate" lesson), cuts the segment back
 * to its durable end and moves on to a new segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/crc32c.h"
#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "queue_int.h"

#define TICK_NS (100ull * 1000000)		/* housekeeping at least this often */
#define PROBE_NS (1000ull * 1000000)		/* disk-full probe interval */
#define IOV_BATCH 512

static int fault(struct fg_queue *q, enum fg_queue_fault where)
{
	return q->p.fault ? q->p.fault(q->p.fault_arg, where) : 0;
}

/* Wake the writer if it sleeps. The ring's head store and this load, the
 * writer's store of `sleeping` and its look at the rings, are all seq_cst:
 * in their single total order one of the two sides sees the other, so a
 * wake-up is never lost (Dekker's pattern, without fences TSan cannot
 * model). */
void fg_queue_kick(struct fg_queue *q)
{
	uint64_t one = 1;

	if (atomic_load_explicit(&q->sleeping, memory_order_seq_cst) &&
	    write(q->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FG_LOG_WARN(QCOMP, "wake: %s", strerror(errno));
}

/* ------------------------------------------------------------ open */

static void params_defaults(struct fg_queue_params *p)
{
	if (!p->max_sinks)
		p->max_sinks = Q_MAX_SINKS_DEFAULT;
	if (!p->segment_bytes) {
		uint64_t s = p->limit ? p->limit / 16 : FG_QUEUE_SEGMENT_MAX;

		p->segment_bytes = FG_MAX(FG_QUEUE_SEGMENT_MIN, FG_MIN(s, FG_QUEUE_SEGMENT_MAX));
	}
}

struct fg_queue *fg_queue_open(const struct fg_queue_params *p, struct fg_queue_open_info *info,
			       int *err)
{
	struct fg_queue_open_info dummy;
	struct fg_queue *q = calloc(1, sizeof(*q));
	char path[PATH_MAX];
	int rc = -ENOMEM;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!q)
		goto out;
	q->p = *p;
	params_defaults(&q->p);
	q->fd = q->head_fd = q->wake_fd = -1;
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->slots_lock, NULL);
	q->stats = p->stats ? p->stats : &q->own_stats;
	rc = -ENAMETOOLONG;
	if (!p->dir || strlen(p->dir) >= sizeof(q->dir))
		goto out_free;
	strcpy(q->dir, p->dir);
	q->p.dir = q->dir;
	rc = -ENOMEM;
	q->slots = calloc(q->p.max_sinks, sizeof(*q->slots));
	if (!q->slots)
		goto out_free;
	rc = fg_datadir_make(q->dir);
	if (rc != 0) {
		FG_LOG_ERR(QCOMP, "%s: %s", q->dir, strerror(-rc));
		goto out_free;
	}
	q->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->wake_fd < 0) {
		rc = -errno;
		goto out_free;
	}
	if ((rc = fg_queue_head_path(q->dir, path, sizeof(path))) != 0)
		goto out_free;
	q->head_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (q->head_fd < 0) {
		rc = -errno;
		FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(errno));
		goto out_free;
	}
	rc = qseg_recover(q, info);
	if (rc != 0)
		goto out_free;
	info->end = q->written;
	qseg_head_write(q);
	return q;
out_free:
	fg_queue_close(q);
	q = NULL;
out:
	*err = rc;
	return q;
}

void fg_queue_close(struct fg_queue *q)
{
	if (!q)
		return;
	FG_ASSERT(!q->started);
	for (unsigned i = 0; i < q->n_consumers; i++)
		if (q->consumer[i].fd >= 0)
			close(q->consumer[i].fd);
	for (size_t i = 0; i < q->nseg; i++)
		free(q->segs[i].issued);
	free(q->segs);
	free(q->pend);
	free(q->iov);
	free(q->slots);
	if (q->fd >= 0)
		close(q->fd);
	if (q->head_fd >= 0)
		close(q->head_fd);
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	pthread_mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->slots_lock);
	free(q);
}

/* ------------------------------------------------------------ accessors */

void fg_queue_durable(struct fg_queue *q, struct fg_queue_cursor *end)
{
	pthread_mutex_lock(&q->lock);
	*end = q->durable;
	pthread_mutex_unlock(&q->lock);
}

void fg_queue_oldest(struct fg_queue *q, struct fg_queue_cursor *begin)
{
	pthread_mutex_lock(&q->lock);
	begin->pos = q->segs[0].base;
	begin->recno = q->segs[0].first_recno;
	pthread_mutex_unlock(&q->lock);
}

bool fg_queue_refusing(struct fg_queue *q, const char **why)
{
	unsigned r = atomic_load_explicit(&q->refuse, memory_order_relaxed);

	if (why)
		*why = r & QR_DISK ? "disk full" : r & QR_LIMIT ? "queue-limit reached"
			: r & QR_AGE ? "queue-max-age reached"
			: r & QR_BACKLOG ? "a parked downstream's backlog is at its cap" : "";
	return r != 0;
}

uint64_t fg_queue_bytes(struct fg_queue *q)
{
	return atomic_load_explicit(&q->bytes, memory_order_relaxed);
}

const char *fg_queue_dir(struct fg_queue *q)
{
	return q->dir;
}

int fg_queue_segment_at(struct fg_queue *q, uint64_t pos, struct fg_queue_segref *out)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < q->nseg; i++) {
		const struct qseg *s = &q->segs[i];
		uint64_t e = s->sealed ? s->end : UINT64_MAX;

		/* in it, or in the gap between the one before and it */
		if (pos < e && (pos >= s->base || (i > 0 && pos >= q->segs[i - 1].end))) {
			*out = (struct fg_queue_segref){ s->number, s->base, e, s->first_recno };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* ------------------------------------------------------------ consumers */

int fg_queue_consumer(struct fg_queue *q, const char *name, struct fg_queue_cursor *start)
{
	struct fg_queue_cursor oldest;
	struct qconsumer *c;
	int rc;

	if (q->started || q->n_consumers == FG_CONFIG_MAX_DOWNSTREAMS)
		return q->started ? -EBUSY : -ENOSPC;
	for (unsigned i = 0; i < q->n_consumers; i++)
		if (strcmp(q->consumer[i].name, name) == 0)
			return -EEXIST;
	c = &q->consumer[q->n_consumers];
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (strlen(name) >= sizeof(c->name))
		return -EINVAL;
	strcpy(c->name, name);
	fg_queue_oldest(q, &oldest);
	rc = qseg_consumer_open(q, c, &oldest);
	if (rc != 0)
		return rc;
	*start = c->durable;
	return (int)q->n_consumers++;
}

void fg_queue_consumer_ack(struct fg_queue *q, unsigned idx, const struct fg_queue_cursor *c)
{
	bool kick = false;

	FG_ASSERT(idx < q->n_consumers);
	pthread_mutex_lock(&q->lock);
	if (c->pos > q->consumer[idx].acked.pos) {
		q->consumer[idx].acked = *c;
		kick = true;
	}
	pthread_mutex_unlock(&q->lock);
	if (kick)
		fg_queue_kick(q);
}

void fg_queue_consumer_durable(struct fg_queue *q, unsigned idx,
			       struct fg_queue_cursor *out)
{
	FG_ASSERT(idx < q->n_consumers);
	pthread_mutex_lock(&q->lock);
	*out = q->consumer[idx].durable;
	pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------------ completions */

static void complete(struct fg_queue *q, struct fg_queue_sink *s, uint32_t art, int status)
{
	s->arts[art].status = status;
	if (status != 0)
		qcount(q, FG_CTR_QUEUE_FAILED, 1);
	q->slots[s->slot].issued++;
	qring_push(&s->done, art);
	q->need_wake = true;
}

/* Wake every handle that has completions waiting. */
static void wake_sinks(struct fg_queue *q)
{
	pthread_mutex_lock(&q->slots_lock);
	for (unsigned i = 0; i < q->p.max_sinks; i++) {
		struct fg_queue_sink *s = atomic_load_explicit(&q->slots[i].sink,
							       memory_order_acquire);

		if (s && s->p.wake && !qring_empty(&s->done))
			s->p.wake(s->p.wake_arg);
	}
	pthread_mutex_unlock(&q->slots_lock);
}

static void pend_add(struct fg_queue *q, struct fg_queue_sink *s, uint32_t art, uint64_t now)
{
	if (q->npend == q->cappend) {
		size_t cap = q->cappend ? 2 * q->cappend : 256;
		struct qpending *np = realloc(q->pend, cap * sizeof(*np));

		if (!np) {
			/* cannot track it: fail it rather than answer it blindly */
			complete(q, s, art, -ENOMEM);
			return;
		}
		q->pend = np;
		q->cappend = cap;
	}
	if (q->npend == 0)
		q->pend_since_ns = now;
	q->pend[q->npend++] = (struct qpending){ s, art };
}

/* ------------------------------------------------------------ appending */

static int pwritev_all(int fd, struct iovec *v, unsigned n, uint64_t off)
{
	while (n) {
		unsigned k = FG_MIN(n, (unsigned)IOV_BATCH);
		ssize_t w = pwritev(fd, v, (int)k, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		off += (uint64_t)w;
		while (n && (size_t)w >= v->iov_len) {
			w -= (ssize_t)v->iov_len;
			v++;
			n--;
		}
		if (n && w) {
			v->iov_base = (uint8_t *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* The record's iovec list: header, ID, pieces, padding (in q->iov, grown
 * as needed and kept: the writer allocates nothing per record). */
static struct iovec *rec_iov(struct fg_queue *q, struct qs_art *a, uint8_t *hdr, unsigned *n)
{
	static const uint8_t zero[8];
	unsigned cnt = 3;
	struct iovec *v;
	uint64_t pad;

	for (struct qs_block *b = a->blocks; b; b = b->next)
		cnt += b->n;
	if (cnt > q->iov_cap) {
		v = realloc(q->iov, cnt * sizeof(*v));
		if (!v)
			return NULL;
		q->iov = v;
		q->iov_cap = cnt;
	}
	v = q->iov;
	*n = 0;
	uint32_t hdr_len = fg_queue_rec_hdr_len(&a->route);

	v[(*n)++] = (struct iovec){ hdr, hdr_len };
	v[(*n)++] = (struct iovec){ a->id, a->id_len };
	for (struct qs_block *b = a->blocks; b; b = b->next)
		for (unsigned i = 0; i < b->n; i++)
			v[(*n)++] = b->v[i];
	pad = fg_queue_rec_size(hdr_len, a->id_len, a->art_len) - hdr_len - a->id_len -
	      a->art_len;
	if (pad)
		v[(*n)++] = (struct iovec){ (void *)(uintptr_t)zero, (size_t)pad };
	return v;
}

static void write_failed(struct fg_queue *q, int rc)
{
	/* cut whatever part of the record reached the file */
	if (ftruncate(q->fd, (off_t)q->off) != 0)
		q->broken = true;
	qcount(q, FG_CTR_QUEUE_WRITE_ERRORS, 1);
	if ((rc == -ENOSPC || rc == -EDQUOT) && !q->disk_full) {
		q->disk_full = true;
		q->probe_ns = fg_mono_ns() + PROBE_NS;
		atomic_fetch_or(&q->refuse, QR_DISK);
		qcount(q, FG_CTR_QUEUE_DISK_FULL, 1);
		FG_LOG_ERR(QCOMP, "disk full writing the queue: new articles are deferred until "
			   "there is room again");
	} else if (rc != -ENOSPC && rc != -EDQUOT) {
		FG_LOG_ERR(QCOMP, "queue append failed: %s", strerror(-rc));
		q->broken = true;
	}
}

/* Append one article; on failure it completes at once with the error. */
static void append(struct fg_queue *q, struct fg_queue_sink *s, uint32_t ai, uint64_t now_ns)
{
	struct qs_art *a = &s->arts[ai];
	uint64_t size = fg_queue_rec_size(fg_queue_rec_hdr_len(&a->route), a->id_len, a->art_len);
	struct fg_queue_rec_fields f = {
		.recno = q->written.recno, .arrival = time(NULL), .art_len = (uint32_t)a->art_len,
		.id_len = a->id_len, .peer = a->peer, .route = &a->route,
	};
	uint8_t hdr[FG_QUEUE_REC_HEADER_MAX];
	struct iovec *v;
	unsigned n;
	uint32_t crc;
	int rc;

	if (q->disk_full) {
		complete(q, s, ai, -ENOSPC);
		return;
	}
	crc = fg_queue_rec_crc_start(&f);
	crc = fg_crc32c(crc, a->id, a->id_len);
	for (struct qs_block *b = a->blocks; b; b = b->next)
		for (unsigned i = 0; i < b->n; i++)
			crc = fg_crc32c(crc, b->v[i].iov_base, b->v[i].iov_len);
	fg_queue_rec_header_encode(hdr, &f, crc);
	v = rec_iov(q, a, hdr, &n);
	rc = v ? fault(q, FG_QUEUE_FAULT_WRITE) : -ENOMEM;
	if (rc == 0)
		rc = pwritev_all(q->fd, v, n, q->off);
	if (rc != 0) {
		write_failed(q, rc);
		complete(q, s, ai, rc);
		return;
	}
	q->off += size;
	q->written.pos += size;
	q->written.recno++;
	atomic_fetch_add_explicit(&q->bytes, size, memory_order_relaxed);
	qcount(q, FG_CTR_QUEUE_RECORDS, 1);
	qcount(q, FG_CTR_QUEUE_BYTES, size);
	pend_add(q, s, ai, now_ns);
}

/* ------------------------------------------------------------ commit */

static void publish_durable(struct fg_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->durable = q->written;
	q->segs[q->nseg - 1].end = q->written.pos;
	q->segs[q->nseg - 1].next_recno = q->written.recno;
	q->segs[q->nseg - 1].file_bytes = q->off;
	pthread_mutex_unlock(&q->lock);
}

/* Make everything appended durable and hand the completions out. */
static void commit(struct fg_queue *q)
{
	int rc;

	if (q->npend == 0)
		return;
	rc = fault(q, FG_QUEUE_FAULT_SYNC);
	if (rc == 0 && fdatasync(q->fd) != 0)
		rc = -errno;
	if (rc == 0) {
		qcount(q, FG_CTR_QUEUE_COMMITS, 1);
		publish_durable(q);
		for (size_t i = 0; i < q->npend; i++)
			complete(q, q->pend[i].s, q->pend[i].art, 0);
		qseg_head_write(q);
	} else {
		/* RFC 4644 2.5.2: the peer gets 400 and offers them again */
		FG_LOG_ERR(QCOMP, "queue fdatasync failed: %s; %zu articles failed, starting a new "
			   "segment", strerror(-rc), q->npend);
		qcount(q, FG_CTR_QUEUE_COMMIT_ERRORS, 1);
		for (size_t i = 0; i < q->npend; i++)
			complete(q, q->pend[i].s, q->pend[i].art, -EIO);
		atomic_fetch_sub(&q->bytes, q->written.pos - q->durable.pos);
		q->written = q->durable;
		q->off = FG_QUEUE_SEG_HEADER + (q->durable.pos - q->segs[q->nseg - 1].base);
		if (ftruncate(q->fd, (off_t)q->off) != 0)
			FG_LOG_ERR(QCOMP, "cutting the failed tail: %s", strerror(errno));
		q->broken = true;
	}
	q->npend = 0;
}

/* ------------------------------------------------------------ refusal */

static uint64_t min_consumer_pos(struct fg_queue *q)
{
	uint64_t m = UINT64_MAX;

	pthread_mutex_lock(&q->lock);
	for (unsigned i = 0; i < q->n_consumers; i++)
		m = FG_MIN(m, q->consumer[i].durable.pos);
	pthread_mutex_unlock(&q->lock);
	return m;
}

/* Disk full: probe for room (statvfs: two segments' worth free). */
static void probe(struct fg_queue *q, uint64_t now_ns)
{
	struct statvfs sv;
	int rc;

	if (!q->disk_full || now_ns < q->probe_ns)
		return;
	q->probe_ns = now_ns + PROBE_NS;
	rc = fault(q, FG_QUEUE_FAULT_PROBE);
	if (rc == 0 && statvfs(q->dir, &sv) == 0 &&
	    (uint64_t)sv.f_bavail * sv.f_frsize < 2 * q->p.segment_bytes)
		rc = -ENOSPC;
	if (rc != 0)
		return;
	q->disk_full = false;
	atomic_fetch_and(&q->refuse, ~QR_DISK);
	FG_LOG_NOTICE(QCOMP, "room on disk again: taking new articles");
}

static void refusal(struct fg_queue *q, uint64_t now_ns)
{
	unsigned old = atomic_load(&q->refuse), r = old & QR_DISK;
	/* what is kept only for parked downstreams is theirs (qbacklog.c) */
	uint64_t bytes = fg_queue_bytes(q) - FG_MIN(q->parked_bytes, fg_queue_bytes(q)), mpos;
	fg_time_t now = time(NULL);

	/* hysteresis: refuse at the limit, take again under 90 % of it */
	if (q->p.limit && (bytes >= q->p.limit || ((old & QR_LIMIT) && bytes >= q->p.limit / 10 * 9)))
		r |= QR_LIMIT;
	if (q->p.max_age) {
		mpos = q->shared_low;
		if (mpos != q->oldest_pos) {
			q->oldest_pos = mpos;
			q->oldest_arrival = 0;
			if (mpos < q->durable.pos)
				qseg_read_arrival(q, mpos, &q->oldest_arrival);
		}
		if (q->oldest_arrival && now - q->oldest_arrival > q->p.max_age)
			r |= QR_AGE;
	}
	if (q->full_name)
		r |= QR_BACKLOG;
	if ((r & ~old & (QR_LIMIT | QR_AGE)) != 0) {
		qcount(q, FG_CTR_QUEUE_REFUSALS, 1);
		FG_LOG_WARN(QCOMP, "%s: new articles are deferred (%llu octets queued)",
			    r & QR_LIMIT ? "queue-limit reached" : "queue-max-age reached",
			    (unsigned long long)bytes);
	} else if ((old & ~r & (QR_LIMIT | QR_AGE)) != 0) {
		FG_LOG_NOTICE(QCOMP, "queue back within its limits: taking new articles");
	}
	atomic_store(&q->refuse, r);
	probe(q, now_ns);
}

/* ------------------------------------------------------------ the loop */

/* Take what the handles committed. Returns the number appended. */
static unsigned drain(struct fg_queue *q, uint64_t now_ns)
{
	unsigned n = 0;

	pthread_mutex_lock(&q->slots_lock);
	for (unsigned i = 0; i < q->p.max_sinks; i++) {
		struct fg_queue_sink *s = atomic_load_explicit(&q->slots[i].sink,
							       memory_order_acquire);
		uint32_t art;

		if (!s)
			continue;
		while (qring_pop(&s->commits, &art)) {
			struct qs_art *a = &s->arts[art];
			uint64_t size = fg_queue_rec_size(fg_queue_rec_hdr_len(&a->route),
							  a->id_len, a->art_len);

			/* a sealed segment is durable to its end: commit, then rotate */
			if (q->broken || (q->off > FG_QUEUE_SEG_HEADER &&
					  q->off + size > q->p.segment_bytes)) {
				commit(q);
				if (qseg_rotate(q) != 0) {
					complete(q, s, art, -EIO);
					continue;
				}
			}
			append(q, s, art, now_ns);
			n++;
			/* the group is as large as it may grow: sync it, so a backlog
			 * does not stretch the commit (and every 239 in it) */
			if (q->npend && fg_mono_ns() >= q->pend_since_ns + q->p.commit_ns)
				goto out;
		}
	}
out:
	pthread_mutex_unlock(&q->slots_lock);
	return n;
}

/* Should the current segment be sealed although it is not full? When new
 * articles are refused for size and every consumer has taken all of it,
 * sealing it is what lets it be deleted. */
static bool rotate_early(struct fg_queue *q)
{
	return (atomic_load(&q->refuse) & QR_LIMIT) && q->off > FG_QUEUE_SEG_HEADER &&
	       q->npend == 0 && min_consumer_pos(q) >= q->written.pos;
}

static void housekeeping(struct fg_queue *q, uint64_t now_ns)
{
	if (rotate_early(q) && qseg_rotate(q) != 0)
		q->broken = true;
	qseg_delete_done(q);
	qbacklog_pass(q);
	refusal(q, now_ns);
	q->tick_ns = now_ns + TICK_NS;
}

static uint64_t next_deadline(struct fg_queue *q)
{
	uint64_t d = q->tick_ns;

	/* nothing is pending here: every pass commits what it appended */
	if (q->cursor_dirty_ns)
		d = FG_MIN(d, q->cursor_dirty_ns + FG_MIN(q->p.commit_ns, Q_CURSOR_NS));
	return d;
}

static bool rings_empty(struct fg_queue *q)
{
	bool empty = true;

	pthread_mutex_lock(&q->slots_lock);
	for (unsigned i = 0; i < q->p.max_sinks && empty; i++) {
		struct fg_queue_sink *s = atomic_load_explicit(&q->slots[i].sink,
							       memory_order_acquire);

		if (s && !qring_empty(&s->commits))
			empty = false;
	}
	pthread_mutex_unlock(&q->slots_lock);
	return empty;
}

static void sleep_until(struct fg_queue *q, uint64_t deadline)
{
	uint64_t now = fg_mono_ns(), junk;
	struct pollfd pfd = { .fd = q->wake_fd, .events = POLLIN };
	int ms;

	if (deadline <= now)
		return;
	atomic_store(&q->sleeping, true);
	if (rings_empty(q) && !atomic_load(&q->stop)) {
		ms = (int)FG_MIN((deadline - now + 999999) / 1000000, 1000ull);
		if (poll(&pfd, 1, ms) > 0 && read(q->wake_fd, &junk, sizeof(junk)) < 0 &&
		    errno != EAGAIN)
			FG_LOG_WARN(QCOMP, "wake read: %s", strerror(errno));
	}
	atomic_store(&q->sleeping, false);
}

static void *writer_main(void *arg)
{
	struct fg_queue *q = arg;

	for (;;) {
		uint64_t now = fg_mono_ns();
		bool stopping = atomic_load(&q->stop), committed = false;
		unsigned n = drain(q, now);

		now = fg_mono_ns();
		if (q->npend) {
			commit(q);
			committed = true;
		}
		if (q->need_wake) {
			/* outside the handle walk: wake_sinks takes slots_lock */
			q->need_wake = false;
			wake_sinks(q);
			if (q->notify)
				q->notify(q->notify_arg);
		}
		qseg_cursors_persist(q, now, stopping);
		if (stopping || committed || now >= q->tick_ns)
			housekeeping(q, now);
		if (stopping && q->npend == 0 && rings_empty(q))
			break;
		if (n == 0)
			sleep_until(q, next_deadline(q));
	}
	qseg_head_write(q);
	return NULL;
}

void fg_queue_set_notify(struct fg_queue *q, void (*fn)(void *arg), void *arg)
{
	FG_ASSERT(!q->started);
	q->notify = fn;
	q->notify_arg = arg;
}

int fg_queue_start(struct fg_queue *q)
{
	int rc;

	q->tick_ns = fg_mono_ns();
	atomic_store(&q->stop, false);
	rc = pthread_create(&q->thread, NULL, writer_main, q);
	if (rc != 0)
		return -rc;
	/* named for top, perf and docs/benchmarks.md's cost table */
	pthread_setname_np(q->thread, "fg-qwriter");
	q->started = true;
	return 0;
}

void fg_queue_stop(struct fg_queue *q)
{
	uint64_t one = 1;

	if (!q->started)
		return;
	atomic_store(&q->stop, true);
	if (write(q->wake_fd, &one, sizeof(one)) < 0)
		FG_LOG_WARN(QCOMP, "wake: %s", strerror(errno));
	pthread_join(q->thread, NULL);
	q->started = false;
}
