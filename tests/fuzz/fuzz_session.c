/* SPDX-License-Identifier: MIT */
/*
 * fuzz_session.c — arbitrary octets into the session engine.
 *
 * Input: 4 header octets, then the stream a peer sends.
 *   [0] flags: 1 holding sink, 2 sink delay, 4 every 3rd commit fails,
 *       8 journal refuses every other append, 16 transport takes 7 octets
 *       per send, 32 a second session gets the same stream, 64 the peer
 *       drops the connection instead of closing it, 128 sink full at start
 *   [1] largest piece (1 + value): the stream is cut into pieces of
 *       pseudo-random sizes up to it
 *   [2..3] seed of those sizes; its top bit (0x80 of [2]) set: the
 *       session's peer has credentials (username "fuzz-user", password
 *       "fuzz pass"), so the stream must pass AUTHINFO USER/PASS first
 * Every input runs on a fresh history table and engine. After the stream
 * (and EOF or a drop) and the sink's last completion, the checks: no
 * transfer, session or hold left, no OFFERED or ACCEPTING entry left in
 * history, every response line ends in CRLF, and nothing the engine did
 * read or write out of bounds (ASan, UBSan).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/log.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"

#define CAPACITY 4096
#define NOW ((fg_time_t)1800000000)

static const char config_text[] =
	"[site]\nserver-name fuzz.example\npath-identity filter.fuzz.example\n"
	"listen 127.0.0.1:1119\n"
	"[rules]\ncutoff 10d\nretention 11d\nmax-article-size 20000\n"
	"honor-supersedes on\nhonor-versions on\n"
	"[session]\nmax-pending-commands 32\nmax-pending-bytes 65536\n"
	"[history]\ncapacity 4096\n"
	/* past 64 live offers the ring grows, past 100 offers are deferred */
	"[peer fuzz]\naddress 127.0.0.1\nmax-outstanding-offers 100\n"
	"[peer fuzz-auth]\naddress 127.0.0.2\n";

/* fuzz-auth's credentials, set as the loader sets them from a file */
static const char cred_text[] = "username fuzz-user\npassword \"fuzz pass\"\n";

static struct fg_config *cfg;
static void *hmem;
static size_t hlen;

struct conn {
	char out[1 << 20];
	size_t out_len;
	bool out_full;			/* stopped recording (whole sends only) */
	uint32_t send_limit;
	int holds;
	bool close_called, detached, paused;
	bool gone;			/* reported closed: no send, close, pause */
	struct fg_nntp_session *s;
};

struct run {
	unsigned journal_calls;
	bool journal_flaky;
};

static int t_send(void *tp, const void *buf, uint32_t len)
{
	struct conn *c = tp;
	uint32_t n = c->send_limit && len > c->send_limit ? c->send_limit : len;

	if (c->gone)
		abort();
	if (c->out_full || c->out_len + n > sizeof(c->out)) {
		c->out_full = true;
		return (int)n;
	}
	memcpy(c->out + c->out_len, buf, n);
	c->out_len += n;
	return (int)n;
}

static void t_hold(void *tp, const struct fg_iov *seg)
{
	struct conn *c = tp;

	(void)seg;
	c->holds++;
}

static void t_release(void *tp, const struct fg_iov *seg)
{
	struct conn *c = tp;

	(void)seg;
	c->holds--;
}

static void t_pause(void *tp)
{
	if (((struct conn *)tp)->gone)
		abort();
	((struct conn *)tp)->paused = true;
}

static void t_resume(void *tp)
{
	((struct conn *)tp)->paused = false;
}

static void t_close(void *tp)
{
	if (((struct conn *)tp)->gone)
		abort();
	((struct conn *)tp)->close_called = true;
}

static void t_detach(void *tp)
{
	((struct conn *)tp)->detached = true;
}

/* A small hold budget, so the input reaches both the hold and the copy
 * path within one article (the engine mixes them per segment). */
static bool t_may_hold(void *tp, uint32_t len)
{
	(void)len;
	return ((struct conn *)tp)->holds < 3;
}

static const struct fg_nntp_session_transport ops = {
	.send = t_send, .hold = t_hold, .release = t_release, .pause = t_pause,
	.resume = t_resume, .close = t_close, .detach = t_detach, .may_hold = t_may_hold,
};

static int j_hook(void *ctx, const struct fg_journal_rec *r)
{
	struct run *run = ctx;

	(void)r;
	return run->journal_flaky && (run->journal_calls++ & 1) ? -ENOSPC : 0;
}

static int v_hook(void *ctx, const struct fg_verdict_rec *r)
{
	(void)ctx;
	return r->msgid_len > 200 ? -ENOSPC : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fg_config_errors errs;

	(void)argc;
	(void)argv;
	fg_log_set_level(FG_LOG_ERR);
	char why[200];
	unsigned line;

	cfg = fg_config_load_text("<fuzz>", config_text, sizeof(config_text) - 1, &errs);
	hlen = fg_history_region_size(CAPACITY, 64);
	hmem = aligned_alloc(64, (hlen + 63) & ~(size_t)63);
	if (!cfg || !hmem || fg_config_cred_parse(cred_text, sizeof(cred_text) - 1,
						  &cfg->peer[1].cred, &line, why, sizeof(why)))
		abort();
	return 0;
}

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void check_output(const struct conn *c)
{
	/* every complete response ends in CRLF: no bare LF, no stray line */
	for (size_t i = 0; i < c->out_len; i++)
		if (c->out[i] == '\n' && (i == 0 || c->out[i - 1] != '\r'))
			abort();
}

/* Offer `data` in pseudo-random pieces to every open session, as a transport
 * would: unconsumed octets are offered again once the session resumes. */
static void feed(struct fg_nntp_engine *e, struct conn *cs, unsigned nc, const uint8_t *data,
		 size_t size, size_t maxseg, uint64_t seed, uint64_t *now_ns)
{
	size_t off[2] = { 0, 0 }, arrived[2] = { 0, 0 };

	for (unsigned round = 0; round < 1000000; round++) {
		bool moved = false;

		for (unsigned k = 0; k < nc; k++) {
			struct conn *c = &cs[k];
			struct fg_iov iov;
			uint32_t took;

			if (c->close_called || c->paused || off[k] == size)
				continue;
			if (arrived[k] < size)
				arrived[k] += 1 + rng(&seed) % maxseg;
			if (arrived[k] > size)
				arrived[k] = size;
			iov.base = data + off[k];
			iov.len = (uint32_t)(arrived[k] - off[k]);
			iov.handle = &iov;
			took = fg_nntp_session_input(c->s, &iov, 1, NOW, *now_ns);
			if (took > iov.len)
				abort();
			off[k] += took;
			moved = true;
		}
		*now_ns += 100000;
		if (fg_nntp_engine_poll(e, NOW, *now_ns))
			moved = true;
		if (!moved)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_history_params hp = { .capacity = CAPACITY, .side_capacity = 64,
					.alarm_load_pct = 90, .now = NOW };
	struct fg_sink_mem_params sp = { .store_limit = 1 << 20, .max_articles = 16, .max_done = 64 };
	struct fg_nntp_counters st, peer_st[3];
	static struct conn cs[2];
	struct run run = { 0 };
	struct fg_nntp_engine_hooks hooks = { j_hook, v_hook, &run };
	struct fg_nntp_engine_params ep;
	struct fg_history *h;
	struct fg_history_stats hs;
	struct fg_sink_mem *sink;
	struct fg_nntp_engine *e;
	uint64_t now_ns = 1000000000ull;
	unsigned nc;
	uint8_t flags;

	if (size < 4)
		return 0;
	flags = data[0];
	memset(&st, 0, sizeof(st));
	memset(peer_st, 0, sizeof(peer_st));
	memset(cs, 0, sizeof(cs));
	memcpy(hp.seed, "fuzz-seed-fuzz-s", FG_HISTORY_SEED_LEN);
	h = fg_history_create(hmem, hlen, &hp);
	sp.hold = flags & 1;
	sp.delay_ns = flags & 2 ? 3000000 : 0;
	sp.fail_every = flags & 4 ? 3 : 0;
	run.journal_flaky = flags & 8;
	sink = fg_sink_mem_create(&sp);
	if (!h || !sink)
		abort();
	fg_sink_mem_set_full(sink, flags & 128);
	memset(&ep, 0, sizeof(ep));
	ep.cfg = cfg;
	ep.history = h;
	ep.sink_ops = &fg_sink_mem_ops;
	ep.sink = sink;
	ep.hooks = &hooks;
	ep.stats = &st;
	ep.peer_stats = peer_st;
	ep.max_sessions = 2;
	ep.max_xfers = 8;
	ep.max_holds = 64;
	e = fg_nntp_engine_create(&ep);
	if (!e)
		abort();
	nc = flags & 32 ? 2 : 1;
	for (unsigned k = 0; k < nc; k++) {
		cs[k].send_limit = flags & 16 ? 7 : 0;
		cs[k].s = fg_nntp_session_open(e, &cfg->peer[data[2] & 0x80 ? 1 : 0], &ops, &cs[k],
					       NOW, now_ns);
		if (!cs[k].s)
			abort();
	}
	fg_sink_mem_set_full(sink, false);
	feed(e, cs, nc, data + 4, size - 4, 1 + (size_t)data[1], (uint64_t)data[2] << 8 | data[3],
	     &now_ns);
	for (unsigned k = 0; k < nc; k++) {
		if (flags & 64) {
			cs[k].gone = true;
			fg_nntp_session_closed(cs[k].s);
			cs[k].close_called = true;
			cs[k].s = NULL;
		} else if (!cs[k].close_called) {
			fg_nntp_session_eof(cs[k].s, NOW, now_ns);
		}
	}
	/* let the sink and the journal finish, then close what is left */
	for (unsigned i = 0; i < 100000 && fg_nntp_engine_xfers(e); i++) {
		now_ns += 1000000;
		run.journal_flaky = false;
		fg_nntp_engine_poll(e, NOW, now_ns);
	}
	for (unsigned k = 0; k < nc; k++)
		if (cs[k].s) {
			cs[k].gone = true;
			fg_nntp_session_closed(cs[k].s);
		}
	for (unsigned i = 0; i < 1000 && fg_nntp_engine_xfers(e); i++) {
		now_ns += 1000000;
		fg_nntp_engine_poll(e, NOW, now_ns);
	}
	if (fg_nntp_engine_xfers(e) || fg_nntp_engine_sessions(e))
		abort();
	for (unsigned k = 0; k < nc; k++) {
		if (cs[k].holds != 0 || !cs[k].detached)
			abort();
		check_output(&cs[k]);
	}
	/* a session keeps every live offer it made (max-outstanding-offers
	 * defers the ones past its bound): the closes released them all */
	fg_history_stats(h, &hs);
	if (hs.by_state[FG_HISTORY_ACCEPTING] || hs.by_state[FG_HISTORY_OFFERED])
		abort();
	fg_nntp_engine_destroy(e);
	fg_sink_mem_destroy(sink);
	fg_history_detach(h);
	return 0;
}
