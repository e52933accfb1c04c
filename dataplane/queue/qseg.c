/* SPDX-License-Identifier: MIT */
/*
 * qseg.c — the writer's files: recovery at open, new segments, rotation,
 * deletion, the consumers' cursor files and the head file.
 *
 * Every name that must survive a power loss is made durable before
 * anything depends on it: a new segment's header and the directory are
 * synced before its first record is written; a new cursor file's first
 * slot and the directory before the consumer is used. Unlinks are synced
 * too, though a deleted segment that comes back after a power loss is
 * harmless: every cursor is past it, and restore re-inserts IDs that are
 * already there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "queue_int.h"

static int dir_sync(struct fg_queue *q)
{
	return fg_datadir_fsync(q->dir);
}

/* ------------------------------------------------------------ recovery */

static int segs_push(struct fg_queue *q, const struct qseg *s)
{
	pthread_mutex_lock(&q->lock);
	if (q->nseg == q->capseg) {
		size_t cap = q->capseg ? 2 * q->capseg : 16;
		struct qseg *ns = realloc(q->segs, cap * sizeof(*ns));

		if (!ns) {
			pthread_mutex_unlock(&q->lock);
			return -ENOMEM;
		}
		q->segs = ns;
		q->capseg = cap;
	}
	q->segs[q->nseg++] = *s;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* Cut a torn tail of the newest segment: the trace of a crash. */
static int cut_tail(struct fg_queue *q, int fd, const char *path, const struct fg_queue_scan *sc,
		    uint64_t size, struct fg_queue_open_info *info)
{
	FG_LOG_WARN(QCOMP, "%s: torn tail after %llu records (%s): %llu octets cut", path,
		    (unsigned long long)sc->records, sc->why,
		    (unsigned long long)(size - sc->end));
	if (ftruncate(fd, (off_t)sc->end) != 0 || fdatasync(fd) != 0) {
		FG_LOG_ERR(QCOMP, "%s: cutting the torn tail: %s", path, strerror(errno));
		return -errno;
	}
	info->torn_cut++;
	info->cut_bytes += size - sc->end;
	qcount(q, FG_CTR_QUEUE_TORN_CUT, 1);
	return 0;
}

/* One existing segment: scan it, cut or report a bad tail, list it. */
static int recover_one(struct fg_queue *q, uint64_t num, bool newest,
		       struct fg_queue_open_info *info)
{
	char path[PATH_MAX];
	struct fg_queue_scan sc;
	struct qseg s = { 0 };
	struct stat st;
	void *map;
	int fd, rc;

	if ((rc = fg_queue_segment_path(q->dir, num, path, sizeof(path))) != 0)
		return rc;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(errno));
		goto out_close;
	}
	if (st.st_size == 0) {
		/* created, but its header never became durable: it held nothing */
		FG_LOG_NOTICE(QCOMP, "%s: empty segment removed", path);
		rc = unlink(path) == 0 ? 0 : -errno;
		goto out_close;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		goto out_close;
	}
	rc = fg_queue_seg_scan(map, (size_t)st.st_size, NULL, NULL, &sc);
	munmap(map, (size_t)st.st_size);
	if (rc == -EPROTONOSUPPORT) {
		/* a newer build's queue: appending to it would corrupt it */
		FG_LOG_ERR(QCOMP, "%s: %s: refusing to open the queue (docs/compat.md)", path,
			   sc.why);
		goto out_close;
	}
	if (rc != 0) {
		FG_LOG_ERR(QCOMP, "%s: %s: set aside", path, sc.why);
		info->set_aside++;
		rc = fg_datadir_set_aside(path, NULL, 0);
		goto out_close;
	}
	if (q->nseg && (sc.info.base != q->segs[q->nseg - 1].end ||
			sc.info.first_recno != q->segs[q->nseg - 1].next_recno))
		FG_LOG_ERR(QCOMP, "%s: does not follow the segment before it (a segment is "
			   "missing or damaged): positions jump", path);
	s.file_bytes = (uint64_t)st.st_size;
	if (sc.torn && newest) {
		rc = cut_tail(q, fd, path, &sc, (uint64_t)st.st_size, info);
		if (rc != 0)
			goto out_close;
		s.file_bytes = sc.end;
	} else if (sc.torn) {
		FG_LOG_ERR(QCOMP, "%s: damaged after %llu records (%s): the rest of this segment "
			   "is lost to the relay", path, (unsigned long long)sc.records, sc.why);
		info->damaged++;
		qcount(q, FG_CTR_QUEUE_DAMAGED, 1);
	}
	s.number = num;
	s.base = sc.info.base;
	s.end = sc.info.base + (sc.end - FG_QUEUE_SEG_HEADER);
	s.first_recno = sc.info.first_recno;
	s.next_recno = sc.next_recno;
	s.created = sc.info.created;
	s.sealed = true;
	s.recovered = true;
	rc = segs_push(q, &s);
	info->segments++;
	info->records += sc.records;
	info->bytes += s.file_bytes;
	atomic_fetch_add(&q->bytes, s.file_bytes);
out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

int qseg_recover(struct fg_queue *q, struct fg_queue_open_info *info)
{
	struct fg_queue_cursor at = { 0, 0 };
	uint64_t *nums = NULL, next = 0;
	size_t n = 0;
	int rc;

	rc = fg_datadir_list(q->dir, FG_QUEUE_SEG_PREFIX, FG_QUEUE_SEG_SUFFIX, &nums, &n);
	if (rc != 0) {
		FG_LOG_ERR(QCOMP, "%s: %s", q->dir, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = recover_one(q, nums[i], i + 1 == n, info);
	if (n)
		next = nums[n - 1] + 1;
	free(nums);
	if (rc != 0)
		return rc;
	if (q->nseg) {
		at.pos = q->segs[q->nseg - 1].end;
		at.recno = q->segs[q->nseg - 1].next_recno;
	}
	if (info->segments)
		FG_LOG_NOTICE(QCOMP, "%s: %llu segments, %llu records, %llu octets; %llu torn tails "
			      "cut, %llu damaged, %llu set aside", q->dir,
			      (unsigned long long)info->segments, (unsigned long long)info->records,
			      (unsigned long long)info->bytes, (unsigned long long)info->torn_cut,
			      (unsigned long long)info->damaged, (unsigned long long)info->set_aside);
	/* never append to an old segment: a position is written once */
	return qseg_start_new(q, next, &at);
}

/* ------------------------------------------------------------ segments */

int qseg_start_new(struct fg_queue *q, uint64_t number, const struct fg_queue_cursor *at)
{
	struct fg_queue_seg_info si = { number, at->pos, at->recno, time(NULL), FG_QUEUE_VERSION };
	uint8_t hdr[FG_QUEUE_SEG_HEADER];
	struct qseg s = { 0 };
	char path[PATH_MAX];
	int fd, rc;

	if ((rc = fg_queue_segment_path(q->dir, number, path, sizeof(path))) != 0)
		return rc;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(errno));
		return rc;
	}
	fg_queue_seg_header_encode(hdr, &si);
	rc = fg_datadir_write_all(fd, hdr, sizeof(hdr));
	if (rc == 0 && fdatasync(fd) != 0)
		rc = -errno;
	if (rc == 0)
		rc = dir_sync(q);
	if (rc != 0) {
		FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(-rc));
		goto out_unlink;
	}
	s.number = number;
	s.base = s.end = at->pos;
	s.first_recno = s.next_recno = at->recno;
	s.file_bytes = FG_QUEUE_SEG_HEADER;
	s.created = si.created;
	if ((rc = segs_push(q, &s)) != 0)
		goto out_unlink;
	q->fd = fd;
	q->off = FG_QUEUE_SEG_HEADER;
	q->written = *at;
	pthread_mutex_lock(&q->lock);
	q->durable = *at;
	pthread_mutex_unlock(&q->lock);
	atomic_fetch_add(&q->bytes, FG_QUEUE_SEG_HEADER);
	qcount(q, FG_CTR_QUEUE_SEGMENTS, 1);
	return 0;
out_unlink:
	unlink(path);
	close(fd);
	return rc;
}

/* Seal the current segment (everything in it is durable: the caller
 * committed) and start the next. */
int qseg_rotate(struct fg_queue *q)
{
	struct qseg *cur = &q->segs[q->nseg - 1];
	uint64_t *issued = NULL;

	if (q->fd >= 0) {
		issued = malloc(q->p.max_sinks * sizeof(*issued));
		if (!issued)
			FG_LOG_ERR(QCOMP, "out of memory sealing segment %llu: it will be kept",
				   (unsigned long long)cur->number);
		for (unsigned i = 0; issued && i < q->p.max_sinks; i++)
			issued[i] = q->slots[i].issued;
		pthread_mutex_lock(&q->lock);
		cur->sealed = true;
		cur->end = q->durable.pos;
		cur->next_recno = q->durable.recno;
		cur->file_bytes = q->off;
		/* without the vector the segment is never deleted: safe, logged */
		cur->issued = issued;
		pthread_mutex_unlock(&q->lock);
		close(q->fd);
		q->fd = -1;
	}
	q->broken = false;
	if (qseg_start_new(q, q->segs[q->nseg - 1].number + 1, &q->durable) != 0) {
		q->broken = true;
		return -EIO;
	}
	return 0;
}

static bool completions_delivered(struct fg_queue *q, const struct qseg *s)
{
	if (s->recovered)
		return true;
	if (!s->issued)
		return false;
	for (unsigned i = 0; i < q->p.max_sinks; i++)
		if (atomic_load_explicit(&q->slots[i].delivered, memory_order_acquire) <
		    s->issued[i])
			return false;
	return true;
}

/* The gate (queue.h, DELETION): may the oldest segment's IDs be forgotten
 * by the queue? */
static bool gate_open(struct fg_queue *q, struct qseg *s)
{
	const struct fg_queue_gate *g = q->p.gate;

	if (!g)
		return true;
	if (!s->gate_begun) {
		if (g->begin(g->arg, &s->ticket) != 0)
			return false;
		s->gate_begun = true;
	}
	return s->ticket != UINT64_MAX && g->passed(g->arg, s->ticket);
}

void qseg_delete_done(struct fg_queue *q)
{
	uint64_t mpos = UINT64_MAX;
	unsigned deleted = 0;
	char path[PATH_MAX];

	pthread_mutex_lock(&q->lock);
	for (unsigned i = 0; i < q->n_consumers; i++)
		mpos = FG_MIN(mpos, q->consumer[i].durable.pos);
	pthread_mutex_unlock(&q->lock);
	while (q->nseg > 1 && q->segs[0].sealed) {
		struct qseg *s = &q->segs[0];

		if (s->end > mpos || !completions_delivered(q, s))
			break;
		if (!gate_open(q, s)) {
			qcount(q, FG_CTR_QUEUE_GATE_HELD, 1);
			break;
		}
		if (fg_queue_segment_path(q->dir, s->number, path, sizeof(path)) != 0 ||
		    (unlink(path) != 0 && errno != ENOENT)) {
			FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(errno));
			break;
		}
		atomic_fetch_sub(&q->bytes, s->file_bytes);
		qcount(q, FG_CTR_QUEUE_SEGMENTS_DELETED, 1);
		qcount(q, FG_CTR_QUEUE_BYTES_DELETED, s->file_bytes);
		pthread_mutex_lock(&q->lock);
		free(s->issued);
		memmove(&q->segs[0], &q->segs[1], (q->nseg - 1) * sizeof(*s));
		q->nseg--;
		pthread_mutex_unlock(&q->lock);
		deleted++;
	}
	if (!deleted)
		return;
	qseg_head_write(q);
	if (dir_sync(q) != 0)
		FG_LOG_WARN(QCOMP, "%s: directory sync after deleting segments: %s", q->dir,
			    strerror(errno));
}

/* ------------------------------------------------------------ cursors */

static int slot_write(int fd, const char magic[8], uint64_t seq, const struct fg_queue_cursor *c,
		      uint64_t extra)
{
	struct fg_queue_slot s = { .seq = seq, .c = *c, .updated = time(NULL), .extra = extra };
	uint8_t buf[FG_QUEUE_SLOT];
	ssize_t w;

	fg_queue_slot_encode(buf, magic, &s);
	w = pwrite(fd, buf, sizeof(buf), (off_t)((seq % 2) * FG_QUEUE_SLOT));
	if (w < 0)
		return -errno;
	return w == (ssize_t)sizeof(buf) ? 0 : -EIO;
}

/* Keep a cursor inside what is on disk. */
static void clamp(struct fg_queue *q, struct qconsumer *c, const struct fg_queue_cursor *oldest)
{
	if (c->durable.pos > q->written.pos) {
		FG_LOG_WARN(QCOMP, "downstream %s: cursor %llu is past the end of the queue (%llu): "
			    "queue files were removed? starting at the end", c->name,
			    (unsigned long long)c->durable.pos, (unsigned long long)q->written.pos);
		c->durable = q->written;
	} else if (c->durable.pos < oldest->pos) {
		FG_LOG_WARN(QCOMP, "downstream %s: cursor %llu is before the oldest record (%llu): "
			    "starting at the oldest", c->name, (unsigned long long)c->durable.pos,
			    (unsigned long long)oldest->pos);
		c->durable = *oldest;
	}
}

int qseg_consumer_open(struct fg_queue *q, struct qconsumer *c, const struct fg_queue_cursor *dflt)
{
	uint8_t buf[2 * FG_QUEUE_SLOT];
	struct fg_queue_slot s;
	char path[PATH_MAX];
	ssize_t r;
	int rc;

	if ((rc = fg_queue_cursor_path(q->dir, c->name, path, sizeof(path))) != 0)
		return rc;
	c->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->fd < 0) {
		rc = -errno;
		FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(errno));
		return rc;
	}
	r = pread(c->fd, buf, sizeof(buf), 0);
	rc = r > 0 ? fg_queue_slots_pick(buf, (size_t)r, FG_QUEUE_CURSOR_MAGIC, &s) : -ENOENT;
	if (rc == -EPROTONOSUPPORT) {
		FG_LOG_ERR(QCOMP, "%s: %s: refusing to open the queue (docs/compat.md)", path,
			   fg_datadir_version_why("cursor slot format", s.version, 0,
						  FG_QUEUE_SLOT_VERSION));
		close(c->fd);
		c->fd = -1;
		return rc;
	}
	if (rc == 0) {
		c->seq = s.seq;
		c->durable = s.c;
		clamp(q, c, dflt);
	} else {
		if (r > 0)
			FG_LOG_WARN(QCOMP, "%s: no sound cursor in it: the downstream starts at the "
				    "oldest record", path);
		else
			FG_LOG_NOTICE(QCOMP, "downstream %s is new: it starts at the oldest record "
				      "queued (%llu)", c->name, (unsigned long long)dflt->pos);
		c->durable = *dflt;
		c->seq = 1;
		rc = slot_write(c->fd, FG_QUEUE_CURSOR_MAGIC, c->seq, &c->durable, 0);
		if (rc == 0 && fdatasync(c->fd) != 0)
			rc = -errno;
		if (rc == 0)
			rc = dir_sync(q);
		if (rc != 0) {
			FG_LOG_ERR(QCOMP, "%s: %s", path, strerror(-rc));
			return rc;
		}
	}
	c->acked = c->written = c->durable;
	return 0;
}

void qseg_cursors_persist(struct fg_queue *q, uint64_t now_ns, bool force)
{
	struct fg_queue_cursor want[FG_CONFIG_MAX_DOWNSTREAMS];
	unsigned dirty = 0, failed = 0;

	pthread_mutex_lock(&q->lock);
	for (unsigned i = 0; i < q->n_consumers; i++) {
		want[i] = q->consumer[i].acked;
		dirty += want[i].pos != q->consumer[i].written.pos;
	}
	pthread_mutex_unlock(&q->lock);
	if (!dirty) {
		q->cursor_dirty_ns = 0;
		return;
	}
	if (!q->cursor_dirty_ns)
		q->cursor_dirty_ns = now_ns;
	/* a cursor sync is small and the relay's crash bound waits on it: group
	 * the acknowledgements of at most a millisecond, not a whole commit */
	if (!force && now_ns < q->cursor_dirty_ns + FG_MIN(q->p.commit_ns, Q_CURSOR_NS))
		return;
	for (unsigned i = 0; i < q->n_consumers; i++) {
		struct qconsumer *c = &q->consumer[i];
		int rc;

		if (want[i].pos == c->written.pos)
			continue;
		rc = slot_write(c->fd, FG_QUEUE_CURSOR_MAGIC, c->seq + 1, &want[i], 0);
		if (rc == 0 && fdatasync(c->fd) != 0)
			rc = -errno;
		if (rc != 0) {
			FG_LOG_ERR(QCOMP, "downstream %s: writing its cursor: %s", c->name,
				   strerror(-rc));
			qcount(q, FG_CTR_QUEUE_WRITE_ERRORS, 1);
			failed++;
			continue;
		}
		c->seq++;
		c->written = want[i];
		pthread_mutex_lock(&q->lock);
		c->durable = want[i];
		pthread_mutex_unlock(&q->lock);
		qcount(q, FG_CTR_QUEUE_CURSOR_WRITES, 1);
	}
	q->cursor_dirty_ns = failed ? now_ns : 0;
	if (q->notify)
		q->notify(q->notify_arg);
}

void qseg_head_write(struct fg_queue *q)
{
	/* information for other processes: no sync */
	q->head_seq++;
	if (slot_write(q->head_fd, FG_QUEUE_HEAD_MAGIC, q->head_seq, &q->durable,
		       fg_queue_bytes(q)) != 0)
		FG_LOG_DEBUG(QCOMP, "head file: %s", strerror(errno));
}

int qseg_read_arrival(struct fg_queue *q, uint64_t pos, fg_time_t *arrival)
{
	struct fg_queue_segref sr;
	uint8_t hdr[FG_QUEUE_REC_HEADER];
	struct fg_queue_rec r;
	char path[PATH_MAX];
	const char *why;
	int fd, rc;

	if ((rc = fg_queue_segment_at(q, pos, &sr)) != 0 || sr.base > pos ||
	    (rc = fg_queue_segment_path(q->dir, sr.segment, path, sizeof(path))) != 0)
		return rc ? rc : -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fg_datadir_pread_all(fd, hdr, sizeof(hdr), FG_QUEUE_SEG_HEADER + (pos - sr.base));
	close(fd);
	if (rc == 0)
		rc = fg_queue_rec_header_decode(hdr, sizeof(hdr), &r, &why);
	if (rc == 0)
		*arrival = r.arrival;
	return rc;
}
