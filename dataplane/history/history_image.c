/* SPDX-License-Identifier: MIT */
/*
 * history_image.c — the table as a flat image: copy, check, seal, restore.
 *
 * An image is the region's bytes (same layout, history_int.h) with, in the
 * header, sealed = 1, the recounted entries per state (image_counts, also
 * put into stat stripe 0) and a CRC-32C over the whole image computed with
 * the checksum field zero. CRC-32C detects every error burst of up to 32
 * bits, so any single flipped byte is caught.
 *
 * Copying a live table: buckets are copied in increasing order in chunks
 * of FG_HSNAP_CHUNK, each bucket validated by its change counter (copied
 * again if it moved during the copy). The header's snapshot guard names
 * the chunk being copied, and relocation refuses a move from a bucket not
 * yet copied (>= chunk start) into one possibly copied (< chunk end): that
 * is the one move that could take an entry out of the image's view. Every
 * entry present for the whole copy is therefore in the image; an entry
 * moved the other way may appear twice (both copies identical and final,
 * which lookups and sweeps handle).
 */
#include <errno.h>
#include <string.h>

#include "floodgate/log.h"
#include "history_int.h"

#define CHECKSUM_OFF __builtin_offsetof(struct fg_hregion, checksum)

static uint32_t image_crc(const void *img, size_t size)
{
	static const uint8_t zero[4];
	const uint8_t *p = img;
	uint32_t c = fg_crc32c(0, p, CHECKSUM_OFF);

	c = fg_crc32c(c, zero, sizeof(zero));
	return fg_crc32c(c, p + CHECKSUM_OFF + 4, size - CHECKSUM_OFF - 4);
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

int fg_history_image_copy(const struct fg_history *h, void *dst, size_t len)
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
	for (uint64_t c = 0; c < h->m; c += FG_HSNAP_CHUNK) {
		atomic_store(&h->hdr->snap, FG_HSNAP_ACTIVE | c);
		if (h->hook)
			h->hook(h->hook_arg, FG_HISTORY_HOOK_IMAGE);
		for (uint64_t b = c; b < FG_MIN(c + FG_HSNAP_CHUNK, h->m); b++)
			copy_bucket(&h->b[b], &db[b]);
	}
	atomic_store(&h->hdr->snap, 0);
	if (r->side_capacity)
		copy_side(h, (struct fg_hside_rec *)((uint8_t *)dst + r->side_off));
	fg_hrecount(db, h->m, counts);
	fg_hset_counts(d, counts);
	memcpy(d->image_counts, counts, sizeof(counts));
	d->sealed = 1;
	d->checksum = image_crc(d, size);
	return 0;
}

int fg_history_image_seal(void *img, size_t len)
{
	struct fg_hregion *r = img;

	if (len < FG_HHEADER || ((uintptr_t)img & 7) || r->magic != FG_HMAGIC ||
	    r->region_size < FG_HHEADER || r->region_size > len)
		return -EINVAL;
	r->checksum = image_crc(img, r->region_size);
	return 0;
}

/* The image's own consistency: counts recorded = counts found. */
static enum fg_history_error check_counts(const struct fg_hregion *r)
{
	const struct fg_hbucket *b = (const struct fg_hbucket *)((const uint8_t *)r + r->buckets_off);
	uint64_t counts[8];

	fg_hrecount(b, r->n_buckets, counts);
	for (unsigned st = 0; st < 8; st++) {
		int64_t striped = 0;

		for (unsigned s = 0; s < FG_HSTRIPES; s++)
			striped += atomic_load_explicit(&r->stripe[s].n[st], memory_order_relaxed);
		if (counts[st] != r->image_counts[st] ||
		    (fg_hs_published(st) && striped != (int64_t)counts[st]))
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

int fg_history_image_check(const void *img, size_t len, enum fg_history_error *why)
{
	const struct fg_hregion *r = img;
	enum fg_history_error e = FG_HISTORY_E_ALIGN;

	if (((uintptr_t)img & 63) == 0)
		e = fg_hcheck_header(r, len);
	if (e == FG_HISTORY_E_OK && r->sealed != 1)
		e = FG_HISTORY_E_CHECKSUM;
	if (e == FG_HISTORY_E_OK && image_crc(img, r->region_size) != r->checksum)
		e = FG_HISTORY_E_CHECKSUM;
	if (e == FG_HISTORY_E_OK)
		e = check_counts(r);
	if (e == FG_HISTORY_E_OK)
		e = check_side(r);
	if (why)
		*why = e;
	return e == FG_HISTORY_E_OK ? 0 : -EINVAL;
}

struct fg_history *fg_history_restore(void *mem, size_t len, const void *img,
				      size_t img_len, enum fg_history_error *why)
{
	const struct fg_hregion *ir = img;
	struct fg_hregion *r = mem;
	struct fg_history *h;
	enum fg_history_error e;

	if (fg_history_image_check(img, img_len, &e))
		goto out_refuse;
	e = FG_HISTORY_E_SHORT;
	if (len < ir->region_size)
		goto out_refuse;
	e = FG_HISTORY_E_ALIGN;
	if ((uintptr_t)mem & 63)
		goto out_refuse;
	memcpy(mem, img, ir->region_size);
	r->sealed = 0;
	r->checksum = 0;
	memset(r->image_counts, 0, sizeof(r->image_counts));
	h = fg_history_attach(mem, len, why);
	if (h)
		fg_history_clear_transient(h);
	return h;

out_refuse:
	if (why)
		*why = e;
	FG_LOG_ERR("history", "restore refused: %s", fg_history_error_str(e));
	return NULL;
}
