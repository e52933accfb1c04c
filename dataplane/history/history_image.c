/* SPDX-License-Identifier: MIT */
/*
 * history_image.c — the table as a flat image: copy, check, seal, restore.
 *
 * An image is the region's bytes (same layout, history_int.h) with, in the
 * header, sealed = 1, the recounted entries per state (image_counts, also
 * put into stat stripe 0), a CRC-32C of each shard's buckets (shard_crc)
 * and a CRC-32C of the header page and the side index (checksum, computed
 * with that field zero; the header holds the shard CRCs, so it covers
 * them). CRC-32C detects every error burst of up to 32 bits, so any single
 * flipped byte is caught. A layout-2 image has one CRC over everything
 * and is read as one shard.
 *
 * Copying a live table (one shard at a time, so a live worker shares the
 * memory bus with a copy of one shard at a time, never more):
 *  1. per shard, its buckets in increasing order in chunks of
 *     FG_HSNAP_CHUNK, each bucket validated by its change counter (copied
 *     again if it moved during the copy), the chunk's CRC taken while it
 *     is still in cache;
 *  2. the caller's pause between shards (a throttle);
 *  3. the side index, the recount, the header CRC.
 * The header's snapshot guard names the chunk being copied, and relocation
 * refuses a move from a bucket not yet copied (>= chunk start) into one
 * possibly copied (< chunk end): that is the one move that could take an
 * entry out of the image's view. Every entry present for the whole copy is
 * therefore in the image; an entry moved the other way may appear twice
 * (both copies identical and final, which lookups and sweeps handle).
 *
 * Restoring (fg_history_restore_parallel): threads take whole shards; for
 * each chunk of a shard a thread copies it, checksums, counts and clears
 * its transient entries while it is in cache, so the image is read once,
 * in parallel. Nothing is attached unless every CRC and count agrees.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "floodgate/log.h"
#include "history_int.h"

#define CHECKSUM_OFF __builtin_offsetof(struct fg_hregion, checksum)
/* Buckets a restore thread copies, checks and clears at once (64 KiB). */
#define RESTORE_CHUNK 1024u

static uint32_t header_crc(const void *img)
{
	static const uint8_t zero[4];
	const uint8_t *p = img;
	uint32_t c = fg_crc32c(0, p, CHECKSUM_OFF);

	c = fg_crc32c(c, zero, sizeof(zero));
	return fg_crc32c(c, p + CHECKSUM_OFF + 4, FG_HHEADER - CHECKSUM_OFF - 4);
}

/* The image checksum: layout 2 over everything; layout 3 over the header
 * page and the side index. */
static uint32_t image_crc(const void *img, size_t size)
{
	const struct fg_hregion *r = img;
	const uint8_t *p = img;
	uint32_t c = header_crc(img);

	if (r->version == FG_HISTORY_LAYOUT_UNSHARDED)
		return fg_crc32c(c, p + FG_HHEADER, size - FG_HHEADER);
	return fg_crc32c(c, p + r->side_off, size - r->side_off);
}

static const struct fg_hbucket *shard_buckets_of(const struct fg_hregion *r, uint32_t s)
{
	return (const struct fg_hbucket *)((const uint8_t *)r + r->buckets_off) +
	       s * fg_hms_of(r);
}

static uint32_t shard_crc(const struct fg_hregion *r, uint32_t s)
{
	return fg_crc32c(0, shard_buckets_of(r, s), fg_hms_of(r) * sizeof(struct fg_hbucket));
}

static void copy_bucket(const struct fg_hbucket *src, struct fg_hbucket *dst)
{
	for (;;) {
		uint32_t c = atomic_load(&src->ctr);

		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load(&src->key[i]);

			atomic_store_explicit(&dst->key[i], w, memory_order_relaxed);
			atomic_store_explicit(&dst->aux[i],
					      atomic_load_explicit(&src->aux[i], memory_order_acquire),
					      memory_order_relaxed);
		}
		if (atomic_load(&src->ctr) == c) {
			atomic_store_explicit(&dst->ctr, c, memory_order_relaxed);
			return;
		}
	}
}

static bool side_lens_ok(uint64_t lens)
{
	uint64_t b = lens & 0xffff, i = (lens >> 16) & 0xffff;

	return b && b <= FG_HISTORY_ID_MAX && i && i <= FG_HISTORY_ID_MAX;
}

static void copy_side(const struct fg_history *h, struct fg_hside_rec *dst)
{
	for (uint32_t i = 0; i < h->hdr->side_capacity; i++) {
		const struct fg_hside_rec *s = &h->side[i];
		uint64_t seq = 0;

		for (int t = 0; t < 8; t++) {
			seq = atomic_load_explicit(&s->seq, memory_order_acquire);
			dst[i].version = atomic_load_explicit(&s->version, memory_order_acquire);
			dst[i].stamp = atomic_load_explicit(&s->stamp, memory_order_acquire);
			dst[i].lens = atomic_load_explicit(&s->lens, memory_order_acquire);
			for (unsigned j = 0; j < FG_HSIDE_WORDS; j++) {
				dst[i].base[j] = atomic_load_explicit(&s->base[j], memory_order_acquire);
				dst[i].id[j] = atomic_load_explicit(&s->id[j], memory_order_acquire);
			}
			if (!(seq & 1) && atomic_load(&s->seq) == seq)
				break;
			seq = 0;	/* kept changing: leave the record out */
		}
		if (seq && !side_lens_ok(atomic_load(&dst[i].lens)))
			seq = 0;	/* not a record anyone wrote: leave it out */
		dst[i].seq = seq;
		if (!seq)
			memset(&dst[i], 0, sizeof(dst[i]));
	}
}

int fg_history_image_copy_paced(const struct fg_history *h, void *dst, size_t len,
				fg_history_pause_fn *pause, void *arg)
{
	const struct fg_hregion *r = h->hdr;
	struct fg_hregion *d = dst;
	struct fg_hbucket *db;
	uint64_t counts[8];
	size_t size = r->region_size;

	if (len < size || ((uintptr_t)dst & 63))
		return -ENOSPC;
	memset(d, 0, FG_HHEADER);
	memcpy(d, r, __builtin_offsetof(struct fg_hregion, reserved0));
	d->full_policy = atomic_load(&r->full_policy);
	d->alarm_pct = atomic_load(&r->alarm_pct);
	d->evictions = atomic_load(&r->evictions);
	d->insert_failures = atomic_load(&r->insert_failures);
	d->moves = atomic_load(&r->moves);
	d->expired = atomic_load(&r->expired);
	db = (struct fg_hbucket *)((uint8_t *)dst + r->buckets_off);
	for (uint64_t s = 0; s <= h->shard_mask; s++) {
		uint64_t end = (s + 1) * h->ms;
		uint32_t crc = 0;

		for (uint64_t c = s * h->ms; c < end; c += FG_HSNAP_CHUNK) {
			uint64_t n = FG_MIN(FG_HSNAP_CHUNK, end - c);

			atomic_store(&h->hdr->snap, FG_HSNAP_ACTIVE | c);
			if (h->hook)
				h->hook(h->hook_arg, FG_HISTORY_HOOK_IMAGE);
			for (uint64_t b = c; b < c + n; b++)
				copy_bucket(&h->b[b], &db[b]);
			crc = fg_crc32c(crc, &db[c], n * sizeof(*db));
			/* mid-shard, the cursor stays up: only this shard's
			 * relocations into its copied part wait for us */
			if (pause && (c + n) % FG_HSNAP_PACE_BUCKETS == 0 && c + n < end)
				pause(arg, (c + n) * sizeof(*db));
		}
		d->shard_crc[s] = crc;
		atomic_store(&h->hdr->snap, 0);
		if (pause)
			pause(arg, end * sizeof(*db));
	}
	if (r->side_capacity)
		copy_side(h, (struct fg_hside_rec *)((uint8_t *)dst + r->side_off));
	fg_hrecount(db, h->m, counts);
	fg_hset_counts(d, counts);
	memcpy(d->image_counts, counts, sizeof(counts));
	d->sealed = 1;
	d->checksum = image_crc(d, size);
	return 0;
}

int fg_history_image_copy(const struct fg_history *h, void *dst, size_t len)
{
	return fg_history_image_copy_paced(h, dst, len, NULL, NULL);
}

/* Shard geometry sane enough to read shard CRCs over (seal needs this
 * before any check has run). */
static bool shards_readable(const struct fg_hregion *r)
{
	uint32_t n = fg_hshards_of(r);

	return n >= 1 && n <= FG_HISTORY_SHARDS_MAX && r->buckets_off == FG_HHEADER &&
	       fg_hms_of(r) <= r->n_buckets && r->n_buckets <= (1ull << 40) &&
	       fg_hms_of(r) * n == r->n_buckets &&
	       r->side_off == FG_HHEADER + r->n_buckets * sizeof(struct fg_hbucket) &&
	       r->side_off <= r->region_size;
}

int fg_history_image_seal(void *img, size_t len)
{
	struct fg_hregion *r = img;

	if (len < FG_HHEADER || ((uintptr_t)img & 7) || r->magic != FG_HMAGIC ||
	    r->region_size < FG_HHEADER || r->region_size > len)
		return -EINVAL;
	if (r->version != FG_HISTORY_LAYOUT_UNSHARDED) {
		if (!shards_readable(r))
			return -EINVAL;
		for (uint32_t s = 0; s < r->shards; s++)
			r->shard_crc[s] = shard_crc(r, s);
	}
	r->checksum = image_crc(img, r->region_size);
	return 0;
}

/* Counts recorded in an image against counts found in its table. */
static enum fg_history_error counts_agree(const struct fg_hregion *r, const uint64_t counts[8])
{
	for (unsigned st = 0; st < 8; st++) {
		uint64_t striped = 0;

		/* a modular sum, as fg_history_stats's: an image's stripes are
		 * not trusted yet, and their sum must not be undefined */
		for (unsigned s = 0; s < FG_HSTRIPES; s++)
			striped += (uint64_t)atomic_load_explicit(&r->stripe[s].n[st],
								  memory_order_relaxed);
		if (counts[st] != r->image_counts[st] ||
		    (fg_hs_published(st) && striped != counts[st]))
			return FG_HISTORY_E_COUNTS;
	}
	return FG_HISTORY_E_OK;
}

static enum fg_history_error check_side(const struct fg_hregion *r)
{
	const struct fg_hside_rec *s = (const struct fg_hside_rec *)((const uint8_t *)r + r->side_off);

	for (uint32_t i = 0; i < r->side_capacity; i++) {
		uint64_t lens = atomic_load_explicit(&s[i].lens, memory_order_relaxed);
		uint64_t seq = atomic_load_explicit(&s[i].seq, memory_order_relaxed);

		if ((seq & 1) || (seq && !side_lens_ok(lens)))
			return FG_HISTORY_E_GEOMETRY;
	}
	return FG_HISTORY_E_OK;
}

/* What can be checked without reading the buckets: the header as attach
 * checks it, the seal, the header (and side index) checksum, the side
 * index. A layout-2 image's checksum covers its buckets too. */
static enum fg_history_error check_outline(const struct fg_hregion *r, size_t len)
{
	enum fg_history_error e = FG_HISTORY_E_ALIGN;

	if (((uintptr_t)r & 63) == 0)
		e = fg_hcheck_header(r, len, true);
	if (e == FG_HISTORY_E_OK && r->sealed != 1)
		e = FG_HISTORY_E_CHECKSUM;
	if (e == FG_HISTORY_E_OK)
		for (uint32_t s = fg_hshards_of(r); s < FG_HISTORY_SHARDS_MAX; s++)
			if (r->version != FG_HISTORY_LAYOUT_UNSHARDED && r->shard_crc[s])
				e = FG_HISTORY_E_GEOMETRY;
	if (e == FG_HISTORY_E_OK && image_crc(r, r->region_size) != r->checksum)
		e = FG_HISTORY_E_CHECKSUM;
	if (e == FG_HISTORY_E_OK)
		e = check_side(r);
	return e;
}

int fg_history_image_check(const void *img, size_t len, enum fg_history_error *why)
{
	const struct fg_hregion *r = img;
	enum fg_history_error e = check_outline(r, len);

	if (e == FG_HISTORY_E_OK && r->version != FG_HISTORY_LAYOUT_UNSHARDED)
		for (uint32_t s = 0; s < r->shards && e == FG_HISTORY_E_OK; s++)
			if (shard_crc(r, s) != r->shard_crc[s])
				e = FG_HISTORY_E_CHECKSUM;
	if (e == FG_HISTORY_E_OK) {
		uint64_t counts[8];

		fg_hrecount(shard_buckets_of(r, 0), r->n_buckets, counts);
		e = counts_agree(r, counts);
	}
	if (why)
		*why = e;
	return e == FG_HISTORY_E_OK ? 0 : -EINVAL;
}

/* ---- parallel restore ---- */

struct restore_job {
	const struct fg_hregion *img;
	struct fg_hbucket *dst;		/* the region's buckets */
	uint64_t ms;
	uint32_t shards;
	bool crc_check;			/* layout 3: each shard against its CRC */
	_Atomic uint32_t next;		/* next shard to take */
	_Atomic bool bad;
};

struct restore_part {
	struct restore_job *job;
	uint64_t found[8];		/* states in the image */
	uint64_t kept[8];		/* states after clearing transient entries */
	pthread_t tid;
};

/* Copy, checksum, count and clear n buckets (nobody else runs). */
static uint32_t restore_chunk(struct restore_part *p, const struct fg_hbucket *src,
			      struct fg_hbucket *dst, uint64_t n, uint32_t crc)
{
	memcpy(dst, src, n * sizeof(*dst));
	if (p->job->crc_check)
		crc = fg_crc32c(crc, dst, n * sizeof(*dst));
	for (uint64_t j = 0; j < n; j++)
		for (unsigned i = 0; i < FG_HSLOTS; i++) {
			uint64_t w = atomic_load_explicit(&dst[j].key[i], memory_order_relaxed);
			unsigned st = fg_hw_state(w);

			p->found[st]++;
			/* fg_history_clear_transient, chunk by chunk: a FREE word
			 * with bits set is damage, made a real FREE */
			if (w != 0 && !fg_hs_final(st)) {
				atomic_store_explicit(&dst[j].key[i], 0, memory_order_relaxed);
				atomic_fetch_add_explicit(&dst[j].ctr, 1, memory_order_relaxed);
				st = FG_HS_FREE;
			}
			p->kept[st]++;
		}
	return crc;
}

static void *restore_worker(void *arg)
{
	struct restore_part *p = arg;
	struct restore_job *j = p->job;
	const struct fg_hbucket *src = shard_buckets_of(j->img, 0);
	uint32_t s;

	while ((s = atomic_fetch_add(&j->next, 1)) < j->shards && !atomic_load(&j->bad)) {
		uint64_t end = (uint64_t)(s + 1) * j->ms;
		uint32_t crc = 0;

		for (uint64_t b = (uint64_t)s * j->ms; b < end; b += RESTORE_CHUNK) {
			uint64_t n = FG_MIN(RESTORE_CHUNK, end - b);

			crc = restore_chunk(p, &src[b], &j->dst[b], n, crc);
		}
		if (j->crc_check && crc != j->img->shard_crc[s])
			atomic_store(&j->bad, true);
	}
	return NULL;
}

/* Run the job on up to `threads` threads (the caller's among them). */
static int restore_run(struct restore_job *j, unsigned threads, uint64_t found[8],
		       uint64_t kept[8])
{
	struct restore_part part[FG_HISTORY_SHARDS_MAX];
	unsigned started = 1;

	threads = FG_MAX(1u, FG_MIN(threads, j->shards));
	memset(part, 0, sizeof(part[0]) * threads);
	for (unsigned t = 0; t < threads; t++)
		part[t].job = j;
	for (; started < threads; started++)
		if (pthread_create(&part[started].tid, NULL, restore_worker, &part[started]))
			break;	/* fewer threads: the others take more shards */
	restore_worker(&part[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(part[t].tid, NULL);
	for (unsigned t = 0; t < started; t++)
		for (unsigned st = 0; st < 8; st++) {
			found[st] += part[t].found[st];
			kept[st] += part[t].kept[st];
		}
	return atomic_load(&j->bad) ? -EINVAL : 0;
}

struct fg_history *fg_history_restore_parallel(void *mem, size_t len, const void *img,
					       size_t img_len, unsigned threads,
					       enum fg_history_error *why)
{
	const struct fg_hregion *ir = img;
	struct fg_hregion *r = mem;
	struct restore_job job;
	uint64_t found[8] = { 0 }, kept[8] = { 0 };
	enum fg_history_error e = check_outline(ir, img_len);

	if (e != FG_HISTORY_E_OK)
		goto out_refuse;
	e = FG_HISTORY_E_SHORT;
	if (len < ir->region_size)
		goto out_refuse;
	e = FG_HISTORY_E_ALIGN;
	if ((uintptr_t)mem & 63)
		goto out_refuse;
	job = (struct restore_job){ .img = ir, .ms = fg_hms_of(ir), .shards = fg_hshards_of(ir),
				    .crc_check = ir->version != FG_HISTORY_LAYOUT_UNSHARDED,
				    .dst = (struct fg_hbucket *)((uint8_t *)mem + ir->buckets_off) };
	e = FG_HISTORY_E_CHECKSUM;
	if (restore_run(&job, threads, found, kept) < 0)
		goto out_clear;
	e = counts_agree(ir, found);
	if (e != FG_HISTORY_E_OK)
		goto out_clear;
	memcpy(mem, img, FG_HHEADER);
	memcpy((uint8_t *)mem + ir->side_off, (const uint8_t *)img + ir->side_off,
	       ir->region_size - ir->side_off);
	r->version = FG_HLAYOUT;
	r->shards = job.shards;
	r->shard_buckets = job.ms;
	r->sealed = 0;
	r->checksum = 0;
	memset(r->shard_crc, 0, sizeof(r->shard_crc));
	memset(r->image_counts, 0, sizeof(r->image_counts));
	fg_hset_counts(r, kept);
	return fg_history_attach(mem, len, why);

out_clear:
	/* leave no half-restored table that looks like one */
	memset(mem, 0, FG_HHEADER);
out_refuse:
	if (why)
		*why = e;
	FG_LOG_ERR("history", "restore refused: %s", fg_history_error_str(e));
	return NULL;
}

struct fg_history *fg_history_restore(void *mem, size_t len, const void *img,
				      size_t img_len, enum fg_history_error *why)
{
	return fg_history_restore_parallel(mem, len, img, img_len, 1, why);
}
