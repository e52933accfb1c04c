/* SPDX-License-Identifier: MIT */
/*
 * levers.c — the operator's throttle and per-peer pause on the DPDK
 * dataplane (docs/operations.md, "Levers"). The main lcore owns the
 * state and serves the control requests; each worker picks a change up
 * once a loop: lib/levers/serve.c, levers.h "Serving the levers", which
 * floodgate-host shares.
 */
#include <time.h>

#include "dp.h"

int dp_levers_load(struct dp *dp)
{
	if (dp->passive)
		return 0;
	return fg_levers_pub_load(&dp->levers, DP, dp->cfg->data_dir);
}

void dp_levers_worker(struct dp_worker *w)
{
	fg_levers_pickup(&w->dp->levers, &w->levers_seen, w->e);
}

void dp_levers_tick(struct dp *dp, fg_time_t now)
{
	fg_levers_tick(&dp->levers, now);
}

const char *dp_levers_ctl(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	if (dp->passive) {
		fprintf(f, "passive mode answers no peer: no levers\n");
		return "refused";
	}
	return fg_levers_serve(&dp->levers, dp->cfg, q, f);
}

void dp_levers_json(const struct dp *dp, FILE *f, bool whole)
{
	fg_levers_json(&dp->levers.l, f, whole);
}

void dp_levers_text(const struct dp *dp, FILE *f)
{
	fg_levers_text(&dp->levers.l, f, time(NULL));
}
