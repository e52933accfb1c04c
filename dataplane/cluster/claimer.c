/* SPDX-License-Identifier: MIT */
/*
 * claimer.c — the cluster thread (claimer.h has the keys, values and
 * commands). Its loop:
 *
 *   1. take each engine link's requests (claims, settles) from its ring
 *      and the forget ring, and submit them (pipelined: nothing waits for
 *      an answer before the next is sent)
 *   2. every DIGEST_PERIOD, publish the downstream digest
 *   3. run the client for at most a millisecond while requests are in
 *      flight (LOOP_IDLE_MS when none; a request pushed meanwhile ends
 *      the wait through an eventfd): completions answer claims into the
 *      link's answer ring and wake its engine
 *
 * Rings are single-producer single-consumer: a link's request ring is fed
 * by its engine's thread only, its answer ring by this thread only. The
 * engine never has more than max_claims claims unanswered (its question
 * table), and the answer ring holds that many, so an answer always has
 * room. A settle that finds its request ring full is dropped and counted
 * (cluster_errors): the claim then lapses at the offer timeout.
 *
 * Status fields are written by this thread with relaxed atomic stores and
 * read by any thread; the counter block is plain increments, summed by a
 * reader (stats.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/claimer.h"
#include "floodgate/cluster.h"
#include "floodgate/log.h"
#include "floodgate/region.h"
#include "floodgate/siphash.h"

#define COMP "cluster"
#define DEFAULT_LINKS 16u
#define DEFAULT_CLAIMS 1024u
#define FORGET_RING 64u
#define LOOP_IDLE_MS 100		/* nothing in flight: engines wake us */
#define DIGEST_PERIOD_NS (10ull * 1000000000ull)
#define DIGEST_TTL_MS "60000"
#define DIGEST_KEY "fg:digest"

enum op { OP_CLAIM = 0, OP_SETTLE_ACCEPTED, OP_SETTLE_REFUSED, OP_FORGET, OP_DIGEST };

/* Only the box's own claim (or none) is ever overwritten; the value found
 * is returned either way. */
static const char settle_lua[] =
	"local v = redis.call('GET', KEYS[1])\n"
	"if v and string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. ':' then return v end\n"
	"redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[3])\n"
	"return v\n";

struct req {
	uint8_t op;
	char key[FG_CLUSTER_KEY_LEN + 1];
	uint64_t cookie;
};

struct ans {
	uint64_t cookie;
	enum fg_claim_answer a;
};

struct ring_idx {
	_Atomic uint32_t head FG_CACHE_ALIGNED;	/* consumer */
	_Atomic uint32_t tail FG_CACHE_ALIGNED;	/* producer */
	uint32_t mask;
};

struct link {
	struct fg_claimer *c;
	struct fg_nntp_engine_cluster hooks;
	void (*wake)(void *arg);
	void *wake_arg;
	struct ring_idx rq, aq;
	struct req *req;
	struct ans *ans;
	unsigned claims_out;		/* pushed, answer not yet polled (engine's thread) */
};

/* A request in the client: whose, and what for. */
struct inflight {
	bool used;
	uint8_t op;
	uint16_t link;
	uint32_t next;
	uint64_t cookie;
};

struct fg_claimer {
	/* what it needs of the configuration, copied: a reload frees it */
	char secret[sizeof(((struct fg_config *)0)->cluster_secret)];
	bool publish_digest;			/* it has downstreams */
	char box[FG_CONFIG_NAME_MAX];
	size_t box_len;
	char ttl_claim[24], ttl_window[24];
	char digest[24];
	struct fg_cluster *cl;
	struct link *link;
	unsigned n_link, max_link, max_claims;
	struct inflight *inf;
	uint32_t inf_free, n_inf, inf_cap;
	struct ring_idx fq;			/* forget: any thread, under fq_lock */
	struct req freq[FORGET_RING];
	pthread_mutex_t fq_lock;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	int wake_fd;				/* eventfd: requests wait */
	atomic_bool idle;			/* the thread is about to wait */
	uint64_t next_digest_ns;
	/* written by the cluster thread */
	struct fg_stats st;
	struct fg_hist rtt;			/* claims' round trips, microseconds */
	_Atomic bool answering, mismatch;
	bool told_down, told_mismatch;
	struct fg_cluster_stats cst;		/* copied after each run, under st_lock */
	pthread_mutex_t st_lock;
};

/* ---- keys and digests ------------------------------------------------------ */

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	static const uint64_t k[2] = { 0x6469676573746673ull, 0x646f776e73747265ull };
	uint64_t in[2] = { h, fg_siphash24_64(k, p, n) };

	return fg_siphash24_64(k, in, sizeof(in));
}

uint64_t fg_claimer_digest(const struct fg_config *cfg)
{
	uint64_t h = cfg->n_downstream;

	for (unsigned i = 0; i < cfg->n_downstream; i++) {
		const struct fg_config_downstream *d = &cfg->downstream[i];
		uint64_t sizes[2] = { d->max_article_size, d->min_article_size };

		h = mix(h, d->id, strlen(d->id));
		h = mix(h, d->newsgroups, strlen(d->newsgroups));
		for (unsigned j = 0; j < d->n_distributions; j++)
			h = mix(h, d->distributions[j], strlen(d->distributions[j]));
		for (unsigned j = 0; j < d->n_exclude_path; j++)
			h = mix(h, d->exclude_path[j], strlen(d->exclude_path[j]));
		h = mix(h, sizes, sizeof(sizes));
	}
	return h;
}

/* ---- rings ------------------------------------------------------------------ */

static int ring_init(struct ring_idx *r, unsigned want)
{
	uint32_t cap = 1;

	while (cap < want)
		cap <<= 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->mask = cap - 1;
	return (int)cap;
}

/* The slot to fill, or -1 when full (producer side). */
static int ring_slot_in(struct ring_idx *r)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t - atomic_load_explicit(&r->head, memory_order_acquire) > r->mask)
		return -1;
	return (int)(t & r->mask);
}

static void ring_push(struct ring_idx *r)
{
	atomic_fetch_add_explicit(&r->tail, 1, memory_order_release);
}

/* The slot to read, or -1 when empty (consumer side). */
static int ring_slot_out(struct ring_idx *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
		return -1;
	return (int)(h & r->mask);
}

static void ring_pop(struct ring_idx *r)
{
	atomic_fetch_add_explicit(&r->head, 1, memory_order_release);
}

/* ---- the engine's side -------------------------------------------------------- */

/* The thread sets idle, then looks at the rings; a producer pushes, then
 * looks at idle (both sequentially consistent): one of them sees the
 * other, so a request never waits out a whole idle period. */
static void wake_thread(struct fg_claimer *c)
{
	uint64_t one = 1;

	if (atomic_load(&c->idle) && write(c->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FG_LOG_DEBUG(COMP, "wake: %s", strerror(errno));
}

static int link_request(struct link *l, uint8_t op, const char *id, size_t len,
			uint64_t cookie)
{
	int i = ring_slot_in(&l->rq);

	if (i < 0)
		return -ENOBUFS;
	l->req[i].op = op;
	l->req[i].cookie = cookie;
	fg_cluster_key(l->c->secret, id, len, l->req[i].key);
	ring_push(&l->rq);
	wake_thread(l->c);
	return 0;
}

/* Never more claims unanswered than the answer ring holds, whatever the
 * engine's question table (warm-up's may be larger): past it, -ENOBUFS
 * and the engine decides locally. */
static int hook_claim(void *ctx, const char *id, size_t len, uint64_t cookie)
{
	struct link *l = ctx;
	int rc;

	if (l->claims_out > l->aq.mask)
		return -ENOBUFS;
	rc = link_request(l, OP_CLAIM, id, len, cookie);
	if (rc == 0)
		l->claims_out++;
	return rc;
}

static void hook_settle(void *ctx, const char *id, size_t len, bool accepted)
{
	struct link *l = ctx;

	if (link_request(l, accepted ? OP_SETTLE_ACCEPTED : OP_SETTLE_REFUSED, id, len, 0) != 0)
		__atomic_fetch_add(&l->c->st.ctr[FG_CTR_CLUSTER_ERRORS], 1, __ATOMIC_RELAXED);
}

static unsigned hook_poll(void *ctx, fg_nntp_engine_claim_done_fn *done, void *engine)
{
	struct link *l = ctx;
	unsigned n = 0;
	int i;

	while ((i = ring_slot_out(&l->aq)) >= 0) {
		struct ans a = l->ans[i];

		ring_pop(&l->aq);
		l->claims_out--;
		done(engine, a.cookie, a.a);
		n++;
	}
	return n;
}

/* ---- the cluster thread --------------------------------------------------------- */

static void count(struct fg_claimer *c, enum fg_counter ctr)
{
	__atomic_fetch_add(&c->st.ctr[ctr], 1, __ATOMIC_RELAXED);
}

static void set_answering(struct fg_claimer *c, bool on, int rc)
{
	atomic_store_explicit(&c->answering, on, memory_order_relaxed);
	if (!on && !c->told_down) {
		FG_LOG_WARN(COMP, "claims unanswered (%s): deciding from the local history "
			    "until the cluster answers again", strerror(-rc));
		c->told_down = true;
	} else if (on && c->told_down) {
		FG_LOG_NOTICE(COMP, "the cluster answers claims again: shared decisions");
		c->told_down = false;
	}
}

/* fg_hist_add's buckets, with atomic adds: status() reads from any thread */
static void rtt_add(struct fg_claimer *c, uint64_t us)
{
	unsigned i = us == 0 ? 0 : 64 - (unsigned)__builtin_clzll(us);

	if (i >= FG_HIST_BUCKETS)
		i = FG_HIST_BUCKETS - 1;
	__atomic_fetch_add(&c->rtt.bucket[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->rtt.count, 1, __ATOMIC_RELAXED);
}

static void answer(struct fg_claimer *c, uint16_t li, uint64_t cookie, enum fg_claim_answer a)
{
	struct link *l = &c->link[li];
	int i = ring_slot_in(&l->aq);

	/* the engine's table bounds its claims to the ring's size */
	FG_ASSERT(i >= 0);
	l->ans[i].cookie = cookie;
	l->ans[i].a = a;
	ring_push(&l->aq);
	if (l->wake)
		l->wake(l->wake_arg);
}

/* "BOX:S" -> whether it is ours, and S. */
static bool ours(const struct fg_claimer *c, const struct fg_cluster_reply *r)
{
	return r->len == c->box_len + 2 && memcmp(r->str, c->box, c->box_len) == 0 &&
	       r->str[c->box_len] == ':';
}

static enum fg_claim_answer claim_answer(struct fg_claimer *c, const struct fg_cluster_reply *r)
{
	if (r->type == FG_CLUSTER_R_NIL)
		return FG_CLAIM_WON;
	if (r->type != FG_CLUSTER_R_STRING || r->len < 3) {
		count(c, FG_CTR_CLUSTER_ERRORS);
		return FG_CLAIM_NONE;
	}
	if (r->str[r->len - 1] == 'O')
		return ours(c, r) ? FG_CLAIM_WON : FG_CLAIM_BUSY;
	return FG_CLAIM_HAVE;
}

static void digest_reply(struct fg_claimer *c, const struct fg_cluster_reply *r)
{
	bool differs = r->type == FG_CLUSTER_R_STRING &&
		       (r->len != strlen(c->digest) || memcmp(r->str, c->digest, r->len) != 0);

	atomic_store_explicit(&c->mismatch, differs, memory_order_relaxed);
	if (differs && !c->told_mismatch) {
		count(c, FG_CTR_CLUSTER_DIGEST_MISMATCHES);
		FG_LOG_ERR(COMP, "another box of this cluster feeds its downstreams otherwise "
			   "(digest %.*s, ours %s): one box's claim would starve another's "
			   "downstreams; make [downstream] the same on every box",
			   (int)FG_MIN(r->len, 32u), r->str, c->digest);
		c->told_mismatch = true;
	} else if (!differs && r->type != FG_CLUSTER_R_ERROR && c->told_mismatch) {
		FG_LOG_NOTICE(COMP, "the downstream configuration digests agree again");
		c->told_mismatch = false;
	}
}

static void on_done(void *arg, uint64_t ck, int rc, const struct fg_cluster_reply *r,
		    uint64_t rtt_ns)
{
	struct fg_claimer *c = arg;
	struct inflight *f = &c->inf[ck];
	uint8_t op = f->op;

	FG_ASSERT(ck < c->inf_cap && f->used);
	if (rc != 0 || (r && r->type == FG_CLUSTER_R_ERROR))
		count(c, rc == -ETIMEDOUT ? FG_CTR_CLUSTER_TIMEOUTS : FG_CTR_CLUSTER_ERRORS);
	if (op == OP_CLAIM) {
		enum fg_claim_answer a = rc == 0 ? claim_answer(c, r) : FG_CLAIM_NONE;

		set_answering(c, a != FG_CLAIM_NONE, rc ? rc : -EPROTO);
		if (rc == 0)
			rtt_add(c, rtt_ns / 1000);
		answer(c, f->link, f->cookie, a);
	} else if ((op == OP_SETTLE_ACCEPTED || op == OP_SETTLE_REFUSED) && rc == 0 &&
		   r->type != FG_CLUSTER_R_ERROR) {
		count(c, FG_CTR_CLUSTER_SETTLES);
		/* accepted here over another box's claim or outcome */
		if (op == OP_SETTLE_ACCEPTED && r->type == FG_CLUSTER_R_STRING && r->len &&
		    !ours(c, r) && r->str[r->len - 1] != 'R')
			count(c, FG_CTR_CLUSTER_TAKETHIS_RACES);
	} else if (op == OP_DIGEST && rc == 0) {
		digest_reply(c, r);
	}
	f->used = false;
	f->next = c->inf_free;
	c->inf_free = (uint32_t)ck;
	c->n_inf--;
}

static int submit(struct fg_claimer *c, uint16_t li, const struct req *q)
{
	const char *argv[8];
	size_t len[8];
	unsigned argc = 0, key_arg = 1;
	char val[FG_CONFIG_NAME_MAX + 4];
	uint32_t idx = c->inf_free;
	struct inflight *f;
	int rc;

	FG_ASSERT(idx != UINT32_MAX);
	f = &c->inf[idx];
	switch (q->op) {
	case OP_CLAIM:
		snprintf(val, sizeof(val), "%s:O", c->box);
		argv[0] = "SET", argv[1] = q->key, argv[2] = val, argv[3] = "NX";
		argv[4] = "PX", argv[5] = c->ttl_claim, argv[6] = "GET";
		argc = 7;
		break;
	case OP_SETTLE_ACCEPTED:
	case OP_SETTLE_REFUSED:
		argv[0] = "EVAL", argv[1] = settle_lua, argv[2] = "1", argv[3] = q->key;
		argv[4] = c->box, argv[5] = q->op == OP_SETTLE_ACCEPTED ? "A" : "R";
		argv[6] = c->ttl_window;
		argc = 7;
		key_arg = 3;
		break;
	case OP_FORGET:
		argv[0] = "DEL", argv[1] = q->key;
		argc = 2;
		break;
	case OP_DIGEST:
		argv[0] = "SET", argv[1] = DIGEST_KEY, argv[2] = c->digest, argv[3] = "NX";
		argv[4] = "PX", argv[5] = DIGEST_TTL_MS, argv[6] = "GET";
		argc = 7;
		break;
	default:
		return -EINVAL;
	}
	for (unsigned i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	c->inf_free = f->next;
	f->used = true;
	f->op = q->op;
	f->link = li;
	f->cookie = q->cookie;
	c->n_inf++;
	rc = fg_cluster_submit(c->cl, argc, argv, len, key_arg, idx);
	if (rc != 0) {
		/* not sent: completes here as a failure would */
		on_done(c, idx, rc, NULL, 0);
	}
	return rc;
}

/* Submit one request; with every in-flight slot taken (settles pile up
 * while the cluster is slow) a claim is answered NONE at once and a
 * settle or forget dropped, both counted: memory stays bounded and no
 * CHECK ever waits on a request that was never sent. */
static void take(struct fg_claimer *c, uint16_t li, const struct req *q)
{
	if (c->inf_free != UINT32_MAX) {
		submit(c, li, q);
		return;
	}
	count(c, FG_CTR_CLUSTER_ERRORS);
	if (q->op == OP_CLAIM) {
		set_answering(c, false, -ENOBUFS);
		answer(c, li, q->cookie, FG_CLAIM_NONE);
	}
}

static void take_requests(struct fg_claimer *c)
{
	int i;

	for (unsigned li = 0; li < c->n_link; li++) {
		struct link *l = &c->link[li];

		while ((i = ring_slot_out(&l->rq)) >= 0) {
			struct req q = l->req[i];

			ring_pop(&l->rq);
			take(c, (uint16_t)li, &q);
		}
	}
	while ((i = ring_slot_out(&c->fq)) >= 0) {
		struct req q = c->freq[i];

		ring_pop(&c->fq);
		take(c, 0, &q);
	}
	if (fg_mono_ns() >= c->next_digest_ns && c->publish_digest && c->inf_free != UINT32_MAX) {
		struct req q = { .op = OP_DIGEST };

		c->next_digest_ns = fg_mono_ns() + DIGEST_PERIOD_NS;
		submit(c, 0, &q);
	}
}

static bool rings_empty(struct fg_claimer *c)
{
	for (unsigned li = 0; li < c->n_link; li++)
		if (ring_slot_out(&c->link[li].rq) >= 0)
			return false;
	return ring_slot_out(&c->fq) < 0;
}

static void *run(void *arg)
{
	struct fg_claimer *c = arg;

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		bool idle;

		take_requests(c);
		atomic_store(&c->idle, true);
		idle = !c->n_inf && rings_empty(c);
		fg_cluster_run(c->cl, idle ? LOOP_IDLE_MS : c->n_inf ? 1 : 0, on_done, c);
		atomic_store(&c->idle, false);
		pthread_mutex_lock(&c->st_lock);
		fg_cluster_get_stats(c->cl, &c->cst);
		pthread_mutex_unlock(&c->st_lock);
	}
	return NULL;
}

/* ---- lifecycle and views --------------------------------------------------------- */

struct fg_claimer *fg_claimer_create(const struct fg_claimer_params *p)
{
	const struct fg_config *cfg = p->cfg;
	struct fg_cluster_params cp = { 0 };
	struct fg_claimer *c;
	unsigned n_inf;

	if (!cfg->cluster_seeds[0] || !cfg->cluster_secret[0])
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	snprintf(c->secret, sizeof(c->secret), "%s", cfg->cluster_secret);
	c->publish_digest = cfg->n_downstream > 0;
	c->max_link = p->max_links ? p->max_links : DEFAULT_LINKS;
	c->max_claims = p->max_claims ? p->max_claims : DEFAULT_CLAIMS;
	snprintf(c->box, sizeof(c->box), "%s",
		 cfg->cluster_box[0] ? cfg->cluster_box : cfg->server_name);
	c->box_len = strlen(c->box);
	snprintf(c->ttl_claim, sizeof(c->ttl_claim), "%lld",
		 (long long)(cfg->offer_timeout > 0 ? cfg->offer_timeout : 10) * 1000);
	snprintf(c->ttl_window, sizeof(c->ttl_window), "%lld", (long long)cfg->cluster_window_ms);
	snprintf(c->digest, sizeof(c->digest), "%016" PRIx64, fg_claimer_digest(cfg));
	pthread_mutex_init(&c->fq_lock, NULL);
	pthread_mutex_init(&c->st_lock, NULL);
	ring_init(&c->fq, FORGET_RING);
	c->link = calloc(c->max_link, sizeof(*c->link));
	/* every request of every ring at once, the forgets and a digest */
	n_inf = c->max_link * c->max_claims * 2 + FORGET_RING + 4;
	c->inf = calloc(n_inf, sizeof(*c->inf));
	c->inf_cap = n_inf;
	if (!c->link || !c->inf)
		goto out_free;
	for (unsigned i = 0; i < n_inf; i++)
		c->inf[i].next = i + 1 < n_inf ? i + 1 : UINT32_MAX;
	cp.seeds = cfg->cluster_seeds;
	cp.password = cfg->cluster_password;
	cp.timeout_ms = (unsigned)cfg->cluster_timeout_ms;
	cp.max_requests = n_inf;
	c->cl = fg_cluster_create(&cp);
	if (!c->cl)
		goto out_free;
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->wake_fd < 0) {
		fg_cluster_destroy(c->cl, NULL, NULL);
		goto out_free;
	}
	fg_cluster_wake_fd(c->cl, c->wake_fd);
	atomic_init(&c->answering, true);
	return c;

out_free:
	free(c->inf);
	free(c->link);
	free(c);
	return NULL;
}

const struct fg_nntp_engine_cluster *fg_claimer_link(struct fg_claimer *c, void (*wake)(void *arg),
						void *arg)
{
	struct link *l;
	int cap;

	if (c->started || c->n_link == c->max_link)
		return NULL;
	l = &c->link[c->n_link];
	l->c = c;
	l->wake = wake;
	l->wake_arg = arg;
	/* claims and settles share the request ring: twice the claims */
	cap = ring_init(&l->rq, 2 * c->max_claims);
	l->req = calloc((size_t)cap, sizeof(*l->req));
	cap = ring_init(&l->aq, c->max_claims);
	l->ans = calloc((size_t)cap, sizeof(*l->ans));
	if (!l->req || !l->ans) {
		free(l->req);
		free(l->ans);
		return NULL;
	}
	l->hooks = (struct fg_nntp_engine_cluster){ hook_claim, hook_poll, hook_settle, l,
					       c->max_claims };
	c->n_link++;
	return &l->hooks;
}

int fg_claimer_start(struct fg_claimer *c)
{
	int rc = pthread_create(&c->thread, NULL, run, c);

	if (rc != 0)
		return -rc;
	c->started = true;
	return 0;
}

void fg_claimer_destroy(struct fg_claimer *c)
{
	if (!c)
		return;
	if (c->started) {
		uint64_t one = 1;

		atomic_store(&c->stop, true);
		if (write(c->wake_fd, &one, sizeof(one)) < 0)
			FG_LOG_DEBUG(COMP, "wake: %s", strerror(errno));
		pthread_join(c->thread, NULL);
	}
	close(c->wake_fd);
	fg_cluster_destroy(c->cl, NULL, NULL);
	for (unsigned i = 0; i < c->n_link; i++) {
		free(c->link[i].req);
		free(c->link[i].ans);
	}
	pthread_mutex_destroy(&c->fq_lock);
	pthread_mutex_destroy(&c->st_lock);
	free(c->inf);
	free(c->link);
	free(c);
}

int fg_claimer_forget(struct fg_claimer *c, const char *id, size_t len)
{
	int i, rc = -ENOBUFS;

	pthread_mutex_lock(&c->fq_lock);
	i = ring_slot_in(&c->fq);
	if (i >= 0) {
		c->freq[i].op = OP_FORGET;
		fg_cluster_key(c->secret, id, len, c->freq[i].key);
		ring_push(&c->fq);
		rc = 0;
	}
	pthread_mutex_unlock(&c->fq_lock);
	if (rc == 0)
		wake_thread(c);
	return rc;
}

/* The upper bound of the bucket holding quantile q of the histogram. */
static uint64_t quantile(const struct fg_hist *h, uint64_t count, double q)
{
	uint64_t want = (uint64_t)((double)count * q + 0.5), seen = 0;

	for (unsigned i = 0; i < FG_HIST_BUCKETS; i++) {
		seen += __atomic_load_n(&h->bucket[i], __ATOMIC_RELAXED);
		if (seen >= want && seen)
			return (uint64_t)fg_hist_bucket_le(i);
	}
	return 0;
}

void fg_claimer_status(struct fg_claimer *c, struct fg_cluster_status *st)
{
	memset(st, 0, sizeof(*st));
	st->answering = atomic_load_explicit(&c->answering, memory_order_relaxed);
	st->digest_mismatch = atomic_load_explicit(&c->mismatch, memory_order_relaxed);
	pthread_mutex_lock(&c->st_lock);
	st->nodes_up = c->cst.nodes_up;
	st->masters = c->cst.masters;
	st->slots_mapped = c->cst.slots_mapped;
	st->moved = c->cst.moved;
	st->ask = c->cst.ask;
	st->map_refreshes = c->cst.map_refreshes;
	st->replies_refused = c->cst.replies_refused;
	pthread_mutex_unlock(&c->st_lock);
	st->rtt_count = __atomic_load_n(&c->rtt.count, __ATOMIC_RELAXED);
	st->rtt_p50_us = quantile(&c->rtt, st->rtt_count, 0.50);
	st->rtt_p99_us = quantile(&c->rtt, st->rtt_count, 0.99);
}

int fg_claimer_write_status(struct fg_claimer *c, const char *dir)
{
	struct fg_cluster_status st;

	fg_claimer_status(c, &st);
	return fg_cs_status_write(dir, time(NULL), &st);
}

void fg_claimer_counters(const struct fg_claimer *c, struct fg_stats *into)
{
	for (unsigned i = 0; i < FG_CTR__COUNT; i++)
		into->ctr[i] += __atomic_load_n(&c->st.ctr[i], __ATOMIC_RELAXED);
}

void fg_claimer_publish(struct fg_claimer *c, struct fg_region_writer *slot)
{
	struct fg_region_wstats *ws = fg_region_writer_stats(slot);

	memset(&ws->total, 0, sizeof(ws->total));
	fg_claimer_counters(c, &ws->total);
	fg_region_writer_heartbeat(slot);
}

int fg_claimer_format(struct fg_claimer *c, char *buf, size_t len)
{
	struct fg_cluster_status st;
	size_t off = 0;

	fg_claimer_status(c, &st);
	for (unsigned k = 0; k < fg_cs_n_fields && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "cluster_%s %" PRIu64 "\n",
					fg_cs_fields[k].name, fg_cs_value(&st, &fg_cs_fields[k]));
	return (int)off;
}
