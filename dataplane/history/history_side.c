/* SPDX-License-Identifier: MIT */
/*
 * history_side.c — the version side index (usefor-article draft 6.13.2.1,
 * seed 000): base identifier -> newest known version and its full ID, so
 * that `floodctl lookup` of an old version can name its newest successor.
 *
 * A fixed array of records inside the region (544 bytes each, counted in
 * the region size), 4-way set associative: the set is chosen by the
 * table's keyed hash of the base, so a peer cannot crowd one set. A full
 * set replaces its least recently updated record: the index is bounded and
 * forgets the quietest bases first.
 *
 * Each record is a seqlock: writers (rare: an accepted versioned article)
 * take it by CAS of an even seq to odd, write, and release it with seq + 2;
 * a writer that loses the CAS returns -EAGAIN instead of waiting. Readers
 * copy and retry a few times while seq is odd or changed. Strings live in
 * 64-bit words so that every access is atomic. Lookups compare the whole
 * base, so a hash collision never names a wrong successor.
 */
#include <errno.h>
#include <string.h>

#include "history_int.h"

#define READ_TRIES 8

struct side_view {
	uint64_t seq, version, stamp, lens;
	uint64_t base[FG_HSIDE_WORDS];
	uint64_t id[FG_HSIDE_WORDS];
};

static uint32_t base_tag(const struct fg_history *h, const char *base, size_t len, uint64_t *set)
{
	uint64_t o[2];

	fg_hhash(h, base, len, o);
	*set = fg_hrange(o[0], h->side_sets);
	return (uint32_t)(o[1] >> 32);
}

/* A stable copy of record r; false if it kept changing. */
static bool side_read(const struct fg_hside_rec *r, struct side_view *v)
{
	for (int t = 0; t < READ_TRIES; t++) {
		v->seq = atomic_load_explicit(&r->seq, memory_order_acquire);
		/* data stores are releases after seq went odd: reading any of
		 * them (acquire) makes the second seq read see the odd value */
		v->version = atomic_load_explicit(&r->version, memory_order_acquire);
		v->stamp = atomic_load_explicit(&r->stamp, memory_order_acquire);
		v->lens = atomic_load_explicit(&r->lens, memory_order_acquire);
		for (unsigned j = 0; j < FG_HSIDE_WORDS; j++) {
			v->base[j] = atomic_load_explicit(&r->base[j], memory_order_acquire);
			v->id[j] = atomic_load_explicit(&r->id[j], memory_order_acquire);
		}
		if (!(v->seq & 1) && atomic_load(&r->seq) == v->seq)
			return true;
	}
	return false;
}

static void pack(uint64_t *words, const char *s, size_t len)
{
	memset(words, 0, FG_HSIDE_WORDS * 8);
	memcpy(words, s, len);
}

static bool same_base(const struct side_view *v, uint32_t tag, const char *base, size_t len)
{
	uint64_t w[FG_HSIDE_WORDS];

	if (!v->seq || (v->lens & 0xffff) != len || (uint32_t)(v->lens >> 32) != tag)
		return false;
	pack(w, base, len);
	return memcmp(w, v->base, sizeof(w)) == 0;
}

static bool lens_ok(size_t base_len, size_t id_len)
{
	return base_len && base_len <= FG_HISTORY_ID_MAX && id_len && id_len <= FG_HISTORY_ID_MAX;
}

int fg_history_version_note(struct fg_history *h, const char *base, size_t base_len,
			    uint64_t version, const char *id, size_t id_len, fg_time_t now)
{
	struct fg_hside_rec *set, *victim = NULL;
	struct side_view v;
	uint64_t sidx, victim_seq = 0, victim_stamp = UINT64_MAX, words[FG_HSIDE_WORDS];
	uint32_t tag;

	if (!h->side)
		return -ENOSPC;
	if (!lens_ok(base_len, id_len))
		return -EINVAL;
	tag = base_tag(h, base, base_len, &sidx);
	set = &h->side[sidx * FG_HWAYS];
	for (unsigned w = 0; w < FG_HWAYS; w++) {
		if (!side_read(&set[w], &v))
			return -EAGAIN;
		if (same_base(&v, tag, base, base_len)) {
			if (v.version >= version)
				return -EEXIST;
			victim = &set[w];
			victim_seq = v.seq;
			break;
		}
		/* an empty record (stamp 0) wins, else the least recently updated */
		if ((v.seq ? v.stamp + 1 : 0) <= victim_stamp) {
			victim = &set[w];
			victim_seq = v.seq;
			victim_stamp = v.seq ? v.stamp + 1 : 0;
		}
	}
	if (!atomic_compare_exchange_strong(&victim->seq, &victim_seq, victim_seq + 1))
		return -EAGAIN;
	atomic_store_explicit(&victim->version, version, memory_order_release);
	atomic_store_explicit(&victim->stamp, (uint64_t)now, memory_order_release);
	atomic_store_explicit(&victim->lens, base_len | id_len << 16 | (uint64_t)tag << 32,
			      memory_order_release);
	pack(words, base, base_len);
	for (unsigned j = 0; j < FG_HSIDE_WORDS; j++)
		atomic_store_explicit(&victim->base[j], words[j], memory_order_release);
	pack(words, id, id_len);
	for (unsigned j = 0; j < FG_HSIDE_WORDS; j++)
		atomic_store_explicit(&victim->id[j], words[j], memory_order_release);
	atomic_store_explicit(&victim->seq, victim_seq + 2, memory_order_release);
	return 0;
}

int fg_history_version_newest(const struct fg_history *h, const char *base, size_t base_len,
			      uint64_t *version, char *id, size_t id_cap, size_t *id_len)
{
	struct side_view v;
	uint64_t sidx;
	uint32_t tag;

	if (!h->side)
		return -ENOENT;
	if (!lens_ok(base_len, 1) || id_cap <= FG_HISTORY_ID_MAX)
		return -EINVAL;
	tag = base_tag(h, base, base_len, &sidx);
	for (unsigned w = 0; w < FG_HWAYS; w++) {
		size_t n;

		if (!side_read(&h->side[sidx * FG_HWAYS + w], &v))
			return -EAGAIN;
		if (!same_base(&v, tag, base, base_len))
			continue;
		n = FG_MIN((size_t)(v.lens >> 16 & 0xffff), (size_t)FG_HISTORY_ID_MAX);
		memcpy(id, v.id, n);
		id[n] = '\0';
		*version = v.version;
		if (id_len)
			*id_len = n;
		return 0;
	}
	return -ENOENT;
}
