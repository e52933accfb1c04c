/* SPDX-License-Identifier: MIT */
/*
 * client_int.h — one feed's connections, shared by the three parts of
 * feedgen's client: client.c (the transports, the connection's life, the
 * loop), offers.c (what a connection sends: the offer order, --rate, the
 * window, the output buffer) and answers.c (what comes back: the
 * session's state machine and every answer checked against the model).
 * Not an API: feedgen.h is what main.c sees.
 */
#ifndef FEEDGEN_CLIENT_INT_H
#define FEEDGEN_CLIENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "feedgen.h"

#define IN_CAP (64u << 10)
#define OUT_HIGH (512u << 10)	/* stop queueing offers above this many unsent octets */
#define RECONNECT_DELAY_NS 200000000ull

enum conn_state {
	ST_IDLE = 0,		/* waiting to (re)connect */
	ST_CONNECTING, ST_GREETING, ST_CAPS, ST_MODE, ST_RUN, ST_QUIT, ST_DONE,
};

struct inflight {
	uint32_t art;
	uint8_t cmd;		/* enum fg_wlc_cmd */
	uint64_t stamp;		/* checker event stamp when sent */
	uint64_t t_ns;		/* when queued */
	uint64_t id_hash;	/* of the Message-ID the answer must repeat */
};

/* A FIFO of uint32 article indices (retries carry their due time). */
struct aring {
	uint32_t *art;
	uint64_t *due;
	uint32_t cap, head, n;
};

struct feed;

struct conn {
	int fd;
	struct fg_tcp_conn *tc;		/* --dpdk: the connection, NULL: none */
	struct feed *feed;
	enum conn_state state;
	unsigned peer, id;
	const uint32_t *list;		/* the peer's offers */
	uint64_t n_list, next, stride;	/* next = this conn's next index into list */
	uint64_t fresh;			/* fresh offers made, for --rate */
	struct inflight *infl;
	uint32_t infl_cap, infl_head, infl_n;
	struct aring retry, reoffer;
	char in[IN_CAP];
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	bool want_out;
	bool caps_list, caps_streaming;
	unsigned reconnects;
	uint64_t reconnect_at;
	uint32_t *codes;
};

struct feed {
	const struct feed_opts *o;
	const struct fg_wl *wl;
	struct fg_wlc *chk;
	struct feed_result *res;
	int ep;
	struct conn *c;
	unsigned n;
	unsigned done;
	uint8_t *tries;			/* per article and peer: 431/436 retries so far */
	uint64_t retries_pending;
	/* the server, IPv4 or IPv6; --source likewise (peer i binds to it
	 * plus i, added to its last 32 bits) */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct sockaddr_storage source;
	bool has_source;
	uint64_t t0;			/* start, for --rate */
	struct feed_dp *dp;		/* --dpdk, else NULL (sockets) */
	FILE *accept_times;		/* --accept-times, else NULL */
};

/* No transport under the connection (closed, or not opened yet). */
static inline bool feed_conn_gone(const struct conn *c)
{
	return c->fd < 0 && !c->tc;
}

/* client.c: the connection's life */
/* Gone for good (QUIT answered, refused, or out of reconnects). */
void feed_conn_finish(struct feed *f, struct conn *c);
/* Gone now (400, reset, EOF): its unanswered offers are offered again on
 * the next connection, unless reconnects are used up. */
void feed_conn_lost(struct feed *f, struct conn *c, const char *why);

/* offers.c: what goes out */
uint64_t feed_id_hash(const char *s, size_t len);
int feed_aring_init(struct aring *r, uint32_t cap, bool with_due);
int feed_aring_push(struct aring *r, uint32_t art, uint64_t due);
void feed_aring_free(struct aring *r);
int feed_out_add(struct conn *c, const char *s, size_t len);
size_t feed_out_pending(const struct conn *c);
/* "VERB <id>\r\n" and, for TAKETHIS/IHAVE article, the article itself. */
int feed_queue_cmd(struct feed *f, struct conn *c, uint32_t art, enum fg_wlc_cmd cmd);
/* Queue offers up to the window; QUIT when everything is answered. */
int feed_fill(struct feed *f, struct conn *c, uint64_t now);

/* answers.c: what comes back */
/* Every complete line of c->in; false when the connection went meanwhile. */
bool feed_conn_lines(struct feed *f, struct conn *c, uint64_t now);

#endif /* FEEDGEN_CLIENT_INT_H */
