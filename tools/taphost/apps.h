/* SPDX-License-Identifier: MIT */
/*
 * apps.h — the TAP harness's TEST applications on top of the TCP module:
 * discard, echo, and a minimal NNTP streaming responder. They exist to
 * drive the TCP module from real clients until the NNTP session engine
 * (issue 4) replaces them; they are not the engine and make no admission
 * decisions beyond "seen before".
 */
#ifndef TAPHOST_APPS_H
#define TAPHOST_APPS_H

#include <stdint.h>
#include <stdio.h>

#include "floodgate/tcp.h"

struct taphost_app_stats {
	uint64_t sessions_open;		/* accepted, not yet closed */
	uint64_t sessions_total;
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t commands;
	uint64_t checks;
	uint64_t articles;		/* TAKETHIS answered 239 */
	uint64_t articles_dup;		/* TAKETHIS answered 439 */
	uint64_t article_bytes;
	uint64_t inflight_ids;		/* articles being received (history "accepting") */
	uint64_t released_on_close;	/* in-flight entries released by on_close */
	uint64_t closes[5];		/* by enum fg_tcp_close_reason */
	uint64_t backpressure;		/* times the app stopped reading: send buffer full */
};

extern struct taphost_app_stats taphost_app_stats;

/* "discard", "echo" or "nntp"; NULL if unknown. */
const struct fg_tcp_app_ops *taphost_app_ops(const char *name);
void taphost_app_print_stats(FILE *f);
void taphost_app_cleanup(void);

#endif
