/* SPDX-License-Identifier: MIT */
/*
 * taphost.h — fg-taphost's state, shared by its two files: taphost.c
 * (options, the TAP device, the loop, shutdown) and stack.c (building and
 * tearing down what one DPDK worker core runs — history, sink, engine,
 * net, TCP, tcpsess — and the counter dump).
 */
#ifndef TAPHOST_H
#define TAPHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/memport.h"
#include "floodgate/net.h"
#include "floodgate/session.h"
#include "floodgate/tcp.h"
#include "floodgate/tcpsess.h"
#include "floodgate/wiring.h"

#define TH_COMP "taphost"

struct th_opts {
	const char *tap, *config, *stats_file;
	bool null_sink;
	unsigned bufs;			/* memport buffers (the "mbuf pool") */
	struct fg_net_config net;
	struct fg_tcp_config tcp;	/* listen comes from the config's [site] listen */
	struct fg_net_faults faults;
};

struct th {
	struct th_opts o;
	int fd;				/* the TAP device */
	struct fg_config *cfg;
	void *hist_mem;
	size_t hist_len;
	struct fg_history *history;
	struct fg_nntp_counters *stats;	/* the one block: net, TCP, tcpsess, engine */
	struct fg_wiring *wire;		/* sink and engine (wiring.h) */
	struct fg_nntp_engine *e;	/* the wiring's engine */
	struct fg_memport *mp;
	struct fg_net *net;
	struct fg_tcp *tcp;
	struct fg_tcpsess *ts;
	uint64_t tap_write_fail, tap_reads;
};

/* stack.c */
int th_stack_create(struct th *t);
void th_stack_destroy(struct th *t);
/* Every module's counters as "name value" lines (docs/tcp.md lists them). */
void th_write_counters(FILE *f, const struct th *t);

#endif /* TAPHOST_H */
