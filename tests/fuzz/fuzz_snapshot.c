/* SPDX-License-Identifier: MIT */
/*
 * fuzz_snapshot.c — libFuzzer target for the snapshot reader and restore:
 * the header check, then, for a header that passes, the history image
 * check and a full restore into a fresh region-sized buffer, then a
 * lookup and a walk of the restored table. A file that passes every check
 * must restore, and a restored table must answer; anything else aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/history.h"
#include "floodgate/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *arg, const struct fg_history_record *r)
{
	(void)r;
	(*(uint64_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_snap_info info;
	enum fg_history_error why;
	struct fg_history_key k;
	struct fg_history *h;
	const char *bad;
	uint64_t cursor = 0, n = 0;
	void *mem;

	if (fg_snapshot_header(data, size, &info, &bad) < 0)
		return 0;
	if (fg_history_image_check(data + FG_SNAP_HEADER, info.image_size, &why) < 0)
		return 0;
	mem = aligned_alloc(64, (info.image_size + 63) / 64 * 64);
	if (!mem)
		return 0;
	h = fg_history_restore(mem, info.image_size, data + FG_SNAP_HEADER, info.image_size, &why);
	if (!h)
		abort();	/* it passed image_check: it must restore */
	fg_history_hash(h, "<fuzz@snapshot>", 15, &k);
	fg_history_lookup(h, &k, info.created, NULL);
	while (fg_history_iterate(h, &cursor, 1024, count, &n, info.created) == 1)
		;
	fg_history_detach(h);
	free(mem);
	return 0;
}
