/* SPDX-License-Identifier: MIT */
/*
 * warmup.h — the warm-up file, read and written by both planes: the
 * dataplane's outbound side starts a warm-up at a cold start, floodctld at
 * a restore from nothing, and both read where it ends. lib/warmup.
 */
#ifndef FLOODGATE_WARMUP_H
#define FLOODGATE_WARMUP_H

#include "floodgate/common.h"

/*
 * The warm-up period (docs/relay.md): it starts at a cold start — an empty
 * history and no snapshot — and lasts [persistence] warmup. Its end is kept
 * in <data-dir>/warmup.fgw (a checksummed slot, written to a temporary name,
 * synced and renamed), so that a restart during the period goes on with it
 * and a restart after it does not begin another.
 */
#define FG_WARMUP_MAGIC "FGWARMUP"
int fg_warmup_begin(const char *dir, fg_time_t until);
/* 0 and *until, -ENOENT (no warm-up was ever started here), or
 * -EPROTONOSUPPORT: a newer build wrote it (logged; refuse to start). */
int fg_warmup_until(const char *dir, fg_time_t *until);

#endif /* FLOODGATE_WARMUP_H */
