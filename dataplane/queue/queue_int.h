/* SPDX-License-Identifier: MIT */
/*
 * queue_int.h — the queue's private layout, shared by the writer
 * (qwriter.c, qseg.c) and the sink handles (qsink.c).
 *
 * Between an engine thread and the writer there are two single-producer
 * single-consumer rings of article slot numbers per handle: `commits`
 * (engine -> writer) and `done` (writer -> engine). A slot is in at most
 * one ring at a time, so a ring as large as the slot table never fills.
 * The slot itself (struct qs_art) belongs to the engine thread until it is
 * pushed on `commits`, to the writer until it is pushed on `done`, then
 * to the engine again: the rings' release/acquire pairs order every field.
 */
#ifndef FLOODGATE_QUEUE_INT_H
#define FLOODGATE_QUEUE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/uio.h>

#include "floodgate/qwriter.h"

#define QCOMP "queue"
#define Q_NONE UINT32_MAX
#define Q_MAX_SINKS_DEFAULT 64
#define Q_MAX_ARTICLES_DEFAULT 4096
#define Q_MAX_HELD_DEFAULT (64ull << 20)
#define Q_CURSOR_NS 1000000ull		/* cursors made durable within this */

/* ---- rings ---- */

struct qring {
	_Atomic uint64_t head FG_CACHE_ALIGNED;	/* producer */
	_Atomic uint64_t tail FG_CACHE_ALIGNED;	/* consumer */
	uint32_t mask FG_CACHE_ALIGNED;
	uint32_t *slot;
};

int qring_init(struct qring *r, uint32_t min_cap);
void qring_fini(struct qring *r);
void qring_push(struct qring *r, uint32_t v);
bool qring_pop(struct qring *r, uint32_t *v);
bool qring_empty(struct qring *r);

/* ---- an article in a handle ---- */

#define QS_BLOCK_IOVS 30
#define QS_COPY_CHUNK (16u << 10)

struct qs_block {
	struct qs_block *next;
	unsigned n;
	struct iovec v[QS_BLOCK_IOVS];
	void *h[QS_BLOCK_IOVS];		/* v[i]'s receive buffer (NULL: a copy) */
};

struct qs_copy {
	struct qs_copy *next;
	uint32_t used;
	uint8_t data[QS_COPY_CHUNK];
};

struct qs_art {
	uint64_t cookie;
	uint64_t art_len;		/* wire octets appended */
	struct qs_block *blocks, *last_block;
	struct qs_copy *copies, *last_copy;
	int status;			/* the writer's outcome */
	uint16_t id_len;
	uint16_t peer;
	uint32_t next_free;
	bool busy;
	struct fg_feeds_set route;	/* set by the engine's route(); all when it does not */
	char id[FG_QUEUE_ID_MAX];
};

/* Per-slot completion counters, kept by the queue so that they outlive a
 * handle: a sealed segment may be deleted only once the engines have been
 * handed every completion of its records (the journal gate then covers
 * their history records). */
struct qslot {
	_Atomic(struct fg_queue_sink *) sink;
	uint64_t issued;			/* writer: completions pushed */
	_Atomic uint64_t delivered FG_CACHE_ALIGNED;	/* engine: done() returned */
};

struct fg_queue_sink {
	struct fg_queue *q;
	unsigned slot;
	struct fg_queue_sink_params p;
	struct qs_art *arts;
	uint32_t free_head;
	unsigned busy;			/* open + in flight */
	uint64_t held;			/* their octets (art_len summed) */
	struct qring commits, done;
	/* engine-thread free lists */
	struct qs_block *free_blocks;
	struct qs_copy *free_copies;
	unsigned n_free_blocks, n_free_copies;
};

/* ---- segments ---- */

struct qseg {
	uint64_t number;
	uint64_t base, end;		/* positions; end: after the last sound record */
	uint64_t first_recno, next_recno;
	uint64_t file_bytes;		/* octets of the file (torn or damaged tails count) */
	fg_time_t created;
	bool sealed;
	bool recovered;			/* found at open: no completion of it is pending */
	bool gate_begun;
	uint64_t ticket;
	uint64_t *issued;		/* per slot, at seal (max_sinks) */
};

/* ---- consumers ---- */

struct qconsumer {
	char name[FG_CONFIG_NAME_MAX];
	int fd;
	uint64_t seq;			/* of the slot last written */
	struct fg_queue_cursor acked;	/* relay's, under q->lock */
	struct fg_queue_cursor durable;	/* under q->lock */
	struct fg_queue_cursor written;	/* writer's copy of durable */
	/* backlog limits (qbacklog.c): writer thread; `st` also under q->lock */
	struct fg_queue_backlog bl;
	struct fg_queue_consumer_state st;
	uint64_t age_pos;			/* position whose arrival age_arrival is */
	fg_time_t age_arrival;
};

/* Why new articles are refused (bits of q->refuse). */
#define QR_LIMIT 0x1u
#define QR_AGE 0x2u
#define QR_DISK 0x4u
#define QR_BACKLOG 0x8u		/* a parked consumer at its disk cap (defer) */

struct qpending {
	struct fg_queue_sink *s;
	uint32_t art;
};

struct fg_queue {
	struct fg_queue_params p;
	char dir[FG_CONFIG_PATH_MAX];
	struct fg_stats *stats;
	struct fg_stats own_stats;		/* when the caller gives none */
	void (*notify)(void *arg);
	void *notify_arg;

	pthread_mutex_t lock;			/* segs, consumers' cursors, durable */
	struct qseg *segs;			/* ascending; the last is being written */
	size_t nseg, capseg;
	struct fg_queue_cursor durable;		/* under lock */

	/* writer thread only */
	int fd;					/* current segment */
	int head_fd;
	uint64_t head_seq;
	uint64_t off;				/* next record's offset in fd */
	struct fg_queue_cursor written;
	_Atomic uint64_t bytes;			/* on disk */
	struct qpending *pend;
	size_t npend, cappend;
	struct iovec *iov;			/* a record's pieces for pwritev */
	unsigned iov_cap;
	uint64_t pend_since_ns;
	uint64_t cursor_dirty_ns;		/* 0: clean */
	bool broken;				/* a write failed: rotate before the next */
	bool need_wake;				/* completions pushed since the last wake */
	bool disk_full;
	uint64_t probe_ns;
	uint64_t tick_ns;
	int64_t oldest_arrival;			/* of the oldest undelivered record; 0 none */
	uint64_t oldest_pos;
	/* backlog limits (qbacklog.c), writer thread: where the shared limits
	 * look (the lowest cursor of a consumer that is not parked), what
	 * lies before it (kept only for parked ones), and whether a parked
	 * one at its cap defers the peers */
	uint64_t shared_low;
	uint64_t parked_bytes;
	const char *full_name;			/* NULL: none at its cap */

	/* Slot membership: held by the writer while it walks the handles, and
	 * by create/destroy, so a handle is never freed under the writer. */
	pthread_mutex_t slots_lock;
	struct qslot *slots;
	struct qconsumer consumer[FG_CONFIG_MAX_DOWNSTREAMS];
	unsigned n_consumers;

	_Atomic unsigned refuse;		/* QR_* */
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	_Atomic bool sleeping;
	int wake_fd;				/* eventfd */
};

static inline void qcount(struct fg_queue *q, enum fg_counter c, uint64_t n)
{
	fg_stats_add(q->stats, c, n);
}

void fg_queue_kick(struct fg_queue *q);

/* qseg.c: segment files and cursors (writer side) */
int qseg_recover(struct fg_queue *q, struct fg_queue_open_info *info);
int qseg_start_new(struct fg_queue *q, uint64_t number, const struct fg_queue_cursor *at);
int qseg_rotate(struct fg_queue *q);
void qseg_delete_done(struct fg_queue *q);
int qseg_consumer_open(struct fg_queue *q, struct qconsumer *c, const struct fg_queue_cursor *dflt);
void qseg_cursors_persist(struct fg_queue *q, uint64_t now_ns, bool force);
void qseg_head_write(struct fg_queue *q);
int qseg_read_arrival(struct fg_queue *q, uint64_t pos, fg_time_t *arrival);

/* qbacklog.c: backlog limits and parking, once per housekeeping pass
 * (before the refusal, which looks at shared_low and parked_bytes) */
void qbacklog_pass(struct fg_queue *q);

#endif /* FLOODGATE_QUEUE_INT_H */
