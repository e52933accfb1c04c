/* SPDX-License-Identifier: MIT */
/*
 * nntp_int.h — the session engine's private layout, shared by its files:
 *
 *   cmd.c      command line -> verb and arguments
 *   reader.c   article terminator search, dot-unstuffing
 *   respq.c    the per-session response queue (ordered, some lines late)
 *   clock.c    the clock-sanity view over arrival - Injection-Date
 *   levers.c   the operator's throttle and per-peer pause
 *   engine.c   per-thread context: pools, poll, journal backlog, counters
 *   session.c  the per-connection state machine and the commands
 *   xfer.c     one article transfer: sink, rules, history, completion
 *   sink_mem.c the in-memory and null sinks
 *
 * Ownership in short: an engine owns its sessions, transfers ("xfers"),
 * and hold records. A transfer is born when an article the engine might
 * accept starts to arrive and dies when its outcome is recorded in history
 * (and journalled); it may outlive its session (a committed article whose
 * connection dropped still becomes ACCEPTED when the sink says it is
 * safe), so a session's memory is freed only when the transport has gone
 * and no transfer points at it.
 */
#ifndef FLOODGATE_NNTP_INT_H
#define FLOODGATE_NNTP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/article.h"
#include "floodgate/log.h"
#include "floodgate/innhist.h"
#include "floodgate/msgid.h"
#include "floodgate/peerlim.h"
#include "floodgate/rules.h"
#include "floodgate/session.h"

#define FG_NNTP_COMP "nntp"
#define FG_NNTP_NONE UINT32_MAX

/* ------------------------------------------------------------ cmd.c */

#define FG_NNTP_MAX_ARGS 3

struct fg_nntp_cmd {
	enum fg_nntp_verb verb;
	unsigned argc;			/* arguments after the verb (stops counting past MAX_ARGS) */
	const char *arg[FG_NNTP_MAX_ARGS];
	uint32_t arg_len[FG_NNTP_MAX_ARGS];
	bool bad_char;			/* a NUL or a CR inside the line */
	const char *end;		/* the line's end (AUTHINFO's argument runs to it) */
	/* the history key of arg[0], when the look-ahead hashed it; else NULL */
	const struct fg_history_key *key;
};

/* `line` without its line end. Never fails: an empty or unknown line is
 * FG_NNTP_VERB_UNKNOWN. */
void fg_nntp_cmd_parse(const char *line, uint32_t len, struct fg_nntp_cmd *c);
/* The verb of a line prefix (for an over-long line: is it TAKETHIS?). */
enum fg_nntp_verb fg_nntp_cmd_verb(const char *line, uint32_t len);

/* ------------------------------------------------------------ reader.c */

/* Where the reader is relative to the terminator ".\r\n" (RFC 3977 3.1.1:
 * a line holding a single dot, only after a CRLF). */
enum fg_nntp_rd_state {
	FG_RD_LINE_START = 0,	/* the next octet starts a line */
	FG_RD_DOT,		/* a line started with "." (held back) */
	FG_RD_DOT_CR,		/* ... then "\r" (held back) */
	FG_RD_MID,		/* inside a line */
	FG_RD_CR,		/* inside a line, after a "\r" */
};

struct fg_nntp_reader {
	enum fg_nntp_rd_state state;
	uint32_t held;		/* octets of earlier pieces held back (DOT, DOT_CR) */
};

struct fg_nntp_read {
	uint32_t held;		/* octets held back before this piece that are
				 * content after all: emit ".\r"[0..held) first */
	uint32_t content;	/* content octets at the start of this piece */
	uint32_t consumed;	/* octets of this piece used (content, held back
				 * again, or the terminator's) */
	bool end;		/* the terminator was consumed */
};

void fg_nntp_reader_init(struct fg_nntp_reader *r);
void fg_nntp_reader_scan(struct fg_nntp_reader *r, const uint8_t *p, uint32_t n,
			 struct fg_nntp_read *out);

/* ------------------------------------------------------------ respq.c */

enum fg_respq_state {
	FG_RQ_READY = 0,	/* text final */
	FG_RQ_WAIT,		/* reserved; a transfer fills it */
	FG_RQ_CLOSE,		/* text final; close the session after it */
};

struct fg_respq_ent {
	uint32_t off;		/* in buf */
	uint32_t len;		/* text length (READY/CLOSE), reserved length (WAIT) */
	uint8_t state;
};

struct fg_respq {
	uint8_t *buf;
	uint32_t size;
	uint32_t wr;		/* where the next line goes */
	bool wrapped;		/* the data is in two laps: [head's offset, ...) and [0, wr) */
	struct fg_respq_ent *ent;
	uint32_t cap;		/* entries (power of two) */
	uint32_t head;		/* sequence number of the oldest entry */
	uint32_t tail;		/* sequence number of the next entry */
	uint32_t sent;		/* octets of the head entry already sent */
	uint32_t n_wait;	/* WAIT entries queued */
};

int fg_respq_init(struct fg_respq *q, uint32_t size, uint32_t entries);
void fg_respq_free(struct fg_respq *q);
/* Can an entry of `len` octets be queued now? */
bool fg_respq_room(const struct fg_respq *q, uint32_t len);
/* Queue an entry; returns where its text goes (write `len` octets, or fewer
 * for WAIT then fill). NULL when no room. *seq receives its number. */
char *fg_respq_push(struct fg_respq *q, uint32_t len, enum fg_respq_state st, uint32_t *seq);
/* A WAIT entry gets its text: returns where to write (at most its
 * reserved length), then fg_respq_fill() sets length and state. */
char *fg_respq_slot(struct fg_respq *q, uint32_t seq, uint32_t *cap);
void fg_respq_fill(struct fg_respq *q, uint32_t seq, uint32_t len, enum fg_respq_state st);
/* Send the READY prefix. Returns octets sent (>= 0), or -errno when the
 * transport is gone. *closing is set when a CLOSE entry was sent. */
int64_t fg_respq_flush(struct fg_respq *q, const struct fg_nntp_session_transport *ops, void *t,
		       bool *closing);
uint32_t fg_respq_entries(const struct fg_respq *q);
uint32_t fg_respq_unsent(const struct fg_respq *q);
/* Drop every entry (the session closes after a CLOSE line). */
void fg_respq_clear(struct fg_respq *q);

/* ------------------------------------------------------------ levers.c */

/* The session's peer is paused right now. */
bool fg_nntp_peer_paused(const struct fg_nntp_session *s);

/* ------------------------------------------------------------ clock.c */

#define FG_CLOCK_WINDOW 4096	/* recent samples kept */
#define FG_CLOCK_MIN_SAMPLES 1024	/* no judgement before this many */

struct fg_nntp_clock {
	int64_t win[FG_CLOCK_WINDOW];
	int64_t scratch[FG_CLOCK_WINDOW];	/* for the median, when the state turns */
	unsigned n, pos;
	int64_t limit;		/* config clock_skew_limit; 0 = off */
	unsigned fresh;		/* samples d <= limit */
	unsigned fresh_q;	/* d <= 3/4 limit */
	unsigned behind;	/* d < -limit */
	unsigned behind_q;	/* d < -3/4 limit */
	int64_t offset;		/* the estimate when the state last turned */
	bool suspect;
};

void fg_nntp_clock_init(struct fg_nntp_clock *c, int64_t limit);
/* One arrival - Injection-Date sample. Returns +1 when the view turned
 * suspect, -1 when it turned sane, 0 otherwise. */
int fg_nntp_clock_sample(struct fg_nntp_clock *c, int64_t delay);

/* ------------------------------------------------------------ engine */

struct fg_nntp_hold {
	struct fg_iov seg;
	uint32_t next;
};

enum fg_xfer_state {
	FG_X_FREE = 0,
	FG_X_OPEN,		/* the article is arriving */
	FG_X_WAIT,		/* complete; another transfer of the ID decides first */
	FG_X_COMMITTED,		/* ACCEPTING; the sink is making it safe */
};

struct fg_xfer {
	struct fg_nntp_session *s;	/* the session (kept while this transfer lives) */
	enum fg_xfer_state state;
	enum fg_nntp_verb verb;	/* TAKETHIS or IHAVE */
	uint32_t gen;		/* cookie check */
	uint32_t seq;		/* the response entry it fills */
	bool resp;		/* it still has a response entry to fill */
	bool sink_open;
	bool failed;		/* the sink refused an octet: the article fails */
	void *art;		/* the sink's handle */
	struct fg_history_key key;
	struct fg_history_ref ref;
	uint32_t token;		/* the session's history token */
	uint64_t bytes;		/* appended (counted in the session's pending bytes) */
	uint64_t size;		/* the complete article's wire octets */
	uint32_t hold_head;	/* held segments */
	uint32_t n_holds;
	uint32_t next;		/* free list / wait list */
	/* what the completion needs (the header buffer is reused meanwhile) */
	fg_time_t article_date, first_seen;
	unsigned date_used;	/* enum fg_rules_date_used, for the journal */
	bool has_date, has_inj;
	fg_time_t date, inj;
	bool note_version, has_sup;
	uint64_t version;
	uint16_t base_len, sup_len, id_len;
	char id[FG_MSGID_MAX + 1];
	char base[FG_MSGID_MAX + 1];
	char sup[FG_MSGID_MAX + 1];
};

/* A warm-up question or a cluster claim in flight (warmup.c, claims.c). */
struct fg_nntp_ask {
	struct fg_nntp_session *s;	/* kept while the question lives */
	uint32_t gen;		/* cookie check */
	uint32_t seq;		/* the response entry it fills */
	uint32_t next;		/* free list */
	bool used;
	bool resp;		/* it still has a response entry to fill */
	struct fg_history_key key;
	uint16_t id_len;
	char id[FG_MSGID_MAX + 1];
};

struct fg_nntp_jrec {
	struct fg_journal_rec r;
	char id[FG_MSGID_MAX + 1];
};

/* This engine's cache of a peer's box-wide budgets (peerlim.c): millionths
 * of an offer and of an octet taken from the shared buckets a batch at a
 * time (bytes below zero: a debt the next batch pays first). */
struct fg_nntp_rate {
	int64_t offers_u;
	int64_t bytes_u;
};

struct fg_nntp_engine {
	const struct fg_config *cfg;
	struct fg_history *h;
	struct fg_rules rules;
	struct fg_rules_history rules_hist;
	const struct fg_sink_ops *sink_ops;
	void *sink;
	struct fg_nntp_engine_hooks hooks;
	fg_nntp_verdict_observer_fn *observe;	/* shadow mode's, or NULL */
	void *observe_ctx;
	struct fg_nntp_counters *st;
	struct fg_nntp_counters *peer_st;	/* n_peer + 1, or NULL */
	fg_time_t now;
	uint64_t now_ns;

	/* the rules' history callback: the ID whose key is at hand */

	struct fg_nntp_session **sess;
	unsigned max_sessions, n_sessions;
	unsigned n_stalled;		/* sessions with stall != 0 */
	/* the peers' box-wide limits (peerlim.h): the table (the engine's own
	 * when the program gave none), each config peer's slot in it, and
	 * this engine's cache of its rate budgets */
	struct fg_peerlim *lim;
	bool lim_own;
	struct fg_peerlim_peer **lim_peer;	/* n_peer + 1; the last NULL */
	struct fg_nntp_rate *rate;		/* n_peer + 1 */
	unsigned n_rate_stalled;	/* sessions with FG_STALL_RATE: poll soon */
	uint32_t token_next;
	unsigned history_owner;
	uint32_t response_buffer;

	struct fg_xfer *xfers;
	unsigned max_xfers, n_xfers;
	uint32_t xfer_free;
	uint32_t wait_head;		/* FG_X_WAIT transfers */

	struct fg_nntp_hold *holds;
	unsigned max_holds;
	uint32_t hold_free;

	/* journal records refused with -ENOSPC, in order */
	struct fg_nntp_jrec *jq;
	unsigned jq_cap, jq_head, jq_n;

	struct fg_nntp_clock clock;
	uint64_t next_scan_ns;
	bool shutting_down;
	/* INN's history (foreign.c): mapped, or NULL; the last refusal's -errno */
	struct fg_foreign *foreign;
	int foreign_err;

	/* the operator's levers (levers.c) */
	char throttle_line[FG_NNTP_ENGINE_REASON_MAX + 8];	/* "400 REASON\r\n" */
	char throttle_reason[FG_NNTP_ENGINE_REASON_MAX + 1];
	uint16_t throttle_len;				/* 0: not throttled */
	unsigned n_pauses;
	struct fg_nntp_pause pauses[FG_CONFIG_MAX_PEERS];

	/* warm-up questions (warmup.c) and cluster claims (claims.c), one table */
	struct fg_nntp_engine_warmup warm;
	struct fg_nntp_engine_cluster cl;
	struct fg_nntp_ask *asks;
	unsigned n_asks;
	uint32_t ask_free, ask_gen;
};

/* The article a session is reading. */
enum fg_art_kind {
	FG_ART_NONE = 0,
	FG_ART_TAKETHIS,	/* answer 239/439 (or 400) */
	FG_ART_IHAVE,		/* answer 235/437/436 */
	FG_ART_TAKETHIS_LINE,	/* drain, then a fixed line: a bad TAKETHIS line
				 * (501), no authentication yet (480) */
	FG_ART_TAKETHIS_PAUSED,	/* the peer is paused: drain, then 400 and close */
};

struct fg_nntp_session_art {
	enum fg_art_kind kind;
	struct fg_nntp_reader rd;
	struct fg_xfer *x;		/* NULL: drained without the sink */
	enum fg_reason drain_reason;	/* why, when drained without the sink */
	const char *drain_line;		/* the line for FG_ART_TAKETHIS_LINE, */
	enum fg_nntp_code drain_code;	/* and its code */
	uint64_t size;			/* wire octets so far */
	uint64_t max_size;		/* the peer's or the site's limit; 0 none */
	bool oversize;
	bool hdr_done;			/* header section copied (complete or failed) */
	uint32_t hdr_len;
	uint32_t arg_len;
	char *arg;			/* the command's argument (max_line octets) */
	uint8_t *hdr;			/* FG_ARTICLE_MAX_HEADER + 3 */
	struct fg_article scan;
};

struct fg_nntp_offer {
	struct fg_history_key key;
	struct fg_history_ref ref;
	fg_time_t deadline;
};

/* warmup.c */
int fg_nntp_warmup_init(struct fg_nntp_engine *e, const struct fg_nntp_engine_warmup *w,
			const struct fg_nntp_engine_cluster *cl);
struct fg_nntp_ask *fg_nntp_ask_take(struct fg_nntp_session *s, const char *arg, uint32_t len,
				     const struct fg_history_key *k);
struct fg_nntp_ask *fg_nntp_ask_find(struct fg_nntp_engine *e, uint64_t cookie);
uint64_t fg_nntp_ask_cookie(const struct fg_nntp_engine *e, const struct fg_nntp_ask *a);
void fg_nntp_ask_free(struct fg_nntp_engine *e, struct fg_nntp_ask *a);
void fg_nntp_ask_record_have(struct fg_nntp_engine *e, struct fg_nntp_ask *a);
void fg_nntp_ask_end(struct fg_nntp_ask *a, enum fg_counter why, enum fg_nntp_code code,
		     bool from_poll);
void fg_nntp_warmup_fini(struct fg_nntp_engine *e);

/* foreign.c: INN's history, asked on a miss of the engine's own */
void fg_nntp_foreign_refresh(struct fg_nntp_engine *e, fg_time_t now);
void fg_nntp_foreign_fini(struct fg_nntp_engine *e);
bool fg_nntp_foreign_known(struct fg_nntp_session *s, const char *id, uint32_t len);
bool fg_nntp_warmup_ask(struct fg_nntp_session *s, const char *arg, uint32_t len,
			const struct fg_history_key *k);
void fg_nntp_warmup_drop(struct fg_nntp_session *s);
unsigned fg_nntp_warmup_poll(struct fg_nntp_engine *e);
/* claims.c */
bool fg_nntp_claim_ask(struct fg_nntp_session *s, const char *arg, uint32_t len,
		       const struct fg_history_key *k);
unsigned fg_nntp_claims_poll(struct fg_nntp_engine *e);
void fg_nntp_claim_settle(struct fg_nntp_engine *e, const char *id, uint16_t len, bool accepted);

/* prefetch.c: look-ahead over received command lines, refilled in
 * batches up to DEPTH lines when fewer than LOW are left */
#define FG_PF_DEPTH 32
#define FG_PF_LOW 8

/* A complete command line ahead, parsed (and its ID hashed) once. */
struct fg_nntp_pf_ent {
	const char *line;		/* in the caller's buffer */
	uint32_t len;			/* up to its LF, which is not included */
	bool bare;			/* ends with a bare LF (no CR before it) */
	struct fg_nntp_cmd cmd;		/* of the line without its CR */
	struct fg_history_key key;	/* cmd.key points here when set */
};

struct fg_nntp_pf {
	struct fg_nntp_pf_ent e[FG_PF_DEPTH];
	unsigned head, n;
	const uint8_t *base;		/* the piece looked at, and how far */
	uint32_t off;
	bool blocked;			/* stopped at a TAKETHIS: its article follows */
};

/* why a session stopped reading */
#define FG_STALL_RESPONSES 0x01u
#define FG_STALL_BYTES 0x02u
#define FG_STALL_SINK 0x04u
#define FG_STALL_JOURNAL 0x08u
#define FG_STALL_XFERS 0x10u
#define FG_STALL_RATE 0x20u	/* the peer's max-offer-rate or max-byte-rate */

struct fg_nntp_session {
	struct fg_nntp_engine *e;
	const struct fg_nntp_session_transport *ops;
	void *t;
	const struct fg_config_peer *peer;
	int peer_idx;
	struct fg_endpoint remote;	/* family 0: not told (fg_nntp_session_set_remote) */
	struct fg_nntp_counters *pst;	/* the peer's block, or NULL */
	unsigned slot;			/* index in e->sess */
	uint32_t token;
	uint64_t last_ns;

	bool in_article;
	bool paused;			/* pause() was called */
	bool closing;			/* no more input; close once responses are out */
	bool close_sent;		/* close() was called */
	bool gone;			/* the transport reported the connection closed */
	bool eof;
	bool greeted;			/* greeted 200 */
	/* a reload removed its peer or its address: drain (session.c,
	 * "Retiring"), then close with retire_line */
	bool retiring;
	const char *retire_line;
	uint64_t retire_by;		/* monotonic: closed then whatever is in flight */
	struct fg_peerlim_peer *lim_conn;	/* the slot it is counted on, or NULL */
	uint8_t auth;			/* enum fg_nntp_auth */
	bool auth_user_ok;		/* the last AUTHINFO USER named the peer's user */
	uint8_t auth_failures;		/* 481s given */
	unsigned stall;			/* FG_STALL_*: stopped reading (pause() called) */

	/* the command line being assembled */
	char *line;
	uint32_t line_len;
	bool line_over;			/* discarding an over-long line */
	bool line_ready;		/* line[] holds a complete line not yet run */
	enum fg_nntp_verb over_verb;	/* the over-long line's verb */

	struct fg_nntp_session_art a;
	struct fg_respq q;
	struct fg_nntp_pf pf;

	struct fg_nntp_offer *offers;	/* ring of this session's live 238s */
	unsigned off_cap, off_head, off_n;
	unsigned off_live;		/* entries with a deadline (those indexed) */
	unsigned off_dead;		/* taken out of the middle since the last squeeze */
	fg_time_t off_squeezed;		/* when a full count last squeezed the ring */
	uint64_t *off_idx;		/* offers.c: key tag << 32 | ring slot + 1 */
	unsigned off_mask;		/* off_idx's size - 1 (a power of two) */

	uint64_t pending_bytes;		/* article octets not yet safe or discarded */
	unsigned n_xfers;		/* transfers and warm-up questions pointing here */
	unsigned n_asks;		/* warm-up questions among them */
};

/* engine.c */
void fg_nntp_count(struct fg_nntp_session *s, enum fg_counter c);
void fg_nntp_count_n(struct fg_nntp_session *s, enum fg_counter c, uint64_t n);
void fg_nntp_count_verb(struct fg_nntp_session *s, enum fg_nntp_verb v);
void fg_nntp_count_code(struct fg_nntp_session *s, enum fg_nntp_code code);
void fg_nntp_count_reason(struct fg_nntp_session *s, enum fg_reason r);
void fg_nntp_count_offer(struct fg_nntp_session *s, bool first);
void fg_nntp_ecount(struct fg_nntp_engine *e, enum fg_counter c);
void fg_nntp_journal(struct fg_nntp_engine *e, const struct fg_history_key *k,
		     enum fg_history_state st, fg_time_t article_date, fg_time_t first_seen,
		     unsigned date_used, enum fg_reason reason, const char *id, size_t id_len);
bool fg_nntp_journal_blocked(const struct fg_nntp_engine *e);
bool fg_nntp_sink_full(const struct fg_nntp_engine *e);
struct fg_xfer *fg_nntp_xfer_alloc(struct fg_nntp_engine *e);
void fg_nntp_xfer_free(struct fg_nntp_engine *e, struct fg_xfer *x);
void fg_nntp_wait_add(struct fg_nntp_engine *e, struct fg_xfer *x);
uint32_t fg_nntp_hold_alloc(struct fg_nntp_engine *e);
uint32_t fg_nntp_xfer_index(const struct fg_nntp_engine *e, const struct fg_xfer *x);

/* resp.c: answers (now, or into a place reserved in command order) and
 * verdict records */
#define FG_NNTP_ECHO_LEN(id_len) (4u + (id_len) + 2u)	/* "<code> <id>\r\n" */
void fg_nntp_put(struct fg_nntp_session *s, enum fg_nntp_code code, const char *text, uint32_t len,
		 enum fg_respq_state st);
void fg_nntp_put_echo(struct fg_nntp_session *s, enum fg_nntp_code code, const char *prefix,
		      const char *id, uint32_t len);
void fg_nntp_fill(struct fg_nntp_session *s, uint32_t seq, enum fg_nntp_code code, const char *text,
		  uint32_t len, enum fg_respq_state st);
void fg_nntp_fill_echo(struct fg_nntp_session *s, uint32_t seq, enum fg_nntp_code code,
		       const char *prefix, const char *id, uint32_t len);
void fg_nntp_drop_responses(struct fg_nntp_session *s);
void fg_nntp_verdict_init(struct fg_verdict_rec *r, const struct fg_nntp_session *s,
			  enum fg_nntp_verb verb, enum fg_nntp_code code, enum fg_reason reason,
			  const char *id, uint32_t len);
void fg_nntp_verdict_of(struct fg_nntp_session *s, enum fg_nntp_verb verb, enum fg_nntp_code code,
			enum fg_reason reason, const char *id, uint32_t len, uint64_t size);
void fg_nntp_verdict(struct fg_nntp_session *s, const struct fg_verdict_rec *r);
#define FG_NNTP_PUT(s, code, lit) \
	fg_nntp_put(s, FG_NNTP_CODE_##code, lit, sizeof(lit) - 1, FG_RQ_READY)
#define FG_NNTP_PUT_CLOSE(s, code, lit) \
	fg_nntp_put(s, FG_NNTP_CODE_##code, lit, sizeof(lit) - 1, FG_RQ_CLOSE)

/* offers.c: the session's live offers, its peer's budgets */
bool fg_nntp_take_offer(struct fg_nntp_session *s);
bool fg_nntp_bytes_spent(const struct fg_nntp_session *s);
void fg_nntp_charge_bytes(const struct fg_nntp_session *s, uint64_t n);
bool fg_nntp_budget_ok(const struct fg_nntp_session *s);
int fg_nntp_offers_init(struct fg_nntp_session *s, unsigned cap);
bool fg_nntp_offer_room(struct fg_nntp_session *s);
int fg_nntp_limits_set(struct fg_nntp_engine *e, const struct fg_config *cfg);
void fg_nntp_limits_return(struct fg_nntp_engine *e);
void fg_nntp_track_offer(struct fg_nntp_session *s, const struct fg_history_key *k,
			 const struct fg_history_ref *ref, fg_time_t deadline);
void fg_nntp_release_offers(struct fg_nntp_session *s);
bool fg_nntp_final_reason(const struct fg_nntp_engine *e, enum fg_history_state st,
			  enum fg_reason *r);
int fg_nntp_offer(struct fg_nntp_session *s, const char *arg, uint32_t len,
		  const struct fg_history_key *k, struct fg_history_ref *ref, fg_time_t *deadline,
		  enum fg_reason *reason);
void fg_nntp_do_check(struct fg_nntp_session *s, const struct fg_nntp_cmd *c);

/* artin.c: an article's octets, kept or drained */
int fg_nntp_start_article(struct fg_nntp_session *s, enum fg_art_kind kind, struct fg_xfer *x);
void fg_nntp_start_drain(struct fg_nntp_session *s, enum fg_reason reason, const char *line);
void fg_nntp_start_drain_line(struct fg_nntp_session *s, enum fg_nntp_code code, const char *line);
void fg_nntp_start_paused_drain(struct fg_nntp_session *s);
uint32_t fg_nntp_article_input(struct fg_nntp_session *s, const struct fg_iov *iov, uint32_t off);

/* auth.c: AUTHINFO USER/PASS (RFC 4643) for peers with credentials */
#define FG_NNTP_AUTH_TRIES 3	/* wrong passwords before the session closes */
enum fg_nntp_auth {
	FG_AUTH_START = 0,	/* nothing sent yet (or a PASS ended the last try) */
	FG_AUTH_USER,		/* AUTHINFO USER answered 381: PASS next */
	FG_AUTH_DONE,		/* 281: authenticated for the session's life */
};
/* The session's peer has credentials and the session has not passed them. */
bool fg_nntp_auth_needed(const struct fg_nntp_session *s);
void fg_nntp_do_authinfo(struct fg_nntp_session *s, const struct fg_nntp_cmd *c);
/* An offer (CHECK, IHAVE, TAKETHIS) before authentication: answered 480
 * (a TAKETHIS's article drained first) and true; false when allowed. */
bool fg_nntp_auth_refuse(struct fg_nntp_session *s, const struct fg_nntp_cmd *c);
/* Constant time in the octets: equal lengths and octets, with `have` of
 * `cap` octets zero-padded; `got` of any length (compared as cut or
 * padded to `cap`, its length compared apart). */
bool fg_nntp_secret_equal(const char *have, uint16_t have_len, size_t cap, const char *got,
			  size_t got_len);

/* session.c */
void fg_nntp_session_flush(struct fg_nntp_session *s);
void fg_nntp_session_xfer_done(struct fg_nntp_session *s);
bool fg_nntp_session_try_resume(struct fg_nntp_session *s);
void fg_nntp_session_close_now(struct fg_nntp_session *s, const char *line, size_t len);
void fg_nntp_offer_forget(struct fg_nntp_session *s, const struct fg_history_key *k, bool release);
bool fg_nntp_session_idle_check(struct fg_nntp_session *s, uint64_t now_ns);

/* prefetch.c */
void fg_nntp_pf_reset(struct fg_nntp_pf *pf);
void fg_nntp_pf_ahead(struct fg_nntp_session *s, const uint8_t *base, uint32_t from, uint32_t end);
/* The look-ahead's entry for the line starting at `line`, or NULL; the
 * entries of lines before it (run some other way) are dropped. */
const struct fg_nntp_pf_ent *fg_nntp_pf_line(struct fg_nntp_session *s, const char *line);
/* Drop the entry fg_nntp_pf_line returned (its line ran). */
void fg_nntp_pf_pop(struct fg_nntp_session *s);

/* xfer.c */
struct fg_xfer *fg_nntp_xfer_start(struct fg_nntp_session *s, enum fg_nntp_verb verb,
				   const char *id, size_t id_len,
				   const struct fg_history_key *key, int *err);
void fg_nntp_xfer_append(struct fg_nntp_session *s, struct fg_xfer *x, const struct fg_iov *seg,
			 bool holdable);
void fg_nntp_xfer_end(struct fg_nntp_session *s, struct fg_xfer *x);
void fg_nntp_xfer_drop(struct fg_nntp_engine *e, struct fg_xfer *x);
void fg_nntp_xfer_sink_close(struct fg_nntp_engine *e, struct fg_xfer *x);
void fg_nntp_xfer_retry(struct fg_nntp_engine *e, struct fg_xfer *x);
void fg_nntp_xfer_sink_done(void *engine, uint64_t cookie, int status);

#endif /* FLOODGATE_NNTP_INT_H */
