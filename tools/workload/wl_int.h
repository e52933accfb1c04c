/* SPDX-License-Identifier: MIT */
/*
 * wl_int.h — the workload model's private layout, shared by model.c and
 * article.c only.
 */
#ifndef FLOODGATE_WL_INT_H
#define FLOODGATE_WL_INT_H

#include "workload/workload.h"

/* Pregenerated body lines, already dot-stuffed (wire form), CRLF-ended. */
struct fg_wl_pool {
	char *buf;
	uint32_t *line_off;	/* n_lines + 1 offsets; the last is the end */
	uint32_t n_lines;
};

struct fg_wl {
	struct fg_wl_params p;
	struct fg_wl_pool text, binary;
	uint32_t *offers[FG_WL_MAX_PEERS];
	uint64_t n_offers[FG_WL_MAX_PEERS];
	uint64_t class_count[FG_WL__CLASSES];
};

int fg_wl_pools_init(struct fg_wl *wl);
void fg_wl_pools_free(struct fg_wl *wl);
void fg_wl_pick_body(const struct fg_wl *wl, struct fg_wl_article *a, uint32_t size, uint64_t h);
void fg_wl_make_ids(const struct fg_wl *wl, struct fg_wl_article *a, uint64_t h);

#endif
