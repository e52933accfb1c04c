/* SPDX-License-Identifier: MIT */
/*
 * history.c — region lifecycle, hashing, wait-free lookups, statistics.
 *
 * A lookup reads the two buckets of its key's pair (two cache lines,
 * prefetched together by the burst path) and compares the fingerprint
 * with the at most ten slots there. A slot's key and aux words are read as
 * key, aux, key: equal key words mean the aux belongs to them (writers only
 * write an aux while its key word is in a state readers ignore; see
 * history_insert.c). A miss is certain when neither bucket's change
 * counter moved during the probe — an entry being relocated between the two
 * buckets of its pair is always in one of them, and every relocation step
 * bumps a counter after it (docs/history.md, "why lookups never miss a
 * moving entry"). Otherwise the probe is repeated, at most
 * LOOKUP_TRIES times, so lookups stay wait-free; a miss that never settled
 * is reported with FG_HISTORY_F_UNCERTAIN.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "floodgate/log.h"
#include "history_int.h"

#define LOOKUP_TRIES 3
#define BURST 32

static const char seed_check_text[] = "floodgate history seed";

static const char *const error_names[FG_HISTORY_E__COUNT] = {
	[FG_HISTORY_E_OK] = "ok",
	[FG_HISTORY_E_SHORT] = "region shorter than its header says",
	[FG_HISTORY_E_ALIGN] = "region not 64-byte aligned",
	[FG_HISTORY_E_MAGIC] = "not a history region (bad magic)",
	[FG_HISTORY_E_VERSION] = "unsupported layout version",
	[FG_HISTORY_E_GEOMETRY] = "inconsistent sizes or offsets",
	[FG_HISTORY_E_SEED] = "seed does not match its check value",
	[FG_HISTORY_E_SETTINGS] = "policy or alarm threshold out of range",
	[FG_HISTORY_E_COUNTS] = "entry counts inconsistent",
	[FG_HISTORY_E_CHECKSUM] = "checksum mismatch",
	[FG_HISTORY_E_HASH] = "unknown hash function, or AES without AES-NI",
};

static const char *const state_names[FG_HISTORY_STATE__COUNT] = {
	[FG_HISTORY_ABSENT] = "absent",
	[FG_HISTORY_PENDING] = "pending",
	[FG_HISTORY_OFFERED] = "offered",
	[FG_HISTORY_ACCEPTING] = "accepting",
	[FG_HISTORY_ACCEPTED] = "accepted",
	[FG_HISTORY_REJECTED] = "rejected",
	[FG_HISTORY_SUPERSEDED] = "superseded",
};

const char *fg_history_error_str(enum fg_history_error e)
{
	return (unsigned)e < FG_HISTORY_E__COUNT ? error_names[e] : "unknown error";
}

const char *fg_history_state_name(enum fg_history_state s)
{
	return (unsigned)s < FG_HISTORY_STATE__COUNT ? state_names[s] : "unknown";
}

void fg_hdecode(uint64_t w, uint32_t aux, fg_time_t now, struct fg_history_entry *e)
{
	fg_hdecode_inline(w, aux, now, e);
}

void fg_hcount(struct fg_history *h, uint64_t b, unsigned st, int64_t delta)
{
	atomic_fetch_add_explicit(&h->hdr->stripe[b % FG_HSTRIPES].n[st & 7u], delta,
				  memory_order_relaxed);
}

void fg_hbump(struct fg_hbucket *bk)
{
	atomic_fetch_add_explicit(&bk->ctr, 1, memory_order_seq_cst);
}

bool fg_hread_slot(const struct fg_hbucket *bk, unsigned i, uint64_t *w, uint32_t *aux)
{
	for (int tries = 0; tries < 4; tries++) {
		/* aux is stored with release after its key word changed, so an
		 * aux read (acquire) of a newer aux makes the second key read
		 * see that change (Boehm, "Can seqlocks get along with
		 * programming language memory models?", 2012) */
		uint64_t w1 = atomic_load(&bk->key[i]);
		uint32_t a = atomic_load_explicit(&bk->aux[i], memory_order_acquire);

		if (atomic_load(&bk->key[i]) == w1) {
			*w = w1;
			*aux = a;
			return true;
		}
	}
	return false;
}

/* ---- region lifecycle ---- */

static uint64_t buckets_for(uint64_t capacity, uint32_t shards)
{
	uint64_t m = capacity / FG_HSLOTS + (capacity % FG_HSLOTS != 0);

	return (m + shards - 1) / shards * shards;
}

static bool shards_ok(uint32_t shards)
{
	return shards >= 1 && shards <= FG_HISTORY_SHARDS_MAX && (shards & (shards - 1)) == 0;
}

uint32_t fg_history_shards_for(uint64_t capacity, uint32_t shards)
{
	uint64_t want = capacity / FG_HISTORY_SHARD_AUTO_ENTRIES +
			(capacity % FG_HISTORY_SHARD_AUTO_ENTRIES != 0);
	uint32_t s = 1;

	if (shards)
		return shards;
	while (s < want && s < FG_HISTORY_SHARDS_MAX)
		s <<= 1;
	return s;
}

static uint32_t side_records(uint32_t side_capacity)
{
	return (side_capacity + FG_HWAYS - 1) / FG_HWAYS * FG_HWAYS;
}

size_t fg_history_region_size_sharded(uint64_t capacity, uint32_t side_capacity,
				      uint32_t shards)
{
	uint64_t m, side = (uint64_t)side_records(side_capacity) * sizeof(struct fg_hside_rec);

	shards = fg_history_shards_for(capacity, shards);
	/* 2^40 buckets (64 TiB) is far beyond any machine; it keeps the
	 * arithmetic below from overflowing. */
	if (capacity == 0 || capacity > (1ull << 42) || !shards_ok(shards))
		return 0;
	m = buckets_for(capacity, shards);
	if (m > (1ull << 40))
		return 0;
	return FG_HHEADER + m * sizeof(struct fg_hbucket) + side;
}

size_t fg_history_region_size(uint64_t capacity, uint32_t side_capacity)
{
	return fg_history_region_size_sharded(capacity, side_capacity, 0);
}

/* The check value of a seed under a hash function (a known one, usable
 * on this CPU: fg_hcheck_header looks first). */
static uint64_t seed_check(const uint64_t seed[2], unsigned hash)
{
	uint64_t out[2];

	if (hash == FG_HISTORY_HASH_AES) {
		struct fg_aeskey k;

		fg_aeskey_init(&k, (const uint8_t *)seed);
		fg_aeshash128(&k, seed_check_text, sizeof(seed_check_text) - 1, out);
	} else {
		fg_siphash13_128(seed, seed_check_text, sizeof(seed_check_text) - 1, out);
	}
	return out[0];
}

static bool hash_usable(unsigned hash)
{
	return hash == FG_HISTORY_HASH_SIPHASH || (hash == FG_HISTORY_HASH_AES && fg_aes_cpu_ok());
}

struct fg_history *fg_hhandle(void *mem, size_t len)
{
	struct fg_hregion *r = mem;
	struct fg_history *h = calloc(1, sizeof(*h));

	if (!h) {
		FG_LOG_ERR("history", "out of memory for a handle");
		return NULL;
	}
	h->hdr = r;
	h->b = (struct fg_hbucket *)((uint8_t *)mem + r->buckets_off);
	h->side = r->side_capacity ? (struct fg_hside_rec *)((uint8_t *)mem + r->side_off) : NULL;
	h->m = r->n_buckets;
	h->ms = fg_hms_of(r);
	h->shard_mask = fg_hshards_of(r) - 1u;
	h->k[0] = r->seed[0];
	h->k[1] = r->seed[1];
	h->hash = r->hash;
	if (h->hash == FG_HISTORY_HASH_AES)
		fg_aeskey_init(&h->aes, (const uint8_t *)r->seed);
	h->side_sets = r->side_capacity / FG_HWAYS;
	h->len = len;
	return h;
}

struct fg_history *fg_history_create(void *mem, size_t len, const struct fg_history_params *p)
{
	size_t need = fg_history_region_size_sharded(p->capacity, p->side_capacity, p->shards);
	uint32_t shards = fg_history_shards_for(p->capacity, p->shards);
	struct fg_hregion *r = mem;
	uint64_t m = need ? buckets_for(p->capacity, shards) : 0;
	unsigned hash = p->hash;

	if (hash == FG_HISTORY_HASH_AUTO)
		hash = fg_aes_cpu_ok() ? FG_HISTORY_HASH_AES : FG_HISTORY_HASH_SIPHASH;
	if (need == 0 || len < need || ((uintptr_t)mem & 63) ||
	    (unsigned)p->full_policy > FG_FULL_EVICT_OLDEST ||
	    p->alarm_load_pct == 0 || p->alarm_load_pct > 100 || !hash_usable(hash)) {
		FG_LOG_ERR("history", "create: bad parameters (capacity %llu, shards %u, region %zu of %zu bytes, policy %d, alarm %u%%, hash %d)",
			   (unsigned long long)p->capacity, p->shards, len, need,
			   (int)p->full_policy, p->alarm_load_pct, (int)p->hash);
		return NULL;
	}
	memset(mem, 0, need);
	r->magic = FG_HMAGIC;
	r->version = FG_HLAYOUT;
	r->header_size = FG_HHEADER;
	r->region_size = need;
	r->n_buckets = m;
	r->shards = shards;
	r->shard_buckets = m / shards;
	r->buckets_off = FG_HHEADER;
	r->side_off = FG_HHEADER + m * sizeof(struct fg_hbucket);
	r->side_capacity = side_records(p->side_capacity);
	r->side_record_size = sizeof(struct fg_hside_rec);
	r->slots_per_bucket = FG_HSLOTS;
	r->bucket_size = sizeof(struct fg_hbucket);
	memcpy(r->seed, p->seed, sizeof(r->seed));
	r->hash = hash;
	r->seed_check = seed_check(r->seed, hash);
	r->created = p->now;
	atomic_store(&r->full_policy, (uint32_t)p->full_policy);
	atomic_store(&r->alarm_pct, p->alarm_load_pct);
	return fg_hhandle(mem, len);
}

uint32_t fg_history_layout_of(const void *mem, size_t len)
{
	const struct fg_hregion *r = mem;

	return len >= FG_HHEADER && r->magic == FG_HMAGIC ? r->version : 0;
}

/* Everything attach can check without reading the table. */
enum fg_history_error fg_hcheck_header(const struct fg_hregion *r, size_t len, bool image)
{
	uint64_t m, side_end, slots;
	int64_t total = 0;

	if (len < FG_HHEADER)
		return FG_HISTORY_E_SHORT;
	if (r->magic != FG_HMAGIC)
		return FG_HISTORY_E_MAGIC;
	if (r->version != FG_HLAYOUT &&
	    !(image && r->version == FG_HISTORY_LAYOUT_UNSHARDED))
		return FG_HISTORY_E_VERSION;
	m = r->n_buckets;
	if (r->version == FG_HISTORY_LAYOUT_UNSHARDED ? r->shards || r->shard_buckets
	    : !shards_ok(r->shards) || r->shard_buckets == 0 ||
	      r->shard_buckets > m || r->shard_buckets * r->shards != m)
		return FG_HISTORY_E_GEOMETRY;
	if (r->header_size != FG_HHEADER || r->buckets_off != FG_HHEADER ||
	    r->slots_per_bucket != FG_HSLOTS || r->bucket_size != sizeof(struct fg_hbucket) ||
	    r->side_record_size != sizeof(struct fg_hside_rec) || r->side_capacity % FG_HWAYS ||
	    m == 0 || m > (1ull << 40) ||
	    r->side_off != FG_HHEADER + m * sizeof(struct fg_hbucket))
		return FG_HISTORY_E_GEOMETRY;
	side_end = r->side_off + (uint64_t)r->side_capacity * sizeof(struct fg_hside_rec);
	if (r->region_size != side_end)
		return FG_HISTORY_E_GEOMETRY;
	if (len < r->region_size)
		return FG_HISTORY_E_SHORT;
	if (!hash_usable(r->hash))
		return FG_HISTORY_E_HASH;
	if (r->seed_check != seed_check(r->seed, r->hash))
		return FG_HISTORY_E_SEED;
	if (atomic_load(&r->full_policy) > FG_FULL_EVICT_OLDEST ||
	    atomic_load(&r->alarm_pct) == 0 || atomic_load(&r->alarm_pct) > 100)
		return FG_HISTORY_E_SETTINGS;
	slots = m * FG_HSLOTS;
	for (unsigned st = FG_HS_OFFERED; st <= FG_HS_SUPERSEDED; st++) {
		int64_t n = 0;

		for (unsigned s = 0; s < FG_HSTRIPES; s++) {
			int64_t v = atomic_load_explicit(&r->stripe[s].n[st], memory_order_relaxed);

			/* one stripe may go negative (an entry counted in by one
			 * stripe, out by another), never beyond the slot count */
			if (v > (int64_t)slots || v < -(int64_t)slots)
				return FG_HISTORY_E_COUNTS;
			n += v;
		}
		if (n < 0 || (uint64_t)n > slots)
			return FG_HISTORY_E_COUNTS;
		total += n;
	}
	if ((uint64_t)total > slots)
		return FG_HISTORY_E_COUNTS;
	return FG_HISTORY_E_OK;
}

struct fg_history *fg_history_attach(void *mem, size_t len, enum fg_history_error *why)
{
	enum fg_history_error e = FG_HISTORY_E_ALIGN;

	if (((uintptr_t)mem & 63) == 0)
		e = fg_hcheck_header(mem, len, false);
	if (why)
		*why = e;
	if (e != FG_HISTORY_E_OK) {
		FG_LOG_ERR("history", "attach refused: %s", fg_history_error_str(e));
		return NULL;
	}
	return fg_hhandle(mem, len);
}

void fg_history_detach(struct fg_history *h)
{
	free(h);
}

int fg_history_seed_random(uint8_t seed[FG_HISTORY_SEED_LEN])
{
	size_t got = 0;

	while (got < FG_HISTORY_SEED_LEN) {
		ssize_t n = getrandom(seed + got, FG_HISTORY_SEED_LEN - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int fg_history_set_policy(struct fg_history *h, enum fg_full_policy policy,
			  unsigned alarm_load_pct)
{
	if ((unsigned)policy > FG_FULL_EVICT_OLDEST || alarm_load_pct == 0 || alarm_load_pct > 100)
		return -EINVAL;
	atomic_store(&h->hdr->full_policy, (uint32_t)policy);
	atomic_store(&h->hdr->alarm_pct, alarm_load_pct);
	return 0;
}

void fg_history_set_test_hook(struct fg_history *h, fg_history_hook_fn *fn, void *arg)
{
	h->hook = fn;
	h->hook_arg = arg;
}

/* ---- hashing and lookup ---- */

void fg_history_hash(const struct fg_history *h, const void *id, size_t len,
		     struct fg_history_key *out)
{
	uint64_t o[2];

	fg_hhash(h, id, len, o);
	out->lo = o[0];
	out->hi = o[1];
}

void fg_history_prefetch(const struct fg_history *h, const struct fg_history_key *k)
{
	struct fg_hloc loc;

	fg_hlocate(h, k, &loc);
	__builtin_prefetch(fg_hbkt(h, loc.b1));
	__builtin_prefetch(fg_hbkt(h, loc.b2));
}

/* What one bucket holds for a fingerprint: a published entry (best), a
 * deciding insert, or nothing. Returns the internal state found (FREE for
 * nothing) and the consistent words; *torn when a slot kept changing. */
static inline __attribute__((always_inline)) unsigned
probe_bucket(const struct fg_hbucket *bk, uint64_t fp, uint64_t *w,
			     uint32_t *aux, bool *torn)
{
	unsigned best = FG_HS_FREE;

	for (unsigned i = 0; i < FG_HSLOTS; i++) {
		uint64_t k = atomic_load(&bk->key[i]);
		uint64_t kw;
		uint32_t a;
		unsigned st = fg_hw_state(k);

		if (fg_hw_fp(k) != fp || st == FG_HS_FREE || st == FG_HS_RESV)
			continue;
		if (!fg_hread_slot(bk, i, &kw, &a)) {
			*torn = true;
			continue;
		}
		st = fg_hw_state(kw);
		if (fg_hw_fp(kw) != fp || st == FG_HS_FREE || st == FG_HS_RESV)
			continue;
		if (fg_hs_published(st))
			return *w = kw, *aux = a, st;
		if (best == FG_HS_FREE) {
			best = st;
			*w = kw;
			*aux = a;
		}
	}
	return best;
}

/* One probe of the pair: 1 = settled (found, or a certain miss), 0 = a miss
 * while counters moved (or a slot kept changing). */
static inline __attribute__((always_inline)) int
probe_pair(const struct fg_history *h, const struct fg_hloc *loc, fg_time_t now,
		      struct fg_history_entry *out)
{
	const struct fg_hbucket *b1 = fg_hbkt(h, loc->b1), *b2 = fg_hbkt(h, loc->b2);
	/* seq_cst loads (plain loads on x86): the argument that a miss with
	 * unchanged counters is real rests on one total order of these loads
	 * and the writers' seq_cst steps */
	uint32_t c1 = atomic_load(&b1->ctr);
	uint32_t c2 = atomic_load(&b2->ctr);
	uint64_t w = 0, w2 = 0;
	uint32_t aux = 0, aux2 = 0;
	bool torn = false;
	unsigned st = probe_bucket(b1, loc->fp, &w, &aux, &torn);

	if (!fg_hs_published(st) && loc->b2 != loc->b1) {
		unsigned st2;

		if (h->hook)
			h->hook(h->hook_arg, FG_HISTORY_HOOK_PROBE);
		st2 = probe_bucket(b2, loc->fp, &w2, &aux2, &torn);
		if (fg_hs_published(st2) || st == FG_HS_FREE) {
			st = st2;
			w = w2;
			aux = aux2;
		}
	}
	if (st != FG_HS_FREE) {
		fg_hdecode_inline(w, aux, now, out);
		return 1;
	}
	memset(out, 0, sizeof(*out));
	return !torn && atomic_load(&b1->ctr) == c1 && atomic_load(&b2->ctr) == c2;
}

static inline __attribute__((always_inline)) enum fg_history_state
lookup_loc(const struct fg_history *h, const struct fg_hloc *loc,
					fg_time_t now, struct fg_history_entry *out)
{
	for (int t = 0; t < LOOKUP_TRIES; t++)
		if (probe_pair(h, loc, now, out))
			return out->state;
	out->flags |= FG_HISTORY_F_UNCERTAIN;
	return FG_HISTORY_ABSENT;
}

enum fg_history_state fg_history_lookup(const struct fg_history *h,
					const struct fg_history_key *k, fg_time_t now,
					struct fg_history_entry *out)
{
	struct fg_history_entry tmp;
	struct fg_hloc loc;

	fg_hlocate(h, k, &loc);
	return lookup_loc(h, &loc, now, out ? out : &tmp);
}

/*
 * The probe pipeline over hashed keys. Both buckets of every key are
 * prefetched before the first probe (two_lines), or only the first, the
 * second being fetched only for keys not found there: most entries sit in
 * their first bucket, so most hits then cost one cache line.
 */
void fg_hlookup_keys(const struct fg_history *h, const struct fg_history_key *keys, unsigned n,
		     fg_time_t now, struct fg_history_entry *out, bool two_lines)
{
	struct fg_hloc loc[BURST];
	bool done[BURST];

	for (unsigned base = 0; base < n; base += BURST) {
		unsigned cnt = FG_MIN(BURST, n - base);

		for (unsigned i = 0; i < cnt; i++) {
			fg_hlocate(h, &keys[base + i], &loc[i]);
			__builtin_prefetch(fg_hbkt(h, loc[i].b1));
			if (two_lines)
				__builtin_prefetch(fg_hbkt(h, loc[i].b2));
		}
		for (unsigned i = 0; i < cnt && !two_lines; i++) {
			uint64_t w = 0;
			uint32_t a = 0;
			bool torn = false;

			done[i] = fg_hs_published(probe_bucket(fg_hbkt(h, loc[i].b1), loc[i].fp,
							       &w, &a, &torn));
			if (done[i])
				fg_hdecode_inline(w, a, now, &out[base + i]);
			else
				__builtin_prefetch(fg_hbkt(h, loc[i].b2));
		}
		for (unsigned i = 0; i < cnt; i++)
			if (two_lines || !done[i])
				lookup_loc(h, &loc[i], now, &out[base + i]);
	}
}

unsigned fg_history_lookup_burst(const struct fg_history *h, const void *const *ids,
				 const uint16_t *lens, unsigned n, fg_time_t now,
				 struct fg_history_key *keys, struct fg_history_entry *out)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t o[2];

		fg_hhash(h, ids[i], lens[i], o);
		keys[i].lo = o[0];
		keys[i].hi = o[1];
	}
	fg_hlookup_keys(h, keys, n, now, out, FG_HLOOKUP_TWO_LINES);
	return n;
}

/* ---- statistics ---- */

void fg_history_stats(const struct fg_history *h, struct fg_history_stats *out)
{
	const struct fg_hregion *r = h->hdr;

	memset(out, 0, sizeof(*out));
	for (unsigned st = FG_HS_OFFERED; st <= FG_HS_SUPERSEDED; st++) {
		uint64_t sum = 0, v;

		/* modular sum: stripes go negative one by one, the total not
		 * (and a damaged region must not make this undefined) */
		for (unsigned s = 0; s < FG_HSTRIPES; s++)
			sum += (uint64_t)atomic_load_explicit(&r->stripe[s].n[st], memory_order_relaxed);
		v = (int64_t)sum > 0 ? sum : 0;

		out->by_state[fg_hstate_public(st)] += v;
		out->entries += v;
	}
	out->buckets = h->m;
	out->shards = (uint32_t)h->shard_mask + 1;
	out->slots = h->m * FG_HSLOTS;
	out->load_ppm = (uint32_t)(out->entries * 1000000 / out->slots);
	out->alarm_load_pct = atomic_load_explicit(&r->alarm_pct, memory_order_relaxed);
	out->alarm = out->entries * 100 >= (uint64_t)out->alarm_load_pct * out->slots;
	out->full_policy = (enum fg_full_policy)atomic_load_explicit(&r->full_policy,
								     memory_order_relaxed);
	out->evictions = atomic_load_explicit(&r->evictions, memory_order_relaxed);
	out->insert_failures = atomic_load_explicit(&r->insert_failures, memory_order_relaxed);
	out->moves = atomic_load_explicit(&r->moves, memory_order_relaxed);
	out->expired = atomic_load_explicit(&r->expired, memory_order_relaxed);
	out->region_size = r->region_size;
	out->side_capacity = r->side_capacity;
	for (uint32_t i = 0; i < r->side_capacity; i++)
		out->side_used += atomic_load_explicit(&h->side[i].seq, memory_order_relaxed) != 0;
	out->created = r->created;
}
