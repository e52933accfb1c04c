/* SPDX-License-Identifier: MIT */
/*
 * cluster.h — a small Redis Cluster client: the slot map followed by our
 * own code on top of hiredis 0.14's protocol reader (which knows nothing
 * of clusters). lib/cluster/ (both planes: floodctl forget deletes keys),
 * docs/scale.md "Several boxes".
 *
 * One client belongs to one thread (the box's cluster thread, never a
 * worker lcore); nothing in it takes a lock. The protocol, per request:
 *
 *   1. submit: the key's slot (CRC16 of the key, or of its {hash tag},
 *      mod 16384) picks the master from the slot map; the command is
 *      appended to that node's connection (pipelined: many requests in
 *      flight per node, answered in order). A slot the map does not know
 *      yet goes to any connected node, which answers MOVED.
 *   2. run: poll() over the nodes' sockets, write what is queued, read
 *      what came, through the guard (respguard.h: a reply past its
 *      bounds closes the connection, counted in replies_refused, before
 *      hiredis allocates what it declares). A reply completes the oldest
 *      request of its node.
 *   3. "-MOVED slot host:port": the slot lives elsewhere now (a failover,
 *      a resharding): the map entry is changed, the request sent there,
 *      and a fresh map asked for (CLUSTER SLOTS). "-ASK slot host:port":
 *      the slot is being migrated: ASKING plus the request to that node,
 *      once, the map unchanged. At most MAX_REDIRECTS hops per request.
 *   4. A request not answered within its timeout completes with
 *      -ETIMEDOUT; its late reply is read and dropped. A connection whose
 *      oldest request is two timeouts old, or that fails, is closed: its
 *      requests complete with -ECONNRESET (never resent: the caller
 *      decides without the cluster), the map is asked for again, and the
 *      node is reconnected by itself, at most once per timeout.
 *
 * Time is CLOCK_MONOTONIC read by the client itself.
 */
#ifndef FLOODGATE_CLUSTER_H
#define FLOODGATE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"

#define FG_CLUSTER_SLOTS 16384u
#define FG_CLUSTER_MAX_NODES 64u

/* The cluster key of a Message-ID: "fg:" and the 32 hex digits of its
 * SipHash-2-4-128 under a key derived from the site's secret
 * ([cluster] secret, the same on every box). */
#define FG_CLUSTER_KEY_LEN 35
void fg_cluster_key(const char *secret, const char *id, size_t len,
		    char out[FG_CLUSTER_KEY_LEN + 1]);

/* The key's slot, with Redis Cluster's hash tags ("{tag}rest"). */
unsigned fg_cluster_slot(const void *key, size_t len);
/* CRC16-CCITT (XMODEM), the cluster's key hash. */
uint16_t fg_cluster_crc16(const void *buf, size_t len);

struct fg_cluster;

struct fg_cluster_params {
	const char *seeds;		/* "host:port host:port" (spaces or commas) */
	const char *password;		/* NULL or "": no AUTH */
	unsigned timeout_ms;		/* per request; default 50 */
	unsigned max_requests;		/* in flight at once; default 4096 */
};

/* A reply, top level only (what claims need). */
enum fg_cluster_reply_type {
	FG_CLUSTER_R_NIL = 0,
	FG_CLUSTER_R_STRING,
	FG_CLUSTER_R_STATUS,
	FG_CLUSTER_R_INTEGER,
	FG_CLUSTER_R_ERROR,
	FG_CLUSTER_R_ARRAY,
};

struct fg_cluster_reply {
	enum fg_cluster_reply_type type;
	const char *str;		/* STRING, STATUS, ERROR; valid during the call */
	size_t len;
	long long integer;		/* INTEGER; ARRAY: its element count */
};

/* One request's end: rc 0 and the reply, or rc -ETIMEDOUT, -ECONNRESET
 * (its connection failed), -ENOTCONN (no node for its slot is up),
 * -ELOOP (too many redirects), -EAGAIN (TRYAGAIN, CLUSTERDOWN), with
 * r NULL. rtt_ns: from submit to this call. */
typedef void fg_cluster_done_fn(void *arg, uint64_t cookie, int rc,
				const struct fg_cluster_reply *r, uint64_t rtt_ns);

/* What the client did, for status and /metrics. */
struct fg_cluster_stats {
	uint64_t sent;			/* requests written (redirects count again) */
	uint64_t replies;		/* requests completed with a reply */
	uint64_t moved, ask;		/* redirects followed */
	uint64_t timeouts;		/* requests completed -ETIMEDOUT */
	uint64_t conn_failures;		/* requests completed -ECONNRESET / -ENOTCONN */
	uint64_t connects, disconnects;	/* node connections made, lost or closed */
	uint64_t map_refreshes;		/* CLUSTER SLOTS answers taken */
	uint64_t replies_refused;	/* past the guard's bounds (respguard.h): closed */
	unsigned nodes_up;		/* connections open now */
	unsigned masters;		/* distinct masters in the map */
	unsigned slots_mapped;		/* slots the map knows (16384 when whole) */
};

/* NULL: bad seeds (logged) or no memory. Connecting starts at once;
 * the first run() asks for the map. */
struct fg_cluster *fg_cluster_create(const struct fg_cluster_params *p);
/* Requests still in flight complete with -ECONNRESET through `done`. */
void fg_cluster_destroy(struct fg_cluster *c, fg_cluster_done_fn *done, void *arg);

/* Queue one command of argc arguments; argv[key_arg] is the key that
 * routes it. 0, -ENOBUFS (max_requests in flight), -ENOTCONN (no node up
 * for its slot now), -EINVAL. */
int fg_cluster_submit(struct fg_cluster *c, unsigned argc, const char **argv,
		      const size_t *argvlen, unsigned key_arg, uint64_t cookie);

/* Do the I/O: wait at most wait_ms (0: do not wait; the wait happens even
 * with no node up) for a socket or the wake fd, then
 * write, read and complete what is due (replies, timeouts, failures).
 * Returns the number of requests completed. */
unsigned fg_cluster_run(struct fg_cluster *c, int wait_ms, fg_cluster_done_fn *done, void *arg);

/* ---- the parsers of what a server says (pure; fuzzed: fuzz_cluster) --- */

struct fg_cluster_range {
	unsigned lo, hi;		/* slots, lo <= hi < 16384 */
	char host[64];			/* the master's endpoint */
	int port;			/* 1..65535 */
};

/* A CLUSTER SLOTS reply in RESP: at most max ranges into out (an element
 * of another shape is skipped); `asked` stands for an empty or "?" host.
 * The octets pass the guard first (respguard.h), all of them. The count,
 * -EAGAIN (incomplete), -EMSGSIZE (past the guard's bounds), -EINVAL (not
 * RESP, not an array). */
int fg_cluster_parse_slots(const void *resp, size_t len, const char *asked,
			   struct fg_cluster_range *out, unsigned max);
/* An error reply "MOVED <slot> <host>:<port>" or "ASK ..." (len octets,
 * no CRLF): 0 with its parts (*ask says which), or -EINVAL. */
int fg_cluster_parse_redirect(const char *s, size_t len, unsigned *slot, char *host,
			      size_t hostlen, int *port, bool *ask);

/* A readable fd (an eventfd) that ends run()'s wait; run() drains it. */
void fg_cluster_wake_fd(struct fg_cluster *c, int fd);

/* Requests in flight. */
unsigned fg_cluster_pending(const struct fg_cluster *c);
/* Ask for a fresh slot map now (after a failover the client would learn
 * it from the first MOVED anyway). */
void fg_cluster_refresh(struct fg_cluster *c);
void fg_cluster_get_stats(const struct fg_cluster *c, struct fg_cluster_stats *out);

/* One DEL of `key` with a client of its own, waited for (redirects
 * followed) at most bound_ms: 1 deleted, 0 there was none, -errno (the
 * cluster did not answer). For floodctld's forget, off any hot path. */
int fg_cluster_del(const struct fg_cluster_params *p, const char *key, unsigned bound_ms);

#endif /* FLOODGATE_CLUSTER_H */
