/* SPDX-License-Identifier: MIT */
/*
 * nntp_harness.h — drive the session engine from tests without a network.
 *
 * A harness holds a config, a malloc'd history table, an in-memory sink,
 * counters and one engine. Each test connection is a transport that
 * records every byte the engine sends, models a TCP receive queue (bytes
 * the engine did not consume stay queued and are offered again, with the
 * next arrivals, once it resumes), and owns its input buffers with
 * reference counts: a buffer the engine holds for the sink survives until
 * it is released, then it is poisoned and freed, so a hold let go too
 * early shows as a corrupt article (and ASan catches a late use).
 *
 * Time is the harness's: `now` (seconds) and `now_ns`, advanced by tests.
 */
#ifndef FLOODGATE_TESTS_NNTP_HARNESS_H
#define FLOODGATE_TESTS_NNTP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/peerlim.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"

#define FG_TH_MAX_CONNS 16
#define FG_TH_MAX_JOURNAL 200000

struct fg_th_buf {
	unsigned refs;
	uint32_t len;
	uint8_t data[];
};

struct fg_th_conn {
	struct fg_th *th;
	struct fg_nntp_session *s;
	char *out;			/* everything the engine sent */
	size_t out_len, out_cap;
	uint32_t send_limit;		/* take at most this per send(); 0: all */
	bool send_blocked;		/* take nothing (a peer that does not read) */
	bool want_writable;		/* send() took less than offered */
	bool paused, close_called, detached, closed_reported;
	unsigned pauses, resumes;
	int holds;			/* holds outstanding */
	/* the receive queue: arrived buffers, the first partly consumed */
	struct fg_th_buf **q;		/* q[q_head .. q_n) are queued */
	unsigned q_head, q_n, q_cap;
	uint32_t q_off;			/* consumed octets of q[0] */
	unsigned arrived;		/* buffers from the head offered so far */
	bool reoffer;			/* resumed: offer the arrived ones again */
	bool eof_pending;		/* deliver EOF once the queue is empty */
};

struct fg_th {
	struct fg_config *cfg;
	void *hmem;
	struct fg_history *h;
	bool shared;			/* h belongs to another harness */
	struct fg_nntp_engine_hooks hooks;
	struct fg_sink_mem *sink;
	struct fg_nntp_counters stats;
	struct fg_nntp_counters *peer_stats;
	struct fg_nntp_engine *e;
	fg_time_t now;
	uint64_t now_ns;
	struct fg_th_conn conn[FG_TH_MAX_CONNS];
	/* hooks */
	bool journal_full;		/* the journal hook answers -ENOSPC */
	struct fg_journal_rec *journal;
	char (*journal_id)[256];
	unsigned n_journal;
	unsigned n_verdicts;
	struct fg_verdict_rec last_verdict;
	char last_verdict_id[512];
	struct fg_endpoint last_verdict_remote;	/* last_verdict.remote points here */
	unsigned verdict_codes[600];
};

/* Extra lines appended to the test config (a "[section]" then keys), and
 * the sink's parameters (NULL: defaults, no delay). 0 or -1. */
int fg_th_init(struct fg_th *t, const char *extra_config, const struct fg_sink_mem_params *sp);
/* The same, on the history table of another harness (one engine per thread,
 * one table: the dataplane's shape). Finish it before that one. */
int fg_th_init_shared(struct fg_th *t, const char *extra_config,
		      const struct fg_sink_mem_params *sp, struct fg_th *history_of);
/* With warm-up questions (session.h, struct fg_nntp_engine_warmup). */
int fg_th_init_warmup(struct fg_th *t, const char *extra, const struct fg_nntp_engine_warmup *w);
/* With cluster claims (session.h, struct fg_nntp_engine_cluster), on its own
 * history or on another harness's (NULL: its own). */
int fg_th_init_cluster(struct fg_th *t, const char *extra, const struct fg_nntp_engine_cluster *cl,
		       struct fg_th *history_of);
/* One engine of a box: the history of another harness (NULL: its own)
 * and the box's peer limits (peerlim.h), which it adds its configuration
 * to. */
int fg_th_init_box(struct fg_th *t, const char *extra, struct fg_th *history_of,
		   struct fg_peerlim *limits);
void fg_th_fini(struct fg_th *t);

/* A connection from the peer named `peer` (NULL: not a peer). */
struct fg_th_conn *fg_th_open(struct fg_th *t, const char *peer);

/* Queue `len` octets as buffers of `seg` octets (0: one buffer). */
void fg_th_send(struct fg_th_conn *c, const void *data, size_t len, size_t seg);
/* Queue octets in pieces of random sizes 1..maxseg from a seeded generator. */
void fg_th_send_random(struct fg_th_conn *c, const void *data, size_t len, size_t maxseg,
		       uint64_t *rng);
/* The peer half-closes after what it sent. */
void fg_th_eof(struct fg_th_conn *c);
/* The connection drops now (RST): the engine is told it is closed. */
void fg_th_drop(struct fg_th_conn *c);
/* Dropped, and its slot free for another fg_th_open (c is not to be used). */
void fg_th_release(struct fg_th_conn *c);

/*
 * Deliver: every connection that is not paused gets its queued octets,
 * one arriving buffer at a time (with what is still unconsumed before
 * it); the engine is polled after each; closes the engine asked for are
 * reported back. Runs until nothing moves. `advance_ns` is added to the
 * clock at each poll (sink delays elapse).
 */
void fg_th_pump(struct fg_th *t, uint64_t advance_ns);
/* Poll until the engine has no transfer in flight (or `max_rounds`). */
void fg_th_settle(struct fg_th *t, uint64_t step_ns, unsigned max_rounds);

/* The peer reads again: unblock and tell the engine. */
void fg_th_unblock(struct fg_th_conn *c);

/* The output as a NUL-terminated string, and forgetting it. */
const char *fg_th_out(struct fg_th_conn *c);
void fg_th_out_clear(struct fg_th_conn *c);
/* Send one text as it is; assert the output so far is `want`, then clear
 * it (libcheck assertions). */
void fg_th_line(struct fg_th_conn *c, const char *text);
void fg_th_expect(struct fg_th_conn *c, const char *want);
/* A connection from `peer` whose greeting was read. */
#define FG_TH_GREETING \
	"200 news.test.example floodgate transit-only NNTP service ready (feeds only, no reading or posting)\r\n"
struct fg_th_conn *fg_th_open_greeted(struct fg_th *t, const char *peer);

/* A credentials file ([peer] credentials) holding `text`, mode 600, at
 * /tmp/fg-th-cred-TAG-PID, its path in `path`; the caller unlinks it. */
void fg_th_cred_file(char *path, size_t len, const char *tag, const char *text);

/* The history state of an ID, and a counter of the harness's block. */
enum fg_history_state fg_th_state(struct fg_th *t, const char *id);
uint64_t fg_th_ctr(struct fg_th *t, enum fg_counter c);

#endif
