/* SPDX-License-Identifier: MIT */
/*
 * levers.h — the dataplane's operator levers and their journal.
 *
 * The state: innd's throttle (a reason; empty when not throttled) and the
 * peers paused, each until a time (floodctl pause PEER [--for DURATION]).
 * The engines act on it (session.h: fg_nntp_engine_throttle, fg_nntp_engine_pause);
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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/session.h"

#define FG_LEVERS_FILE "levers.journal"
#define FG_LEVERS_MAGIC "floodgate-levers"
#define FG_LEVERS_VERSION 1
#define FG_LEVERS_PAUSE_DEFAULT (24 * 3600)	/* floodctl pause without --for */

struct fg_levers {
	char throttle[FG_NNTP_ENGINE_REASON_MAX + 1];	/* "": not throttled */
	unsigned n_pauses;
	struct fg_nntp_pause pause[FG_CONFIG_MAX_PEERS];
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
void fg_levers_apply(const struct fg_levers *l, struct fg_nntp_engine *e);

/*
 * Serving the levers (lib/levers/serve.c), the same on both dataplanes:
 *
 *   1. One thread owns the state (the DPDK main lcore, floodgate-host's
 *      control thread). A request on the control socket (throttle REASON,
 *      go, pause PEER [SECONDS], resume PEER) changes a copy, journals the
 *      change (fsynced), and only then publishes the copy and answers: a
 *      change the journal could not keep is refused, and nothing changes.
 *   2. Publication is a sequence lock: the generation is odd while the
 *      owner copies the state in, even after.
 *   3. Each engine's thread, once a loop, compares the generation with the
 *      one it applied; when it moved and is even, it copies the state,
 *      checks the generation again, and applies the copy to its engine.
 *   4. Once a second the owner drops the pauses that are over, logs it and
 *      publishes (the engines stop honouring them at their time by
 *      themselves; this keeps status and the logs true).
 *   5. At start the journal is replayed before the engines run.
 */
struct fg_levers_pub {
	struct fg_levers l;		/* the owner's; engines copy it (step 3) */
	_Atomic unsigned long gen;	/* odd while being written */
	const char *comp;		/* log component (a string constant) */
	/* where levers.journal is: a copy, as a reload frees the configuration
	 * it came from (data-dir itself needs a restart to change) */
	char data_dir[FG_CONFIG_PATH_MAX];
};

struct fg_ctl_req;

/* Step 5: replay the journal, log what it holds: 0 or -errno (logged). */
int fg_levers_pub_load(struct fg_levers_pub *p, const char *comp, const char *data_dir);
/* Step 1: one control request (throttle, go, pause, resume); its body to
 * f; NULL, or the reply's error code. `cfg` names the peers a pause may
 * name. */
const char *fg_levers_serve(struct fg_levers_pub *p, const struct fg_config *cfg,
			    const struct fg_ctl_req *q, FILE *f);
/* Step 3: an engine's thread, each loop; *seen is its generation. */
void fg_levers_pickup(struct fg_levers_pub *p, unsigned long *seen, struct fg_nntp_engine *e);
/* Step 4: the owner, once a second. */
void fg_levers_tick(struct fg_levers_pub *p, fg_time_t now);
/* The state as `"throttled": REASON|null, "paused": [{"peer","until"}]`,
 * inside an object (whole: as one object of its own, with a newline). */
void fg_levers_json(const struct fg_levers *l, FILE *f, bool whole);
/* The state as lines for people (nothing when no lever is pulled). */
void fg_levers_text(const struct fg_levers *l, FILE *f, fg_time_t now);
/* Until when `peer` is paused; 0 when it is not. */
fg_time_t fg_levers_paused_until(const struct fg_levers *l, const char *peer);

#endif /* FLOODGATE_LEVERS_H */
