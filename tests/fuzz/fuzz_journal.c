/* SPDX-License-Identifier: MIT */
/*
 * fuzz_journal.c — libFuzzer target for the journal segment reader, the
 * code restore runs on files that may be torn, damaged or hostile.
 *
 * The input is a segment image. It is scanned from the start, then from an
 * offset taken from its last eight octets; every record handed out must
 * be valid (a final state, or a tombstone), the sound prefix must end
 * inside the image, and the count of records must match the blocks' sizes.
 * A violation aborts, so the fuzzer reports it as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *arg, const struct fg_jrec *r)
{
	uint64_t *n = arg;

	if (!fg_jrec_valid(r))
		abort();
	(*n)++;
	return 0;
}

static void scan(const uint8_t *data, size_t size, uint64_t from)
{
	struct fg_jseg_scan sc;
	uint64_t n = 0;

	if (fg_jseg_scan(data, size, from, check, &n, &sc) < 0)
		return;
	if (n != sc.records || sc.end > size || sc.size != size || (sc.torn && !sc.why))
		abort();
	if (!sc.torn && sc.end != size && from <= size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t from = 0;

	scan(data, size, 0);
	if (size >= 8) {
		memcpy(&from, data + size - 8, 8);
		scan(data, size, from % (size + 64));
	}
	return 0;
}
