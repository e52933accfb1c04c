/* SPDX-License-Identifier: MIT */
/*
 * fuzz_history_image.c — arbitrary bytes as a history image must be
 * refused, or restore and attach to a table on which every operation is
 * memory-safe. Never a crash, never a sanitizer report.
 *
 * The first byte picks how the rest is used:
 *   mode 0  the bytes are an image, as is (the checksum turns away almost
 *           every mutation: this exercises the header checks);
 *   mode 1  the same, but resealed first (the checksum made right), so the
 *           checks behind it (counts, side records) and attach/restore see
 *           corrupt content;
 *   mode 2  a program: build a small table from the bytes (inserts, offers,
 *           transfers, side records), copy it to an image — which must pass
 *           the check and restore with the same counts — then flip bytes of
 *           the image as the rest of the input says, and go on as mode 0;
 *   mode 3  as mode 2, resealed after the flips (as mode 1).
 * Then any image that passes the check is restored and used, and any
 * region that attaches is used as is (attach reads only the header: a
 * table whose slots hold anything must still be safe to use).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "floodgate/log.h"

#define T0 1767225600
#define MAX_IMAGE (1u << 20)

static uint8_t *alloc64(size_t n)
{
	uint8_t *p = aligned_alloc(64, (n + 64) & ~(size_t)63);

	if (!p)
		abort();
	return p;
}

static void quiet(enum fg_log_level level, const char *component, const char *msg, void *arg)
{
	(void)level, (void)component, (void)msg, (void)arg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fg_log_set_sink(quiet, NULL);
	return 0;
}

static int count_cb(void *arg, const struct fg_history_record *r)
{
	++*(uint64_t *)arg;
	return r->e.state == FG_HISTORY_ABSENT ? -1 : 0;	/* never: absent is not walked */
}

/* Everything a caller may do to a table; the point is that it is safe. */
static void exercise(struct fg_history *h)
{
	struct fg_history_stats st;
	struct fg_history_sweep sw;
	struct fg_history_ref ref;
	struct fg_history_entry e;
	uint64_t cursor = 0, n = 0, v;
	char id[256];
	size_t len;

	fg_history_stats(h, &st);
	for (unsigned i = 0; i < 16; i++) {
		struct fg_history_key k;
		int l = snprintf(id, sizeof(id), "<%u@fuzz>", i);

		fg_history_hash(h, id, (size_t)l, &k);
		fg_history_lookup(h, &k, T0, &e);
		if (fg_history_offer(h, &k, T0, T0 + 5, i, &ref, &e) == 0)
			fg_history_release(h, &ref);
		if (fg_history_begin_accept(h, &k, T0, i, &ref, &e) == 0)
			(i & 1 ? fg_history_abort(h, &ref)
			       : fg_history_finish(h, &ref, FG_HISTORY_ACCEPTED, T0, T0, T0));
		fg_history_insert_final(h, &k, FG_HISTORY_REJECTED, T0, T0, T0, &e);
	}
	if (fg_history_sweep_init(&sw, FG_EXPIRY_ARTICLE_DATE, T0 + 86400 * 30, 86400 * 10, 0, false) == 0)
		while (fg_history_sweep_step(h, &sw, 97))
			;
	while (fg_history_iterate(h, &cursor, 64, count_cb, &n, T0) == 1)
		;
	fg_history_version_note(h, "<v@fuzz>", 8, 2, "<v$v=2$x@fuzz>", 14, T0);
	fg_history_version_newest(h, "<v@fuzz>", 8, &v, id, sizeof(id), &len);
	fg_history_stats(h, &st);
}

/* Mode 2/3: build a table from the input; returns its image (size *len),
 * and how many input bytes the program used. */
static uint8_t *synthesize(const uint8_t *p, size_t n, size_t *len, size_t *used)
{
	struct fg_history_params prm = { .capacity = 5 + (n ? p[0] : 0) * 5u,
					 .side_capacity = n > 1 ? p[1] % 9u : 0,
					 .full_policy = n > 2 ? p[2] & 1u : 0,
					 /* 1, 2, 4 or 8 shards */
					 .shards = n > 2 ? 1u << (p[2] >> 1 & 3u) : 1u,
					 .alarm_load_pct = 90, .now = T0 };
	size_t size = fg_history_region_size_sharded(prm.capacity, prm.side_capacity, prm.shards);
	uint8_t *mem = alloc64(size), *img = alloc64(size);
	struct fg_history *h = fg_history_create(mem, size, &prm);
	struct fg_history_stats before, after;
	struct fg_history_ref ref;
	size_t i = 3;

	/* ops: 3 bytes each (op, key, time) until a 0xff */
	for (; i + 3 <= n && p[i] != 0xff; i += 3) {
		struct fg_history_key k;
		fg_time_t t = T0 - (fg_time_t)p[i + 2] * 3600;

		fg_history_hash(h, &p[i + 1], 1, &k);
		switch (p[i] % 5) {
		case 0: fg_history_offer(h, &k, T0, T0 + 1 + p[i + 2] % 60, p[i + 2], &ref, NULL); break;
		case 1: fg_history_begin_accept(h, &k, T0, p[i + 2], &ref, NULL); break;
		case 2: fg_history_insert_final(h, &k, FG_HISTORY_ACCEPTED + p[i] % 3, t - p[i + 1], t, T0, NULL); break;
		case 3: fg_history_version_note(h, (const char *)&p[i + 1], 1, p[i + 2],
						(const char *)&p[i + 1], 2, t); break;
		default: {
			struct fg_history_sweep sw;

			fg_history_sweep_init(&sw, FG_EXPIRY_FIRST_SEEN, T0, 0, p[i + 2] * 3600ll, false);
			while (fg_history_sweep_step(h, &sw, 7))
				;
		}
		}
	}
	*used = i + 1 < n ? i + 1 : n;
	if (fg_history_image_copy(h, img, size) || fg_history_image_check(img, size, NULL))
		abort();	/* an image the table wrote must always pass */
	fg_history_stats(h, &before);
	fg_history_detach(h);
	h = fg_history_restore(mem, size, img, size, NULL);
	if (!h)
		abort();
	fg_history_stats(h, &after);
	/* restore drops only the sessions' entries */
	if (after.by_state[FG_HISTORY_ACCEPTED] != before.by_state[FG_HISTORY_ACCEPTED] ||
	    after.by_state[FG_HISTORY_REJECTED] != before.by_state[FG_HISTORY_REJECTED] ||
	    after.by_state[FG_HISTORY_OFFERED] || after.by_state[FG_HISTORY_ACCEPTING])
		abort();
	fg_history_detach(h);
	free(mem);
	*len = size;
	return img;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *img = NULL, *mem = NULL;
	struct fg_history *h;
	size_t len = 0, used = 0;
	unsigned mode;

	if (size < 1 || size > MAX_IMAGE)
		return 0;
	mode = data[0] & 3;
	data++, size--;
	if (mode >= 2) {
		img = synthesize(data, size, &len, &used);
		/* the rest: (offset lo, offset hi, xor) triples */
		for (size_t i = used; i + 3 <= size; i += 3)
			img[(data[i] | (size_t)data[i + 1] << 8) % len] ^= data[i + 2];
	} else {
		len = size;
		img = alloc64(len);
		memcpy(img, data, len);
	}
	if (mode & 1)
		fg_history_image_seal(img, len);
	mem = alloc64(len);
	h = fg_history_restore(mem, len, img, len, NULL);
	if (h) {
		exercise(h);
		fg_history_detach(h);
	}
	h = fg_history_attach(img, len, NULL);
	if (h) {
		exercise(h);
		fg_history_detach(h);
	}
	free(mem);
	free(img);
	return 0;
}
