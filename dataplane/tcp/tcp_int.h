/* SPDX-License-Identifier: MIT */
/*
 * tcp_int.h — the TCP module's private layout, shared by its files:
 *   tcp.c         instance, pools, connection table, app calls
 *   tcp_input.c   segment arrival (RFC 9293 3.10.7): LISTEN, the checks, ACKs, FIN
 *   tcp_reass.c   segment text: receive queue, out-of-order list, delivery
 *   tcp_passive.c segment arrival when the instance only observes
 *   tcp_output.c  segment building, send path, retransmission, persist
 *   tcp_timer.c   the timer wheel and per-connection deadlines
 *   tcp_cookie.c  SipHash, the connection hash and SYN cookies
 *   tcp_connect.c active open: connect, SYN-SENT, the SYN's timer
 *   tcp_sack.c    the sender's SACK scoreboard and loss recovery (RFC 6675)
 *
 * Sequence space of a connection (send side):
 *
 *      snd_una          snd_nxt              snd_una + sb_len   (+1 FIN)
 *   ----|--- in flight ---|---- queued, unsent ----|
 *
 * The sb_len queued octets [snd_una, snd_una+sb_len) are of two kinds:
 *   1. referenced pieces (fg_tcp_send_ref): the list sr_head..sr_tail,
 *      in sequence order, each [seq, seq+len) in the app's buffer, on
 *      which the TCP holds one reference (sr_bytes octets in all);
 *   2. every other octet, copied (fg_tcp_send): the sbuf ring, sb_ring
 *      octets from index sb_head, in the same order.
 * So the ring index of a copied octet at sequence x is
 * (x - snd_una) - (referenced octets in [snd_una, x)); sr_cur caches the
 * last piece looked up and sr_cur_before those referenced octets before
 * it, so that a segment's lookup does not walk from the head. With no
 * piece queued the stream is the ring alone, as it was before references.
 *
 * snd_max is the highest sequence number sent so far (after an RTO,
 * snd_nxt goes back to snd_una and climbs again toward snd_max).
 *
 * Receive side: rxq holds in-order payload not yet consumed by the app
 * (the head segment may be partly consumed: rxq_off); ooo holds segments
 * beyond rcv_nxt, sorted and non-overlapping. rcv_adv is the right edge
 * last advertised; the window never retracts below it (RFC 9293 3.8.6).
 */
#ifndef FLOODGATE_TCP_INT_H
#define FLOODGATE_TCP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "floodgate/net.h"
#include "floodgate/stats.h"
#include "floodgate/tcp.h"

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b) ((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b) ((int32_t)((a) - (b)) >= 0)

#define NS_PER_MS 1000000ull
#define TCP_MAX_WSCALE 14	/* RFC 7323 2.3 */
#define TCP_DEFAULT_MSS 536	/* RFC 9293 3.7.1: no MSS option */
#define TCP_MAX_SACK 4		/* SACK blocks in an ACK (36 of 40 option bytes) */
#define FG_TCP_SACK_SCAN 16	/* out-of-order blocks looked at for them */

/* conn->flags */
#define CF_ACK_NOW 0x0001	/* send an ACK at the end of the burst */
#define CF_DACK 0x0002		/* an ACK is owed; the delayed-ACK timer runs */
#define CF_PENDING 0x0004	/* on the end-of-burst list */
#define CF_APP 0x0008		/* accepted: the app has a context */
#define CF_APP_CLOSED 0x0010	/* the app called fg_tcp_close */
#define CF_FIN_RCVD 0x0020	/* peer's FIN is in sequence */
#define CF_FIN_SENT 0x0040	/* our FIN has been sent (occupies fin_seq) */
#define CF_EOF_DONE 0x0080	/* on_eof delivered */
#define CF_PAUSED 0x0100
#define CF_WANT_WRITE 0x0200	/* a send was cut short: on_writable owed */
#define CF_RECOVERY 0x0400	/* fast recovery (RFC 6582 NewReno) */
#define CF_RTT_TIMING 0x0800	/* rtt_seq is being timed */
#define CF_OOO_FIN 0x1000	/* a FIN beyond rcv_nxt is remembered at ooo_fin_seq */
#define CF_WS_OK 0x2000		/* window scaling agreed (RFC 7323 2.2) */
#define CF_FREEING 0x4000	/* on the deferred free list */
#define CF_PERSIST 0x8000	/* the persist timer owns the rexmt deadline */
#define CF_DATA_NEW 0x10000	/* new in-order data since the last on_data */
#define CF_IN_DATA 0x20000	/* inside on_data: the queue is the app's view */
#define CF_SACK_OK 0x40000	/* the peer sent SACK-permitted: our ACKs carry SACK blocks */
#define CF_GAP 0x80000		/* passive: octets were lost, the stream cannot go on */
#define CF_BACKLOG 0x100000	/* passive: counted in n_backlogged */
#define CF_ACTIVE 0x200000	/* opened by fg_tcp_connect: the app is told of its end */
#define CF_NO_MAC 0x400000	/* SYN-SENT, the SYN not sent yet: the peer's MAC unknown */
#define CF_WANT_REF 0x800000	/* a fg_tcp_send_ref was refused: on_writable owed */
#define CF_SACK_RECOVERY 0x1000000	/* SACK loss recovery (RFC 6675 5), tcp_sack.c */
#define CF_SACK_RTO 0x2000000	/* after an RTO: no recovery until RecoveryPoint is ACKed (5.1) */

#define TCP_SEG_PARTS 64	/* copied runs and attached pieces in one segment */

/*
 * The sender's SACK scoreboard (tcp_sack.c): what the peer reported
 * holding above SND.UNA, as sorted, disjoint, non-adjacent ranges
 * [blk[2i], blk[2i+1]) within (SND.UNA, SND.MAX]. Bounded: at most
 * TCP_SACK_SB_BLOCKS ranges; beyond that the highest is forgotten
 * (tcp_sack_sb_full), which only makes the sender retransmit more.
 */
#define TCP_SACK_SB_BLOCKS 16
struct tcp_sack_sb {
	uint32_t blk[2 * TCP_SACK_SB_BLOCKS];
	uint8_t n;			/* ranges in use */
	uint32_t high_rxt;		/* HighRxt: the highest octet retransmitted + 1 */
	uint32_t recovery_point;	/* RecoveryPoint: HighData when recovery began */
	uint32_t rxt_mark;		/* HighData when the latest retransmission left */
	uint32_t una_mark;		/* ... as SND.UNA's went again (at most that) */
	uint32_t una_seen;		/* SND.UNA una_mark belongs to */
};

/*
 * A connection's key, the same for both address families: an IPv4 address
 * is its 4 octets with 12 zeros after them, and `v6` keeps the families
 * apart. No padding, so a key compares with one memcmp; the hash of an
 * IPv4 key reads only its 4-octet addresses (tcp_cookie.c), so IPv4 costs
 * what it did before IPv6.
 */
struct tcp_tuple {
	uint8_t laddr[FG_IP6_ALEN];	/* ours, network order */
	uint8_t raddr[FG_IP6_ALEN];	/* the peer's */
	uint16_t lport, rport;		/* host order */
	uint32_t v6;			/* 0: IPv4, 1: IPv6 */
};

static inline bool tcp_tuple_eq(const struct tcp_tuple *a, const struct tcp_tuple *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* A received segment, parsed (tcp_input) for the arrival rules. */
struct tcp_seg_in {
	struct fg_rx_frame *f;
	struct tcp_tuple k;
	uint32_t seq, ack;
	uint16_t wnd;
	uint8_t flags;
	const uint8_t *data;
	uint32_t len;
	uint32_t mss;		/* SYN option, 0 = none */
	int ws;			/* SYN option, -1 = none */
	bool sack;		/* SYN option SACK-permitted */
	const uint8_t *sack_blk;	/* SACK option's blocks (RFC 2018 3), NULL = none */
	unsigned n_sack_blk;
};

struct tcp_seg {
	struct tcp_seg *next;
	const uint8_t *data;
	uint32_t seq;
	uint32_t len;
	void *handle;
};

/* A referenced piece of the send stream (fg_tcp_send_ref). */
struct tcp_sref {
	struct tcp_sref *next;
	const uint8_t *data;
	void *handle;			/* the app's buffer: one reference held */
	uint32_t seq, len;
};

/* An intrusive timer-wheel node; one per connection. */
struct tcp_tnode {
	struct tcp_tnode *next;
	struct tcp_tnode **pprev;
	uint64_t at;			/* deadline the node is filed under */
};

struct fg_tcp_conn {
	struct fg_tcp_conn *hnext;	/* hash chain / free list */
	struct fg_tcp *tcp;
	struct tcp_tuple k;
	uint8_t rmac[FG_ETH_ALEN];
	uint8_t state;
	uint8_t snd_wscale, rcv_wscale;	/* shift for the peer's / our window */
	uint8_t dupacks;
	uint8_t backoff;		/* RTO doublings so far */
	uint8_t retries;
	uint8_t rx_unacked;		/* in-order data segments not yet ACKed */
	uint32_t flags;
	uint32_t mss;			/* send MSS */

	/* send */
	uint32_t iss, snd_una, snd_nxt, snd_max;
	uint32_t snd_wnd, snd_wl1, snd_wl2, max_snd_wnd;
	uint32_t cwnd, ssthresh, recover;
	struct tcp_sack_sb sb;		/* SACK scoreboard (CF_SACK_OK only) */
	uint8_t *sbuf;
	uint32_t sb_head, sb_len;	/* sb_len: every queued octet, ring and referenced */
	uint32_t sb_ring;		/* octets of them in the ring */
	uint32_t want_space;		/* on_writable once this much is free */
	struct tcp_sref *sr_head, *sr_tail;
	uint32_t sr_bytes;		/* referenced octets queued */
	uint32_t want_ref;		/* on_writable once this much ref space is free */
	uint32_t want_pieces;		/* and this many descriptors */
	struct tcp_sref *sr_cur;	/* lookup cache (or NULL) */
	uint32_t sr_cur_before;		/* referenced octets in [snd_una, sr_cur->seq) */

	/* receive */
	uint32_t irs, rcv_nxt, rcv_adv, last_ack_sent;
	uint32_t ooo_fin_seq;
	uint32_t last_ooo_seq;		/* the latest out-of-order arrival (RFC 2018 4) */
	struct tcp_seg *rxq, *rxq_tail;
	uint32_t rxq_off;		/* consumed bytes of rxq's head */
	uint32_t rxq_bytes;		/* unconsumed bytes in rxq */
	struct tcp_seg *ooo;
	uint32_t ooo_bytes;
	uint16_t n_segs, n_ooo;		/* descriptors in rxq + ooo, in ooo */
	uint32_t held;			/* bytes the app holds (fg_tcp_hold) */

	/* RTT (RFC 6298), in ns */
	uint64_t srtt, rttvar, rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;

	/* deadlines (0 = off); the wheel node sits at their minimum */
	uint64_t t_rexmt;		/* retransmission, persist or SYN-ACK */
	uint64_t t_dack;
	uint64_t t_2msl;
	uint64_t last_rx;		/* idle and FIN-WAIT-2 timeouts run from here */
	struct tcp_tnode tn;

	struct fg_tcp_conn *pnext;	/* end-of-burst list */
	struct fg_tcp_conn *twnext, *twprev;	/* TIME_WAIT FIFO */
	void *ctx;
};

struct fg_tcp {
	struct fg_tcp_config cfg;
	struct fg_net *net;
	struct fg_stats *st;
	const struct fg_tcp_app_ops *ops;
	void *app;
	uint64_t now;
	uint16_t ip_id;
	uint8_t rcv_wscale;		/* the shift we offer */
	uint32_t mss_local;		/* MTU - 40: IPv4's (tcp_mss_local) */

	struct fg_tcp_conn *conns;
	struct fg_tcp_conn *free_conns;
	unsigned n_conns_used;
	uint8_t *sbufs;

	struct fg_tcp_conn **htab;
	uint32_t hmask;
	struct fg_tcp_conn *last;	/* the last lookup's hit, while hashed */

	struct tcp_seg *segs, *free_segs;
	unsigned n_segs_used;
	struct tcp_sref *srefs, *free_srefs;	/* sndref_pieces descriptors */
	unsigned n_srefs_used;
#define TCP_SEGS_LIGHT 16u
	/* Descriptors a connection may hold: rx_segs_per_conn; in passive
	 * mode what its count can hold, and reaching backlog_at
	 * (rx_segs_per_conn) only marks it backlogged. Live, backlog_at is 0,
	 * which a count never equals after an increment. */
	uint32_t segs_cap;
	uint32_t backlog_at;
	/* Live: the last descriptors of the pool, kept for connections that
	 * hold fewer than TCP_SEGS_LIGHT (tcp_reass.c seg_get). */
	unsigned segs_reserve;

	unsigned n_syn_rcvd;
	uint8_t *syn_peer;		/* SYN_RCVD count per peer-address bucket */
	uint32_t syn_peer_mask;

	struct fg_tcp_conn *pending;	/* end-of-burst list */
	struct fg_tcp_conn *freeing;	/* deferred frees */
	struct fg_tcp_conn *tw_head, *tw_tail;	/* TIME_WAIT, oldest first */

	/* timer wheel */
	struct tcp_tnode **wheel;
	uint32_t wmask;
	unsigned tick_shift;
	uint64_t cur_tick;
	unsigned n_timers;

	uint64_t sip_k0, sip_k1;
	uint32_t eph_next;		/* where the next ephemeral port search starts */
	bool passive;			/* observe only (fg_net_config.passive) */
	fg_tcp_server_seg_fn *server_seg;	/* passive: the server's half, or NULL */
	void *server_seg_ctx;
	unsigned n_backlogged;		/* passive: connections at rx_segs_per_conn */
};

/* The MSS we offer and send at most on a connection of key `k`: the MTU
 * less the IP header of its family and TCP's. */
static inline uint32_t tcp_mss_local(const struct fg_tcp *t, const struct tcp_tuple *k)
{
	return t->mss_local - (k->v6 ? FG_IP6_HLEN - FG_IP_HLEN : 0);
}

/* Synchronized and not yet in TIME-WAIT: data, ACKs and idle apply. */
static inline bool tcp_state_live(const struct fg_tcp_conn *c)
{
	return c->state >= FG_TCP_ESTABLISHED && c->state <= FG_TCP_CLOSING;
}

/* The L4 handler net calls (net.h, struct fg_net_l4_ops); ctx is the
 * struct fg_tcp. */
void tcp_input(void *ctx, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
	       const uint8_t *l4, uint32_t l4_len, uint64_t now_ns);	/* tcp_input.c */
void tcp_end_burst(void *ctx, uint64_t now_ns);				/* tcp.c */
void tcp_timers(void *ctx, uint64_t now_ns);				/* tcp_timer.c */
/* Packet Too Big for one of our segments (RFC 8201, RFC 5927 4.1) */
void tcp_icmp_error(void *ctx, const struct fg_net_icmp_err *e, uint64_t now_ns);	/* tcp_output.c */
uint64_t tcp_next_deadline(const void *ctx);				/* tcp_timer.c */

/* tcp.c */
void tcp_set_state(struct fg_tcp_conn *c, enum fg_tcp_state s);
struct fg_tcp_conn *tcp_lookup(struct fg_tcp *t, const struct tcp_tuple *k);
struct fg_tcp_conn *tcp_conn_alloc(struct fg_tcp *t);
void tcp_conn_insert(struct fg_tcp_conn *c);
/* End of the connection: app callback (if attached), then deferred free. */
void tcp_conn_drop(struct fg_tcp_conn *c, enum fg_tcp_close_reason why, bool notify);
void tcp_mark_pending(struct fg_tcp_conn *c);
void tcp_rxq_flush(struct fg_tcp_conn *c);
void tcp_enter_time_wait(struct fg_tcp_conn *c);
void tcp_app_close_notify(struct fg_tcp_conn *c, enum fg_tcp_close_reason why);
uint32_t tcp_rx_used(const struct fg_tcp_conn *c);
void tcp_syn_peer_dec(struct fg_tcp *t, const struct tcp_tuple *k);
/* The SYN_RCVD count of the peer address of `k` (its bucket). */
uint8_t *tcp_syn_peer(struct fg_tcp *t, const struct tcp_tuple *k);
/* The connection's IP header length; its MSS ceiling (MTU - headers). */
static inline uint32_t tcp_l3_hlen(const struct tcp_tuple *k)
{
	return k->v6 ? FG_IP6_HLEN : FG_IP_HLEN;
}

/* tcp_input.c */
bool tcp_listening(const struct fg_tcp *t, const struct tcp_tuple *k);
/* A new block for the segment's 4-tuple: addresses, MSS, options, cwnd. */
void tcp_conn_init(struct fg_tcp_conn *c, const struct tcp_seg_in *s, uint32_t peer_mss,
		   int peer_ws, bool sack);
/* ESTABLISHED and the app's on_accept; -1 when the block is gone. */
int tcp_establish(struct fg_tcp_conn *c);
/* The FIN at RCV.NXT (RFC 9293 3.10.7.4, eighth check). */
void tcp_fin_input(struct fg_tcp_conn *c);

/* tcp_reass.c */
/* The segment's text (seventh check): queued in order, or out of order. */
void tcp_data_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s);
/* Offer the queued in-order payload to the app (end of burst). */
void tcp_deliver(struct fg_tcp_conn *c);

/* tcp_passive.c */
/* A segment to an instance that only observes. */
void tcp_passive_input(struct fg_tcp *t, struct tcp_seg_in *s);
/* End of burst for a connection whose app closed: over, or lingering. */
void tcp_passive_closed(struct fg_tcp_conn *c);
/* After the connection's descriptor count changed: the backlog bound. */
void tcp_passive_backlog(struct fg_tcp_conn *c);
/* `n` octets the stream had already: trimmed (passive_dup_bytes). */
void tcp_passive_dup(struct fg_tcp_conn *c, uint32_t n);
/* Octets the stream needs are lost (no descriptor, out-of-order list
 * full): a live peer would send them again, a capture will not. */
void tcp_passive_gap(struct fg_tcp_conn *c);

/* tcp_output.c */
void tcp_output(struct fg_tcp_conn *c);
/* `n` queued octets from snd_una were acknowledged (call before snd_una
 * moves): ring space and the references of whole pieces are given back. */
void tcp_sendq_acked(struct fg_tcp_conn *c, uint32_t n);
/* Every referenced piece dropped, the ring emptied (the connection ends). */
void tcp_sendq_flush(struct fg_tcp_conn *c);
/* The octets, at most `len`, one segment from `seq` can carry given how
 * the queue is made (copies before attached pieces, the port's limit on
 * pieces in a frame). At least 1 when len is. */
uint32_t tcp_seg_fit(struct fg_tcp_conn *c, uint32_t seq, uint32_t len);
/* Ring space, and referenced-octet space, free now. */
uint32_t tcp_ring_space(const struct fg_tcp_conn *c);
int tcp_send_ctl(struct fg_tcp_conn *c, uint8_t flags, uint32_t seq);
/* `len` bytes of the send ring from `seq`, with `flags` (retransmissions). */
int tcp_xmit(struct fg_tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len);
void tcp_send_synack(struct fg_tcp_conn *c);
/* The SYN of an active open: MSS, window scale and SACK-permitted offered. */
void tcp_send_syn(struct fg_tcp_conn *c);
void tcp_send_ack_now(struct fg_tcp_conn *c);
/* A RST (or RST|ACK) answering a segment with no connection. */
void tcp_reply_rst(struct fg_tcp *t, const struct fg_rx_frame *f, const struct tcp_tuple *k,
		   uint32_t seq, uint32_t ack, uint8_t flags);
/* A SYN-ACK with no connection block (SYN cookie). */
void tcp_send_cookie_synack(struct fg_tcp *t, const struct fg_rx_frame *f,
			    const struct tcp_tuple *k, uint32_t iss, uint32_t ack, uint32_t mss,
			    int peer_ws, bool sack);
uint16_t tcp_window_to_advertise(struct fg_tcp_conn *c, bool syn);
void tcp_rexmt_timeout(struct fg_tcp_conn *c);
void tcp_persist_timeout(struct fg_tcp_conn *c);
void tcp_rtt_sample(struct fg_tcp_conn *c, uint64_t rtt);
uint32_t tcp_window_edge(const struct fg_tcp_conn *c);

/* tcp_connect.c */
/* A segment for a connection in SYN-SENT (RFC 9293 3.10.7.3). */
void tcp_syn_sent_input(struct fg_tcp_conn *c, struct tcp_seg_in *s);
/* The SYN-SENT retransmission timer: the SYN again, or the open given up. */
void tcp_syn_sent_timeout(struct fg_tcp_conn *c);
/* An active open reached ESTABLISHED: on_connect; -1 when the block is gone. */
int tcp_connected(struct fg_tcp_conn *c);

/* tcp_sack.c */
/* After the cumulative ACK of `s` was taken (new_ack): the scoreboard
 * updated from its SACK blocks, recovery entered or left. `dup`: the ACK
 * did not move SND.UNA while data was in flight. */
void tcp_sack_input(struct fg_tcp_conn *c, const struct tcp_seg_in *s, bool dup);
/* In recovery: retransmit by NextSeg() while cwnd - pipe >= SMSS; rule 1
 * (lost holes) or, with `rule3`, rule 3 (holes not yet lost). True when
 * something was sent. */
bool tcp_sack_rexmit(struct fg_tcp_conn *c, bool rule3);
/* The room for new data within the peer's window (`inflight` = SND.NXT -
 * SND.UNA): in recovery cwnd less pipe; before it, on the first two
 * duplicate ACKs, cwnd plus a segment each (Limited Transmit). */
uint32_t tcp_sack_room(const struct fg_tcp_conn *c, uint32_t inflight);
/* An RTO (RFC 6675 5.1, RFC 2018 8): scoreboard cleared, RecoveryPoint =
 * HighData, recovery over. */
void tcp_sack_rto(struct fg_tcp_conn *c);
/* Go-back-N after an RTO: SND.NXT past what the peer SACKed since, and
 * `len` cut at the next SACKed range. Returns the new len. */
uint32_t tcp_sack_skip(struct fg_tcp_conn *c, uint32_t len);
/* Scoreboard primitives, exposed for the unit tests. */
bool tcp_sack_is_lost(const struct fg_tcp_conn *c, uint32_t seq);
uint32_t tcp_sack_pipe(const struct fg_tcp_conn *c);
/* NextSeg() rules 1 and 3: the next retransmission, 0 with *seq and *len set,
 * or -1. */
int tcp_sack_next_seg(const struct fg_tcp_conn *c, bool rule3, uint32_t *seq, uint32_t *len);
/* Update(): merge the valid blocks; the octets newly SACKed. */
uint32_t tcp_sack_update(struct fg_tcp_conn *c, const uint32_t *blk, unsigned n);

/* tcp_timer.c */
int tcp_wheel_init(struct fg_tcp *t);
void tcp_wheel_free(struct fg_tcp *t);
void tcp_timer_update(struct fg_tcp_conn *c);
void tcp_timer_cancel(struct fg_tcp_conn *c);
uint64_t tcp_idle_deadline(const struct fg_tcp_conn *c);

/* tcp_cookie.c */
uint32_t tcp_conn_hash(const struct fg_tcp *t, const struct tcp_tuple *k);
/* The hash of the peer's address alone (the per-peer SYN backlog). */
uint32_t tcp_peer_hash(const struct fg_tcp *t, const struct tcp_tuple *k);
uint32_t tcp_cookie_make(const struct fg_tcp *t, const struct tcp_tuple *k, uint32_t peer_isn,
			 uint32_t mss, int peer_ws, bool sack, uint64_t now);
/* 0 (with *mss and *peer_ws set) when `cookie` is valid for this 4-tuple now. */
int tcp_cookie_check(const struct fg_tcp *t, const struct tcp_tuple *k, uint32_t peer_isn,
		     uint32_t cookie, uint64_t now, uint32_t *mss, int *peer_ws, bool *sack);
uint32_t tcp_iss(const struct fg_tcp *t, const struct tcp_tuple *k, uint64_t now);

#endif /* FLOODGATE_TCP_INT_H */
