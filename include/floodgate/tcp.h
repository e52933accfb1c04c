/* SPDX-License-Identifier: MIT */
/*
 * tcp.h — a TCP endpoint for one dataplane instance, passive and active
 * open (RFC 9293
 * with RFC 7323 window scaling, RFC 6298 RTO, RFC 5681 congestion control
 * and fast retransmit, RFC 5961 challenge ACKs, SYN cookies). No device
 * and no clock inside: fg_net feeds it segments, time comes from the
 * caller. docs/tcp.md describes the state machine, the timers, every limit
 * and counter, and what of each RFC is and is not implemented.
 *
 * fg_tcp_create() registers the instance with its fg_net as the handler
 * of IP protocol 6 (net.h's L4 handlers): segments, the end-of-burst pass,
 * timers and the next deadline all reach TCP through fg_net_rx(),
 * fg_net_poll() and fg_net_next_deadline(); fg_tcp_destroy() unregisters.
 * One instance per fg_net.
 *
 * The application (the NNTP session engine; the TAP harness's test apps
 * until it exists) implements struct fg_tcp_app_ops:
 *
 *   on_accept(conn, peer, local) -> app context, or NULL to refuse (RST).
 *     Called when the handshake completes (a SYN flood never reaches it).
 *   on_data(ctx, conn, iov, n) -> bytes consumed from the front.
 *     iov lists the connection's whole unconsumed in-order payload (up to
 *     FG_TCP_MAX_IOV pieces), in place in the received buffers. Bytes not
 *     consumed stay queued and are offered again with what arrives next
 *     (or after fg_tcp_resume()); they count against the receive window.
 *     To keep bytes beyond the call (an article in flight) without leaving
 *     them queued, the app consumes them and takes a hold on their buffer
 *     with fg_tcp_hold(); held bytes still count against the window until
 *     fg_tcp_release(). A slow sink thereby closes the window.
 *   on_eof(ctx, conn): the peer sent FIN and every byte before it has been
 *     consumed. The app typically sends what is left and calls fg_tcp_close.
 *   on_writable(ctx, conn): room appeared in the send buffer: after a
 *     fg_tcp_send() that accepted less than asked (once a quarter of the
 *     buffer is free), after a fg_tcp_send_ref() refused for want of
 *     space (once what it asked for is free), or as requested with
 *     fg_tcp_want_writable().
 *   on_close(ctx, conn, reason): the end of the connection for the app,
 *     called exactly once for every accepted connection, and for every
 *     connection fg_tcp_connect() returned (established or not), except
 *     one the app aborted itself. The conn is still valid during the call
 *     (release or transfer holds there); never after.
 *   on_connect(ctx, conn): an active open (fg_tcp_connect) reached
 *     ESTABLISHED; the app may send from here on. Optional.
 *
 * Active open (fg_tcp_connect, tcp_connect.c): the block enters SYN-SENT
 * with the app's context attached; the SYN goes out at once when the
 * peer's MAC is in net's ARP cache, else as soon as an ARP reply brings
 * it (asked and polled every timer tick). A SYN-ACK completes the open
 * (on_connect), a RST refuses it and a silent peer times it out (both
 * on_close); simultaneous open passes through SYN-RECEIVED. An instance
 * without listen addresses is a client only (on_accept may then be NULL).
 *
 * Sending by reference (fg_tcp_send_ref, docs/tcp.md "Sending by
 * reference"): octets already in buffers the port gave (an article held
 * in its receive mbufs) join the send stream without a copy: the TCP
 * takes its own reference on each piece's buffer and drops it once the
 * peer acknowledged the piece, or when the connection ends. A segment
 * whose payload lies in such pieces leaves as the header buffer with the
 * pieces attached (the port's tx_attach, net.h), when the port chains
 * frames; else the octets are copied into the frame.
 *
 * Calls the app may make, also from inside callbacks: fg_tcp_connect, fg_tcp_send,
 * fg_tcp_close, fg_tcp_abort, fg_tcp_pause, fg_tcp_resume, fg_tcp_hold,
 * fg_tcp_release. Work they cause outside a burst (a release from a
 * completion, say) goes out at the next fg_net_poll().
 */
#ifndef FLOODGATE_TCP_H
#define FLOODGATE_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/net.h"

#define FG_TCP_MAX_LISTEN FG_CONFIG_MAX_LISTEN
#define FG_TCP_MAX_IOV 64

/* The order matters: ESTABLISHED through CLOSING are the "live" states. */
enum fg_tcp_state {
	FG_TCP_CLOSED = 0,
	FG_TCP_LISTEN,		/* never a connection's state: the listeners' */
	FG_TCP_SYN_SENT,	/* an active open: our SYN sent, no SYN seen */
	FG_TCP_SYN_RCVD,
	FG_TCP_ESTABLISHED,
	FG_TCP_CLOSE_WAIT,
	FG_TCP_LAST_ACK,
	FG_TCP_FIN_WAIT_1,
	FG_TCP_FIN_WAIT_2,
	FG_TCP_CLOSING,
	FG_TCP_TIME_WAIT,
	FG_TCP_STATE__COUNT
};

enum fg_tcp_close_reason {
	FG_TCP_CLOSE_FIN = 0,	/* orderly: both FINs exchanged */
	FG_TCP_CLOSE_RST,	/* the peer reset the connection */
	FG_TCP_CLOSE_TIMEOUT,	/* retransmissions exhausted */
	FG_TCP_CLOSE_IDLE,	/* nothing received for idle_timeout */
	FG_TCP_CLOSE_ERROR,	/* local failure (no buffers for a required segment) */
};

struct fg_tcp_conn;

struct fg_tcp_app_ops {
	void *(*on_accept)(void *app, struct fg_tcp_conn *c,
			   const struct fg_endpoint *peer,
			   const struct fg_endpoint *local);
	uint32_t (*on_data)(void *ctx, struct fg_tcp_conn *c,
			    const struct fg_iov *iov, unsigned n);
	void (*on_eof)(void *ctx, struct fg_tcp_conn *c);		/* optional */
	void (*on_writable)(void *ctx, struct fg_tcp_conn *c);	/* optional */
	void (*on_close)(void *ctx, struct fg_tcp_conn *c,
			 enum fg_tcp_close_reason why);
	void (*on_connect)(void *ctx, struct fg_tcp_conn *c);		/* optional */
};

/* Limits; zero picks the default in brackets. */
/*
 * Endpoints are config.h's struct fg_endpoint (family, 16 address bytes
 * in network order, port in host order), so [site] listen can be passed as
 * it is and on_accept's peer goes straight to fg_config_find_peer().
 * AF_INET and AF_INET6; a listen address of 0.0.0.0 (or ::) means any of
 * the instance's addresses of that family.
 */
struct fg_tcp_config {
	struct fg_endpoint listen[FG_TCP_MAX_LISTEN];
	unsigned n_listen;
	unsigned max_conns;		/* connection blocks [4096] */
	unsigned syn_backlog;		/* SYN_RCVD blocks in total [256] */
	unsigned syn_backlog_per_peer;	/* per peer address [16] */
	bool no_syncookies;		/* backlog full -> drop instead of cookie */
	uint32_t sndbuf;		/* send buffer per connection [32 KiB] */
	uint32_t sndref_max;		/* referenced octets queued per connection [8 MiB] */
	unsigned sndref_pieces;		/* referenced-piece descriptors in total [65536] */
	uint32_t rcvbuf;		/* receive window per connection [256 KiB] */
	unsigned rx_segs;		/* held-segment descriptors in total [max_conns * 64] */
	unsigned rx_segs_per_conn;	/* queued + out-of-order per conn [256] */
	unsigned ooo_segs_per_conn;	/* out-of-order per conn [64] */
	uint64_t rto_min_ns;		/* [200 ms] (RFC 6298 2.4 says 1 s; see docs) */
	uint64_t rto_max_ns;		/* [60 s] */
	uint64_t rto_init_ns;		/* [1 s] */
	unsigned max_retries;		/* RTO expiries before giving up [10] */
	unsigned synack_retries;	/* [4] */
	unsigned syn_retries;		/* SYN retransmissions of an active open [6] */
	uint64_t delack_ns;		/* delayed-ACK timeout [40 ms] */
	uint64_t idle_timeout_ns;	/* [600 s] */
	uint64_t time_wait_ns;		/* 2*MSL [60 s] */
	uint64_t timer_tick_ns;		/* wheel granularity, power of two [1<<20 ~ 1 ms] */
	unsigned timer_slots;		/* wheel size, power of two [4096] */
	uint64_t secret;		/* keys the connection hash and SYN cookies */
	bool no_sack;			/* neither offer nor accept SACK: NewReno recovery
					 * only (the benchmark's baseline) */
	/*
	 * Optional: may an active open use local port `lport` toward `peer`?
	 * fg_tcp_connect picks its ephemeral port among the free ones this
	 * accepts (the DPDK worker: the answers' 4-tuple hashes, with the
	 * port's RSS key and RETA, to its own RX queue). NULL: any port.
	 */
	bool (*port_ok)(void *ctx, const struct fg_endpoint *local, const struct fg_endpoint *peer);
	void *port_ok_ctx;
};

struct fg_tcp;

/* Constructor: NULL on bad config (logged), no memory, or a TCP handler
 * already registered with `net`. Preallocates every connection block,
 * send buffer and segment descriptor. */
struct fg_tcp *fg_tcp_create(struct fg_net *net, const struct fg_tcp_config *cfg,
			     const struct fg_tcp_app_ops *ops, void *app);
/* Drops every reference still held; calls no callback. */
void fg_tcp_destroy(struct fg_tcp *tcp);

/* Active open from `local` (one of net's addresses, IPv4 or IPv6; port 0: an ephemeral
 * port, 49152-65535, free for this peer) to `peer`, with the app's
 * context `ctx` (on_connect, on_data, on_close get it), at `now_ns` (the
 * clock fg_net_rx and fg_net_poll are given; the SYN leaves with the next
 * poll or flush). The conn in
 * SYN-SENT, or NULL and *err: -EAFNOSUPPORT (families differ, or neither
 * AF_INET nor AF_INET6), -EADDRNOTAVAIL
 * (`local` is not ours), -EINVAL (a peer no connection can have),
 * -EADDRINUSE (the 4-tuple is taken, or no ephemeral port is free),
 * -EADDRNOTAVAIL also when no free ephemeral port passes cfg.port_ok,
 * -ENOBUFS (no connection block), -EOPNOTSUPP (a passive instance). */
struct fg_tcp_conn *fg_tcp_connect(struct fg_tcp *tcp, const struct fg_endpoint *local,
				   const struct fg_endpoint *peer, void *ctx, uint64_t now_ns,
				   int *err);
/* Reload: listen on eps[0..n) from now on (same checks as at create);
 * connections already made, and handshakes under way, are not touched.
 * -EINVAL (nothing changed) for a bad endpoint or a passive instance. */
int fg_tcp_set_listen(struct fg_tcp *tcp, const struct fg_endpoint *eps, unsigned n);
/* Is `local` (an address of ours and a port) listened on? */
bool fg_tcp_listens_on(const struct fg_tcp *tcp, const struct fg_endpoint *local);

/* Our end of the connection (the port an active open was given). */
void fg_tcp_conn_local(const struct fg_tcp_conn *c, struct fg_endpoint *local);

/* Copy bytes into the bounded send buffer; they are segmented by MSS and
 * sent at the end of the burst. Returns the count accepted (less than
 * len, possibly 0, when the buffer is full: on_writable follows), or
 * -ENOTCONN when the connection can no longer send. */
int fg_tcp_send(struct fg_tcp_conn *c, const void *buf, uint32_t len);
uint32_t fg_tcp_send_space(const struct fg_tcp_conn *c);
/* Queue the octets of `n` pieces after everything queued before, without
 * copying them: the TCP takes a reference on each piece's handle
 * (fg_net_buf_ref) and drops it once those octets are acknowledged, or
 * when the connection closes or aborts. A piece with a NULL handle is
 * copied into the send buffer. All or nothing: 0 when every octet was
 * queued; -1 with errno EAGAIN when the referenced octets exceed
 * fg_tcp_ref_space(), or the copied ones fg_tcp_send_space(), or the
 * instance's piece descriptors are used up (on_writable follows once the
 * connection's own space is free; more than sndref_max at once never
 * fits: send it in parts); EINVAL when the connection can no longer send
 * or a piece is empty of data but not of length. */
int fg_tcp_send_ref(struct fg_tcp_conn *c, const struct fg_iov *p, unsigned n);
/* Referenced octets the connection may still queue (sndref_max less
 * those queued and not yet acknowledged). */
uint32_t fg_tcp_ref_space(const struct fg_tcp_conn *c);
/* Octets queued on the connection and not yet acknowledged by the peer,
 * copied and referenced alike: what a sender bounds so that what it
 * queues now leaves within a deadline. */
uint32_t fg_tcp_conn_unacked(const struct fg_tcp_conn *c);
/* Ask for one on_writable once at least `bytes` of send buffer are free
 * (an app that stops reading until its answers can be queued). */
void fg_tcp_want_writable(struct fg_tcp_conn *c, uint32_t bytes);
/* Orderly close after everything queued is sent; on_close follows. */
int fg_tcp_close(struct fg_tcp_conn *c);
/* RST now; no on_close. The conn is invalid once this returns. */
void fg_tcp_abort(struct fg_tcp_conn *c);
/* Stop / restart on_data; paused data stays queued and closes the window. */
void fg_tcp_pause(struct fg_tcp_conn *c);
void fg_tcp_resume(struct fg_tcp_conn *c);
/* Keep the buffer under `seg` beyond on_data: a reference is taken and
 * seg->len bytes count against the window until fg_tcp_release(). */
void fg_tcp_hold(struct fg_tcp_conn *c, const struct fg_iov *seg);
void fg_tcp_release(struct fg_tcp_conn *c, const struct fg_iov *seg);
/* Stop counting a hold against the window without dropping the buffer:
 * the app then owns that reference and drops it with fg_net_buf_unref()
 * (for holds that must outlive the connection). */
void fg_tcp_unaccount(struct fg_tcp_conn *c, uint32_t bytes);

enum fg_tcp_state fg_tcp_conn_state(const struct fg_tcp_conn *c);
void *fg_tcp_conn_ctx(const struct fg_tcp_conn *c);
void fg_tcp_conn_peer(const struct fg_tcp_conn *c, struct fg_endpoint *peer);
/* The window we would advertise now, in bytes. */
uint32_t fg_tcp_conn_rcv_window(const struct fg_tcp_conn *c);
/* The receive buffer the window is computed from (fg_tcp_config.rcvbuf). */
uint32_t fg_tcp_conn_rcvbuf(const struct fg_tcp_conn *c);
/* Bytes the conn has queued, out of order, and held by the app. */
uint32_t fg_tcp_conn_rx_bytes(const struct fg_tcp_conn *c);

const char *fg_tcp_state_name(enum fg_tcp_state s);
const char *fg_tcp_close_reason_name(enum fg_tcp_close_reason r);

/* Connection blocks in use (any state, TIME_WAIT included). */
unsigned fg_tcp_conns_in_use(const struct fg_tcp *tcp);
/* Segment descriptors in use. */
unsigned fg_tcp_segs_in_use(const struct fg_tcp *tcp);

/* End every connection now, sending nothing, as if each had been reset:
 * on_close(rst) for the accepted ones; the blocks are freed at the next
 * end of burst (fg_net_poll). Passive mode's end of a replay, or of a
 * shutdown. Returns how many. */
unsigned fg_tcp_drop_all(struct fg_tcp *tcp);

/* Passive mode: a connection's queued and out-of-order segments reached
 * rx_segs_per_conn (its app stopped reading), or the descriptor pool is
 * nearly empty. The caller should stop receiving until the app has read:
 * a capture's segments are never sent again, so none may be dropped. */
bool fg_tcp_backlogged(const struct fg_tcp *tcp);

/* Passive mode: every segment of a captured server's half (a segment from
 * a listen endpoint) also goes to `fn`, with the client it is sent to,
 * its sequence number, its flags (TCP's: FIN 0x01, SYN 0x02, RST 0x04)
 * and its text, valid during the call (shadow mode, shadow.h). */
typedef void fg_tcp_server_seg_fn(void *ctx, const struct fg_endpoint *client, uint32_t seq,
				  uint8_t flags, const uint8_t *data, uint32_t len);
void fg_tcp_observe_server(struct fg_tcp *tcp, fg_tcp_server_seg_fn *fn, void *ctx);

#endif /* FLOODGATE_TCP_H */
