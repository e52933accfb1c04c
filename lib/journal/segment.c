/* SPDX-License-Identifier: MIT */
/*
 * segment.c — floodctld's side of the journal: drain the writers' rings
 * into checksummed blocks, append them to the current segment, group-
 * commit with fdatasync, publish how far each writer's records are
 * durable, rotate segments.
 *
 * The drain copies records into the block buffer with a read-ahead
 * cursor per slot; the buffer goes to the file when it fills or at a
 * commit; only after the fdatasync are the records released from their
 * ring (its tail moves, and that tail is what the writer sees as
 * committed). So a record leaves the shared region only once it is on
 * disk: floodctld can be killed at any instant and the next one drains
 * the same records again (a record written twice replays harmlessly).
 * The price is that a ring must hold one commit interval of its writer's
 * records; the rings thread commits early when they fill past half.
 *
 * If a write or a sync fails (disk full), nothing is released: the rings
 * fill, writers defer — the journal never drops a record. A cursor is
 * only good for the slot's current claim (its generation): a slot freed
 * and claimed again starts from its new tail.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "journal_int.h"

#define COMP "journal"
#define JBUF_CAP (4u << 20)

struct fg_journal {
	struct fg_journal_params p;
	char dir[PATH_MAX];
	struct fg_stats *st;
	int fd;
	uint64_t segment;
	uint64_t written;		/* octets of this segment handed to write() */
	uint64_t durable_segment;
	uint64_t durable;		/* octets of durable_segment known durable */
	uint8_t *buf;			/* blocks not yet written, for offset `written` */
	size_t buf_len;
	uint64_t uncommitted;		/* records drained, not yet durable */
	uint64_t commit_seq;
	uint64_t last_commit_ns;
	bool dirty[FG_REGION_MAX_WRITERS];	/* copied since the last commit */
	uint64_t gen[FG_REGION_MAX_WRITERS];	/* the claim the cursor belongs to */
	uint64_t copied[FG_REGION_MAX_WRITERS];	/* read-ahead cursor */
	bool failed;			/* a write failed since the last commit */
};

/* Create segment `seg`: header written and fsynced, then the directory
 * fsynced, so the seed is on disk before any record depends on it. */
static int segment_create(struct fg_journal *j, uint64_t seg)
{
	char path[PATH_MAX];
	uint8_t hdr[FG_JSEG_HEADER];
	struct fg_jseg_info info;
	int fd, rc;

	rc = fg_journal_segment_path(j->dir, seg, path, sizeof(path));
	if (rc < 0)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.segment = seg;
	info.created = time(NULL);
	memcpy(info.seed, j->p.seed, sizeof(info.seed));
	info.seed_check = j->p.seed_check;
	fg_jseg_header_make(hdr, &info);
	rc = fg_datadir_write_all(fd, hdr, sizeof(hdr));
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fg_datadir_fsync(j->dir);
	if (rc < 0) {
		close(fd);
		unlink(path);
		return rc;
	}
	if (j->fd >= 0)
		close(j->fd);
	j->fd = fd;
	j->segment = seg;
	j->written = FG_JSEG_HEADER;
	j->durable_segment = seg;
	j->durable = FG_JSEG_HEADER;
	fg_stats_inc(j->st, FG_CTR_JOURNAL_SEGMENTS);
	FG_LOG_INFO(COMP, "segment %s started", path);
	return 0;
}

struct fg_journal *fg_journal_open(const struct fg_journal_params *p, struct fg_stats *stats,
				   int *err)
{
	struct fg_journal *j = calloc(1, sizeof(*j));
	uint64_t *segs = NULL, next = 1;
	size_t n = 0;
	int rc;

	if (!j) {
		*err = -ENOMEM;
		return NULL;
	}
	j->fd = -1;
	j->p = *p;
	j->st = stats;
	snprintf(j->dir, sizeof(j->dir), "%s", p->dir);
	j->p.dir = j->dir;
	if (!j->p.segment_bytes)
		j->p.segment_bytes = FG_JSEG_BYTES_DEFAULT;
	j->buf = malloc(JBUF_CAP);
	rc = j->buf ? fg_journal_list(j->dir, &segs, &n) : -ENOMEM;
	if (rc < 0)
		goto out_free;
	if (n)
		next = segs[n - 1] + 1;
	free(segs);
	rc = segment_create(j, next);
	if (rc < 0)
		goto out_free;
	*err = 0;
	return j;

out_free:
	FG_LOG_ERR(COMP, "cannot start a journal segment in %s: %s", p->dir, strerror(-rc));
	free(j->buf);
	free(j);
	*err = rc;
	return NULL;
}

void fg_journal_close(struct fg_journal *j)
{
	if (!j)
		return;
	if (j->buf_len || j->uncommitted)
		FG_LOG_WARN(COMP, "closing with %llu records not committed",
			    (unsigned long long)j->uncommitted);
	if (j->fd >= 0)
		close(j->fd);
	free(j->buf);
	free(j);
}

/* Hand the buffer to the file; on a failure keep what was not written. */
static int flush(struct fg_journal *j)
{
	size_t done = 0;
	int rc = 0;

	if (j->fd < 0)
		return -EIO;	/* abandoned; the next commit starts a segment */
	while (done < j->buf_len) {
		ssize_t w = write(j->fd, j->buf + done, j->buf_len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		done += (size_t)w;
	}
	if (done) {
		memmove(j->buf, j->buf + done, j->buf_len - done);
		j->buf_len -= done;
		j->written += done;
		fg_stats_add(j->st, FG_CTR_JOURNAL_BYTES, done);
	}
	if (rc < 0) {
		j->failed = true;
		fg_stats_inc(j->st, FG_CTR_JOURNAL_ERRORS);
		FG_LOG_ERR(COMP, "write to segment %llu failed: %s (records kept in their rings)",
			   (unsigned long long)j->segment, strerror(-rc));
	}
	return rc;
}

/* Nothing of this segment since its last commit is trusted any more:
 * forget what was copied (it is still in the rings) and close it. */
static void abandon(struct fg_journal *j, int why)
{
	FG_LOG_ERR(COMP, "segment %llu abandoned after %s: its unreleased records go again to a new segment",
		   (unsigned long long)j->segment, strerror(-why));
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	j->buf_len = 0;
	j->uncommitted = 0;
	j->failed = false;
	for (unsigned i = 0; i < FG_REGION_MAX_WRITERS; i++) {
		j->dirty[i] = false;
		j->gen[i] = UINT64_MAX;		/* the next drain restarts at the tail */
	}
}

/* Copy up to `max` records of one slot into blocks. */
static int64_t drain_slot(struct fg_journal *j, struct fg_region *r, unsigned slot, unsigned max)
{
	uint64_t gen;
	int64_t moved = 0;

	/* a slot being claimed is read once its claim is published: copied
	 * under the old cursor, the new claim's first records would be copied
	 * again from the tail after the generation turned (seen in
	 * test_journal_mt under TSan) */
	if (!fg_region_slot_generation(r, slot, &gen))
		return 0;
	if (gen != j->gen[slot]) {
		j->gen[slot] = gen;
		j->copied[slot] = fg_region_ring_tail(r, slot, FG_RING_JOURNAL);
		j->dirty[slot] = false;
	}
	while ((unsigned)moved < max) {
		const void *recs;
		unsigned want = FG_MIN(max - (unsigned)moved, FG_JBLOCK_MAX);
		unsigned n = fg_region_ring_peek(r, slot, FG_RING_JOURNAL, j->copied[slot], &recs,
						 want);
		size_t bytes = (size_t)n * sizeof(struct fg_jrec);

		if (n == 0)
			break;
		if (j->buf_len + FG_JBLOCK_HEADER + bytes > JBUF_CAP) {
			int rc = flush(j);

			if (rc < 0)
				return moved ? moved : rc;
		}
		memcpy(j->buf + j->buf_len + FG_JBLOCK_HEADER, recs, bytes);
		fg_jblock_seal(j->buf + j->buf_len, n, slot, j->commit_seq);
		j->buf_len += FG_JBLOCK_HEADER + bytes;
		j->copied[slot] += n;
		j->dirty[slot] = true;
		j->uncommitted += n;
		moved += n;
		fg_stats_add(j->st, FG_CTR_JOURNAL_RECORDS, n);
		fg_stats_inc(j->st, FG_CTR_JOURNAL_BLOCKS);
	}
	return moved;
}

int64_t fg_journal_drain(struct fg_journal *j, struct fg_region *r, unsigned max_per_slot)
{
	unsigned slots = FG_MIN(fg_region_nslots(r), FG_REGION_MAX_WRITERS);
	int64_t total = 0;

	for (unsigned i = 0; i < slots; i++) {
		int64_t n = drain_slot(j, r, i, max_per_slot);

		if (n < 0)
			return total ? total : n;
		total += n;
	}
	return total;
}

int fg_journal_add(struct fg_journal *j, const struct fg_jrec *recs, unsigned n)
{
	size_t bytes = (size_t)n * sizeof(struct fg_jrec);
	int rc;

	if (n == 0 || n > FG_JBLOCK_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (!fg_jrec_valid(&recs[i]))
			return -EINVAL;
	if (j->fd < 0 && (rc = segment_create(j, j->segment + 1)) < 0)
		return rc;	/* abandoned before, and no new segment yet */
	if (j->buf_len + FG_JBLOCK_HEADER + bytes > JBUF_CAP && (rc = flush(j)) < 0)
		return rc;
	memcpy(j->buf + j->buf_len + FG_JBLOCK_HEADER, recs, bytes);
	fg_jblock_seal(j->buf + j->buf_len, n, FG_JBLOCK_SLOT_CTLD, j->commit_seq);
	j->buf_len += FG_JBLOCK_HEADER + bytes;
	j->uncommitted += n;
	fg_stats_add(j->st, FG_CTR_JOURNAL_RECORDS, n);
	fg_stats_inc(j->st, FG_CTR_JOURNAL_BLOCKS);
	return 0;
}

static int sync_segment(struct fg_journal *j)
{
	int rc = j->p.sync_fn ? j->p.sync_fn(j->fd) : fdatasync(j->fd);

	if (rc == 0)
		return 0;
	rc = -errno;
	fg_stats_inc(j->st, FG_CTR_JOURNAL_ERRORS);
	FG_LOG_ERR(COMP, "fdatasync of segment %llu failed: %s", (unsigned long long)j->segment,
		   strerror(-rc));
	return rc;
}

int fg_journal_commit(struct fg_journal *j, struct fg_region *r)
{
	unsigned slots = FG_MIN(fg_region_nslots(r), FG_REGION_MAX_WRITERS);
	uint64_t gen;
	int rc = 0;

	if (j->fd < 0 && (rc = segment_create(j, j->segment + 1)) < 0)
		return rc;
	rc = flush(j);
	if (rc == 0 && j->failed)
		rc = -EIO;
	if (rc == 0 && j->durable_segment == j->segment && j->durable == j->written &&
	    !j->uncommitted)
		return 0;
	if (rc == 0)
		rc = sync_segment(j);
	if (rc < 0) {
		abandon(j, rc);
		return rc;
	}
	j->durable_segment = j->segment;
	j->durable = j->written;
	j->uncommitted = 0;
	j->commit_seq++;
	j->last_commit_ns = fg_mono_ns();
	fg_stats_inc(j->st, FG_CTR_JOURNAL_COMMITS);
	for (unsigned i = 0; i < slots; i++) {
		if (!j->dirty[i])
			continue;
		/* a dirty slot cannot have been freed (its ring was not empty) */
		FG_ASSERT(fg_region_slot_generation(r, i, &gen) && gen == j->gen[i]);
		fg_region_ring_release(r, i, FG_RING_JOURNAL, j->copied[i]);
		j->dirty[i] = false;
	}
	if (j->written >= j->p.segment_bytes) {
		rc = segment_create(j, j->segment + 1);
		if (rc < 0)
			FG_LOG_ERR(COMP, "cannot rotate to segment %llu: %s (continuing in %llu)",
				   (unsigned long long)j->segment + 1, strerror(-rc),
				   (unsigned long long)j->segment);
	}
	return 0;
}

void fg_journal_position(const struct fg_journal *j, struct fg_jpos *appended,
			 struct fg_jpos *durable)
{
	if (appended) {
		appended->segment = j->segment;
		appended->offset = j->written + j->buf_len;
	}
	if (durable) {
		durable->segment = j->durable_segment;
		durable->offset = j->durable;
	}
}

uint64_t fg_journal_uncommitted(const struct fg_journal *j)
{
	return j->uncommitted;
}

uint64_t fg_journal_last_commit_ns(const struct fg_journal *j)
{
	return j->last_commit_ns;
}
