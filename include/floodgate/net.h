/* SPDX-License-Identifier: MIT */
/*
 * net.h — Ethernet, ARP, IPv4 and ICMP echo for one dataplane instance,
 * with no device inside: frames in, frames out.
 *
 * Packet buffers belong to the port layer (DPDK mbufs on the dataplane,
 * malloc'd buffers in the TAP harness and the tests). The module sees a
 * received frame as (data, len, flags, handle) and reaches the buffer only
 * through the port's ops: take a reference, drop a reference, allocate a
 * TX buffer, return an unsent one, send a burst. So payload can travel to
 * the application without a copy and stay held (TCP's queues, an article
 * being made durable) until the last reference is dropped.
 *
 * Ownership:
 *   fg_net_rx() takes over the caller's reference on every frame it is
 *   given; whoever keeps payload takes its own reference (fg_net_buf_ref).
 *   A TX buffer from fg_net_tx_alloc() is either queued with
 *   fg_net_tx_queue() (which consumes it) or returned with
 *   fg_net_tx_discard(). Queued frames go to the port in bursts of
 *   FG_NET_TX_BURST, and at every fg_net_flush()/fg_net_poll().
 *
 * Checksums: verified in software unless the frame's flags say the port
 * already did (FG_RX_IP_CSUM_OK, FG_RX_L4_CSUM_OK); TCP keeps a received
 * payload's sum with its buffer (struct fg_buf_sum, the optional buf_sum
 * op) to derive the checksums of what it sends by reference. TSO frames
 * (FG_TX_TSO, fg_net_config.tso_max) are cut by the port. With tx_csum_offload
 * the module leaves the IPv4 header checksum at 0 and the TCP checksum as
 * the pseudo-header sum, and marks the frame FG_TX_CSUM_OFFLOAD, which is
 * what a NIC with IPv4/TCP checksum offload expects (DPDK's convention).
 *
 * Merged packets (the port's GRO, docs/dataplane.md "Large articles"): a
 * frame flagged FG_RX_MORE is one IPv4 TCP packet made of several
 * received segments of one flow. `data`/`len` hold the headers (IP total
 * length and all) and the first segment's payload; `more[0..n_more)` the
 * payload that follows, in order, each piece in its own buffer with its
 * own reference, which fg_net_rx() takes over like the frame's. The port
 * merges only segments whose checksums it verified one by one (a merged
 * header's checksums are stale), so such a frame must carry both
 * FG_RX_*_CSUM_OK, be untagged IPv4 to a TCP handler and have no padding;
 * anything else with pieces is counted (net_rx_merged_bad) and dropped.
 *
 * VLANs (IEEE 802.1Q): each address has a VLAN (vid[], 0: untagged). A
 * received frame's VLAN is its tag (in the frame, or stripped by the port:
 * FG_RX_VLAN); a frame of a VLAN with none of our addresses is counted
 * (net_rx_vlan_unknown) and dropped, and an address answers only on its
 * own VLAN. A frame we send goes out on the VLAN of its source address
 * (IP source, ARP sender): marked FG_TX_VLAN for the port, which
 * inserts the tag, so nothing above the link layer knows about VLANs.
 *
 * IPv4 and IPv6 (ipv6.c, when the instance has an IPv6 address):
 * fragments are counted and dropped (no NNTP peer needs them: TCP's MSS
 * keeps segments within the MTU), IPv4 options are tolerated and skipped,
 * IPv6 extension headers walked (or the packet dropped and counted).
 * IPv6 brings its own link layer: Neighbour Discovery (answers, DAD, an
 * unsolicited NA), ICMPv6 echo, and Packet Too Big handed to the
 * transport (docs/tcp.md, "IPv6").
 *
 * Transport protocols are not built in: each registers an L4 handler for
 * its IP protocol number (fg_net_l4_register), as a Linux stack's
 * protocols register with inet_add_protocol(). net validates the network
 * header and hands the packet's L4 part to the handler; after every
 * received burst and every poll it runs each handler's end-of-burst pass,
 * from fg_net_poll its timers, and it asks each for its next deadline.
 * TCP registers itself in fg_tcp_create(). ICMP echo is net's own.
 *
 * The exception path: what is not the dataplane's — TCP to ports no
 * handler wants (the handler's `wants`), protocols with no handler, ICMP
 * but echo requests, ARP for addresses we do not own and ARP replies (the
 * kernel may have asked), other ethertypes — goes to the box's kernel
 * through the port's `to_kernel` op when the port has one and the
 * configuration gives the path a rate (kernel_rate), else it is counted
 * and dropped as before. A token bucket (kernel_rate frames a second,
 * kernel_burst at once) bounds what a flood to closed ports can cost a
 * worker; what it refuses is counted (net_to_kernel_limited). An L3
 * handler outside this file (IPv6) says "not mine" with
 * fg_net_to_kernel().
 *
 * Time is passed in by the caller (monotonic ns); nothing here reads a
 * clock. One instance per worker core; an instance is never shared.
 */
#ifndef FLOODGATE_NET_H
#define FLOODGATE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/iov.h"
#include "floodgate/stats.h"
#include "floodgate/wire.h"

#define FG_NET_MAX_ADDRS 8
#define FG_NET_TX_BURST 32

/* Received-frame flags, set by the port layer. */
#define FG_RX_IP_CSUM_OK 0x1u	/* the NIC verified the IPv4 header checksum */
#define FG_RX_L4_CSUM_OK 0x2u	/* the NIC verified the TCP/ICMP checksum */
#define FG_RX_VLAN 0x4u		/* the NIC stripped an 802.1Q tag: `vlan` is its TCI */
#define FG_RX_MORE 0x8u		/* a merged packet: its payload goes on in `more` */
#define FG_RX_SUM_KEPT 0x10u	/* with FG_RX_L4_CSUM_OK: the port filled (or cleared) the
				 * payload sum of the frame's buffer and its pieces'
				 * (struct fg_buf_sum), having verified them itself */
/* Transmit-frame flags, for the port layer. */
#define FG_TX_CSUM_OFFLOAD 0x1u	/* compute IPv4 + TCP checksums in hardware */
#define FG_TX_IPV6 0x2u		/* with FG_TX_CSUM_OFFLOAD: an IPv6 frame (TCP only) */
#define FG_TX_VLAN 0x4u		/* send tagged with VLAN `vlan` (the port inserts the tag) */
#define FG_TX_CHAINED 0x8u	/* pieces are attached (tx_attach): `data` holds only the
				 * first len - (their octets); the port knows the rest */
#define FG_TX_TSO 0x10u		/* a TCP frame the port cuts into segments of `tso_segsz`
				 * payload octets (TSO): its IPv4 header checksum 0, its TCP
				 * checksum field the pseudo-header sum without the length */

struct fg_rx_frame {
	uint8_t *data;
	uint32_t len;
	uint32_t flags;		/* FG_RX_* */
	void *handle;		/* the port's buffer (an mbuf) */
	uint16_t vlan;		/* with FG_RX_VLAN */
	uint16_t n_more;	/* with FG_RX_MORE: pieces in `more` (at least one) */
	const struct fg_rx_piece *more;	/* with FG_RX_MORE */
};

/* Payload of a merged packet after the frame's own buffer (FG_RX_MORE). */
struct fg_rx_piece {
	uint8_t *data;
	uint32_t len;
	void *handle;
};

/* Octets of a merged packet's pieces; 0 for a plain frame. */
static inline uint32_t fg_rx_more_len(const struct fg_rx_frame *f)
{
	uint32_t n = 0;

	if (f->flags & FG_RX_MORE)
		for (unsigned i = 0; i < f->n_more; i++)
			n += f->more[i].len;
	return n;
}

struct fg_tx_frame {
	uint8_t *data;
	uint32_t len;
	uint32_t flags;		/* FG_TX_* */
	void *handle;
	uint16_t vlan;		/* with FG_TX_VLAN: the VLAN ID */
	uint16_t tso_segsz;	/* with FG_TX_TSO: payload octets of each segment */
};

/*
 * The ones'-complement sum of a received TCP segment's payload, kept with
 * the buffer that holds it (the port's buf_sum op; docs/tcp.md "Checksum
 * reuse"). TCP fills it where it verifies the segment's checksum in
 * software, and clears it where it did not (the port verified it, or the
 * payload is a merged packet's piece). When a piece of that payload is
 * sent by reference with the checksum in software, its sum is derived
 * from this one (fg_csum_derive) instead of read from the article's
 * octets. The payload's octets must not change while the buffer is held.
 */
struct fg_buf_sum {
	const uint8_t *start;	/* the payload's first octet; NULL: no sum kept */
	uint32_t len;
	uint32_t sum;		/* fg_csum_add(0, start, len) */
	/* Learnt when a piece from either end was summed: [start, cut) sums
	 * to cut_sum, so the piece on the other side of the cut (the rest of
	 * the payload, sent in the next segment) costs no read. NULL: none. */
	const uint8_t *cut;
	uint32_t cut_sum;
};

/* Received payload reaches the application as struct fg_iov (iov.h):
 * `base`/`len` point into the buffer `handle`, which stays valid while
 * someone holds a reference on it. */

/* What the port layer provides. Every op is required but to_kernel. */
struct fg_port_ops {
	void (*buf_ref)(void *port, void *handle);
	void (*buf_unref)(void *port, void *handle);
	/* A TX buffer with room for `size` bytes; NULL when none is free. */
	uint8_t *(*tx_alloc)(void *port, uint32_t size, void **handle);
	/* Give back a TX buffer that will not be sent. */
	void (*tx_free)(void *port, void *handle);
	/* Send `n` frames; the port owns all of them afterwards (it frees
	 * those it could not send). Returns how many it sent. */
	unsigned (*tx_burst)(void *port, struct fg_tx_frame *frames, unsigned n);
	/* Optional: hand a received frame to the box's kernel (the exception
	 * path); the port takes its own reference. 0, or -errno when it could
	 * not (net counts net_to_kernel_failed). */
	int (*to_kernel)(void *port, const struct fg_rx_frame *f);
	/* Optional (needed for fg_net_config.tx_max_segs > 1): append `len`
	 * octets at `data`, inside the buffer `piece` (a received frame's
	 * handle), to the TX frame `frame` from tx_alloc, after what was
	 * attached before and after the frame's own octets, without copying:
	 * the frame holds its own reference on `piece` until the port has
	 * sent or freed it. 0, or -ENOBUFS (nothing attached). The frame's
	 * len given to tx_burst then counts the attached octets too. */
	int (*tx_attach)(void *port, void *frame, void *piece, const uint8_t *data,
			 uint32_t len);
	/* Optional: the place kept with a received buffer for its payload's
	 * sum (struct fg_buf_sum), or NULL. Without it every piece sent by
	 * reference is read to checksum it. */
	struct fg_buf_sum *(*buf_sum)(void *port, void *handle);
};

struct fg_net_config {
	uint8_t mac[FG_ETH_ALEN];
	uint32_t ipv4[FG_NET_MAX_ADDRS];	/* our addresses, network byte order */
	uint16_t vid[FG_NET_MAX_ADDRS];		/* each one's VLAN; 0: untagged */
	uint8_t plen[FG_NET_MAX_ADDRS];		/* each one's prefix length; 0: unknown */
	unsigned n_ipv4;
	unsigned mtu;			/* IP MTU; 0 = 1500 */
	unsigned arp_entries;		/* peer MAC cache slots, power of two; 0 = 1024 */
	uint64_t arp_ttl_ns;		/* 0 = 300 s */
	bool tx_csum_offload;		/* the port computes checksums */
	/* Buffers one TX frame may chain, its own first (the port's
	 * nb_mtu_seg_max with RTE_ETH_TX_OFFLOAD_MULTI_SEGS); 0 or 1: one
	 * buffer a frame, so TCP copies what it sends by reference. More
	 * needs the port's tx_attach op. */
	unsigned tx_max_segs;
	/* TSO (the port's RTE_ETH_TX_OFFLOAD_TCP_TSO): TCP payload octets one
	 * frame may carry for the port to cut into MSS-sized segments; 0: no
	 * TSO, one segment a frame. */
	uint32_t tso_max;
	uint64_t hash_seed;		/* keys the ARP cache (and TCP's tables) */
	uint32_t kernel_rate;		/* frames/s to the kernel; 0 = no exception path */
	uint32_t kernel_burst;		/* frames at once; 0 = a tenth of the rate, at least 8 */
	/* Observe only (passive mode: a recorded or mirrored feed): nothing
	 * is ever transmitted; frames addressed anywhere are taken (one
	 * 802.1Q tag allowed), checksums count as verified, the destination
	 * is left to the L4 handler, drops count as passive_not_tcp and
	 * passive_bad; TCP reassembles the client streams sent to its listen
	 * endpoints without a handshake of its own (docs/tcp.md). */
	bool passive;
	/* IPv6: our global (or ULA) addresses; with at least one, the
	 * instance speaks IPv6 and adds its link-local address (EUI-64 of
	 * the MAC, RFC 4291 2.5.6). Without any, IPv6 is counted and dropped. */
	uint8_t ipv6[FG_NET_MAX_ADDRS][FG_IP6_ALEN];
	unsigned n_ipv6;
	/* The one instance of a port that runs Duplicate Address Detection
	 * (RFC 4862 5.4) and sends the unsolicited NA; the others take the
	 * addresses as usable at once (their owner aborts on a conflict). */
	bool nd_announce;
	uint64_t dad_ns;		/* DAD's wait for an objection; 0 = 1 s (RetransTimer) */
};

/*
 * Fault injection for tests: a share (parts per million) of TCP segments
 * received and transmitted is dropped, duplicated or held back behind the
 * next segment (reordered). The choice is a seeded PRNG, so a run repeats.
 */
struct fg_net_faults {
	uint32_t rx_drop_ppm, rx_dup_ppm, rx_reorder_ppm;
	uint32_t tx_drop_ppm, tx_dup_ppm, tx_reorder_ppm;
	uint64_t seed;
};

struct fg_net;

/* Constructor: NULL on bad config (logged) or no memory. `stats` is the
 * owning core's counter block; it must outlive the instance. */
struct fg_net *fg_net_create(const struct fg_net_config *cfg,
			     const struct fg_port_ops *ops, void *port,
			     struct fg_stats *stats);
/* Drops every reference the instance still holds (a held-back frame). */
void fg_net_destroy(struct fg_net *net);

/* Process a burst of received frames (takes over their references), then
 * run the L4 handlers' end-of-burst passes (TCP: deliver data, send ACKs
 * and responses) and flush transmissions. Returns n. */
unsigned fg_net_rx(struct fg_net *net, struct fg_rx_frame *frames, unsigned n,
		   uint64_t now_ns);
/* Timers (the L4 handlers': TCP's wheel), deferred work and a TX flush.
 * Call often. */
void fg_net_poll(struct fg_net *net, uint64_t now_ns);

/* Reload: our IPv4 addresses become ipv4[0..n) (each with its prefix
 * length and VLAN, as in fg_net_config). An address no longer among them
 * is "leaving" for leave_ns: still ours (ARP answered, its packets taken)
 * so that the connections already made on it can finish, while TCP
 * refuses new ones (fg_net_ipv4_leaving); then it is dropped, at a poll.
 * Leaving addresses fill only the room the new ones leave (a leaving one
 * that finds none is dropped at once). -EINVAL (nothing changed): more
 * than FG_NET_MAX_ADDRS, or a passive instance. IPv6 addresses are not
 * changed here. */
int fg_net_set_ipv4(struct fg_net *net, const uint32_t *ipv4, const uint8_t *plen,
		    const uint16_t *vid, unsigned n, uint64_t leave_ns);
bool fg_net_ipv4_leaving(const struct fg_net *net, uint32_t ip);
/* The next time fg_net_poll() has work, or UINT64_MAX. */
uint64_t fg_net_next_deadline(const struct fg_net *net);
void fg_net_flush(struct fg_net *net);

int fg_net_set_faults(struct fg_net *net, const struct fg_net_faults *f);
/* "rx-drop=1,tx-dup=0.5,seed=7": percentages (0..100) of TCP segments for
 * each of rx-drop, rx-dup, rx-reorder, tx-drop, tx-dup, tx-reorder, and
 * the PRNG's seed; keys not given keep their value in *f. 0, or -EINVAL
 * (an unknown key, no `=`, a share outside 0..100, a spec over 255
 * octets). */
int fg_net_faults_parse(const char *spec, struct fg_net_faults *f);

/* Peer MAC for `ip` (network order): 0 and *mac set, or -EAGAIN after an
 * ARP request has been queued (at most one a second per address). */
int fg_net_arp_resolve(struct fg_net *net, uint32_t ip, uint8_t mac[FG_ETH_ALEN],
		       uint64_t now_ns);
/* IPv6 (Neighbour Discovery, RFC 4861 7.2): on-link peer `ip`'s MAC from
 * the neighbour cache: 0 and *mac set, -EAGAIN after a Neighbour
 * Solicitation has been queued (at most one a second per address), or
 * -EHOSTUNREACH on an instance without IPv6. */
int fg_net_nd_resolve(struct fg_net *net, const uint8_t *ip, uint8_t mac[FG_ETH_ALEN],
		      uint64_t now_ns);
/* A neighbour given, not asked for: `ip`'s MAC from now on, never expired
 * nor evicted (an ARP reply may still change the MAC). For a link that
 * carries no broadcast (an 802.3ad bond whose members take no
 * all-multicast: feedgen --dpdk-peer-mac). 0, or -EINVAL for 0.0.0.0. */
int fg_net_arp_static(struct fg_net *net, uint32_t ip, const uint8_t mac[FG_ETH_ALEN]);
bool fg_net_is_local_ipv4(const struct fg_net *net, uint32_t ip);
const uint8_t *fg_net_mac(const struct fg_net *net);
unsigned fg_net_mtu(const struct fg_net *net);
bool fg_net_tx_offload(const struct fg_net *net);
bool fg_net_passive(const struct fg_net *net);
struct fg_stats *fg_net_stats(struct fg_net *net);

/* "Not mine": the frame goes to the box's kernel through the exception
 * path, within its rate. 0 when the path took it, or dropped it for the
 * rate (counted); -ENOENT when there is no exception path (the caller
 * counts its own drop). The caller keeps its reference. */
int fg_net_to_kernel(struct fg_net *net, const struct fg_rx_frame *f);

/* Buffer references through the port's ops. */
void fg_net_buf_ref(struct fg_net *net, void *handle);
void fg_net_buf_unref(struct fg_net *net, void *handle);

/* TX path for the protocol modules. */
uint8_t *fg_net_tx_alloc(struct fg_net *net, uint32_t size, void **handle);
void fg_net_tx_discard(struct fg_net *net, void *handle);
/* Pieces a TX frame may carry beside its own buffer (tx_max_segs - 1;
 * 0 without chaining). */
unsigned fg_net_tx_max_attach(const struct fg_net *net);
/* Attach a piece to a TX frame (the port's tx_attach): 0, or -ENOBUFS.
 * The frame is then queued with FG_TX_CHAINED, its len counting the
 * pieces. */
int fg_net_tx_attach(struct fg_net *net, void *frame, void *piece, const uint8_t *data,
		     uint32_t len);
/* Queue a finished frame (faults apply to TCP frames: `is_tcp`). */
void fg_net_tx_queue(struct fg_net *net, uint8_t *data, uint32_t len, void *handle,
		     uint32_t flags, bool is_tcp);
/* The same for a TCP frame the port segments (flags with FG_TX_TSO),
 * each segment carrying `segsz` payload octets. */
void fg_net_tx_queue_tso(struct fg_net *net, uint8_t *data, uint32_t len, void *handle,
			 uint32_t flags, uint16_t segsz);
/* TCP payload octets a TSO frame may carry (fg_net_config.tso_max); 0:
 * no TSO. */
uint32_t fg_net_tso_max(const struct fg_net *net);
/* The payload sum kept with a received buffer (struct fg_buf_sum), or
 * NULL when the port keeps none. */
struct fg_buf_sum *fg_net_buf_sum(struct fg_net *net, void *handle);
/* Write an Ethernet + IPv4 header (20 bytes, DF, TTL 64) for `l4_len`
 * bytes of payload; the header checksum is filled unless `offload`. */
void fg_net_build_ipv4(uint8_t *frame, const uint8_t *dst_mac, const uint8_t *src_mac,
		       uint32_t src, uint32_t dst, uint8_t proto, uint32_t l4_len,
		       uint16_t ip_id, int offload);
/* Write an Ethernet + IPv6 header (40 bytes, no extension headers) for
 * `l4_len` bytes of payload with hop limit `hlim`. */
void fg_net_build_ipv6(uint8_t *frame, const uint8_t *dst_mac, const uint8_t *src_mac,
		       const uint8_t *src, const uint8_t *dst, uint8_t proto,
		       uint32_t l4_len, uint8_t hlim);

/* ---- IPv6 (ipv6.c) ---- */

/* Duplicate Address Detection of the instance with nd_announce: 0 once
 * every address passed (or IPv6 is off, or another instance announces),
 * -EAGAIN while it runs (fg_net_poll drives it), -EADDRINUSE when another
 * node holds one of them (logged, naming it). Safe to read from another
 * thread. */
int fg_net_ipv6_dad(const struct fg_net *net);
/* The multicast MACs the port must receive for IPv6 (all-nodes and each
 * solicited-node group, RFC 4861 7.2.1 / RFC 2464 7): up to `max` into
 * `macs`; returns how many there are (0 without IPv6). */
unsigned fg_net_ipv6_mc_macs(const struct fg_net *net, uint8_t (*macs)[FG_ETH_ALEN],
			     unsigned max);
/* The instance's link-local address (16 octets); false without IPv6. */
bool fg_net_ipv6_link_local(const struct fg_net *net, uint8_t out[FG_IP6_ALEN]);
bool fg_net_is_local_ipv6(const struct fg_net *net, const uint8_t *ip);

/* ---- L4 handlers ---- */

#define FG_NET_MAX_L4 4		/* protocols registered at once */

/*
 * The network header of a received packet, as an L4 handler sees it.
 * One handler serves every address family of its protocol number: IPv4
 * packets come with family AF_INET and 4-byte addresses, IPv6 ones with
 * AF_INET6 and 16-byte addresses (`hdr` is then the fixed header; the
 * extension headers were walked).
 */
struct fg_net_l3 {
	unsigned family;		/* AF_INET or AF_INET6 */
	const uint8_t *hdr;		/* the network header */
	const uint8_t *src, *dst;	/* its addresses, network order (4 or 16 bytes) */
};

/*
 * An ICMP error about a packet we sent, as net hands it to the handler of
 * the quoted packet's protocol: only Packet Too Big (ICMPv6 type 2) now,
 * already checked for an MTU of at least 1280 and a quoted packet from
 * one of our addresses. The transport still checks that the quote is one
 * of its connections' (RFC 5927 4.1: the sequence number in the window).
 */
struct fg_net_icmp_err {
	unsigned family;		/* AF_INET6 */
	uint32_t mtu;			/* the link MTU the router reported */
	const uint8_t *src, *dst;	/* the quoted packet's: ours, the peer's */
	const uint8_t *l4;		/* the quoted transport header */
	uint32_t len;			/* octets of it quoted, at least 8 */
};

struct fg_net_l4_ops {
	/* One packet of the protocol: `l4` is its header, `len` runs to the
	 * end of the IP payload. The frame's reference stays net's (dropped
	 * after the call): a handler that keeps payload takes its own
	 * (fg_net_buf_ref). Required. */
	void (*input)(void *ctx, struct fg_rx_frame *f, const struct fg_net_l3 *l3,
		      const uint8_t *l4, uint32_t len, uint64_t now_ns);
	/* After every received burst and every poll: work the burst made
	 * (TCP: deliver data to the app, send ACKs and answers). Optional. */
	void (*end_of_burst)(void *ctx, uint64_t now_ns);
	/* From fg_net_poll, before end_of_burst: what is due by now_ns.
	 * Optional. */
	void (*timers)(void *ctx, uint64_t now_ns);
	/* The next time `timers` or `end_of_burst` has work, or UINT64_MAX.
	 * Optional (never, then). */
	uint64_t (*next_deadline)(const void *ctx);
	/* An ICMP error quoting one of the protocol's packets. Optional
	 * (counted and dropped without it). */
	void (*icmp_error)(void *ctx, const struct fg_net_icmp_err *e, uint64_t now_ns);
	/* With an exception path: is this packet the handler's (TCP: to a
	 * listen endpoint)? false sends it to the kernel instead. Optional
	 * (every packet is, then). */
	bool (*wants)(const void *ctx, const struct fg_net_l3 *l3, const uint8_t *l4,
		      uint32_t len);
};

/* Packets of IP protocol `proto` (FG_IP_PROTO_*) go to `ops` with `ctx`
 * from now on. 0, -EEXIST when the protocol has a handler already,
 * -ENOSPC beyond FG_NET_MAX_L4 protocols, -EINVAL for ICMP (net's own)
 * or an ops table without input. */
int fg_net_l4_register(struct fg_net *net, uint8_t proto, const struct fg_net_l4_ops *ops,
		       void *ctx);
/* The protocol's packets are counted and dropped again (net_ip_proto). */
void fg_net_l4_unregister(struct fg_net *net, uint8_t proto);

#endif /* FLOODGATE_NET_H */
