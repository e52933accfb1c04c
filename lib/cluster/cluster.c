/* SPDX-License-Identifier: MIT */
/*
 * cluster.c — the Redis Cluster client (cluster.h has the protocol in
 * steps). hiredis 0.14 gives the RESP writer and reader and a
 * non-blocking socket; the slot map, the redirects, the timeouts and the
 * reconnects are ours.
 *
 * Requests live in one fixed table. A request sent to a node is on that
 * node's FIFO (linked through `next`) until its reply comes or the
 * connection dies: Redis answers a connection's commands in order, so the
 * FIFO's head is what the next reply answers. A request completed early
 * (timed out) stays on its FIFO, marked `finished`, until its late reply
 * is read. Internal requests (AUTH, ASKING, CLUSTER SLOTS) share the
 * table and the FIFOs and never reach the caller.
 *
 * hiredis's reader sees no octet the guard (respguard.h) has not passed:
 * the client reads the socket itself, and a reply past the guard's bounds
 * closes the connection (counted: replies_refused) before hiredis could
 * allocate what it declares.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "floodgate/cluster.h"
#include "floodgate/log.h"
#include "floodgate/respguard.h"
#include "floodgate/siphash.h"

#define DEFAULT_TIMEOUT_MS 50u
#define DEFAULT_MAX_REQUESTS 4096u
#define MAX_REDIRECTS 5u
/* a connection whose oldest request waited this many timeouts is dead */
#define STALL_TIMEOUTS 2u
#define NONE UINT32_MAX
#define NO_NODE (-1)
#define HOST_MAX 64
#define READ_CHUNK (16u << 10)	/* one read of a node's socket (hiredis's own size) */

enum node_state { NODE_DOWN = 0, NODE_CONNECTING, NODE_UP };
enum req_kind { REQ_USER = 0, REQ_AUTH, REQ_ASKING, REQ_SLOTS };

struct node {
	char host[HOST_MAX];
	int port;
	enum node_state state;
	bool failing;			/* its loss was logged; quiet until up again */
	bool master;			/* the map names it: kept connected */
	redisContext *rc;
	struct fg_resp_guard guard;	/* what rc's reader may be fed */
	uint64_t retry_ns;		/* DOWN: no reconnect before */
	uint32_t head, tail;		/* FIFO of requests sent here */
	unsigned n_fifo;
};

struct req {
	bool used, finished;
	enum req_kind kind;
	uint8_t redirects;
	uint32_t next;			/* FIFO link, or free list */
	uint64_t cookie;
	uint64_t t0_ns, sent_ns, deadline_ns;
	char *cmd;			/* RESP-formatted, owned */
	size_t cmd_len;
};

struct fg_cluster {
	char password[128];
	uint64_t timeout_ns;
	unsigned max_req;
	struct req *req;
	uint32_t free_head;
	unsigned n_user;		/* user requests not yet finished */
	struct node node[FG_CLUSTER_MAX_NODES];
	unsigned n_node;
	int16_t slot_node[FG_CLUSTER_SLOTS];
	bool want_map, map_inflight;
	bool closing;			/* destroy(): nodes close without a warning */
	int wake_fd;			/* polled along, or -1 */
	uint64_t map_ns;		/* no new CLUSTER SLOTS before */
	unsigned map_rr;
	struct fg_cluster_stats st;
	/* completion target of the current run() */
	fg_cluster_done_fn *done;
	void *done_arg;
	unsigned completed;
};

/* ---- slots ------------------------------------------------------------- */

uint16_t fg_cluster_crc16(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint16_t crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)(p[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1 ^ 0x1021) : (uint16_t)(crc << 1);
	}
	return crc;
}

/* Redis Cluster spec, "Hash tags": the first {...} with something inside. */
unsigned fg_cluster_slot(const void *key, size_t len)
{
	const char *k = key;
	const char *open = memchr(k, '{', len);

	if (open) {
		size_t off = (size_t)(open - k) + 1;
		const char *close = memchr(open + 1, '}', len - off);

		if (close && close > open + 1)
			return fg_cluster_crc16(open + 1, (size_t)(close - open - 1)) &
			       (FG_CLUSTER_SLOTS - 1);
	}
	return fg_cluster_crc16(k, len) & (FG_CLUSTER_SLOTS - 1);
}

/* ---- keys ----------------------------------------------------------------- */

static void secret_key(const char *secret, uint64_t k[2])
{
	static const uint64_t derive[2] = { 0x666c6f6f64676174ull, 0x65636c7573746572ull };

	fg_siphash24_128(derive, secret, strlen(secret), k);
}

void fg_cluster_key(const char *secret, const char *id, size_t len,
		    char out[FG_CLUSTER_KEY_LEN + 1])
{
	uint64_t k[2], h[2];

	secret_key(secret, k);
	fg_siphash24_128(k, id, len, h);
	snprintf(out, FG_CLUSTER_KEY_LEN + 1, "fg:%016" PRIx64 "%016" PRIx64, h[0], h[1]);
}

/* ---- helpers ------------------------------------------------------------ */

static int find_node(struct fg_cluster *c, const char *host, int port, bool add)
{
	for (unsigned i = 0; i < c->n_node; i++)
		if (c->node[i].port == port && strcmp(c->node[i].host, host) == 0)
			return (int)i;
	if (!add || c->n_node == FG_CLUSTER_MAX_NODES || strlen(host) >= HOST_MAX)
		return NO_NODE;
	snprintf(c->node[c->n_node].host, HOST_MAX, "%s", host);
	c->node[c->n_node].port = port;
	c->node[c->n_node].head = c->node[c->n_node].tail = NONE;
	return (int)c->n_node++;
}

static struct req *req_get(struct fg_cluster *c)
{
	struct req *r;

	if (c->free_head == NONE)
		return NULL;
	r = &c->req[c->free_head];
	c->free_head = r->next;
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->next = NONE;
	return r;
}

static void req_put(struct fg_cluster *c, struct req *r)
{
	if (r->kind == REQ_USER && !r->finished)
		c->n_user--;
	redisFreeCommand(r->cmd);
	r->cmd = NULL;
	r->used = false;
	r->next = c->free_head;
	c->free_head = (uint32_t)(r - c->req);
}

/* The caller hears of the request; it stays in the table until freed. */
static void finish(struct fg_cluster *c, struct req *r, int rc, const redisReply *rep)
{
	struct fg_cluster_reply out = { 0 };

	if (r->kind != REQ_USER || r->finished)
		return;
	r->finished = true;
	c->n_user--;
	c->completed++;
	if (rc == 0) {
		c->st.replies++;
		switch (rep->type) {
		case REDIS_REPLY_STRING: out.type = FG_CLUSTER_R_STRING; break;
		case REDIS_REPLY_STATUS: out.type = FG_CLUSTER_R_STATUS; break;
		case REDIS_REPLY_ERROR: out.type = FG_CLUSTER_R_ERROR; break;
		case REDIS_REPLY_INTEGER: out.type = FG_CLUSTER_R_INTEGER; break;
		case REDIS_REPLY_ARRAY: out.type = FG_CLUSTER_R_ARRAY; break;
		default: out.type = FG_CLUSTER_R_NIL; break;
		}
		out.str = rep->str;
		out.len = rep->str ? rep->len : 0;
		out.integer = rep->type == REDIS_REPLY_ARRAY ? (long long)rep->elements
							      : rep->integer;
	} else if (rc == -ETIMEDOUT) {
		c->st.timeouts++;
	} else if (rc == -ECONNRESET || rc == -ENOTCONN) {
		c->st.conn_failures++;
	}
	if (c->done)
		c->done(c->done_arg, r->cookie, rc, rc == 0 ? &out : NULL, fg_mono_ns() - r->t0_ns);
}

/* ---- connections --------------------------------------------------------- */

static void fifo_push(struct node *n, struct fg_cluster *c, struct req *r)
{
	uint32_t i = (uint32_t)(r - c->req);

	r->next = NONE;
	if (n->tail == NONE)
		n->head = i;
	else
		c->req[n->tail].next = i;
	n->tail = i;
	n->n_fifo++;
}

static struct req *fifo_pop(struct node *n, struct fg_cluster *c)
{
	struct req *r;

	if (n->head == NONE)
		return NULL;
	r = &c->req[n->head];
	n->head = r->next;
	if (n->head == NONE)
		n->tail = NONE;
	n->n_fifo--;
	return r;
}

static void node_close(struct fg_cluster *c, struct node *n, const char *why)
{
	struct req *r;

	/* logged once per change of state: up -> down, or the first failed
	 * connect after having been up (or since the start) */
	if (n->state == NODE_UP) {
		if (!c->closing)
			FG_LOG_WARN("cluster", "node %s:%d down: %s", n->host, n->port, why);
		c->st.disconnects++;
		c->st.nodes_up--;
		n->failing = true;
	} else if (n->state == NODE_CONNECTING && !n->failing) {
		if (!c->closing)
			FG_LOG_WARN("cluster", "node %s:%d unreachable: %s", n->host, n->port, why);
		n->failing = true;
	}
	if (n->rc)
		redisFree(n->rc);
	n->rc = NULL;
	n->state = NODE_DOWN;
	n->retry_ns = fg_mono_ns() + c->timeout_ns;
	while ((r = fifo_pop(n, c)) != NULL) {
		if (r->kind == REQ_SLOTS)
			c->map_inflight = false;
		finish(c, r, -ECONNRESET, NULL);
		req_put(c, r);
	}
	c->want_map = true;
}

static int append(struct fg_cluster *c, struct node *n, struct req *r)
{
	if (redisAppendFormattedCommand(n->rc, r->cmd, r->cmd_len) != REDIS_OK)
		return -ENOMEM;
	r->sent_ns = fg_mono_ns();
	fifo_push(n, c, r);
	c->st.sent++;
	return 0;
}

static int append_internal(struct fg_cluster *c, struct node *n, enum req_kind kind,
			   unsigned argc, const char **argv)
{
	struct req *r = req_get(c);
	int len;

	if (!r)
		return -ENOBUFS;
	r->kind = kind;
	len = redisFormatCommandArgv(&r->cmd, (int)argc, argv, NULL);
	if (len < 0) {
		req_put(c, r);
		return -ENOMEM;
	}
	r->cmd_len = (size_t)len;
	return append(c, n, r);
}

/* Starts a non-blocking connect; the first writable poll says how it went. */
static bool node_connect(struct fg_cluster *c, struct node *n)
{
	const char *auth[] = { "AUTH", c->password };

	if (n->state != NODE_DOWN)
		return true;
	if (fg_mono_ns() < n->retry_ns)
		return false;
	n->retry_ns = fg_mono_ns() + c->timeout_ns;
	n->rc = redisConnectNonBlock(n->host, n->port);
	if (!n->rc || n->rc->err) {
		if (n->rc)
			redisFree(n->rc);
		n->rc = NULL;
		return false;
	}
	n->state = NODE_CONNECTING;
	fg_resp_guard_init(&n->guard);
	if (c->password[0] && append_internal(c, n, REQ_AUTH, 2, auth) != 0) {
		node_close(c, n, "no room for AUTH");
		return false;
	}
	return true;
}

/* A node to ask when the map has no answer: a live one, else one that
 * can be connected to now, round robin. */
static struct node *any_node(struct fg_cluster *c)
{
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < c->n_node; k++) {
			struct node *n = &c->node[(c->map_rr + k) % c->n_node];

			if (n->state != NODE_DOWN || (pass == 1 && node_connect(c, n))) {
				c->map_rr = (c->map_rr + k + 1) % c->n_node;
				return n;
			}
		}
	return NULL;
}

static int route(struct fg_cluster *c, struct req *r, unsigned slot)
{
	struct node *n;

	if (c->slot_node[slot] != NO_NODE) {
		n = &c->node[c->slot_node[slot]];
		if (!node_connect(c, n))
			return -ENOTCONN;
	} else {
		n = any_node(c);
		if (!n)
			return -ENOTCONN;
	}
	return append(c, n, r);
}

/* ---- replies ------------------------------------------------------------- */

/* One element of a CLUSTER SLOTS reply: [lo, hi, [host, port, id...],
 * replicas...]. An empty or "?" host: the node asked knows it by the
 * address we reached it at. 0, or -EINVAL for anything else. */
static int range_of(const redisReply *e, const char *asked, struct fg_cluster_range *r)
{
	const redisReply *m;
	const char *host;

	if (e->type != REDIS_REPLY_ARRAY || e->elements < 3)
		return -EINVAL;
	m = e->element[2];
	if (e->element[0]->type != REDIS_REPLY_INTEGER ||
	    e->element[1]->type != REDIS_REPLY_INTEGER || m->type != REDIS_REPLY_ARRAY ||
	    m->elements < 2 || m->element[0]->type != REDIS_REPLY_STRING ||
	    m->element[1]->type != REDIS_REPLY_INTEGER)
		return -EINVAL;
	if (e->element[0]->integer < 0 || e->element[1]->integer >= FG_CLUSTER_SLOTS ||
	    e->element[0]->integer > e->element[1]->integer ||
	    m->element[1]->integer <= 0 || m->element[1]->integer > 65535)
		return -EINVAL;
	host = m->element[0]->str;
	/* a NUL inside the string would cut the name short */
	if (strlen(host) != m->element[0]->len)
		return -EINVAL;
	if (host[0] == '\0' || strcmp(host, "?") == 0)
		host = asked;
	if (!host[0] || strlen(host) >= sizeof(r->host))
		return -EINVAL;
	r->lo = (unsigned)e->element[0]->integer;
	r->hi = (unsigned)e->element[1]->integer;
	r->port = (int)m->element[1]->integer;
	snprintf(r->host, sizeof(r->host), "%s", host);
	return 0;
}

static void take_map(struct fg_cluster *c, const struct node *asked, const redisReply *rep)
{
	bool seen[FG_CLUSTER_MAX_NODES] = { false };

	if (rep->type != REDIS_REPLY_ARRAY)
		return;
	for (unsigned s = 0; s < FG_CLUSTER_SLOTS; s++)
		c->slot_node[s] = NO_NODE;
	for (unsigned i = 0; i < c->n_node; i++)
		c->node[i].master = false;
	c->st.slots_mapped = c->st.masters = 0;
	for (size_t i = 0; i < rep->elements; i++) {
		struct fg_cluster_range r;
		int idx;

		if (range_of(rep->element[i], asked->host, &r) != 0)
			continue;
		idx = find_node(c, r.host, r.port, true);
		if (idx == NO_NODE)
			continue;
		if (!seen[idx]) {
			seen[idx] = true;
			c->node[idx].master = true;
			c->st.masters++;
		}
		for (unsigned sl = r.lo; sl <= r.hi; sl++)
			c->slot_node[sl] = (int16_t)idx;
		c->st.slots_mapped += r.hi - r.lo + 1;
	}
	c->st.map_refreshes++;
}

int fg_cluster_parse_slots(const void *resp, size_t len, const char *asked,
			   struct fg_cluster_range *out, unsigned max)
{
	redisReader *rd = redisReaderCreate();
	void *reply = NULL;
	struct fg_resp_guard g;
	redisReply *rep;
	int n = 0;

	if (!rd)
		return -ENOMEM;
	fg_resp_guard_init(&g);
	n = fg_resp_guard_scan(&g, resp, len);
	if (n != 0) {
		n = n == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
		goto out_free_reader;
	}
	if (redisReaderFeed(rd, resp, len) != REDIS_OK ||
	    redisReaderGetReply(rd, &reply) != REDIS_OK) {
		n = -EINVAL;
		goto out_free_reader;
	}
	if (!reply) {
		n = -EAGAIN;
		goto out_free_reader;
	}
	rep = reply;
	if (rep->type != REDIS_REPLY_ARRAY) {
		n = -EINVAL;
		goto out_free_reply;
	}
	for (size_t i = 0; i < rep->elements && (unsigned)n < max; i++)
		if (range_of(rep->element[i], asked, &out[n]) == 0)
			n++;
out_free_reply:
	freeReplyObject(reply);
out_free_reader:
	redisReaderFree(rd);
	return n;
}

/* Redis Cluster spec, "Redirection": "MOVED <slot> <host>:<port>" or
 * "ASK ...", the host possibly an IPv6 address (the last ':' splits). */
int fg_cluster_parse_redirect(const char *s, size_t len, unsigned *slot, char *host,
			      size_t hostlen, int *port, bool *ask)
{
	const char *p = s, *end = s + len, *colon = NULL;
	unsigned long v = 0;
	size_t hl;

	if (len > 6 && memcmp(s, "MOVED ", 6) == 0)
		p += 6, *ask = false;
	else if (len > 4 && memcmp(s, "ASK ", 4) == 0)
		p += 4, *ask = true;
	else
		return -EINVAL;
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if ((v = v * 10 + (unsigned long)(*p - '0')) >= FG_CLUSTER_SLOTS)
			return -EINVAL;
	if (p == end || *p++ != ' ')
		return -EINVAL;
	for (const char *q = p; q < end; q++)
		if (*q == ':')
			colon = q;
		else if (*q <= ' ' || *q > '~')
			return -EINVAL;
	hl = colon ? (size_t)(colon - p) : 0;
	if (!colon || hl == 0 || hl >= hostlen || colon + 1 == end || end - colon > 6)
		return -EINVAL;
	*port = 0;
	for (const char *q = colon + 1; q < end; q++) {
		if (*q < '0' || *q > '9')
			return -EINVAL;
		*port = *port * 10 + (*q - '0');
	}
	if (*port <= 0 || *port > 65535)
		return -EINVAL;
	memcpy(host, p, hl);
	host[hl] = '\0';
	*slot = (unsigned)v;
	return 0;
}

/* "MOVED 3999 127.0.0.1:6381" or "ASK ...": the target node. */
static int redirect_target(struct fg_cluster *c, const redisReply *rep, unsigned *slot)
{
	char host[HOST_MAX];
	bool ask;
	int port;

	if (fg_cluster_parse_redirect(rep->str, rep->len, slot, host, sizeof(host), &port,
				      &ask) != 0)
		return NO_NODE;
	return find_node(c, host, port, true);
}

/* MOVED or ASK: send the request on; true when it was taken care of. */
static bool redirect(struct fg_cluster *c, struct req *r, const redisReply *rep)
{
	bool moved = strncmp(rep->str, "MOVED ", 6) == 0;
	bool ask = strncmp(rep->str, "ASK ", 4) == 0;
	const char *asking[] = { "ASKING" };
	unsigned slot;
	struct node *n;
	int idx;

	if (!moved && !ask)
		return false;
	idx = redirect_target(c, rep, &slot);
	if (idx == NO_NODE || ++r->redirects > MAX_REDIRECTS) {
		finish(c, r, -ELOOP, NULL);
		req_put(c, r);
		return true;
	}
	n = &c->node[idx];
	if (moved) {
		c->st.moved++;
		c->slot_node[slot] = (int16_t)idx;
		n->master = true;
		c->want_map = true;
	} else {
		c->st.ask++;
	}
	if (!node_connect(c, n) || (ask && append_internal(c, n, REQ_ASKING, 1, asking) != 0) ||
	    append(c, n, r) != 0) {
		finish(c, r, -ENOTCONN, NULL);
		req_put(c, r);
	}
	return true;
}

static void on_reply(struct fg_cluster *c, struct node *n, redisReply *rep)
{
	struct req *r = fifo_pop(n, c);

	if (!r) {
		node_close(c, n, "a reply nobody asked for");
		return;
	}
	switch (r->kind) {
	case REQ_SLOTS:
		c->map_inflight = false;
		take_map(c, n, rep);
		break;
	case REQ_AUTH:
		if (rep->type == REDIS_REPLY_ERROR)
			FG_LOG_ERR("cluster", "node %s:%d refused AUTH: %s", n->host, n->port,
				   rep->str);
		break;
	case REQ_ASKING:
		break;
	case REQ_USER:
		if (r->finished)
			break;
		if (rep->type == REDIS_REPLY_ERROR && redirect(c, r, rep))
			return;
		if (rep->type == REDIS_REPLY_ERROR && (strncmp(rep->str, "TRYAGAIN", 8) == 0 ||
						       strncmp(rep->str, "CLUSTERDOWN", 11) == 0)) {
			c->want_map = true;
			finish(c, r, -EAGAIN, NULL);
		} else {
			finish(c, r, 0, rep);
		}
		break;
	}
	req_put(c, r);
}

/* ---- the loop ------------------------------------------------------------- */

static void ask_map(struct fg_cluster *c)
{
	const char *slots[] = { "CLUSTER", "SLOTS" };
	struct node *n;

	if (!c->want_map || c->map_inflight || fg_mono_ns() < c->map_ns)
		return;
	n = any_node(c);
	if (!n)
		return;
	c->map_ns = fg_mono_ns() + c->timeout_ns;
	if (append_internal(c, n, REQ_SLOTS, 2, slots) == 0) {
		c->map_inflight = true;
		c->want_map = false;
	}
}

static void expire(struct fg_cluster *c)
{
	uint64_t t = fg_mono_ns();

	for (unsigned i = 0; c->n_user && i < c->max_req; i++) {
		struct req *r = &c->req[i];

		if (r->used && r->kind == REQ_USER && !r->finished && t >= r->deadline_ns)
			finish(c, r, -ETIMEDOUT, NULL);
	}
	for (unsigned i = 0; i < c->n_node; i++) {
		struct node *n = &c->node[i];

		if (n->head != NONE &&
		    t - c->req[n->head].sent_ns > STALL_TIMEOUTS * c->timeout_ns)
			node_close(c, n, "no answer within two timeouts");
	}
}

/* Step 2's read: what the socket holds, through the guard, to the reader
 * (hiredis's redisBufferRead, with the guard between). False when the
 * connection was closed. */
static bool node_read(struct fg_cluster *c, struct node *n)
{
	char buf[READ_CHUNK];
	ssize_t got = read(n->rc->fd, buf, sizeof(buf));
	int rc;

	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (got <= 0) {
		node_close(c, n, got == 0 ? "server closed the connection" : strerror(errno));
		return false;
	}
	rc = fg_resp_guard_scan(&n->guard, buf, (size_t)got);
	if (rc != 0) {
		if (rc == -EMSGSIZE)
			c->st.replies_refused++;
		node_close(c, n, n->guard.why);
		return false;
	}
	if (redisReaderFeed(n->rc->reader, buf, (size_t)got) != REDIS_OK) {
		node_close(c, n, n->rc->reader->errstr);
		return false;
	}
	return true;
}

static void node_io(struct fg_cluster *c, struct node *n, short revents)
{
	void *rep;
	int done = 0, err = 0;
	socklen_t elen = sizeof(err);

	if (n->state == NODE_CONNECTING && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		if (getsockopt(n->rc->fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err) {
			node_close(c, n, err ? strerror(err) : "connect failed");
			return;
		}
		n->state = NODE_UP;
		c->st.connects++;
		c->st.nodes_up++;
		if (n->failing)
			FG_LOG_NOTICE("cluster", "node %s:%d up again", n->host, n->port);
		n->failing = false;
	}
	if (n->state != NODE_UP)
		return;
	if ((revents & POLLOUT) && redisBufferWrite(n->rc, &done) != REDIS_OK) {
		node_close(c, n, n->rc->errstr);
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		if (!node_read(c, n))
			return;
		while (n->rc && redisGetReplyFromReader(n->rc, &rep) == REDIS_OK && rep) {
			on_reply(c, n, rep);
			freeReplyObject(rep);
		}
		if (n->rc && n->rc->err)
			node_close(c, n, n->rc->errstr);
	}
}

unsigned fg_cluster_run(struct fg_cluster *c, int wait_ms, fg_cluster_done_fn *done, void *arg)
{
	struct pollfd pfd[FG_CLUSTER_MAX_NODES + 1];
	int map[FG_CLUSTER_MAX_NODES];
	unsigned np = 0;

	c->done = done;
	c->done_arg = arg;
	c->completed = 0;
	/* the map's masters are kept connected, traffic or not (at most one
	 * attempt per timeout each), so that health shows and the first
	 * claims after an outage find their node up */
	for (unsigned i = 0; i < c->n_node; i++)
		if (c->node[i].master)
			node_connect(c, &c->node[i]);
	ask_map(c);
	for (unsigned i = 0; i < c->n_node; i++) {
		struct node *n = &c->node[i];

		if (n->state == NODE_DOWN)
			continue;
		pfd[np].fd = n->rc->fd;
		pfd[np].events = POLLIN;
		if (n->state == NODE_CONNECTING || (n->rc->obuf && n->rc->obuf[0]))
			pfd[np].events |= POLLOUT;
		pfd[np].revents = 0;
		map[np++] = (int)i;
	}
	/* the caller's wake fd (an eventfd) ends the wait early; with no
	 * node up the wait still happens, so a caller's loop never spins */
	pfd[np].fd = c->wake_fd;
	pfd[np].events = POLLIN;
	pfd[np].revents = 0;
	if (poll(pfd, np + 1, wait_ms) > 0) {
		for (unsigned k = 0; k < np; k++)
			if (pfd[k].revents)
				node_io(c, &c->node[map[k]], pfd[k].revents);
		if (pfd[np].revents & POLLIN) {
			uint64_t v;

			if (read(c->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				FG_LOG_DEBUG("cluster", "wake fd: %s", strerror(errno));
		}
	}
	expire(c);
	c->done = NULL;
	return c->completed;
}

/* ---- the API --------------------------------------------------------------- */

static int add_seeds(struct fg_cluster *c, const char *seeds)
{
	char buf[1024], *save = NULL, *tok;

	if (!seeds || strlen(seeds) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", seeds);
	for (tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
		char *colon = strrchr(tok, ':'), *end;
		long port;

		if (!colon)
			return -EINVAL;
		*colon = '\0';
		port = strtol(colon + 1, &end, 10);
		if (*end || port <= 0 || port > 65535 || !tok[0] ||
		    find_node(c, tok, (int)port, true) == NO_NODE)
			return -EINVAL;
	}
	return c->n_node ? 0 : -EINVAL;
}

struct fg_cluster *fg_cluster_create(const struct fg_cluster_params *p)
{
	struct fg_cluster *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->timeout_ns = (uint64_t)(p->timeout_ms ? p->timeout_ms : DEFAULT_TIMEOUT_MS) * 1000000u;
	c->max_req = p->max_requests ? p->max_requests : DEFAULT_MAX_REQUESTS;
	/* internal requests (AUTH, ASKING, maps) take slots of their own */
	c->req = calloc(c->max_req + FG_CLUSTER_MAX_NODES * 2, sizeof(*c->req));
	if (!c->req)
		goto out_free_cluster;
	for (unsigned i = 0; i < c->max_req + FG_CLUSTER_MAX_NODES * 2; i++)
		c->req[i].next = i + 1;
	c->req[c->max_req + FG_CLUSTER_MAX_NODES * 2 - 1].next = NONE;
	c->free_head = 0;
	if (p->password && strlen(p->password) >= sizeof(c->password))
		goto out_free_req;
	snprintf(c->password, sizeof(c->password), "%s", p->password ? p->password : "");
	for (unsigned s = 0; s < FG_CLUSTER_SLOTS; s++)
		c->slot_node[s] = NO_NODE;
	if (add_seeds(c, p->seeds) != 0) {
		FG_LOG_ERR("cluster", "bad seed list '%s' (host:port, ...)",
			   p->seeds ? p->seeds : "");
		goto out_free_req;
	}
	c->want_map = true;
	c->wake_fd = -1;
	for (unsigned i = 0; i < c->n_node; i++)
		node_connect(c, &c->node[i]);
	return c;

out_free_req:
	free(c->req);
out_free_cluster:
	free(c);
	return NULL;
}

void fg_cluster_destroy(struct fg_cluster *c, fg_cluster_done_fn *done, void *arg)
{
	if (!c)
		return;
	c->done = done;
	c->done_arg = arg;
	c->closing = true;
	for (unsigned i = 0; i < c->n_node; i++)
		node_close(c, &c->node[i], "client closed");
	free(c->req);
	free(c);
}

int fg_cluster_submit(struct fg_cluster *c, unsigned argc, const char **argv,
		      const size_t *argvlen, unsigned key_arg, uint64_t cookie)
{
	struct req *r;
	int len, rc;

	if (key_arg >= argc || argc > 64)
		return -EINVAL;
	if (c->n_user >= c->max_req || !(r = req_get(c)))
		return -ENOBUFS;
	r->kind = REQ_USER;
	r->cookie = cookie;
	r->t0_ns = fg_mono_ns();
	r->deadline_ns = r->t0_ns + c->timeout_ns;
	len = redisFormatCommandArgv(&r->cmd, (int)argc, argv, argvlen);
	if (len < 0) {
		r->finished = true;
		req_put(c, r);
		return -ENOMEM;
	}
	r->cmd_len = (size_t)len;
	c->n_user++;
	rc = route(c, r, fg_cluster_slot(argv[key_arg], argvlen[key_arg]));
	if (rc != 0) {
		r->finished = true;
		c->n_user--;
		c->st.conn_failures++;
		req_put(c, r);
		c->want_map = true;
	}
	return rc;
}

void fg_cluster_wake_fd(struct fg_cluster *c, int fd)
{
	c->wake_fd = fd;
}

unsigned fg_cluster_pending(const struct fg_cluster *c)
{
	return c->n_user;
}

void fg_cluster_refresh(struct fg_cluster *c)
{
	c->want_map = true;
	c->map_ns = 0;
}

void fg_cluster_get_stats(const struct fg_cluster *c, struct fg_cluster_stats *out)
{
	*out = c->st;
}

struct del_result {
	bool done;
	int rc;
};

static void del_done(void *arg, uint64_t cookie, int rc, const struct fg_cluster_reply *r,
		     uint64_t rtt_ns)
{
	struct del_result *d = arg;

	(void)cookie;
	(void)rtt_ns;
	d->done = true;
	d->rc = rc ? rc : r->type == FG_CLUSTER_R_INTEGER ? (int)(r->integer > 0) : -EPROTO;
}

int fg_cluster_del(const struct fg_cluster_params *p, const char *key, unsigned bound_ms)
{
	const char *argv[] = { "DEL", key };
	size_t len[] = { 3, strlen(key) };
	struct fg_cluster *c = fg_cluster_create(p);
	uint64_t end = fg_mono_ns() + (uint64_t)bound_ms * 1000000u;
	struct del_result d = { false, -ETIMEDOUT };

	if (!c)
		return -EINVAL;
	/* a seed may still be connecting, or down while another is up: a
	 * request that fails at once is tried again until the bound */
	while (!d.done && fg_mono_ns() < end) {
		int rc = fg_cluster_submit(c, 2, argv, len, 1, 0);

		if (rc != 0) {
			d.rc = rc;
			fg_cluster_run(c, 5, del_done, &d);
			continue;
		}
		while (!d.done && fg_cluster_pending(c))
			fg_cluster_run(c, 5, del_done, &d);
		if (d.done && d.rc < 0 && d.rc != -EPROTO && fg_mono_ns() < end) {
			d.done = false;
			fg_cluster_run(c, 5, del_done, &d);
		}
	}
	fg_cluster_destroy(c, NULL, NULL);
	return d.rc;
}
