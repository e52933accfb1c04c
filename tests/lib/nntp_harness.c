/* SPDX-License-Identifier: MIT */
/*
 * nntp_harness.c — see nntp_harness.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fgtest.h"
#include "nntp_harness.h"

static const char base_config[] =
	"[site]\n"
	"server-name news.test.example\n"
	"path-identity filter.test.example\n"
	"listen 127.0.0.1:1119\n"
	"[rules]\n"
	"cutoff 10d\n"
	"retention 11d\n"
	"[history]\n"
	"capacity 200000\n"
	"[peer alpha]\n"
	"address 127.0.0.1\n"
	"[peer beta]\n"
	"address 127.0.0.2\n";

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "harness: out of memory\n");
		abort();
	}
	return p;
}

void fg_th_cred_file(char *path, size_t len, const char *tag, const char *text)
{
	FILE *f;

	snprintf(path, len, "/tmp/fg-th-cred-%s-%d", tag, (int)getpid());
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, 0600) != 0) {
		fprintf(stderr, "harness: %s: cannot write\n", path);
		abort();
	}
}

/* ------------------------------------------------------------ transport */

static int t_send(void *tp, const void *buf, uint32_t len)
{
	struct fg_th_conn *c = tp;
	uint32_t n = len;

	/* the engine must not send once told the connection is gone */
	if (c->closed_reported)
		abort();
	if (c->close_called)
		return -EPIPE;
	if (c->send_blocked)
		n = 0;
	else if (c->send_limit && n > c->send_limit)
		n = c->send_limit;
	if (c->out_len + n + 1 > c->out_cap) {
		c->out = fg_grow(c->out, &c->out_cap, c->out_len + n + 1, 4096);
		if (!c->out)
			abort();
	}
	memcpy(c->out + c->out_len, buf, n);
	c->out_len += n;
	c->out[c->out_len] = '\0';
	if (n < len)
		c->want_writable = true;
	return (int)n;
}

static void buf_unref(struct fg_th_buf *b)
{
	if (--b->refs == 0) {
		/* poison: a hold released too early shows in the article */
		memset(b->data, 0xdd, b->len);
		free(b);
	}
}

static void t_hold(void *tp, const struct fg_iov *seg)
{
	struct fg_th_conn *c = tp;
	struct fg_th_buf *b = seg->handle;

	b->refs++;
	c->holds++;
}

static void t_release(void *tp, const struct fg_iov *seg)
{
	struct fg_th_conn *c = tp;

	c->holds--;
	buf_unref(seg->handle);
}

static void t_pause(void *tp)
{
	struct fg_th_conn *c = tp;

	if (c->closed_reported)
		abort();
	c->paused = true;
	c->pauses++;
}

static void t_resume(void *tp)
{
	struct fg_th_conn *c = tp;

	if (c->closed_reported)
		abort();
	c->paused = false;
	c->reoffer = true;
	c->resumes++;
}

static void t_close(void *tp)
{
	struct fg_th_conn *c = tp;

	if (c->closed_reported)
		abort();	/* close after the connection was reported gone */
	c->close_called = true;
}

static void t_detach(void *tp)
{
	struct fg_th_conn *c = tp;

	c->detached = true;
}

static const struct fg_nntp_session_transport th_ops = {
	.send = t_send, .hold = t_hold, .release = t_release, .pause = t_pause,
	.resume = t_resume, .close = t_close, .detach = t_detach,
};

/* ------------------------------------------------------------ hooks */

static int h_journal(void *ctx, const struct fg_journal_rec *r)
{
	struct fg_th *t = ctx;

	if (t->journal_full)
		return -ENOSPC;
	if (t->n_journal < FG_TH_MAX_JOURNAL) {
		t->journal[t->n_journal] = *r;
		memcpy(t->journal_id[t->n_journal], r->msgid, r->msgid_len);
		t->journal_id[t->n_journal][r->msgid_len] = '\0';
		t->journal[t->n_journal].msgid = t->journal_id[t->n_journal];
		t->n_journal++;
	}
	return 0;
}

static int h_verdict(void *ctx, const struct fg_verdict_rec *r)
{
	struct fg_th *t = ctx;
	size_t n = r->msgid_len < sizeof(t->last_verdict_id) - 1 ? r->msgid_len :
		   sizeof(t->last_verdict_id) - 1;

	t->n_verdicts++;
	t->last_verdict = *r;
	memcpy(t->last_verdict_id, r->msgid, n);
	t->last_verdict_id[n] = '\0';
	t->last_verdict.msgid = t->last_verdict_id;
	if (r->remote) {
		t->last_verdict_remote = *r->remote;
		t->last_verdict.remote = &t->last_verdict_remote;
	}
	if (r->code < 600)
		t->verdict_codes[r->code]++;
	return 0;
}


/* ------------------------------------------------------------ setup */

int fg_th_init(struct fg_th *t, const char *extra, const struct fg_sink_mem_params *sp)
{
	return fg_th_init_shared(t, extra, sp, NULL);
}

static int th_init(struct fg_th *t, const char *extra, const struct fg_sink_mem_params *sp,
		   struct fg_th *history_of, const struct fg_nntp_engine_warmup *warmup,
		   const struct fg_nntp_engine_cluster *cluster, struct fg_peerlim *limits);

int fg_th_init_shared(struct fg_th *t, const char *extra, const struct fg_sink_mem_params *sp,
		      struct fg_th *history_of)
{
	return th_init(t, extra, sp, history_of, NULL, NULL, NULL);
}

int fg_th_init_warmup(struct fg_th *t, const char *extra, const struct fg_nntp_engine_warmup *w)
{
	return th_init(t, extra, NULL, NULL, w, NULL, NULL);
}

int fg_th_init_cluster(struct fg_th *t, const char *extra, const struct fg_nntp_engine_cluster *cl,
		       struct fg_th *history_of)
{
	return th_init(t, extra, NULL, history_of, NULL, cl, NULL);
}

int fg_th_init_box(struct fg_th *t, const char *extra, struct fg_th *history_of,
		   struct fg_peerlim *limits)
{
	return th_init(t, extra, NULL, history_of, NULL, NULL, limits);
}

static int th_init(struct fg_th *t, const char *extra, const struct fg_sink_mem_params *sp,
		   struct fg_th *history_of, const struct fg_nntp_engine_warmup *warmup,
		   const struct fg_nntp_engine_cluster *cluster, struct fg_peerlim *limits)
{
	struct fg_config_errors errs;
	struct fg_history_params hp;
	struct fg_sink_mem_params def = { .store_limit = 64u << 20 };
	struct fg_nntp_engine_params ep;
	size_t len = strlen(base_config) + (extra ? strlen(extra) : 0);
	char *text = xmalloc(len + 1);
	size_t rsz;

	memset(t, 0, sizeof(*t));
	strcpy(text, base_config);
	if (extra)
		strcat(text, extra);
	t->cfg = fg_config_load_text("<test>", text, len, &errs);
	free(text);
	if (!t->cfg) {
		for (unsigned i = 0; i < errs.n; i++)
			fprintf(stderr, "config: %s\n", errs.err[i].text);
		return -1;
	}
	memset(&hp, 0, sizeof(hp));
	hp.capacity = t->cfg->history_capacity;
	hp.side_capacity = 4096;
	hp.full_policy = t->cfg->full_policy;
	hp.alarm_load_pct = t->cfg->alarm_load_pct;
	memcpy(hp.seed, "floodgate-test-s", FG_HISTORY_SEED_LEN);
	t->now = 1800000000;		/* 2027-01-15 */
	t->now_ns = 1000000000ull;
	hp.now = t->now;
	if (history_of) {
		t->h = history_of->h;
		t->shared = true;
	} else {
		rsz = fg_history_region_size(hp.capacity, hp.side_capacity);
		t->hmem = aligned_alloc(64, (rsz + 63) & ~(size_t)63);
		if (!t->hmem)
			return -1;
		t->h = fg_history_create(t->hmem, rsz, &hp);
	}
	t->sink = fg_sink_mem_create(sp ? sp : &def);
	t->peer_stats = calloc(t->cfg->n_peer + 1, sizeof(*t->peer_stats));
	t->journal = calloc(FG_TH_MAX_JOURNAL, sizeof(*t->journal));
	t->journal_id = calloc(FG_TH_MAX_JOURNAL, sizeof(*t->journal_id));
	if (!t->h || !t->sink || !t->peer_stats || !t->journal || !t->journal_id)
		return -1;
	t->hooks.journal = h_journal;
	t->hooks.verdict = h_verdict;
	t->hooks.ctx = t;
	memset(&ep, 0, sizeof(ep));
	ep.cfg = t->cfg;
	ep.history = t->h;
	ep.sink_ops = &fg_sink_mem_ops;
	ep.sink = t->sink;
	ep.hooks = &t->hooks;
	ep.stats = &t->stats;
	ep.peer_stats = t->peer_stats;
	ep.max_sessions = FG_TH_MAX_CONNS;
	ep.max_xfers = 256;
	ep.max_holds = 4096;
	ep.warmup = warmup;
	ep.cluster = cluster;
	ep.limits = limits;
	if (limits && fg_peerlim_add(limits, t->cfg) != 0)
		return -1;
	t->e = fg_nntp_engine_create(&ep);
	return t->e ? 0 : -1;
}

static void conn_free_queue(struct fg_th_conn *c)
{
	for (unsigned i = c->q_head; i < c->q_n; i++)
		buf_unref(c->q[i]);
	free(c->q);
	c->q = NULL;
	c->q_n = c->q_cap = c->q_head = 0;
	c->q_off = 0;
	c->arrived = 0;
}

void fg_th_fini(struct fg_th *t)
{
	for (unsigned i = 0; i < FG_TH_MAX_CONNS; i++) {
		struct fg_th_conn *c = &t->conn[i];

		if (c->th && !c->closed_reported)
			fg_th_drop(c);
	}
	fg_th_settle(t, 1000000, 1000);
	fg_nntp_engine_destroy(t->e);
	for (unsigned i = 0; i < FG_TH_MAX_CONNS; i++) {
		conn_free_queue(&t->conn[i]);
		free(t->conn[i].out);
	}
	fg_sink_mem_destroy(t->sink);
	if (t->h && !t->shared)
		fg_history_detach(t->h);
	free(t->hmem);
	free(t->peer_stats);
	free(t->journal);
	free(t->journal_id);
	fg_config_free(t->cfg);
}

struct fg_th_conn *fg_th_open(struct fg_th *t, const char *peer)
{
	const struct fg_config_peer *p = peer ? fg_config_peer_by_name(t->cfg, peer) : NULL;
	struct fg_th_conn *c = NULL;

	for (unsigned i = 0; i < FG_TH_MAX_CONNS && !c; i++)
		if (!t->conn[i].th)
			c = &t->conn[i];
	if (!c || (peer && !p))
		return NULL;
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->th = t;
	c->s = fg_nntp_session_open(t->e, p, &th_ops, c, t->now, t->now_ns);
	if (!c->s) {
		c->th = NULL;
		return NULL;
	}
	return c;
}

/* ------------------------------------------------------------ input */

static void queue_buf(struct fg_th_conn *c, const void *data, size_t len)
{
	struct fg_th_buf *b;

	if (c->q_head && c->q_head == c->q_n) {
		c->q_head = c->q_n = 0;
	}
	if (c->q_n == c->q_cap) {
		c->q_cap = c->q_cap ? 2 * c->q_cap : 64;
		c->q = realloc(c->q, c->q_cap * sizeof(*c->q));
		if (!c->q)
			abort();
	}
	b = xmalloc(sizeof(*b) + len);
	b->refs = 1;
	b->len = (uint32_t)len;
	memcpy(b->data, data, len);
	c->q[c->q_n++] = b;
}

void fg_th_send(struct fg_th_conn *c, const void *data, size_t len, size_t seg)
{
	const uint8_t *p = data;

	if (!seg)
		seg = len ? len : 1;
	for (size_t off = 0; off < len; off += seg)
		queue_buf(c, p + off, len - off < seg ? len - off : seg);
}

void fg_th_send_random(struct fg_th_conn *c, const void *data, size_t len, size_t maxseg,
		       uint64_t *rng)
{
	const uint8_t *p = data;
	size_t off = 0;

	while (off < len) {
		size_t n = 1 + fg_test_rng(rng) % maxseg;

		if (n > len - off)
			n = len - off;
		queue_buf(c, p + off, n);
		off += n;
	}
}

void fg_th_eof(struct fg_th_conn *c)
{
	c->eof_pending = true;
}

void fg_th_drop(struct fg_th_conn *c)
{
	if (!c->th || c->closed_reported)
		return;
	c->closed_reported = true;
	fg_nntp_session_closed(c->s);
	conn_free_queue(c);
}

void fg_th_release(struct fg_th_conn *c)
{
	fg_th_drop(c);
	c->th = NULL;		/* the next fg_th_open may take the slot */
}

/* Offer the arrived, unconsumed octets (`arrived` buffers); returns how
 * many buffers were consumed whole. */
static unsigned offer(struct fg_th *t, struct fg_th_conn *c, unsigned arrived)
{
	struct fg_iov iov[64];
	unsigned n = 0, removed = 0;
	uint32_t took, total = 0;

	for (unsigned i = 0; i < arrived && n < 64; i++) {
		struct fg_th_buf *b = c->q[c->q_head + i];
		uint32_t off = i == 0 ? c->q_off : 0;

		iov[n].base = b->data + off;
		iov[n].len = b->len - off;
		iov[n].handle = b;
		total += iov[n].len;
		n++;
	}
	if (!n)
		return 0;
	took = fg_nntp_session_input(c->s, iov, n, t->now, t->now_ns);
	if (took > total)
		abort();
	while (took > 0) {
		uint32_t rest = c->q[c->q_head]->len - c->q_off;

		if (took < rest) {
			c->q_off += took;
			break;
		}
		took -= rest;
		buf_unref(c->q[c->q_head++]);
		c->q_off = 0;
		removed++;
	}
	return removed;
}

static bool step_conn(struct fg_th *t, struct fg_th_conn *c)
{
	bool moved = false;

	if (!c->th || c->closed_reported)
		return false;
	if (c->want_writable && !c->send_blocked) {
		c->want_writable = false;
		fg_nntp_session_writable(c->s);
		moved = true;
	}
	if (c->close_called) {
		/* the transport closes the connection, later, from its own loop */
		fg_th_drop(c);
		return true;
	}
	/* after a resume, what is queued is offered again */
	if (!c->paused && c->reoffer && c->arrived) {
		c->reoffer = false;
		c->arrived -= offer(t, c, c->arrived);
		fg_nntp_engine_poll(t->e, t->now, t->now_ns);
		moved = true;
	}
	/* buffers arrive one at a time, offered with what is still unconsumed */
	while (!c->paused && !c->close_called && c->arrived < c->q_n - c->q_head) {
		c->arrived++;
		c->arrived -= offer(t, c, c->arrived);
		fg_nntp_engine_poll(t->e, t->now, t->now_ns);
		moved = true;
	}
	if (c->q_n == c->q_head && c->eof_pending && !c->paused && !c->close_called) {
		c->eof_pending = false;
		fg_nntp_session_eof(c->s, t->now, t->now_ns);
		moved = true;
	}
	return moved;
}

void fg_th_pump(struct fg_th *t, uint64_t advance_ns)
{
	for (unsigned round = 0; round < 1000000; round++) {
		bool moved = false;

		for (unsigned i = 0; i < FG_TH_MAX_CONNS; i++)
			moved |= step_conn(t, &t->conn[i]);
		t->now_ns += advance_ns;
		if (fg_nntp_engine_poll(t->e, t->now, t->now_ns))
			moved = true;
		if (!moved)
			return;
	}
}

void fg_th_settle(struct fg_th *t, uint64_t step_ns, unsigned max_rounds)
{
	for (unsigned i = 0; i < max_rounds; i++) {
		fg_th_pump(t, step_ns);
		if (fg_nntp_engine_xfers(t->e) == 0)
			break;
		t->now_ns += step_ns;
		fg_nntp_engine_poll(t->e, t->now, t->now_ns);
	}
	fg_th_pump(t, 0);
}

void fg_th_unblock(struct fg_th_conn *c)
{
	c->send_blocked = false;
	c->want_writable = false;
	fg_nntp_session_writable(c->s);
}

const char *fg_th_out(struct fg_th_conn *c)
{
	return c->out ? c->out : "";
}

void fg_th_out_clear(struct fg_th_conn *c)
{
	c->out_len = 0;
	if (c->out)
		c->out[0] = '\0';
}

void fg_th_line(struct fg_th_conn *c, const char *text)
{
	fg_th_send(c, text, strlen(text), 0);
}

void fg_th_expect(struct fg_th_conn *c, const char *want)
{
	ck_assert_str_eq(fg_th_out(c), want);
	fg_th_out_clear(c);
}

struct fg_th_conn *fg_th_open_greeted(struct fg_th *t, const char *peer)
{
	struct fg_th_conn *c = fg_th_open(t, peer);

	ck_assert_ptr_nonnull(c);
	fg_th_pump(t, 0);
	ck_assert_str_eq(fg_th_out(c), FG_TH_GREETING);
	fg_th_out_clear(c);
	return c;
}

enum fg_history_state fg_th_state(struct fg_th *t, const char *id)
{
	struct fg_history_key k;

	fg_history_hash(t->h, id, strlen(id), &k);
	return fg_history_lookup(t->h, &k, t->now, NULL);
}

uint64_t fg_th_ctr(struct fg_th *t, enum fg_counter c)
{
	return t->stats.s.ctr[c];
}
