/* SPDX-License-Identifier: MIT */
/*
 * relay_int.h — the relay thread's private state: downstreams, their
 * window of records, their connections (relay.c: scheduling; rconn.c:
 * one NNTP client connection).
 *
 * THE WINDOW. A downstream's records from its cursor (`low`, the lowest
 * not yet acknowledged) to `next` (the first not yet taken) sit in a ring
 * indexed by record number — records are numbered without gaps, so the
 * record `low.recno + i` is slot (low.recno + i) % cap. Each is READY
 * (to be sent, now or at `due`), SENT (on connection `conn`), or DONE.
 * The cursor moves over DONE records at the front. A record is taken only
 * while it lies within `cap` = connections x window records of the
 * cursor as last made durable: the bound on what a crash can re-send.
 */
#ifndef FLOODGATE_RELAY_INT_H
#define FLOODGATE_RELAY_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "floodgate/ackrule.h"
#include "floodgate/relay.h"

#define RCOMP "relay"
#define R_IBUF 16384u			/* answer lines: far more than 512 */
#define R_INLINE_MAX (32u << 10)	/* articles up to this are copied, not sendfile'd */
#define R_GIVE_UP_TRIES 8
#ifndef R_CRASH_WINDOWS
#define R_CRASH_WINDOWS 4		/* a crash re-sends at most this many windows */
#endif		/* a 5xx to an article this often: give up on it */
#define R_RESERVE_HDR (FG_QUEUE_REC_HEADER_MAX + FG_QUEUE_ID_MAX)

enum rec_state { REC_READY = 0, REC_SENT, REC_DONE };

struct rec {
	uint64_t pos, recno;
	uint64_t size;			/* the whole record's octets */
	uint64_t seg;			/* segment number */
	uint64_t art_off;		/* file offset of the article's first octet */
	uint32_t art_len;
	uint16_t id_len;
	uint8_t state;
	uint8_t checked;		/* check-first: a 238 came */
	uint16_t conn;
	uint16_t tries;
	uint64_t due_ns;		/* READY: not before */
	char id[FG_QUEUE_ID_MAX + 1];
};

/* An engine thread's wake-up, called by the relay thread once a pass
 * when something was handed back (askers, ackers). */
struct rwake {
	void (*fn)(void *arg);
	void *arg;
	bool need;
};

static inline void rwake_fire(struct rwake *w)
{
	if (w->need) {
		w->need = false;
		if (w->fn)
			w->fn(w->arg);
	}
}

/* A ring's size: the power of two at least n (dflt when 0). */
static inline uint32_t rpow2(unsigned n, unsigned dflt)
{
	uint32_t cap = 1;

	while (cap < (n ? n : dflt))
		cap <<= 1;
	return cap;
}

#define R_MAX_ASKERS 64
#define R_ASK_WINDOW 256		/* CHECKs in flight on the asking connection */

/* A warm-up question on the asking connection, in order. */
struct askpend {
	uint16_t asker;
	uint8_t answered;		/* timed out already: drop its answer */
	uint8_t id_len;
	uint64_t cookie;
	uint64_t due_ns;
	char id[FG_QUEUE_ID_MAX + 1];
};

/* The two single-producer single-consumer rings of an asker. */
struct askreq {
	uint64_t cookie;
	uint16_t len;
	char id[FG_QUEUE_ID_MAX];
};

struct askans {
	uint64_t cookie;
	int answer;
};

struct fg_relay_asker {
	struct fg_relay *r;
	unsigned idx;
	uint32_t mask;
	struct askreq *req;
	struct askans *ans;
	_Atomic uint64_t req_head FG_CACHE_ALIGNED;	/* engine */
	_Atomic uint64_t req_tail FG_CACHE_ALIGNED;	/* relay */
	_Atomic uint64_t ans_head FG_CACHE_ALIGNED;	/* relay */
	_Atomic uint64_t ans_tail FG_CACHE_ALIGNED;	/* engine */
	uint64_t outstanding FG_CACHE_ALIGNED;		/* engine: asked, answer not taken */
	struct rwake wk;			/* need: answers pushed this pass */
};

/* ---- end-to-end acknowledgement (rack.c) ----
 *
 * An acker's slot is the engine's until its number is pushed on `req`,
 * the relay's until it is pushed on `ans`, the engine's again after: the
 * rings' release/acquire pairs order every field, the article's octets
 * included. Per downstream (bit i = the relay's downstream i) the relay
 * keeps what it did: sent, final (answered for good), spill (it must get
 * the article from the queue), and of the acknowledging ones accepted
 * (239) and refused (439). */
#define R_ACK_MAX_DS FG_CONFIG_MAX_DOWNSTREAMS

struct ackslot {
	struct fg_ackrule_art a;	/* the engine's, read by the relay */
	/* the relay's (m.want, the downstreams it goes to, set by the engine) */
	struct fg_ackrule_marks m;
	uint8_t conn[R_ACK_MAX_DS];	/* which #ack connection */
	uint64_t out_end[R_ACK_MAX_DS];	/* its octets are written past this */
	/* the result */
	struct fg_relay_ack_result res;
};

struct fg_relay_acker {
	struct fg_relay *r;
	const struct fg_relay_acker_ops *ops;	/* another kind (fg_relay_acker_wrap) */
	void *impl;
	unsigned idx;
	uint32_t cap;			/* slots; the rings are as large */
	struct ackslot *slot;
	uint32_t *req, *ans;
	_Atomic uint64_t req_head FG_CACHE_ALIGNED;	/* engine */
	_Atomic uint64_t req_tail FG_CACHE_ALIGNED;	/* relay */
	_Atomic uint64_t ans_head FG_CACHE_ALIGNED;	/* relay */
	_Atomic uint64_t ans_tail FG_CACHE_ALIGNED;	/* engine */
	uint32_t *free FG_CACHE_ALIGNED;		/* engine: free slot numbers */
	uint32_t nfree;
	struct rwake wk;			/* need: results pushed this pass */
};

/* An article the relay holds (taken from an acker, no result yet). */
struct acklive {
	uint16_t acker;
	uint32_t slot;
};

/* What an #ack connection waits an answer for, in order; `stale` once its
 * article's result was given (the answer is then only checked). */
struct dpend {
	uint16_t acker;
	uint32_t slot;
	uint8_t kind;			/* CMD_TAKETHIS or CMD_CHECK */
	uint8_t stale;
	uint8_t id_len;
	char id[FG_QUEUE_ID_MAX + 1];
};

/* What a connection waits an answer for, in order. */
enum cmd_kind { CMD_CHECK = 0, CMD_TAKETHIS, CMD_IHAVE, CMD_IHAVE_ART, CMD_QUIT };

struct cmd {
	uint64_t recno;
	uint8_t kind;
};

/* Output: octets in obuf, or a range of a segment file (sendfile). */
struct oitem {
	int fd;				/* -1: obuf octets */
	uint64_t seg;			/* fd's segment (its reference is dropped once sent) */
	uint64_t off, len;
};

enum conn_state {
	CS_IDLE = 0,			/* not connected; next try at retry_ns */
	CS_CONNECTING,
	CS_GREETING,
	CS_CAPS,			/* CAPABILITIES sent */
	CS_CAPS_LIST,			/* reading its 101 list */
	CS_MODE,			/* MODE STREAM sent */
	CS_READY,
	CS_CLOSING,			/* QUIT sent at stop */
};

struct rds;

struct rconn {
	struct rds *ds;
	unsigned idx;
	int fd;
	enum conn_state st;
	bool streaming;
	bool caps_stream, caps_ihave;
	bool want_out;
	unsigned fails;			/* consecutive failed tries (backoff) */
	uint64_t retry_ns;		/* CS_IDLE: next try */
	uint64_t deadline_ns;		/* an answer or the connect is due by */
	/* commands awaiting an answer */
	struct cmd *cmds;
	unsigned ch, cn, ccap;
	/* output */
	struct oitem *items;
	unsigned ih, in, icap;
	char *obuf;
	size_t olen, ocap;
	/* input */
	char ibuf[R_IBUF];
	size_t ilen;
	/* the asking connection (warm-up): CHECKs only */
	bool asking;
	struct askpend *ask;
	unsigned ah, an;
	/* an #ack connection (end-to-end): articles straight from the engines */
	bool direct;
	struct dpend *dp;
	unsigned dh, dn, dcap;
	enum fg_counter dcause;		/* why it failed: a spill's cause */
	uint64_t out_total, out_done;	/* octets queued for output, written */
};

struct segfd {
	uint64_t num;
	int fd;
	unsigned refs;
};

struct rds {
	struct fg_relay *r;
	const struct fg_config_downstream *cfg;
	unsigned consumer;
	unsigned window;		/* per connection (1 in ihave mode) */
	unsigned cap;			/* connections x window */
	unsigned bound;			/* R_CRASH_WINDOWS x cap: past the durable cursor */
	struct rec *win;
	struct fg_queue_cursor low, next, durable;
	unsigned first_ready;		/* offset from low below which nothing is READY */
	bool ack_due;			/* low moved: hand it to the queue this pass */
	struct rconn *conns;
	unsigned nconn;
	/* published for fg_relay_status (under r->status_lock) */
	struct fg_relay_ds_status pub;
	/* its counts: the RELAY rows of dstatus.h (sent, accepted, ...,
	 * not_routed: records whose route does not name it, dropped: articles
	 * given up at the backlog cap) */
#define RDS_COUNT(f, k, src, col, w, h) FG_DS_FROM(src, RELAY, uint64_t f;)
	FG_DS_FIELDS(RDS_COUNT)
#undef RDS_COUNT
	uint64_t drops;			/* times the backlog cap dropped articles */
	_Atomic bool paused;
	/* end-to-end acknowledgement: its #ack connections */
	struct rconn *dconns;
	unsigned ndconn;
	_Atomic bool direct_ok;		/* one ready and streaming, none overdue */
};

struct fg_relay {
	struct fg_relay_params p;
	struct fg_stats *stats;
	struct fg_stats own_stats;
	struct rds *ds;
	unsigned nds;
	int ep, wake_fd;
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	struct segfd *segfds;
	unsigned nsegfd, capsegfd;
	pthread_mutex_t status_lock;
	/* warm-up */
	struct fg_relay_asker *askers[R_MAX_ASKERS];
	unsigned naskers;
	struct rconn ask_conn;			/* to ask_ds; st CS_IDLE forever when none */
	struct rds *ask_ds;
	/* end-to-end acknowledgement */
	uint8_t ack_mask;			/* the downstreams that acknowledge */
	uint8_t direct_mask;			/* those with #ack connections */
	struct fg_relay_acker *ackers[R_MAX_ASKERS];
	unsigned nackers;
	struct acklive *live;
	unsigned nlive, caplive;
};

static inline void rcount(struct fg_relay *r, enum fg_counter c, uint64_t n)
{
	fg_stats_add(r->stats, c, n);
}


/* relay.c: what a connection reports back about records */
struct rec *rds_rec(struct rds *d, uint64_t recno);
void rds_done(struct rds *d, struct rec *e);
void rds_retry(struct rds *d, struct rec *e, uint64_t delay_ns);
void rds_requeue(struct rds *d, struct rec *e);
int relay_segfd_get(struct fg_relay *r, uint64_t num);
void relay_segfd_put(struct fg_relay *r, uint64_t num);

/* rask.c */
void rask_pass(struct fg_relay *r, uint64_t now);
void rask_answer(struct rconn *c, int code, const char *rest, const char *line, uint64_t now);
void rask_fail(struct rconn *c);
int rask_send(struct rconn *c, const struct askreq *q, unsigned asker, uint64_t now);

/* rack.c */
int rack_init(struct fg_relay *r);
void rack_fini(struct fg_relay *r);
void rack_pass(struct fg_relay *r, uint64_t now);
void rack_answer(struct rconn *c, int code, const char *rest, const char *line, uint64_t now);
void rack_fail(struct rconn *c);
/* The failpoint ack-forwarded: octets [from, to) of #ack connection c were
 * just written; each article whose last octet is among them passes it once
 * (no answer to it can have been read yet). */
void rack_written(const struct rconn *c, uint64_t from, uint64_t to);
/* Milliseconds the loop may sleep before an article's deadline (-1: none). */
int rack_sleep_ms(struct fg_relay *r, uint64_t now);

/* rconn.c */
int rconn_out_mem(struct rconn *c, const void *p, size_t n);
int rconn_out_line(struct rconn *c, const char *verb, const char *arg);
void rconn_init(struct rconn *c, struct rds *d, unsigned idx);
void rconn_fini(struct rconn *c);
void rconn_start(struct rconn *c, uint64_t now);
void rconn_event(struct rconn *c, uint32_t events, uint64_t now);
void rconn_fail(struct rconn *c, const char *why, uint64_t now);
void rconn_timer(struct rconn *c, uint64_t now);
bool rconn_can_take(const struct rconn *c);
int rconn_send_rec(struct rconn *c, struct rec *e);
void rconn_flush(struct rconn *c, uint64_t now);
void rconn_quit(struct rconn *c);

#endif /* FLOODGATE_RELAY_INT_H */
