/* SPDX-License-Identifier: MIT */
/*
 * host.h — floodgate-host: the session engine on kernel sockets.
 *
 *   main.c    options, the history region, threads, signals, counters out
 *   worker.c  one thread: epoll loop, listeners, one engine and its sink
 *   conn.c    one connection: receive chunks, the engine's transport ops
 *   ctl.c     the control socket floodctld forwards to, the operator levers
 *   restoring.c  while floodctld restores the history: 400 to every session
 *
 * With --floodctld each worker claims a writer slot in floodctld's region
 * and links its engine to it (slotlink.h); accepted articles go to the
 * outbound side (outbound.h: the queue, its writer, the relay) when the
 * sink is the queue.
 *
 * Threads share nothing but the configuration (read-only) and the history
 * table; each has its own SO_REUSEPORT listeners, so the kernel spreads
 * connections over them, and its own engine, sink and counter blocks.
 */
#ifndef FLOODGATE_HOST_H
#define FLOODGATE_HOST_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/config.h"
#include "floodgate/history.h"
#include "floodgate/levers.h"
#include "floodgate/outbound.h"
#include "floodgate/peerlim.h"
#include "floodgate/qwriter.h"
#include "floodgate/region.h"
#include "floodgate/session.h"
#include "floodgate/sink.h"
#include "floodgate/slotlink.h"
#include "floodgate/wiring.h"

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
	const char *ctl_socket;		/* NULL: dataplane.sock beside floodctld's, with --floodctld */
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
	struct fg_nntp_session *s;		/* NULL once reported closed */
	struct fg_endpoint local;		/* the listen address it came in on */
	struct host_chunk *q[HOST_MAX_CHUNKS];	/* unconsumed, oldest first */
	unsigned qn;
	uint32_t q_off;			/* consumed octets of q[0] */
	unsigned holds;
	bool paused;			/* the engine stopped reading */
	bool want_out;			/* EPOLLOUT wanted */
	bool eof;			/* read() returned 0 */
	bool eof_told;			/* fg_nntp_session_eof() called */
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
	struct fg_endpoint lep[FG_CONFIG_MAX_LISTEN];	/* lfd[i]'s address */
	unsigned n_lfd;
	struct fg_wiring *wire;			/* sink, writer slot, engine (wiring.h) */
	struct fg_nntp_engine *e;		/* the wiring's engine */
	struct fg_nntp_counters *stats;		/* this thread's block */
	struct fg_nntp_counters *peer_stats;	/* n_peer + 1 */
	struct host_conn *work;			/* connections with deferred work */
	struct host_conn *all;			/* every live connection */
	unsigned n_conns;
	int stop;			/* set by main (atomic) */
	int rc;
	/* --floodctld: the engine's link to its writer slot (the wiring's) */
	struct fg_slotlink *link;
	uint64_t next_publish;
	/* the operator levers (ctl.c), and the generation applied */
	struct fg_levers_pub *levers;
	unsigned long levers_seen;
	/* a reload (ctl.c): the configuration to switch to and the zeroed
	 * peer array for it; the worker switches at its next round, leaves
	 * the old array in next_peers and clears next_cfg (release) */
	_Atomic(const struct fg_config *) next_cfg;
	struct fg_nntp_counters *next_peers;
	int switch_rc;
};

/* The control socket and the levers (ctl.c). */
struct host_ctl {
	int fd;				/* -1: no socket */
	char path[FG_CONFIG_PATH_MAX + 32];
	struct fg_levers_pub levers;
	struct fg_config *cfg;		/* the running one (under lock) */
	const struct fg_config *first;	/* the outbound side's: kept until exit */
	char config_path[PATH_MAX];	/* "": the embedded default; realpath's size */
	pthread_mutex_t lock;		/* levers, reload, the counters' dump */
	struct host_worker *ws;
	unsigned nw;
	struct fg_peerlim *lim;		/* the peers' limits, the box's */
	bool listen_fixed;		/* --listen: the configuration's are not used */
	pthread_t th;
	bool running;
	bool opened;			/* the lock is initialised */
	int stop;			/* atomic */
};

/* conn.c */
extern const struct fg_nntp_session_transport host_transport;
struct host_conn *host_conn_new(struct host_worker *w, int fd);
void host_conn_readable(struct host_conn *c);
void host_conn_writable(struct host_conn *c);
void host_conn_error(struct host_conn *c);
void host_conn_work(struct host_conn *c);
void host_conn_linger_check(struct host_conn *c, uint64_t now_ns);
void host_conn_force_close(struct host_conn *c);

/* worker.c */
int host_worker_init(struct host_worker *w);
/* A non-blocking SO_REUSEPORT listener on ep: the fd or -errno. */
int host_listen_on(const struct fg_endpoint *ep);
bool host_endpoint_eq(const struct fg_endpoint *a, const struct fg_endpoint *b);
/* floodctld is restoring the history: greet every new session with 400
 * and close it until the region is ready, then attach (restoring.c).
 * NULL at once if the region is not being built, or if it stops being
 * built without becoming one this process can attach to. */
struct fg_region *host_wait_restore(const struct host_opts *o, const struct fg_config *cfg);
void *host_worker_run(void *arg);
void host_worker_fini(struct host_worker *w);
void host_worker_wake(struct host_worker *w);
void host_worker_defer(struct host_worker *w, struct host_conn *c);
void host_worker_update(struct host_conn *c);
void host_clock(fg_time_t *now, uint64_t *now_ns);
void host_worker_publish(struct host_worker *w, uint64_t now_ns);

/* ctl.c: replay the levers journal into every worker's reach, and listen
 * (with --floodctld or --ctl-socket); 0 or -errno, logged. Then serve
 * from a thread of its own until closed. */
int host_ctl_open(struct host_ctl *c, const struct host_opts *o, struct fg_config *cfg,
		  struct host_worker *ws, unsigned nw);
int host_ctl_start(struct host_ctl *c);
void host_ctl_close(struct host_ctl *c);	/* again: nothing */

/* ctl.c: reload the configuration (FILE, or the one started with) on
 * every worker (arg: the host_ctl); the report to `report`; 0, -EINVAL
 * (the file refused: nothing changed) or another -errno. */
int host_reload(void *arg, const char *file, FILE *report);

#endif /* FLOODGATE_HOST_H */
