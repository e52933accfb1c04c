/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dups.c — feedgen's offer multiplicity, "K" or "K:W,...",
 * (fg_wl_params_set_dups, workload.h) from arbitrary bytes. Beyond "no
 * crash": the answer is 0 or -EINVAL; a refused spec leaves the
 * parameters as they were; an accepted one gives 1 <= K <= peers' limit,
 * at most FG_WL_DUPS_MAX distinct Ks, positive weights that sum to 1, and
 * dups the largest K; written back (fg_wl_dups_format) it reads the same
 * (weights to the format's 4 decimals, when none rounds to 0).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_valid(const struct fg_wl_params *p)
{
	double sum = 0.0;
	unsigned kmax = 0;

	if (p->dups == 0 || p->dups > FG_WL_MAX_PEERS || p->n_dups > FG_WL_DUPS_MAX)
		abort();
	for (unsigned j = 0; j < p->n_dups; j++) {
		if (p->dups_k[j] == 0 || p->dups_k[j] > FG_WL_MAX_PEERS || !(p->dups_w[j] > 0.0))
			abort();
		for (unsigned i = 0; i < j; i++)
			if (p->dups_k[i] == p->dups_k[j])
				abort();
		sum += p->dups_w[j];
		kmax = p->dups_k[j] > kmax ? p->dups_k[j] : kmax;
	}
	if (p->n_dups && (fabs(sum - 1.0) > 1e-9 || kmax != p->dups))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_wl_params p, before, again;
	/* the option's value is a C string: an octet 0 ends it */
	char *spec = strndup((const char *)data, size), buf[FG_WL_DUPS_MAX * 24];
	bool small = false;
	int rc;

	if (!spec)
		return 0;
	fg_wl_params_default(&p);
	before = p;
	rc = fg_wl_params_set_dups(&p, spec);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc != 0 && memcmp(&before, &p, sizeof(p)) != 0)
		abort();
	if (rc == 0) {
		check_valid(&p);
		if ((size_t)fg_wl_dups_format(&p, buf, sizeof(buf)) >= sizeof(buf))
			abort();
		for (unsigned j = 0; j < p.n_dups; j++)
			small |= p.dups_w[j] < 0.00005;
		fg_wl_params_default(&again);
		if (!small) {
			if (fg_wl_params_set_dups(&again, buf) != 0 || again.dups != p.dups ||
			    again.n_dups != p.n_dups)
				abort();
			for (unsigned j = 0; j < p.n_dups; j++)
				if (again.dups_k[j] != p.dups_k[j] ||
				    fabs(again.dups_w[j] - p.dups_w[j]) > 1e-3)
					abort();
		}
	}
	free(spec);
	return 0;
}
