/* SPDX-License-Identifier: MIT */
/*
 * levers.h — the dataplane's operator levers and their journal.
 *
 * The state: innd's throttle (a reason; empty when not throttled) and the
 * peers paused, each until a time (floodctl pause PEER [--for DURATION]).
 * The engines act on it (session.h: fg_engine_throttle, fg_engine_pause);
 * the dataplane's main lcore owns it, and every change is journaled before
 * the operator's answer, so a restarted dataplane comes back in the same
 * state.
 *
 * JOURNAL  <data-dir>/levers.journal, append-only text, one change a line,
 * each line fsynced before the answer, after a first line naming the
 * format's version (docs/compat.md; a file without it is read as version 1,
 * a newer version is refused, -EPROTONOSUPPORT, with a message):
 *
 *   floodgate-levers 1
 *   <unix seconds> throttle <reason...>
 *   <unix seconds> go
 *   <unix seconds> pause <peer> <until, unix seconds>
 *   <unix seconds> resume <peer>
 *
 * Loading replays it in order; a pause whose time is over is dropped; a
 * line that does not parse (the torn end of a crash) is counted and
 * skipped.
 */
#ifndef FLOODGATE_LEVERS_H
#define FLOODGATE_LEVERS_H

#include <stdbool.h>
#include <stddef.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/session.h"

#define FG_LEVERS_FILE "levers.journal"
#define FG_LEVERS_MAGIC "floodgate-levers"
#define FG_LEVERS_VERSION 1
#define FG_LEVERS_PAUSE_DEFAULT (24 * 3600)	/* floodctl pause without --for */

struct fg_levers {
	char throttle[FG_ENGINE_REASON_MAX + 1];	/* "": not throttled */
	unsigned n_pauses;
	struct {
		char peer[FG_CONFIG_NAME_MAX];
		fg_time_t until;
	} pause[FG_CONFIG_MAX_PEERS];
};

/* One change. throttle: NULL or "" is `go`; -EINVAL for a reason the
 * engine would refuse. pause: until 0 is `resume` (-ENOENT when not
 * paused); -EINVAL for a bad name, -ENOSPC when the table is full. */
int fg_levers_throttle(struct fg_levers *l, const char *reason);
int fg_levers_pause(struct fg_levers *l, const char *peer, fg_time_t until);
/* Drop the pauses over by `now`; their number. */
unsigned fg_levers_expire(struct fg_levers *l, fg_time_t now);

/* Append one change (the journal line without its time) and fsync: 0 or
 * -errno. The file is created, mode 0600, with the directory fsynced. */
int fg_levers_journal(const char *dir, fg_time_t now, const char *change);

/* Replay the journal into a zeroed `l`: 0 (no file: nothing), or -errno.
 * *bad (may be NULL) counts lines that did not parse. */
int fg_levers_load(const char *dir, fg_time_t now, struct fg_levers *l, unsigned *bad);

/* Make an engine's levers those of `l`. */
void fg_levers_apply(const struct fg_levers *l, struct fg_engine *e);

#endif /* FLOODGATE_LEVERS_H */
