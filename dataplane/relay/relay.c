/* SPDX-License-Identifier: MIT */
/*
 * relay.c — the relay thread: each downstream's window of queue records
 * (relay_int.h explains it), which connection sends what, the cursors,
 * and one epoll loop for every connection.
 *
 * A pass of the loop: handle socket events (answers move records to DONE
 * or back to READY), then per downstream take new durable records into the
 * window (never more than `cap` past the durable cursor), start or time
 * out connections, and hand READY records, lowest record number first, to
 * connections with room in their window. The cursor follows the DONE
 * records at the window's front and is handed to the queue, whose writer
 * makes it durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "relay_int.h"

#define BUSY_TICK_MS 50		/* loop period while anything waits on a timer */
#define IDLE_TICK_MS 1000
#define SEGFD_KEEP 16
#define STOP_DRAIN_NS (1000ull * 1000000)

/* ------------------------------------------------------------ segment files */

int relay_segfd_get(struct fg_relay *r, uint64_t num)
{
	char path[PATH_MAX];
	int fd;

	for (unsigned i = 0; i < r->nsegfd; i++)
		if (r->segfds[i].num == num) {
			r->segfds[i].refs++;
			return r->segfds[i].fd;
		}
	if (fg_queue_segment_path(fg_queue_dir(r->p.q), num, path, sizeof(path)) != 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		FG_LOG_ERR(RCOMP, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (r->nsegfd == r->capsegfd) {
		unsigned cap = r->capsegfd ? 2 * r->capsegfd : 16;
		struct segfd *n = realloc(r->segfds, cap * sizeof(*n));

		if (!n) {
			close(fd);
			return -ENOMEM;
		}
		r->segfds = n;
		r->capsegfd = cap;
	}
	r->segfds[r->nsegfd++] = (struct segfd){ num, fd, 1 };
	return fd;
}

void relay_segfd_put(struct fg_relay *r, uint64_t num)
{
	for (unsigned i = 0; i < r->nsegfd; i++)
		if (r->segfds[i].num == num) {
			FG_ASSERT(r->segfds[i].refs > 0);
			r->segfds[i].refs--;
			return;
		}
	FG_ASSERT(!"segment fd not held");
}

/* Close unused files of segments every downstream is past (kept open
 * meanwhile: a record header is read per record). */
static void segfd_gc(struct fg_relay *r)
{
	uint64_t lowest = UINT64_MAX;
	struct fg_queue_segref sr;

	for (unsigned d = 0; d < r->nds; d++)
		if (fg_queue_segment_at(r->p.q, r->ds[d].low.pos, &sr) == 0)
			lowest = FG_MIN(lowest, sr.segment);
	for (unsigned i = 0; i < r->nsegfd;) {
		struct segfd *s = &r->segfds[i];

		if (s->refs == 0 && (s->num < lowest || r->nsegfd > SEGFD_KEEP)) {
			close(s->fd);
			*s = r->segfds[--r->nsegfd];
			continue;
		}
		i++;
	}
}

/* ------------------------------------------------------------ the window */

struct rec *rds_rec(struct rds *d, uint64_t recno)
{
	if (recno < d->low.recno || recno >= d->next.recno)
		return NULL;
	return &d->win[recno % d->cap];
}

static void ready_at(struct rds *d, struct rec *e, uint64_t due)
{
	e->state = REC_READY;
	e->due_ns = due;
	d->first_ready = FG_MIN(d->first_ready, (unsigned)(e->recno - d->low.recno));
}

void rds_done(struct rds *d, struct rec *e)
{
	struct fg_queue_cursor before = d->low;

	e->state = REC_DONE;
	while (d->low.recno < d->next.recno) {
		struct rec *f = &d->win[d->low.recno % d->cap];

		if (f->state != REC_DONE)
			break;
		d->low.pos += f->size;
		d->low.recno++;
		d->first_ready = d->first_ready ? d->first_ready - 1 : 0;
	}
	/* handed to the queue once per pass (ack_cursor): one lock and at most
	 * one wake-up of the writer for a whole batch of answers */
	if (d->low.recno != before.recno)
		d->ack_due = true;
}

static void ack_cursor(struct rds *d)
{
	if (!d->ack_due)
		return;
	d->ack_due = false;
	fg_queue_consumer_ack(d->r->p.q, d->consumer, &d->low);
}

/* 431/436: again after a growing pause, still in order. */
void rds_retry(struct rds *d, struct rec *e, uint64_t delay_ns)
{
	const struct fg_relay_params *p = &d->r->p;
	uint64_t pause = p->retry_min_ns;

	e->tries++;
	for (unsigned i = 1; i < e->tries && pause < p->retry_max_ns; i++)
		pause *= 2;
	pause = FG_MAX(FG_MIN(pause, p->retry_max_ns), delay_ns);
	ready_at(d, e, fg_mono_ns() + pause);
}

/* Its connection failed before the answer: at once, on any connection. */
void rds_requeue(struct rds *d, struct rec *e)
{
	rcount(d->r, FG_CTR_RELAY_RESENT, 1);
	ready_at(d, e, 0);
}

/* The record header (with its route and ID) at cursor `at`, below `end`:
 * 1 and *rec, *sr, 0 nothing readable there now, -1 a damaged or missing
 * segment (sr->base, sr->first_recno say where the next one starts). */
static int read_rec(struct rds *d, const struct fg_queue_cursor *at,
		    const struct fg_queue_cursor *end, uint8_t hdr[R_RESERVE_HDR],
		    struct fg_queue_segref *sr, struct fg_queue_rec *rec)
{
	struct fg_relay *r = d->r;
	const char *why;
	ssize_t n;
	int fd;

	if (fg_queue_segment_at(r->p.q, at->pos, sr) != 0)
		return 0;
	if (sr->base > at->pos || sr->first_recno > at->recno)
		return -1;
	fd = relay_segfd_get(r, sr->segment);
	if (fd < 0)
		return 0;
	n = pread(fd, hdr, R_RESERVE_HDR, (off_t)(FG_QUEUE_SEG_HEADER + at->pos - sr->base));
	relay_segfd_put(r, sr->segment);
	if (n < (ssize_t)FG_QUEUE_REC_HEADER_V1 ||
	    fg_queue_rec_header_decode(hdr, (size_t)n, rec, &why) != 0 ||
	    (size_t)n < rec->hdr_len + rec->id_len || rec->recno != at->recno ||
	    at->pos + rec->size > end->pos) {
		FG_LOG_ERR(RCOMP, "%s: no record at queue position %llu (record %llu)",
			   d->cfg->name, (unsigned long long)at->pos,
			   (unsigned long long)at->recno);
		return 0;
	}
	return 1;
}

/* Read the record header at d->next into the window. 1 taken, 0 nothing
 * to take now. */
static int take_one(struct rds *d, const struct fg_queue_cursor *end)
{
	struct fg_relay *r = d->r;
	uint8_t hdr[R_RESERVE_HDR];
	struct fg_queue_segref sr;
	struct fg_queue_rec rec;
	struct rec *e;
	int rc = read_rec(d, &d->next, end, hdr, &sr, &rec);

	if (rc < 0) {
		/* a damaged or missing segment: what it held is lost to us */
		if (d->low.recno != d->next.recno)
			return 0;
		FG_LOG_ERR(RCOMP, "%s: queue records %llu..%llu are unreadable: skipped",
			   d->cfg->name, (unsigned long long)d->next.recno,
			   (unsigned long long)sr.first_recno);
		d->low = d->next = (struct fg_queue_cursor){ sr.base, sr.first_recno };
		fg_queue_consumer_ack(r->p.q, d->consumer, &d->low);
		return 1;
	}
	if (rc == 0)
		return 0;
	e = &d->win[d->next.recno % d->cap];
	memset(e, 0, offsetof(struct rec, id));
	e->pos = d->next.pos;
	e->recno = d->next.recno;
	e->seg = sr.segment;
	e->size = rec.size;
	e->art_off = FG_QUEUE_SEG_HEADER + (d->next.pos - sr.base) + rec.hdr_len + rec.id_len;
	e->art_len = rec.art_len;
	e->id_len = rec.id_len;
	memcpy(e->id, hdr + rec.hdr_len, rec.id_len);
	e->id[rec.id_len] = '\0';
	d->next.pos += rec.size;
	d->next.recno++;
	if (fg_feeds_has(&rec.route, d->cfg->ident)) {
		ready_at(d, e, 0);
	} else {
		/* its feed did not select it when it was queued */
		d->not_routed++;
		rds_done(d, e);
	}
	return 1;
}

/* ------------------------------------------------------------ backlog drop */

static void log_dropped(struct rds *d, const char *id, size_t len, uint64_t recno)
{
	FG_LOG_WARN(RCOMP, "%s: backlog full (backlog-full drop): dropped %.*s (record %llu)",
		    d->cfg->name, (int)len, id, (unsigned long long)recno);
	d->dropped++;
}

/*
 * The queue gave up part of this downstream's backlog (backlog-full drop,
 * qwriter.h): move to its drop_to cursor, logging and counting each
 * record routed here that was never delivered: in the window, those not
 * DONE (what a connection had in flight is failed first: its answers
 * would name records no longer in the window, and it may or may not have
 * arrived); past the window, those the route names, read from disk.
 */
static void apply_drop(struct rds *d, uint64_t now)
{
	struct fg_queue_cursor to, at, end;
	uint8_t hdr[R_RESERVE_HDR];
	struct fg_queue_segref sr;
	struct fg_queue_rec rec;
	uint64_t before = d->dropped;

	fg_queue_consumer_drop_to(d->r->p.q, d->consumer, &to);
	if (to.pos <= d->low.pos)
		return;
	for (unsigned i = 0; i < d->nconn; i++)
		if (d->conns[i].cn)
			rconn_fail(&d->conns[i], "its backlog is being dropped (backlog-full drop)",
				   now);
	for (uint64_t n = d->low.recno; n < d->next.recno && n < to.recno; n++) {
		struct rec *e = &d->win[n % d->cap];

		if (e->state != REC_DONE)
			log_dropped(d, e->id, e->id_len, e->recno);
	}
	at = d->next;
	fg_queue_durable(d->r->p.q, &end);
	while (at.pos < to.pos && read_rec(d, &at, &end, hdr, &sr, &rec) == 1) {
		if (fg_feeds_has(&rec.route, d->cfg->ident))
			log_dropped(d, (const char *)hdr + rec.hdr_len, rec.id_len, rec.recno);
		at.pos += rec.size;
		at.recno++;
	}
	FG_LOG_WARN(RCOMP, "%s: %llu of its articles dropped at its backlog cap; it resumes at "
		    "record %llu", d->cfg->name, (unsigned long long)(d->dropped - before),
		    (unsigned long long)to.recno);
	rcount(d->r, FG_CTR_QUEUE_BACKLOG_DROPPED, d->dropped - before);
	d->low = d->next = to;
	d->first_ready = 0;
	d->ack_due = true;
	d->drops++;
}

/* Take durable records while the window (and the crash bound) allow. */
static void fill(struct rds *d)
{
	struct fg_queue_cursor end;

	fg_queue_consumer_durable(d->r->p.q, d->consumer, &d->durable);
	fg_queue_durable(d->r->p.q, &end);
	while (d->next.pos < end.pos && d->next.recno - d->low.recno < d->cap &&
	       d->next.recno - d->durable.recno < d->bound && take_one(d, &end) == 1)
		;
}

/* The lowest READY record that is due, or NULL. */
static struct rec *pick(struct rds *d, uint64_t now)
{
	unsigned n = (unsigned)(d->next.recno - d->low.recno);
	bool seen_ready = false;

	for (unsigned i = d->first_ready; i < n; i++) {
		struct rec *e = &d->win[(d->low.recno + i) % d->cap];

		if (e->state != REC_READY)
			continue;
		if (!seen_ready) {
			d->first_ready = i;
			seen_ready = true;
		}
		if (e->due_ns <= now)
			return e;
	}
	if (!seen_ready)
		d->first_ready = n;
	return NULL;
}

static void dispatch(struct rds *d, uint64_t now)
{
	for (unsigned i = 0; i < d->nconn; i++) {
		struct rconn *c = &d->conns[i];
		struct rec *e;
		bool sent = false;

		while (rconn_can_take(c) && (e = pick(d, now)) != NULL) {
			if (rconn_send_rec(c, e) != 0) {
				rconn_fail(c, "cannot read an article from the queue", now);
				break;
			}
			sent = true;
		}
		if (sent)
			rconn_flush(c, now);
	}
}

static void publish(struct rds *d)
{
	struct fg_relay_ds_status *s = &d->pub;

	pthread_mutex_lock(&d->r->status_lock);
	/* the LINK rows of dstatus.h (connections: set once, ds_init) */
	s->paused = atomic_load(&d->paused);
	s->ready = 0;
	s->streaming = false;
	for (unsigned i = 0; i < d->nconn; i++) {
		s->ready += d->conns[i].st == CS_READY;
		s->streaming |= d->conns[i].st == CS_READY && d->conns[i].streaming;
	}
	s->acked = d->low;
	s->next = d->next;
	s->in_window = (unsigned)(d->next.recno - d->low.recno);
#define PUB_COUNT(f, k, src, col, w, h) FG_DS_FROM(src, RELAY, s->f = d->f;)
	FG_DS_FIELDS(PUB_COUNT)
#undef PUB_COUNT
	s->drops = d->drops;
	pthread_mutex_unlock(&d->r->status_lock);
}

/* ------------------------------------------------------------ the thread */

static bool busy(struct fg_relay *r)
{
	if (r->naskers && (r->ask_conn.st != CS_READY || r->ask_conn.an))
		return true;
	if (r->nlive)
		return true;
	for (unsigned d = 0; d < r->nds; d++) {
		for (unsigned i = 0; i < r->ds[d].ndconn; i++)
			if (r->ds[d].dconns[i].st != CS_READY)
				return true;
		if (r->ds[d].next.recno != r->ds[d].low.recno)
			return true;
		for (unsigned i = 0; i < r->ds[d].nconn; i++)
			if (r->ds[d].conns[i].st != CS_READY)
				return true;
	}
	return false;
}

static void events(struct fg_relay *r, int timeout_ms)
{
	struct epoll_event ev[64];
	int n = epoll_wait(r->ep, ev, 64, timeout_ms);
	uint64_t now = fg_mono_ns(), junk;

	for (int i = 0; i < n; i++) {
		if (!ev[i].data.ptr) {
			if (read(r->wake_fd, &junk, sizeof(junk)) < 0 && errno != EAGAIN)
				FG_LOG_WARN(RCOMP, "wake: %s", strerror(errno));
			continue;
		}
		rconn_event(ev[i].data.ptr, ev[i].events, now);
	}
}

static void pass(struct fg_relay *r, bool feeding)
{
	uint64_t now = fg_mono_ns();

	for (unsigned d = 0; d < r->nds; d++) {
		struct rds *ds = &r->ds[d];

		for (unsigned i = 0; i < ds->nconn; i++)
			rconn_timer(&ds->conns[i], now);
		if (feeding)
			apply_drop(ds, now);
		ack_cursor(ds);
		if (feeding && !atomic_load(&ds->paused)) {
			fill(ds);
			dispatch(ds, now);
		}
		publish(ds);
	}
	if (feeding)
		rask_pass(r, now);
	/* end-to-end results are given while stopping too */
	rack_pass(r, now);
	segfd_gc(r);
}

/* Stop: read the answers already on their way (briefly), then QUIT. */
static void wind_down(struct fg_relay *r)
{
	uint64_t until = fg_mono_ns() + STOP_DRAIN_NS;
	bool waiting = true;

	while (waiting && fg_mono_ns() < until) {
		waiting = r->nlive > 0;
		for (unsigned d = 0; d < r->nds; d++)
			for (unsigned i = 0; i < r->ds[d].nconn; i++)
				waiting |= r->ds[d].conns[i].st == CS_READY && r->ds[d].conns[i].cn;
		if (waiting)
			events(r, BUSY_TICK_MS);
		pass(r, false);
	}
	for (unsigned d = 0; d < r->nds; d++) {
		for (unsigned i = 0; i < r->ds[d].nconn; i++)
			rconn_quit(&r->ds[d].conns[i]);
		for (unsigned i = 0; i < r->ds[d].ndconn; i++)
			rconn_quit(&r->ds[d].dconns[i]);
	}
	if (r->ask_conn.ds) {
		rask_fail(&r->ask_conn);
		rconn_quit(&r->ask_conn);
	}
	until = fg_mono_ns() + STOP_DRAIN_NS / 5;
	while (fg_mono_ns() < until) {
		waiting = false;
		for (unsigned d = 0; d < r->nds; d++)
			for (unsigned i = 0; i < r->ds[d].nconn; i++)
				waiting |= r->ds[d].conns[i].st == CS_CLOSING;
		waiting |= r->ask_conn.st == CS_CLOSING;
		if (!waiting)
			break;
		events(r, BUSY_TICK_MS);
	}
	for (unsigned d = 0; d < r->nds; d++)
		ack_cursor(&r->ds[d]);
}

static void *relay_main(void *arg)
{
	struct fg_relay *r = arg;

	while (!atomic_load(&r->stop)) {
		int tick, ack;

		pass(r, true);
		tick = busy(r) ? BUSY_TICK_MS : IDLE_TICK_MS;
		/* an end-to-end article's deadline is kept to the millisecond */
		ack = rack_sleep_ms(r, fg_mono_ns());
		events(r, ack >= 0 && ack < tick ? ack : tick);
	}
	wind_down(r);
	return NULL;
}

/* ------------------------------------------------------------ lifecycle */

static void params_defaults(struct fg_relay_params *p)
{
	if (!p->reconnect_min_ns)
		p->reconnect_min_ns = 250ull * 1000000;
	if (!p->reconnect_max_ns)
		p->reconnect_max_ns = 30ull * 1000000000;
	if (!p->retry_min_ns)
		p->retry_min_ns = 1000ull * 1000000;
	if (!p->retry_max_ns)
		p->retry_max_ns = 60ull * 1000000000;
	if (!p->answer_timeout_ns)
		p->answer_timeout_ns = 120ull * 1000000000;
	if (!p->ask_timeout_ns)
		p->ask_timeout_ns = 2000ull * 1000000;
}

static int ds_init(struct fg_relay *r, struct rds *d, const struct fg_config_downstream *cfg)
{
	struct fg_queue_cursor start;
	struct fg_queue_backlog b;
	int idx = fg_queue_consumer(r->p.q, cfg->id, &start), rc;

	if (idx < 0)
		return idx;
	b = (struct fg_queue_backlog){
		.articles = cfg->backlog_articles, .bytes = cfg->backlog_bytes,
		.age = cfg->backlog_age, .disk = cfg->backlog_disk,
		.drop = cfg->backlog_full == FG_BACKLOG_DROP, .ident = cfg->ident,
	};
	if ((rc = fg_queue_consumer_backlog(r->p.q, (unsigned)idx, &b)) != 0)
		return rc;
	d->r = r;
	d->cfg = cfg;
	d->consumer = (unsigned)idx;
	d->window = cfg->mode == FG_DOWNSTREAM_IHAVE ? 1 : FG_MAX(cfg->window, 1u);
	d->nconn = FG_MAX(cfg->connections, 1u);
	d->cap = d->window * d->nconn;
	d->bound = d->cap * R_CRASH_WINDOWS;
	d->low = d->next = d->durable = start;
	d->win = calloc(d->cap, sizeof(*d->win));
	d->conns = calloc(d->nconn, sizeof(*d->conns));
	if (!d->win || !d->conns)
		return -ENOMEM;
	for (unsigned i = 0; i < d->nconn; i++)
		rconn_init(&d->conns[i], d, i);
	strcpy(d->pub.name, cfg->name);
	d->pub.connections = d->nconn;
	return 0;
}

struct fg_relay *fg_relay_create(const struct fg_relay_params *p, int *err)
{
	struct fg_relay *r = calloc(1, sizeof(*r));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int rc = -ENOMEM;

	if (!r)
		goto out;
	r->p = *p;
	params_defaults(&r->p);
	r->stats = p->stats ? p->stats : &r->own_stats;
	r->ep = r->wake_fd = -1;
	pthread_mutex_init(&r->status_lock, NULL);
	r->nds = p->cfg->n_downstream;
	r->ds = calloc(r->nds ? r->nds : 1, sizeof(*r->ds));
	if (!r->ds)
		goto out_free;
	for (unsigned d = 0; d < r->nds; d++)
		if ((rc = ds_init(r, &r->ds[d], &p->cfg->downstream[d])) != 0) {
			FG_LOG_ERR(RCOMP, "downstream %s: %s", p->cfg->downstream[d].name,
				   strerror(-rc));
			goto out_free;
		}
	if ((rc = rack_init(r)) != 0)
		goto out_free;
	/* warm-up asks go to the first downstream that streams */
	for (unsigned d = 0; d < r->nds && !r->ask_ds; d++)
		if (p->cfg->downstream[d].mode == FG_DOWNSTREAM_STREAM)
			r->ask_ds = &r->ds[d];
	if (r->ask_ds) {
		rconn_init(&r->ask_conn, r->ask_ds, 0);
		r->ask_conn.asking = true;
		r->ask_conn.ask = calloc(R_ASK_WINDOW, sizeof(*r->ask_conn.ask));
		if (!r->ask_conn.ask)
			goto out_free;
	}
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->ep < 0 || r->wake_fd < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->wake_fd, &ev) != 0) {
		rc = -errno;
		goto out_free;
	}
	return r;
out_free:
	fg_relay_destroy(r);
	r = NULL;
out:
	*err = rc;
	return r;
}

int fg_relay_start(struct fg_relay *r)
{
	int rc;

	atomic_store(&r->stop, false);
	rc = pthread_create(&r->thread, NULL, relay_main, r);
	if (rc != 0)
		return -rc;
	/* named for top, perf and docs/benchmarks.md's cost table */
	pthread_setname_np(r->thread, "fg-relay");
	r->started = true;
	return 0;
}

void fg_relay_notify(void *relay)
{
	struct fg_relay *r = relay;
	uint64_t one = 1;

	if (write(r->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FG_LOG_WARN(RCOMP, "wake: %s", strerror(errno));
}

void fg_relay_stop(struct fg_relay *r)
{
	if (!r->started)
		return;
	atomic_store(&r->stop, true);
	fg_relay_notify(r);
	pthread_join(r->thread, NULL);
	r->started = false;
}

void fg_relay_destroy(struct fg_relay *r)
{
	if (!r)
		return;
	FG_ASSERT(!r->started);
	rack_fini(r);
	for (unsigned d = 0; r->ds && d < r->nds; d++) {
		for (unsigned i = 0; r->ds[d].conns && i < r->ds[d].nconn; i++)
			rconn_fini(&r->ds[d].conns[i]);
		free(r->ds[d].conns);
		free(r->ds[d].win);
	}
	if (r->ask_conn.ds)
		rconn_fini(&r->ask_conn);
	free(r->ask_conn.ask);
	for (unsigned i = 0; i < r->naskers; i++)
		if (r->askers[i])
			r->askers[i]->r = NULL;
	for (unsigned i = 0; i < r->nsegfd; i++)
		close(r->segfds[i].fd);
	free(r->segfds);
	free(r->ds);
	if (r->ep >= 0)
		close(r->ep);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	pthread_mutex_destroy(&r->status_lock);
	free(r);
}

int fg_relay_status(struct fg_relay *r, unsigned idx, struct fg_relay_ds_status *out)
{
	if (idx >= r->nds)
		return -ENOENT;
	pthread_mutex_lock(&r->status_lock);
	*out = r->ds[idx].pub;
	pthread_mutex_unlock(&r->status_lock);
	fg_queue_consumer_state(r->p.q, r->ds[idx].consumer, &out->q);
	/* a negative age (none yet, or the clock stepped back) is none */
#define PUB_QUEUE(f, k, src, col, w, h) \
	FG_DS_FROM(src, QUEUE, out->f = out->q.f > 0 ? (uint64_t)out->q.f : 0;)
	FG_DS_FIELDS(PUB_QUEUE)
#undef PUB_QUEUE
	return 0;
}

int fg_relay_find(struct fg_relay *r, const char *name)
{
	for (unsigned i = 0; i < r->nds; i++)
		if (strcmp(r->ds[i].cfg->name, name) == 0)
			return (int)i;
	return -ENOENT;
}

int fg_relay_pause(struct fg_relay *r, unsigned idx, bool pause)
{
	if (idx >= r->nds)
		return -ENOENT;
	if (atomic_exchange(&r->ds[idx].paused, pause) != pause)
		FG_LOG_NOTICE(RCOMP, "%s: %s", r->ds[idx].cfg->name,
			      pause ? "paused: nothing is sent to it until it is resumed"
				    : "resumed");
	fg_relay_notify(r);
	return 0;
}
