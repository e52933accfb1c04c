/* SPDX-License-Identifier: MIT */
/*
 * fuzz_shadowrep.c — shadow mode's report file (shadowrep.h) from
 * arbitrary bytes: `floodctl shadow` reads what a dataplane (of any build)
 * left in the data directory. Beyond "no crash, no overread": a parse that
 * succeeds gives at most FG_SHADOW_SAMPLES samples a class, each ID a
 * terminated printable string, and writing the report back and parsing
 * that gives the same figures.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/shadowrep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct fg_shadow_report *a, const struct fg_shadow_report *b)
{
	if (memcmp(a->n, b->n, sizeof(a->n)) || memcmp(a->refused_took, b->refused_took,
							 sizeof(a->refused_took)) ||
	    a->not_compared != b->not_compared || a->followups != b->followups ||
	    a->gaps != b->gaps || a->flows != b->flows || a->unanchored != b->unanchored)
		return false;
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		if (a->n_samples[c] != b->n_samples[c])
			return false;
		for (unsigned i = 0; i < a->n_samples[c]; i++) {
			const struct fg_shadow_sample *x = &a->samples[c][i], *y = &b->samples[c][i];

			if (strcmp(x->id, y->id) || x->ours != y->ours || x->theirs != y->theirs ||
			    x->reason != y->reason)
				return false;
		}
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fg_shadow_report r, back;
	char *text = NULL;
	size_t len = 0;
	unsigned line;
	FILE *f;

	if (fg_shadow_report_parse((const char *)data, size, &r, &line) != 0)
		return 0;
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		if (r.n_samples[c] > FG_SHADOW_SAMPLES)
			abort();
		for (unsigned i = 0; i < r.n_samples[c]; i++)
			if (!memchr(r.samples[c][i].id, 0, sizeof(r.samples[c][i].id)))
				abort();
	}
	f = open_memstream(&text, &len);
	if (!f || fg_shadow_report_write(&r, 1790000000, f) != 0 || fclose(f) != 0)
		abort();
	if (fg_shadow_report_parse(text, len, &back, &line) != 0 || !same(&r, &back))
		abort();
	free(text);
	return 0;
}
