/* SPDX-License-Identifier: MIT */
/*
 * history.h — the Message-ID history: a lock-free table of fingerprints
 * laid out inside a caller-supplied memory region.
 *
 * What it answers: has this Message-ID been seen, and in which state? Every
 * CHECK, TAKETHIS and IHAVE asks it once. It stores no IDs: a keyed 128-bit
 * hash (AES rounds, or SipHash-1-3 on a CPU without AES-NI, under a
 * per-instance secret seed) of the ID's octets gives a
 * bucket pair and a 54-bit fingerprint; an entry is 12 bytes, five to a
 * 64-byte bucket, and a lookup reads at most the two buckets of its pair.
 * docs/history.md gives the layout byte by byte, the concurrency argument
 * and the measured figures.
 *
 * The region holds no pointers, only offsets, so several processes can map
 * it (floodctld creates it in hugetlbfs or /dev/shm; dataplane workers and
 * floodctld attach) and it can be copied to a file as a flat image. A
 * `struct fg_history` is a process-local handle onto a region; every thread
 * of a process may share one handle.
 *
 * States (RFC 5537 3: a relay MUST reject an article it already accepted):
 *
 *   ABSENT --offer--> OFFERED --begin_accept--> ACCEPTING --finish--> ACCEPTED
 *      |                 | (deadline passes,          |               REJECTED
 *      |                 |  or release)               |               SUPERSEDED
 *      |                 v                            |
 *      +--begin_accept-> ACCEPTING     ABSENT <--abort-+
 *      +--insert_final-> ACCEPTED / REJECTED / SUPERSEDED
 *
 * OFFERED: a 238 was given; holds a deadline and the offering session's
 * token. ACCEPTING: a complete article is being made durable; other
 * transfers of the ID wait for the outcome. The three final states are kept
 * until expiry. PENDING is what another thread sees of an insert that is
 * still deciding (a few hundred nanoseconds): treat it like ACCEPTING.
 *
 * Concurrency: lookups are wait-free; offer, begin_accept and insert_final
 * are linearizable insert-if-absent operations without locks (when several
 * threads insert one ID at once, exactly one succeeds; the others get
 * -EEXIST or -EAGAIN and then see the winner's entry). OFFERED and
 * ACCEPTING entries never move, so a `struct fg_history_ref` stays valid
 * until the entry leaves that state. Expiry sweeps run concurrently with
 * all of this.
 *
 * Times are fg_time_t seconds, always passed in by the caller (`now`): the
 * table never reads a clock. Stored resolutions and ranges (docs/history.md):
 * first-seen to the second within FG_HISTORY_MAX_AGE; the article date as
 * a whole number of FG_HISTORY_DATE_UNIT seconds after first-seen, rounded
 * up, from FG_HISTORY_DATE_MIN_OFFSET to FG_HISTORY_DATE_MAX_OFFSET (values
 * outside are clamped and flagged); offer deadlines to the second, at most
 * FG_HISTORY_OFFER_MAX ahead; tokens modulo 2^FG_HISTORY_TOKEN_BITS.
 *
 * Errors: actions return 0 or -errno, as documented at each function.
 */
#ifndef FLOODGATE_HISTORY_H
#define FLOODGATE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"

#define FG_HISTORY_SEED_LEN 16
/* The layout version of the region and its images (history_int.h). A
 * region of another version is refused (FG_HISTORY_E_VERSION: floodctld
 * rebuilds it from the data directory); an image of layout 2 (one table,
 * no shards) is read as a table of one shard, any other refused. */
#define FG_HISTORY_LAYOUT 3u
#define FG_HISTORY_LAYOUT_UNSHARDED 2u
/* Shards: the table is split by hash bits into this many tables of their
 * own (a power of two); snapshot, restore and expiry go shard by shard. */
#define FG_HISTORY_SHARDS_MAX 256u
/* With shards = 0 (auto): one shard per this many entries of capacity,
 * rounded up to a power of two (so a table of up to 16 M entries is one). */
#define FG_HISTORY_SHARD_AUTO_ENTRIES (1ull << 24)
#define FG_HISTORY_SLOTS_PER_BUCKET 5
#define FG_HISTORY_FP_BITS 54
#define FG_HISTORY_TOKEN_BITS 23
/*
 * Owners. The low FG_HISTORY_OWNER_BITS of a token name the writer whose
 * engine handed it out: its writer slot in floodctld's region (0..126), or
 * FG_HISTORY_OWNER_NONE for an engine without one. Every transient entry
 * (OFFERED, ACCEPTING, an insert still deciding) keeps exactly these bits
 * in its key word, so the entries a writer left when it died can be told
 * from a live writer's: fg_history_settle() and fg_history_drop_owned().
 */
#define FG_HISTORY_OWNER_BITS 7
#define FG_HISTORY_OWNER_NONE ((1u << FG_HISTORY_OWNER_BITS) - 1)
/* Matches every owner (a process that knows no writer is alive). */
#define FG_HISTORY_OWNER_ANY UINT32_MAX
/* Article dates are stored in units of this many seconds, rounded up. */
#define FG_HISTORY_DATE_UNIT 60
/* Representable article date, relative to first-seen (seconds). */
#define FG_HISTORY_DATE_MIN_OFFSET (-64033LL * FG_HISTORY_DATE_UNIT)	/* -44.47 days */
#define FG_HISTORY_DATE_MAX_OFFSET (1500LL * FG_HISTORY_DATE_UNIT)	/* +25 hours */
/* First-seen is kept modulo 2^23 s and read back against `now`: an entry
 * may be at most this old, or at most FG_HISTORY_CLOCK_SLACK in the future
 * (a clock stepped back), before its age becomes ambiguous. */
#define FG_HISTORY_CLOCK_SLACK 86400LL
#define FG_HISTORY_MAX_AGE ((1LL << 23) - FG_HISTORY_CLOCK_SLACK)	/* 96.09 days */
/* Longest retention a sweep accepts (leaves 6 days of margin to MAX_AGE). */
#define FG_HISTORY_RETENTION_MAX (90LL * 86400)
/* Longest cutoff whose articles keep an exact (unclamped) date. */
#define FG_HISTORY_CUTOFF_MAX (44LL * 86400)
/* An offer's deadline may lie at most this far after `now`. */
#define FG_HISTORY_OFFER_MAX 3600
/* Longest base identifier / full Message-ID the version side index keeps. */
#define FG_HISTORY_ID_MAX 250

struct fg_history;

enum fg_history_state {
	FG_HISTORY_ABSENT = 0,
	FG_HISTORY_PENDING,	/* another thread's insert of this ID is deciding */
	FG_HISTORY_OFFERED,
	FG_HISTORY_ACCEPTING,
	FG_HISTORY_ACCEPTED,
	FG_HISTORY_REJECTED,
	FG_HISTORY_SUPERSEDED,
	FG_HISTORY_STATE__COUNT
};

/* The keyed 128-bit hash of a Message-ID: compute once, use for every call
 * about that ID. Only meaningful for the table (seed) that computed it. */
struct fg_history_key {
	uint64_t lo, hi;
};

/* What a lookup (or a failed insert) found. */
struct fg_history_entry {
	enum fg_history_state state;
	uint32_t flags;			/* FG_HISTORY_F_* */
	fg_time_t first_seen;		/* final states */
	fg_time_t article_date;		/* final states: first_seen + k * DATE_UNIT >= true date */
	fg_time_t deadline;		/* OFFERED */
	uint32_t token;			/* OFFERED: the offering session's token (23 bits) */
};

/* ABSENT, but entries of this bucket pair moved during every try of the
 * lookup: the answer is a hint; offer()/begin_accept() are authoritative. */
#define FG_HISTORY_F_UNCERTAIN 0x1u
/* OFFERED whose deadline has passed (now >= deadline): as good as absent. */
#define FG_HISTORY_F_EXPIRED 0x2u
/* The article date lay outside the representable range and was clamped:
 * the true date is before (OLD) or after (FUTURE) article_date. */
#define FG_HISTORY_F_DATE_CLAMPED_OLD 0x4u
#define FG_HISTORY_F_DATE_CLAMPED_FUTURE 0x8u

/* An OFFERED or ACCEPTING entry the caller holds (returned by offer and
 * begin_accept; given back to release, finish and abort). */
struct fg_history_ref {
	uint64_t slot;
	uint64_t word;
	uint32_t token;
};

/* The keyed hash of a table, chosen at creation and recorded in its header
 * (so in every image): docs/history.md, "Hash, seed, bucket and
 * fingerprint". */
enum fg_history_hashfn {
	FG_HISTORY_HASH_AUTO = 0,	/* create: AES if the CPU has AES-NI, else SipHash */
	FG_HISTORY_HASH_AES = 1,	/* four AES rounds per 16-octet block, four lanes */
	FG_HISTORY_HASH_SIPHASH = 2,	/* SipHash-1-3-128: the reference and the fallback */
};

struct fg_history_params {
	uint64_t capacity;		/* slots (entries at 100 % load); rounded up to a multiple of 5 * shards */
	uint32_t shards;		/* power of two <= FG_HISTORY_SHARDS_MAX; 0 = auto (above) */
	enum fg_history_hashfn hash;	/* AUTO (0) unless a test or benchmark wants one */
	uint32_t side_capacity;		/* version side-index records; 0 = no side index */
	enum fg_full_policy full_policy;
	unsigned alarm_load_pct;	/* 1..100 */
	uint8_t seed[FG_HISTORY_SEED_LEN];
	fg_time_t now;			/* creation time, recorded in the header */
};

/* Why a region or an image was refused. */
enum fg_history_error {
	FG_HISTORY_E_OK = 0,
	FG_HISTORY_E_SHORT,		/* shorter than its header says, or than a header */
	FG_HISTORY_E_ALIGN,		/* not 64-byte aligned */
	FG_HISTORY_E_MAGIC,		/* not a history region */
	FG_HISTORY_E_VERSION,		/* a layout version this build does not read */
	FG_HISTORY_E_GEOMETRY,		/* sizes, offsets or counts of buckets/records inconsistent */
	FG_HISTORY_E_SEED,		/* the seed does not match its check value */
	FG_HISTORY_E_SETTINGS,		/* policy or alarm threshold out of range */
	FG_HISTORY_E_COUNTS,		/* entry counts impossible, or not those of the table */
	FG_HISTORY_E_CHECKSUM,		/* image checksum mismatch */
	FG_HISTORY_E_HASH,		/* unknown hash function, or AES on a CPU without AES-NI */
	FG_HISTORY_E__COUNT
};

const char *fg_history_error_str(enum fg_history_error e);
const char *fg_history_state_name(enum fg_history_state s);

/* ---- region lifecycle ---- */

/* Bytes a region needs with the automatic shard count; 0 if capacity is 0
 * or too large. */
size_t fg_history_region_size(uint64_t capacity, uint32_t side_capacity);
/* The same for `shards` shards (0 = auto); 0 also if shards is not a power
 * of two up to FG_HISTORY_SHARDS_MAX. */
size_t fg_history_region_size_sharded(uint64_t capacity, uint32_t side_capacity,
				      uint32_t shards);
/* The shard count `shards` (0 = auto) gives a table of this capacity. */
uint32_t fg_history_shards_for(uint64_t capacity, uint32_t shards);

/*
 * Lay out an empty table in `mem` (64-byte aligned, `len` >= region size;
 * its contents are overwritten). Returns a handle, or NULL (logged) for bad
 * parameters (FG_HISTORY_HASH_AES on a CPU without AES-NI among them). No
 * allocation inside the region ever happens after this.
 */
struct fg_history *fg_history_create(void *mem, size_t len, const struct fg_history_params *p);

/*
 * Attach to a region another process created. Validates the header —
 * magic, layout version, sizes and offsets against `len`, the hash
 * function, the seed against its check value, settings, entry counts —
 * without reading the table.
 * NULL with *why set (and logged) when refused.
 */
struct fg_history *fg_history_attach(void *mem, size_t len, enum fg_history_error *why);

/* Free the handle; the region is untouched. */
void fg_history_detach(struct fg_history *h);

/* 16 random bytes for a new table's seed (getrandom). 0 or -errno. */
int fg_history_seed_random(uint8_t seed[FG_HISTORY_SEED_LEN]);

/* Change the full-table policy or the alarm threshold of a live table. */
int fg_history_set_policy(struct fg_history *h, enum fg_full_policy policy,
			  unsigned alarm_load_pct);

/* ---- lookup ---- */

/* Keyed hash of the Message-ID's octets, exactly as given (RFC 3977 3.6:
 * two IDs are the same if and only if their octets are), with the table's
 * hash function and seed. */
void fg_history_hash(const struct fg_history *h, const void *id, size_t len,
		     struct fg_history_key *out);

/* Start loading the key's buckets into cache. */
void fg_history_prefetch(const struct fg_history *h, const struct fg_history_key *k);

/* Wait-free. Returns the state and, if `out` is not NULL, fills it. */
enum fg_history_state fg_history_lookup(const struct fg_history *h,
					const struct fg_history_key *k, fg_time_t now,
					struct fg_history_entry *out);

/*
 * A burst: hash every ID (keys[] receives the hashes, for the offer or
 * begin_accept that follows), then per group of 32 prefetch both buckets
 * of each and probe. `out` is required. Returns n.
 */
unsigned fg_history_lookup_burst(const struct fg_history *h, const void *const *ids,
				 const uint16_t *lens, unsigned n, fg_time_t now,
				 struct fg_history_key *keys, struct fg_history_entry *out);

/* ---- transitions ---- */

/*
 * CHECK: insert OFFERED if the ID is absent (or only an expired offer).
 *  0        inserted; *ref holds it (answer 238)
 *  -EEXIST  present; *found says how: live OFFERED or ACCEPTING (431), final (438)
 *  -EAGAIN  another thread is inserting it right now (431)
 *  -ENOSPC  table full under the defer policy (431)
 *  -EINVAL  deadline not in (now, now + FG_HISTORY_OFFER_MAX]
 * `found` may be NULL.
 */
int fg_history_offer(struct fg_history *h, const struct fg_history_key *k, fg_time_t now,
		     fg_time_t deadline, uint32_t token, struct fg_history_ref *ref,
		     struct fg_history_entry *found);

/* Withdraw an offer (the session closes): 0, or -ESTALE if it is no longer
 * that offer (taken over by a transfer, expired and replaced, swept),
 * -EINVAL if ref is not an offer's. */
int fg_history_release(struct fg_history *h, const struct fg_history_ref *ref);

/*
 * TAKETHIS/IHAVE with the article in hand: take the ID into ACCEPTING.
 * Succeeds on ABSENT and on any OFFERED (whoever offered it, expired or
 * not: any session may complete an offered ID).
 *  0        *ref holds the ACCEPTING entry; found->state says what it was
 *           (ABSENT or OFFERED)
 *  -EEXIST  final state: a duplicate (*found)
 *  -EAGAIN  ACCEPTING by another transfer, or PENDING: wait for the
 *           outcome and call again (it becomes final, or ABSENT on abort)
 *  -ENOSPC  table full under the defer policy
 */
int fg_history_begin_accept(struct fg_history *h, const struct fg_history_key *k,
			    fg_time_t now, uint32_t token, struct fg_history_ref *ref,
			    struct fg_history_entry *found);

/* ACCEPTING -> ACCEPTED, REJECTED or SUPERSEDED with the article's date
 * (Injection-Date, else Date) and the local first-seen time.
 * 0, -ESTALE (not our ACCEPTING entry any more), -EINVAL (state not final,
 * first_seen not within [now - FG_HISTORY_MAX_AGE, now + CLOCK_SLACK]). */
int fg_history_finish(struct fg_history *h, const struct fg_history_ref *ref,
		      enum fg_history_state final, fg_time_t article_date,
		      fg_time_t first_seen, fg_time_t now);

/* ACCEPTING -> ABSENT: the article could not be made durable. 0, -ESTALE,
 * -EINVAL (ref is not an ACCEPTING entry's). */
int fg_history_abort(struct fg_history *h, const struct fg_history_ref *ref);

/* Insert a final state if absent (remember a reject, mark an ID superseded,
 * replay a journal). 0, -EEXIST (*found), -EAGAIN, -ENOSPC, -EINVAL. */
int fg_history_insert_final(struct fg_history *h, const struct fg_history_key *k,
			    enum fg_history_state final, fg_time_t article_date,
			    fg_time_t first_seen, fg_time_t now,
			    struct fg_history_entry *found);

/*
 * Remove the final entry of k (an operator's `floodctl forget`, e.g. of a
 * wrongly remembered refusal): 0 with *was (may be NULL) what it held,
 * -ENOENT when absent, -EBUSY while it is in flight (offered, or an
 * article for it being made durable: that transfer decides). Safe while
 * writers run: a CAS on the exact key word, repeated while a relocation
 * shows the entry again.
 */
int fg_history_forget(struct fg_history *h, const struct fg_history_key *k, fg_time_t now,
		      struct fg_history_entry *was);

/* After a dataplane crash, when no writer runs: drop every OFFERED,
 * ACCEPTING and half-done entry (their sessions are gone). Returns the
 * number dropped. Not safe while writers run. */
uint64_t fg_history_clear_transient(struct fg_history *h);

/* ---- a writer that died (Owners, above) ----
 *
 * Its transient entries are resolved in two steps, both safe while other
 * writers run, provided the owner is dead and cannot hand out tokens again
 * until both steps are done (floodctld frees its slot only afterwards):
 *  1. settle: for each article the outbound queue holds, an ACCEPTING entry
 *     of the dead owner becomes ACCEPTED — the article is durable, so it
 *     was accepted, whether or not its 239 went out;
 *  2. drop: every OFFERED, ACCEPTING and deciding entry of the owner that
 *     is left goes, so the ID is free to be offered again at once.
 */

/* A token: an engine's sequence number and its owner. */
static inline uint32_t fg_history_token(uint32_t seq, unsigned owner)
{
	return (seq << FG_HISTORY_OWNER_BITS | (owner & FG_HISTORY_OWNER_NONE)) &
	       ((1u << FG_HISTORY_TOKEN_BITS) - 1);
}

static inline unsigned fg_history_token_owner(uint32_t token)
{
	return token & FG_HISTORY_OWNER_NONE;
}

/* Step 1 for one ID: 0 the owner's ACCEPTING entry became ACCEPTED with
 * these dates; -ENOENT the ID has no ACCEPTING entry of that owner
 * (FG_HISTORY_OWNER_ANY: of any owner); -EINVAL as fg_history_finish. */
int fg_history_settle(struct fg_history *h, const struct fg_history_key *k, unsigned owner,
		      fg_time_t article_date, fg_time_t first_seen, fg_time_t now);

/* Transient entries of one owner, by public state (OFFERED, ACCEPTING,
 * PENDING for an insert still deciding). */
struct fg_history_owned {
	uint64_t offered, accepting, pending;
};

/* Count the owner's transient entries (a full pass over the table). */
void fg_history_count_owned(const struct fg_history *h, unsigned owner,
			    struct fg_history_owned *out);
/* Step 2: drop them; *out (may be NULL) counts what was dropped. Returns
 * the total. */
uint64_t fg_history_drop_owned(struct fg_history *h, unsigned owner,
			       struct fg_history_owned *out);

/* ---- expiry (RFC 5537 3: drop by article date older than the cutoff, or by
 * first-seen older than a retention of at least cutoff + 24 h) ---- */

struct fg_history_sweep {
	/* set by fg_history_sweep_init; `now` may be advanced between steps */
	enum fg_expiry_mode mode;
	fg_time_t now;
	int64_t cutoff;			/* ARTICLE_DATE: drop when article date < now - cutoff */
	int64_t retention;		/* FIRST_SEEN: drop when first-seen < now - retention */
	bool dry_run;			/* count only */
	uint64_t cursor;		/* next bucket */
	bool done;
	/* counts of this pass */
	uint64_t buckets;
	uint64_t kept;			/* entries kept (final, OFFERED, ACCEPTING) */
	uint64_t expired;		/* final entries dropped (or, dry run, that would be) */
	uint64_t expired_offers;	/* OFFERED entries past their deadline */
	uint64_t kept_by_state[FG_HISTORY_STATE__COUNT];
	uint64_t expired_by_state[FG_HISTORY_STATE__COUNT];
};

/* 0, or -EINVAL (negative cutoff/retention, retention beyond
 * FG_HISTORY_RETENTION_MAX, unknown mode). */
int fg_history_sweep_init(struct fg_history_sweep *s, enum fg_expiry_mode mode,
			  fg_time_t now, int64_t cutoff, int64_t retention, bool dry_run);

/* Examine up to `budget` buckets from s->cursor. Returns 1 while the pass
 * has more to do, 0 when it is complete (s->done). Concurrent with every
 * other operation; never blocks anyone. */
int fg_history_sweep_step(struct fg_history *h, struct fg_history_sweep *s, unsigned budget);

/* ---- statistics ---- */

struct fg_history_stats {
	uint64_t slots;			/* capacity */
	uint64_t buckets;
	uint32_t shards;		/* tables of buckets / shards buckets each */
	uint64_t entries;		/* OFFERED + ACCEPTING + final */
	uint64_t by_state[FG_HISTORY_STATE__COUNT];
	uint32_t load_ppm;		/* entries / slots, parts per million */
	unsigned alarm_load_pct;
	bool alarm;			/* load >= alarm threshold */
	enum fg_full_policy full_policy;
	uint64_t evictions;		/* entries dropped by evict-oldest */
	uint64_t insert_failures;	/* inserts refused because the table was full */
	uint64_t moves;			/* entries relocated to make room */
	uint64_t expired;		/* entries dropped by sweeps (not dry runs) */
	size_t region_size;
	uint32_t side_capacity, side_used;
	fg_time_t created;
};

/* Counts are kept in striped counters (exact once writers are quiet). */
void fg_history_stats(const struct fg_history *h, struct fg_history_stats *out);

/* ---- iteration and images ---- */

struct fg_history_record {
	uint64_t bucket;		/* where it is stored */
	uint64_t fingerprint;		/* 54 bits */
	struct fg_history_entry e;
};

typedef int fg_history_iter_fn(void *arg, const struct fg_history_record *r);

/*
 * Call fn for each OFFERED, ACCEPTING and final entry in up to `budget`
 * buckets from *cursor (start at 0), advancing it. Returns 1 while more
 * remain, 0 at the end, or fn's first non-zero return (negative) which
 * stops the walk. Concurrent with writers (an entry moving during the walk
 * may be reported twice or, if it moves behind the cursor, not at all:
 * use fg_history_image_copy for a complete snapshot).
 */
int fg_history_iterate(const struct fg_history *h, uint64_t *cursor, unsigned budget,
		       fg_history_iter_fn *fn, void *arg, fg_time_t now);

/*
 * Copy the live table into `dst` (len >= region size) as a sealed image:
 * header with recounted entries, a CRC-32C per shard (in the header) and
 * one over header and side index. Shard by shard, one at a time, so a
 * worker's lookups meet at most one shard's worth of cache misses it
 * caused. `pause` (may be NULL: at full speed) is called with `arg` and
 * the bytes of buckets copied so far after every MiB of buckets and at
 * the end of each shard: a throttle (snapshot.h's paced write). A pause
 * inside a shard keeps that shard's relocations into its copied part
 * waiting (they are refused, not blocked: see move_allowed); between
 * shards nothing waits. Runs concurrently with writers: relocations that could make the copy
 * miss an entry are held back while it runs, so every entry present for
 * the whole copy is in the image (one that moved may be there twice).
 * 0, -ENOSPC (dst too small).
 */
int fg_history_image_copy(const struct fg_history *h, void *dst, size_t len);
typedef void fg_history_pause_fn(void *arg, uint64_t bytes_done);
int fg_history_image_copy_paced(const struct fg_history *h, void *dst, size_t len,
				fg_history_pause_fn *pause, void *arg);

/* Full integrity check of an image (header as attach, then the counts
 * against the table and the checksum). 0 or -EINVAL with *why. */
int fg_history_image_check(const void *img, size_t len, enum fg_history_error *why);

/* The layout version a region or image says it has (0: not one). */
uint32_t fg_history_layout_of(const void *mem, size_t len);

/* Recompute an image's checksum in place (tools and tests that edit one). */
int fg_history_image_seal(void *img, size_t len);

/* Check `img`, copy it into `mem` (len >= image size), clear transient
 * entries and attach. NULL with *why. An image of layout 2 becomes a
 * layout-3 table of one shard. */
struct fg_history *fg_history_restore(void *mem, size_t len, const void *img,
				      size_t img_len, enum fg_history_error *why);
/* The same on up to `threads` threads, each taking whole shards: copy,
 * checksum, count and clear in one pass over each shard's bytes (so the
 * image is read once, in parallel, which is what a cold disk needs). */
struct fg_history *fg_history_restore_parallel(void *mem, size_t len, const void *img,
					       size_t img_len, unsigned threads,
					       enum fg_history_error *why);

/* ---- version side index (usefor-article 6.13.2.1, seed 000) ----
 * base identifier -> newest known version and its full Message-ID, in a
 * bounded set-associative table; the least recently updated record of a
 * full set is replaced. The caller derives the base (msgid.h,
 * fg_msgid_version_parse). */

/* 0 recorded; -EEXIST an equal or newer version is already known;
 * -ENOSPC no side index; -EINVAL a length out of range; -EAGAIN a
 * concurrent update of the same record won. */
int fg_history_version_note(struct fg_history *h, const char *base, size_t base_len,
			    uint64_t version, const char *id, size_t id_len, fg_time_t now);

/* 0 and the newest version with its ID (NUL-terminated, id_cap >= 251);
 * -ENOENT unknown; -EAGAIN kept changing; -EINVAL bad arguments. */
int fg_history_version_newest(const struct fg_history *h, const char *base, size_t base_len,
			      uint64_t *version, char *id, size_t id_cap, size_t *id_len);

/* ---- testing ---- */

enum fg_history_hook_point {
	FG_HISTORY_HOOK_CLAIM,		/* before the CAS that places a new entry */
	FG_HISTORY_HOOK_PUBLISH,	/* before the CAS that makes it visible */
	FG_HISTORY_HOOK_MOVE,		/* between a relocation's copy and delete */
	FG_HISTORY_HOOK_PROBE,		/* a lookup, between its two buckets */
	FG_HISTORY_HOOK_IMAGE,		/* an image copy, between chunks of buckets */
};
typedef void fg_history_hook_fn(void *arg, enum fg_history_hook_point where);

/* A test-only delay hook, called at the points above (NULL: none, the
 * production setting). Affects only this handle. */
void fg_history_set_test_hook(struct fg_history *h, fg_history_hook_fn *fn, void *arg);

#endif /* FLOODGATE_HISTORY_H */
