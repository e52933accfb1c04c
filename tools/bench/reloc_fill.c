/* SPDX-License-Identifier: MIT */
/*
 * reloc_fill.c — how full the history gets before its first failed insert,
 * for the relocation path length this build was compiled with
 * (FG_HBFS_DEPTH, dataplane/history/history_int.h). tools/bench/
 * reloc_table.sh builds it once per length and writes docs/history.md's
 * relocation table from the lines it prints.
 *
 *   reloc_fill [--slots N] [--seed N]
 *
 * One table of N slots (default 10 M, one shard), filled from one thread
 * with distinct Message-IDs until an insert fails; prints one JSON line:
 * the path length, the slots, the entries in at the first failure, the
 * load, and the bytes an entry (the region's size over those entries).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "floodgate/history.h"
#include "../../dataplane/history/history_int.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slots", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct fg_history_params p = { .capacity = 10000000, .shards = 1,
					.full_policy = FG_FULL_DEFER, .alarm_load_pct = 90,
					.now = 1700000000 };
	struct fg_history_stats st;
	struct fg_history *h;
	uint64_t seed = 1, n = 0;
	size_t len;
	void *mem;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			p.capacity = strtoull(optarg, NULL, 0);
		else if (c == 'r')
			seed = strtoull(optarg, NULL, 0);
		else {
			fprintf(stderr, "usage: reloc_fill [--slots N] [--seed N]\n");
			return 2;
		}
	}
	for (unsigned i = 0; i < sizeof(p.seed); i++)
		p.seed[i] = (uint8_t)(seed >> (8 * (i % 8)) ^ i);
	len = fg_history_region_size_sharded(p.capacity, 0, 1);
	mem = len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		  : MAP_FAILED;
	if (mem == MAP_FAILED) {
		fprintf(stderr, "reloc_fill: no region for %" PRIu64 " slots\n", p.capacity);
		return 1;
	}
	h = fg_history_create(mem, len, &p);
	if (!h)
		return 1;
	fg_history_stats(h, &st);
	for (;; n++) {
		struct fg_history_key key;
		char id[64];
		int l = snprintf(id, sizeof(id), "<%" PRIu64 ".%" PRIu64 "@reloc.test>", n, seed);

		fg_history_hash(h, id, (size_t)l, &key);
		if (fg_history_insert_final(h, &key, FG_HISTORY_ACCEPTED, p.now, p.now, p.now, NULL))
			break;
	}
	printf("{\"depth\": %u, \"slots\": %" PRIu64 ", \"entries\": %" PRIu64
	       ", \"load\": %.4f, \"bytes_per_entry\": %.2f, \"region\": %zu}\n",
	       (unsigned)FG_HBFS_DEPTH, st.slots, n, (double)n / (double)st.slots,
	       (double)len / (double)n, len);
	return 0;
}
