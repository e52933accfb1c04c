/* SPDX-License-Identifier: MIT */
/*
 * host.h — floodgate-host: the session engine on kernel sockets.
 *
 *   main.c    options, the history region, threads, signals, counters out
 *   worker.c  one thread: epoll loop, listeners, one engine and its sink
 *   conn.c    one connection: receive chunks, the engine's transport ops
 *   ctlink.c  --floodctld: floodctld's region, a writer slot per thread
 *   outbound.c  the durable queue, its writer and the relay (docs/relay.md)
 *
 * Threads share nothing but the configuration (read-only) and the history
 * table; each has its own SO_REUSEPORT listeners, so the kernel spreads
 * connections over them, and its own engine, sink and counter blocks.
 */
#ifndef FLOODGATE_HOST_H
#define FLOODGATE_HOST_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/queue.h"
#include "floodgate/region.h"
#include "floodgate/relay.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"

#define HOST_COMP "host"
#define HOST_CHUNK (64u << 10)		/* receive buffer */
#define HOST_MAX_CHUNKS 64		/* unconsumed chunks per connection */
#define HOST_LINGER_NS (2ull * 1000000000ull)

enum host_sink { HOST_SINK_MEMORY = 0, HOST_SINK_NULL = 1, HOST_SINK_QUEUE = 2 };

struct host_opts {
	const char *config;
	struct fg_endpoint listen[FG_CONFIG_MAX_LISTEN];
	unsigned n_listen;		/* 0: the config's */
	unsigned threads;
	const char *shm;		/* NULL: a private region */
	enum host_sink sink;
	bool sink_given;		/* --sink; else queue iff the config has a [downstream] */
	struct fg_sink_mem_params mem;
	const char *stats_file;
	unsigned max_sessions;
	uint64_t history_capacity;	/* 0: the config's */
	bool floodctld;			/* use floodctld's region */
	int log_level;
};

/* A received buffer; the engine may hold it for a sink (refs). */
struct host_chunk {
	unsigned refs;
	uint32_t len;			/* octets filled */
	uint8_t data[HOST_CHUNK];
};

struct host_worker;

struct host_conn {
	struct host_worker *w;
	int fd;
	struct fg_session *s;		/* NULL once reported closed */
	struct host_chunk *q[HOST_MAX_CHUNKS];	/* unconsumed, oldest first */
	unsigned qn;
	uint32_t q_off;			/* consumed octets of q[0] */
	unsigned holds;
	bool paused;			/* the engine stopped reading */
	bool want_out;			/* EPOLLOUT wanted */
	bool eof;			/* read() returned 0 */
	bool eof_told;			/* fg_session_eof() called */
	bool close_asked;		/* the engine called close() */
	bool lingering;			/* shut down for writing, draining */
	bool detached;			/* the engine is done with it */
	bool on_work;			/* in the worker's work list */
	bool reoffer;			/* resumed: offer the queue again */
	uint32_t events;		/* registered epoll events */
	uint64_t linger_until;
	struct host_conn *work_next;
	struct host_conn *all_next, *all_prev;
};

struct host_worker {
	unsigned index;
	const struct host_opts *o;
	const struct fg_config *cfg;
	struct fg_history *h;
	int ep, wake;			/* epoll, eventfd */
	int lfd[FG_CONFIG_MAX_LISTEN];
	unsigned n_lfd;
	struct fg_engine *e;
	const struct fg_sink_ops *sink_ops;
	void *sink;
	struct fg_nntp_counters *stats;		/* this thread's block */
	struct fg_nntp_counters *peer_stats;	/* n_peer + 1 */
	struct fg_relay_asker *asker;		/* warm-up questions (outbound.c) */
	struct fg_engine_warmup warm;
	fg_time_t warm_until;
	struct host_conn *work;			/* connections with deferred work */
	struct host_conn *all;			/* every live connection */
	unsigned n_conns;
	int stop;			/* set by main (atomic) */
	int rc;
	/* --floodctld (ctlink.c) */
	struct fg_region_writer *slot;
	struct fg_engine_hooks hooks;
	int peer_map[FG_CONFIG_MAX_PEERS];	/* config peer -> region peer, -1 */
	uint64_t next_publish;
	/* for the queue's journal gate (outbound.c): records placed in the
	 * slot's journal ring, and whether the last one was refused (the
	 * engine then holds records back) */
	_Atomic uint64_t jpushed;
	_Atomic bool jbacklog;
};

/* The queue and the relay (outbound.c); their threads' counter blocks. */
struct host_outbound {
	struct fg_queue *q;
	struct fg_relay *relay;
	fg_time_t warm_until;		/* warm-up on before this; 0: off */
	struct fg_nntp_counters qstats, rstats;
	/* --floodctld: the journal gate over the workers' slots, and a slot of
	 * its own for the queue's and the relay's counters */
	struct fg_queue_gate gate;
	struct host_worker *ws;
	unsigned nw;
	uint64_t *gate_pushed;		/* per worker, at the last barrier */
	uint64_t gate_gen;
	struct fg_region_writer *slot;
	struct fg_region *region;
	uint64_t next_publish;
};

/* outbound.c */
int host_outbound_open(struct host_outbound *ob, const struct fg_config *cfg, bool cold_start,
		       struct fg_region *region);
void host_outbound_workers(struct host_outbound *ob, struct host_worker *ws, unsigned nw);
void host_outbound_publish(struct host_outbound *ob, uint64_t now_ns);
const struct fg_engine_warmup *host_outbound_warmup(struct host_outbound *ob,
						    struct host_worker *w);
int host_outbound_start(struct host_outbound *ob);
void host_outbound_stop(struct host_outbound *ob);
void host_outbound_close(struct host_outbound *ob);
struct fg_queue_sink *host_outbound_sink(struct host_outbound *ob, struct host_worker *w);
void host_outbound_write(struct host_outbound *ob, FILE *f);

/* conn.c */
extern const struct fg_session_transport host_transport;
struct host_conn *host_conn_new(struct host_worker *w, int fd);
void host_conn_readable(struct host_conn *c);
void host_conn_writable(struct host_conn *c);
void host_conn_error(struct host_conn *c);
void host_conn_work(struct host_conn *c);
void host_conn_linger_check(struct host_conn *c, uint64_t now_ns);
void host_conn_force_close(struct host_conn *c);

/* ctlink.c */
int host_ctl_attach(const struct fg_config *cfg, struct fg_region **out);
int host_ctl_worker(struct host_worker *w, struct fg_region *region,
		    struct fg_engine_hooks *hooks);
void host_ctl_publish(struct host_worker *w, uint64_t now_ns);
void host_ctl_worker_done(struct host_worker *w);

/* worker.c */
int host_worker_init(struct host_worker *w);
void *host_worker_run(void *arg);
void host_worker_fini(struct host_worker *w);
void host_worker_wake(struct host_worker *w);
void host_worker_defer(struct host_worker *w, struct host_conn *c);
void host_worker_update(struct host_conn *c);
void host_clock(fg_time_t *now, uint64_t *now_ns);

#endif /* FLOODGATE_HOST_H */
