/* SPDX-License-Identifier: MIT */
/*
 * history_int.h — the history region's layout and the entry encoding,
 * private to dataplane/history (and its tests). include/floodgate/history.h
 * is the API; docs/history.md restates this file for readers.
 *
 * REGION (all integers little-endian, every offset from the region start;
 * no pointers anywhere, so any process may map it at any address):
 *
 *   offset        size            content
 *   0             4096            header (struct fg_hregion)
 *   4096          64 * n_buckets  buckets (struct fg_hbucket), shard after
 *                                 shard: shard s holds buckets
 *                                 [s * shard_buckets, (s + 1) * shard_buckets)
 *   side_off      544 * side_cap  version side index (struct fg_hside_rec)
 *
 * SHARDS. A key's shard is the low bits of its hash's high word (bits the
 * fingerprint, bits 63..10, does not use): shard = hi & (shards - 1). Within
 * its shard it has a bucket pair as an unsharded table of shard_buckets
 * buckets would give it, so a lookup is still one hash and one pair, and
 * an entry never leaves its shard (relocation moves it to the other bucket
 * of its pair). A table of one shard is exactly the layout-2 table: an
 * image of layout 2 is read as one (history_image.c).
 *
 * HEADER (struct fg_hregion, 4096 bytes; the rest of the page is zero):
 *
 *   off  size  field
 *   0    8     magic "FGHISTRY"
 *   8    4     layout version (3: shards; 2: one table, read as one shard)
 *   12   4     header size (4096)
 *   16   8     region size
 *   24   8     n_buckets (m)
 *   32   8     buckets offset (4096)
 *   40   8     side index offset
 *   48   4     side index records
 *   52   4     side record size (544)
 *   56   4     slots per bucket (5)
 *   60   4     bucket size (64)
 *   64   16    seed (two u64: the hash key; for SipHash k0, k1)
 *   80   8     seed check: low half of the table's hash of "floodgate history
 *              seed" under the seed
 *   88   8     created (fg_time_t)
 *   96   4     checksum: CRC-32C of the header page (this field zero) and
 *              the side index; the buckets are covered by the shard CRCs
 *              at 2560 (layout 2: of the whole image)
 *   100  4     sealed: 1 in an image written by fg_history_image_copy
 *   104  4     hash function (enum fg_history_hashfn: 1 AES, 2 SipHash-1-3)
 *   108  4     shards (a power of two, 1..256; 0 in layout 2: one)
 *   112  8     shard_buckets: buckets per shard (n_buckets = shards * this)
 *   120  8     reserved (zero)
 *   128  4     full-table policy (atomic)
 *   132  4     alarm threshold, percent (atomic)
 *   136  56    reserved (zero)
 *   192  64    image counts: entries per internal state, recounted by the
 *              image copy (u64[8]); zero in a live region
 *   256  8     snapshot guard (atomic): bit 63 = an image copy runs, low
 *              bits = first bucket of the chunk it is copying
 *   264  56    reserved
 *   320  8*4   evictions, insert failures, moves, expired (atomic)
 *   352  160   reserved
 *   512  2048  32 stat stripes of 8 x i64: entries per internal state,
 *              stripe = bucket % 32 (atomic, relaxed adds)
 *   2560 1024  shard CRCs: in a sealed image, CRC-32C of each shard's
 *              buckets (u32[256], zero beyond the shard count); zero in a
 *              live region
 *   3584 512   reserved (zero)
 *
 * BUCKET (struct fg_hbucket, 64 bytes = one cache line, 5 slots):
 *
 *   off  size  field
 *   0    4     change counter: +1 (seq_cst RMW) after every placement,
 *              withdrawal, kill, relocation step and deletion in the bucket
 *   4    4*5   aux words of slots 0..4
 *   24   8*5   key words of slots 0..4
 *
 * A slot is 12 bytes: a 64-bit key word (the only word ever compared-and-
 * swapped) and a 32-bit aux word.
 *
 *   key word:  bits 63..10  fingerprint (54 bits)
 *              bits  9..7   state (internal, below)
 *              bits  6..0   x: 7 bits whose meaning depends on the state
 *
 *   state      x                       aux
 *   FREE  0    0 (the whole word is 0)  stale
 *   BUSY  1    token & 0x7f            target aux (being written)
 *   RESV  2    0 (fp 0)                being written by its owner
 *   OFFERED 3  token & 0x7f            bits 0..15 deadline mod 2^16,
 *                                      bits 16..31 token >> 7
 *   ACCEPTING 4 token & 0x7f           stale (never read)
 *   ACCEPTED 5, REJECTED 6, SUPERSEDED 7 (the final states):
 *              fs & 0x7f               bits 0..15 (fs mod 2^23) >> 7,
 *                                      bits 16..31 date code
 *
 *   fs: first-seen seconds modulo 2^23, read back as the unique value in
 *   (now - FG_HISTORY_MAX_AGE, now + FG_HISTORY_CLOCK_SLACK].
 *   date code: o = ceil((date - first_seen) / 60) minutes, code = o + 64034;
 *   code 0 = clamped old (o <= -64034), 65535 = clamped future (o >= 1501).
 *   deadline: read back as now + r when r = (d16 - now) mod 2^16 <= 3600,
 *   else now + r - 65536 (expired).
 *
 * BUSY is an insert that is still deciding (see history_insert.c); RESV a
 * slot its owner holds invisibly (a relocation being copied in, or a BUSY
 * entry killed by a competing insert, which only its owner frees).
 */
#ifndef FLOODGATE_HISTORY_INT_H
#define FLOODGATE_HISTORY_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "floodgate/crc32c.h"
#include "floodgate/history.h"
#include "floodgate/siphash.h"
#include "aeshash.h"

#define FG_HMAGIC 0x5952545349484746ull	/* "FGHISTRY" little-endian */
#define FG_HLAYOUT FG_HISTORY_LAYOUT
#define FG_HHEADER 4096u
#define FG_HSLOTS FG_HISTORY_SLOTS_PER_BUCKET
#define FG_HSTRIPES 32u
#define FG_HWAYS 4u			/* side index associativity */
#define FG_HSIDE_WORDS 32u		/* 256 bytes per string */
#define FG_HSNAP_ACTIVE (1ull << 63)
#define FG_HSNAP_CHUNK 64u		/* buckets per image-copy chunk */
#define FG_HSNAP_PACE_BUCKETS 16384u	/* 1 MiB of buckets between an image copy's pauses */
/* The longest relocation path, in moves. Overridden (-DFG_HBFS_DEPTH=N)
 * only by tools/bench/reloc_table.sh, which builds the table for each
 * length and writes docs/history.md's table of what each length reaches. */
#ifndef FG_HBFS_DEPTH
#define FG_HBFS_DEPTH 4u
#endif

enum fg_hstate {
	FG_HS_FREE = 0,
	FG_HS_BUSY = 1,
	FG_HS_RESV = 2,
	FG_HS_OFFERED = 3,
	FG_HS_ACCEPTING = 4,
	FG_HS_ACCEPTED = 5,
	FG_HS_REJECTED = 6,
	FG_HS_SUPERSEDED = 7,
};

struct fg_hbucket {
	_Atomic uint32_t ctr;
	_Atomic uint32_t aux[FG_HSLOTS];
	_Atomic uint64_t key[FG_HSLOTS];
};
_Static_assert(sizeof(struct fg_hbucket) == 64, "bucket is one cache line");

struct fg_hstripe {
	_Atomic int64_t n[8];
};

struct fg_hregion {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint64_t region_size;
	uint64_t n_buckets;
	uint64_t buckets_off;
	uint64_t side_off;
	uint32_t side_capacity;
	uint32_t side_record_size;
	uint32_t slots_per_bucket;
	uint32_t bucket_size;
	uint64_t seed[2];
	uint64_t seed_check;
	int64_t created;
	uint32_t checksum;
	uint32_t sealed;
	uint32_t hash;
	uint32_t shards;
	uint64_t shard_buckets;
	uint8_t reserved0[8];
	_Atomic uint32_t full_policy;
	_Atomic uint32_t alarm_pct;
	uint8_t reserved1[56];
	uint64_t image_counts[8];
	_Atomic uint64_t snap;
	uint8_t reserved2[56];
	_Atomic uint64_t evictions;
	_Atomic uint64_t insert_failures;
	_Atomic uint64_t moves;
	_Atomic uint64_t expired;
	uint8_t reserved3[160];
	struct fg_hstripe stripe[FG_HSTRIPES];
	uint32_t shard_crc[FG_HISTORY_SHARDS_MAX];
	uint8_t reserved4[512];
};
_Static_assert(sizeof(struct fg_hregion) == FG_HHEADER, "header is one page");
_Static_assert(__builtin_offsetof(struct fg_hregion, hash) == 104, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, full_policy) == 128, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, image_counts) == 192, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, snap) == 256, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, evictions) == 320, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, stripe) == 512, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, shards) == 108, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, shard_buckets) == 112, "layout");
_Static_assert(__builtin_offsetof(struct fg_hregion, shard_crc) == 2560, "layout");

/* A version side-index record: seq even = stable (0 = empty), odd = being
 * written. Strings are stored in words so that every access is atomic. */
struct fg_hside_rec {
	_Atomic uint64_t seq;
	_Atomic uint64_t version;
	_Atomic uint64_t stamp;
	_Atomic uint64_t lens;		/* base_len | id_len << 16 | base hash << 32 */
	_Atomic uint64_t base[FG_HSIDE_WORDS];
	_Atomic uint64_t id[FG_HSIDE_WORDS];
};
_Static_assert(sizeof(struct fg_hside_rec) == 544, "side record size");

struct fg_history {
	struct fg_aeskey aes;		/* the seed expanded, when hash is AES */
	struct fg_hregion *hdr;
	struct fg_hbucket *b;
	struct fg_hside_rec *side;
	uint64_t m;			/* buckets in all */
	uint64_t ms;			/* buckets per shard */
	uint64_t shard_mask;		/* shards - 1 */
	uint64_t k[2];			/* the seed as SipHash's key */
	unsigned hash;			/* enum fg_history_hashfn, never AUTO */
	uint32_t side_sets;
	size_t len;
	fg_history_hook_fn *hook;
	void *hook_arg;
};

/* Where a key lives: two buckets (equal for ~1/m of keys) and a fingerprint. */
struct fg_hloc {
	uint64_t b1, b2;
	uint64_t fp;
};

/* ---- key words ---- */

#define FG_HW_RESV ((uint64_t)FG_HS_RESV << 7)

static inline unsigned fg_hw_state(uint64_t w)
{
	return (unsigned)(w >> 7) & 7u;
}

static inline uint64_t fg_hw_fp(uint64_t w)
{
	return w >> 10;
}

static inline unsigned fg_hw_x(uint64_t w)
{
	return (unsigned)w & 0x7fu;
}

static inline uint64_t fg_hw_make(uint64_t fp, unsigned state, unsigned x)
{
	return fp << 10 | (uint64_t)state << 7 | (x & 0x7fu);
}

static inline bool fg_hs_final(unsigned st)
{
	return st >= FG_HS_ACCEPTED;
}

/* A state other threads can see as an entry of its fingerprint. */
static inline bool fg_hs_published(unsigned st)
{
	return st >= FG_HS_OFFERED;
}

/* ---- geometry ---- */

static inline uint64_t fg_hrange(uint64_t h, uint64_t m)
{
	/* Lemire's multiply-shift: uniform onto [0, m) for any m */
	return (uint64_t)(((unsigned __int128)h * m) >> 64);
}

static inline uint64_t fg_hmix(uint64_t x)
{
	return fg_mix64_murmur3(x);
}

/*
 * Partial-key cuckoo: the other bucket of a pair is computed from either
 * bucket and the fingerprint alone, so an entry can be moved without its
 * key. alt(b) = (H(fp) - b) mod m is an involution for any m (no
 * power-of-two rounding): alt(alt(b)) = H(fp) - (H(fp) - b) = b.
 * Here m is a shard's bucket count and b a bucket within the shard.
 */
static inline uint64_t fg_halt(uint64_t m, uint64_t b, uint64_t fp)
{
	uint64_t x = fg_hrange(fg_hmix(fp), m);

	return x >= b ? x - b : x + m - b;
}

/* The other bucket of global bucket b for fingerprint fp: in b's shard. */
static inline uint64_t fg_halt_global(const struct fg_history *h, uint64_t b, uint64_t fp)
{
	uint64_t base = b - b % h->ms;

	return base + fg_halt(h->ms, b - base, fp);
}

static inline void fg_hlocate(const struct fg_history *h, const struct fg_history_key *k,
			      struct fg_hloc *loc)
{
	uint64_t base = (k->hi & h->shard_mask) * h->ms;
	uint64_t b1 = fg_hrange(k->lo, h->ms);

	loc->fp = k->hi >> (64 - FG_HISTORY_FP_BITS);
	loc->b1 = base + b1;
	loc->b2 = base + fg_halt(h->ms, b1, loc->fp);
}

static inline struct fg_hbucket *fg_hbkt(const struct fg_history *h, uint64_t b)
{
	return &h->b[b];
}

/* A header's shard count and buckets per shard (layout 2: one shard). */
static inline uint32_t fg_hshards_of(const struct fg_hregion *r)
{
	return r->version == FG_HISTORY_LAYOUT_UNSHARDED ? 1u : r->shards;
}

static inline uint64_t fg_hms_of(const struct fg_hregion *r)
{
	return r->version == FG_HISTORY_LAYOUT_UNSHARDED ? r->n_buckets : r->shard_buckets;
}

/* ---- time encodings ---- */

#define FG_HFS_MOD (1ll << 23)
#define FG_HDATE_BIAS 64034ll		/* code = minutes + bias */
#define FG_HDATE_CODE_MAX 65535ll

static inline uint32_t fg_hfs_enc(fg_time_t fs)
{
	return (uint32_t)((uint64_t)fs & (FG_HFS_MOD - 1));
}

static inline fg_time_t fg_hfs_dec(uint32_t fs23, fg_time_t now)
{
	fg_time_t base = now + FG_HISTORY_CLOCK_SLACK;
	uint64_t age = ((uint64_t)base - fs23) & (FG_HFS_MOD - 1);

	return base - (fg_time_t)age;
}

/* Minutes from first-seen, rounded up so that the stored date is never
 * earlier than the true one (article-date expiry may keep an entry a
 * little longer, never drop it early). */
static inline uint32_t fg_hdate_enc(fg_time_t date, fg_time_t fs, uint32_t *flags)
{
	int64_t d = date - fs;
	int64_t o = d >= 0 ? (d + FG_HISTORY_DATE_UNIT - 1) / FG_HISTORY_DATE_UNIT
			   : -((-d) / FG_HISTORY_DATE_UNIT);
	int64_t code = o + FG_HDATE_BIAS;

	if (code <= 0) {
		code = 0;
		*flags |= FG_HISTORY_F_DATE_CLAMPED_OLD;
	} else if (code >= FG_HDATE_CODE_MAX) {
		code = FG_HDATE_CODE_MAX;
		*flags |= FG_HISTORY_F_DATE_CLAMPED_FUTURE;
	}
	return (uint32_t)code;
}

static inline fg_time_t fg_hdate_dec(uint32_t code, fg_time_t fs, uint32_t *flags)
{
	if (code == 0)
		*flags |= FG_HISTORY_F_DATE_CLAMPED_OLD;
	else if (code == FG_HDATE_CODE_MAX)
		*flags |= FG_HISTORY_F_DATE_CLAMPED_FUTURE;
	return fs + ((fg_time_t)code - FG_HDATE_BIAS) * FG_HISTORY_DATE_UNIT;
}

static inline fg_time_t fg_hdl_dec(uint32_t d16, fg_time_t now)
{
	uint32_t r = (d16 - (uint32_t)(uint64_t)now) & 0xffffu;

	return r <= FG_HISTORY_OFFER_MAX ? now + r : now + (fg_time_t)r - 65536;
}

/* aux of a final entry, and the x bits that go with it */
static inline uint32_t fg_haux_final(uint32_t fs23, uint32_t code)
{
	return (fs23 >> 7) | code << 16;
}

static inline uint32_t fg_haux_offer(fg_time_t deadline, uint32_t token)
{
	return ((uint32_t)(uint64_t)deadline & 0xffffu) | ((token >> 7) & 0xffffu) << 16;
}

/* ---- shared helpers (history.c) ---- */

/* The state callers see for an internal state: FREE and RESV are absent,
 * BUSY is an insert deciding (PENDING). */
static inline enum fg_history_state fg_hstate_public(unsigned st)
{
	static const uint8_t pub[8] = {
		[FG_HS_FREE] = FG_HISTORY_ABSENT, [FG_HS_BUSY] = FG_HISTORY_PENDING,
		[FG_HS_RESV] = FG_HISTORY_ABSENT, [FG_HS_OFFERED] = FG_HISTORY_OFFERED,
		[FG_HS_ACCEPTING] = FG_HISTORY_ACCEPTING, [FG_HS_ACCEPTED] = FG_HISTORY_ACCEPTED,
		[FG_HS_REJECTED] = FG_HISTORY_REJECTED, [FG_HS_SUPERSEDED] = FG_HISTORY_SUPERSEDED,
	};

	return (enum fg_history_state)pub[st & 7u];
}

/* Decode a slot (key word, aux) into an entry (inline for the lookup
 * path; fg_hdecode is the same, out of line). */
static inline void fg_hdecode_inline(uint64_t w, uint32_t aux, fg_time_t now,
				     struct fg_history_entry *e)
{
	unsigned st = fg_hw_state(w);

	e->state = fg_hstate_public(st);
	e->flags = 0;
	e->first_seen = e->article_date = e->deadline = 0;
	e->token = 0;
	if (st == FG_HS_OFFERED) {
		e->deadline = fg_hdl_dec(aux & 0xffffu, now);
		e->token = fg_hw_x(w) | (aux >> 16) << 7;
		if (now >= e->deadline)
			e->flags |= FG_HISTORY_F_EXPIRED;
	} else if (fg_hs_final(st)) {
		uint32_t fs23 = (aux & 0xffffu) << 7 | fg_hw_x(w);

		e->first_seen = fg_hfs_dec(fs23, now);
		e->article_date = fg_hdate_dec(aux >> 16, e->first_seen, &e->flags);
	}
}

void fg_hdecode(uint64_t w, uint32_t aux, fg_time_t now, struct fg_history_entry *e);
/* Adjust the striped per-state counts for a slot of bucket b. */
void fg_hcount(struct fg_history *h, uint64_t b, unsigned st, int64_t delta);
/* Read a slot's key and aux words consistently; false if it kept changing. */
bool fg_hread_slot(const struct fg_hbucket *bk, unsigned i, uint64_t *w, uint32_t *aux);
void fg_hbump(struct fg_hbucket *bk);
/* Delete global slot gs if it still holds word w (history_insert.c). */
bool fg_hdelete(struct fg_history *h, uint64_t gs, uint64_t w);
/* Validate a header against `len`; FG_HISTORY_E_OK or why not. */
/* The burst probe over hashed keys (history.c); the burst API's choice
 * of prefetching both lines up front or the second only when needed is
 * FG_HLOOKUP_TWO_LINES, set from tools/bench/bench_history measurements. */
#define FG_HLOOKUP_TWO_LINES true
void fg_hlookup_keys(const struct fg_history *h, const struct fg_history_key *keys, unsigned n,
		     fg_time_t now, struct fg_history_entry *out, bool two_lines);
/* Per internal state, the slots holding it (history_sweep.c); and exact
 * counts written into the stripes. */
void fg_hrecount(const struct fg_hbucket *b, uint64_t m, uint64_t counts[8]);
void fg_hset_counts(struct fg_hregion *r, const uint64_t counts[8]);
/* images accept layout 2 as one shard; a live region only this layout */
enum fg_history_error fg_hcheck_header(const struct fg_hregion *r, size_t len, bool image);
struct fg_history *fg_hhandle(void *mem, size_t len);

/* ---- keyed hash (siphash.c; floodgate/siphash.h) ---- */

/* The table's keyed hash (fg_history_hash; inline for the burst path). */
static inline void fg_hhash(const struct fg_history *h, const void *id, size_t len,
			    uint64_t out[2])
{
	if (h->hash == FG_HISTORY_HASH_AES)
		fg_aeshash128(&h->aes, id, len, out);
	else
		fg_siphash13_128(h->k, id, len, out);
}


#endif /* FLOODGATE_HISTORY_INT_H */
