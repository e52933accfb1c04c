/* SPDX-License-Identifier: MIT */
/*
 * failpoint.h — named kill points for the crash tests, compiled into every
 * build and inert unless armed.
 *
 * FG_FAILPOINT=NAME[:N] in a process's environment, read once when the
 * process starts, arms the point NAME: the Nth time (default the first)
 * the code passes it, the process writes the line
 *
 *     failpoint NAME fired
 *
 * to its stderr and SIGKILLs itself — a crash at exactly that step, which
 * the test proves happened by that line. Unarmed (production), a point
 * costs one test of a global that is false. An unknown NAME, or a count
 * that is not a positive number, stops the process at start (abort, with
 * a line saying why): a misspelt point would otherwise never fire and a
 * crash test pass without its crash. docs/relay.md, "Crash points", lists
 * the points and the step each one marks.
 */
#ifndef FLOODGATE_FAILPOINT_H
#define FLOODGATE_FAILPOINT_H

#include <stdbool.h>

/* The points, each with the step it marks (docs/relay.md). */
#define FG_FAILPOINTS(X)                                                                  \
	X("ack-before-forward", "an article for an acknowledging downstream, before the "    \
	  "relay sends it")                                                                 \
	X("ack-forwarded", "an article written whole to its downstreams, no answer read yet") \
	X("ack-answered", "the acknowledging downstream's 239 read, the peer's 239 not yet "  \
	  "sent")                                                                           \
	X("ack-spilled", "an article the end-to-end sink put on the queue, synced, its 239 "  \
	  "not yet sent")

/* True once a point is armed; false in production. */
extern bool fg_failpoint_on;

/* Arm the point of spec "NAME[:N]": 0, or -EINVAL (unknown name, bad
 * count). NULL or "" disarms. Called at start with $FG_FAILPOINT. */
int fg_failpoint_arm(const char *spec);

/* The cold half: count a pass of `name`; on the armed pass, the line and
 * SIGKILL. Never returns then. */
void fg_failpoint_hit(const char *name);

static inline void fg_failpoint(const char *name)
{
	if (fg_failpoint_on)
		fg_failpoint_hit(name);
}

#endif /* FLOODGATE_FAILPOINT_H */
