/* SPDX-License-Identifier: MIT */
/*
 * memport.h — a port made of memory: reference-counted, malloc'd packet
 * buffers behind the fg_port_ops table. The TAP harness, the unit tests,
 * the fuzz target and the benchmark use it where the dataplane uses mbufs.
 *
 * Buffers come from a fixed free list sized at creation (like a mempool:
 * when it is empty, allocation fails and the caller counts it). Transmitted
 * frames go to a sink callback (the TAP harness writes them to the device,
 * the tests capture them) and are then freed. Single-threaded.
 *
 * Chained frames (tx_attach): a TX buffer records the pieces attached to
 * it, each with a reference on its buffer, as a DPDK indirect mbuf holds
 * its direct one; the pieces' references are dropped when the frame's
 * last one is. The sink sees such a frame as the wire would, made
 * contiguous in a scratch buffer (the copy is the sink's, not the
 * sender's), with FG_TX_CHAINED in its flags.
 *
 * TSO frames (FG_TX_TSO) reach the sink cut into their segments, as a
 * port's segmentation would send them (memport.c mp_tso). Each buffer
 * keeps the payload sum TCP stores with it (buf_sum; net.h struct
 * fg_buf_sum), cleared when the buffer is taken from the free list.
 */
#ifndef FLOODGATE_MEMPORT_H
#define FLOODGATE_MEMPORT_H

#include <stdint.h>

#include "floodgate/net.h"

/* Called for each transmitted frame; the frame is freed after it returns. */
typedef void fg_memport_sink_fn(void *arg, const uint8_t *frame, uint32_t len,
				uint32_t flags);

struct fg_memport;

struct fg_memport *fg_memport_create(unsigned n_bufs, uint32_t buf_size,
				     fg_memport_sink_fn *sink, void *sink_arg);
/* Frees the pool; buffers still referenced are reported by
 * fg_memport_in_use() first, so a test can assert there are none. */
void fg_memport_destroy(struct fg_memport *p);
const struct fg_port_ops *fg_memport_ops(void);

/* A received frame with one reference, holding a copy of data (or room
 * for len bytes when data is NULL); -ENOBUFS when the pool is empty or
 * len exceeds the buffer size. */
int fg_memport_rx_frame(struct fg_memport *p, const void *data, uint32_t len,
			struct fg_rx_frame *out);
unsigned fg_memport_in_use(const struct fg_memport *p);
/* Pieces attached to TX frames so far (tx_attach), and frames sent with
 * at least one. */
uint64_t fg_memport_tx_attached(const struct fg_memport *p);
uint64_t fg_memport_tx_chained(const struct fg_memport *p);
/* TSO frames (FG_TX_TSO) cut into segments for the sink so far. */
uint64_t fg_memport_tx_tso(const struct fg_memport *p);
/* References held on buffer `handle` now (a test counting the TCP's). */
uint32_t fg_memport_refcnt(const void *handle);
/* The exception path's kernel: frames net hands to it (to_kernel) reach
 * fn, a copy each; without one, to_kernel fails (-ENOTSUP). */
void fg_memport_set_kernel(struct fg_memport *p, fg_memport_sink_fn *fn, void *arg);

/* A TCP segment as a peer would send it, for tests, the fuzzer and the
 * benchmark: Ethernet + IPv4 (20 bytes, TTL 64) — or IPv6 (40 bytes, hop
 * limit 64) when src6 is set — + TCP with `opts` (a multiple of 4 bytes)
 * and `len` bytes of data, the checksums right. */
struct fg_craft_tcp {
	const uint8_t *dst_mac, *src_mac;
	uint32_t src, dst;		/* network byte order */
	const uint8_t *src6, *dst6;	/* 16 octets each: an IPv6 segment */
	uint16_t sport, dport;		/* host byte order */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	const uint8_t *opts;
	unsigned optlen;
	const void *data;
	uint32_t len;
};
/* Writes the frame into `frame` (room for 54 + optlen + len bytes, 74 +
 * for IPv6); returns its length. */
uint32_t fg_craft_tcp_frame(uint8_t *frame, const struct fg_craft_tcp *c);
/* An ARP request (RFC 826) broadcast by `src_mac`/`src` for `target`
 * (network byte order): the receiver learns the sender. Writes 60 bytes
 * (the minimum frame) into `frame`; returns 60. */
uint32_t fg_craft_arp_request(uint8_t *frame, const uint8_t *src_mac, uint32_t src,
			      uint32_t target);
unsigned fg_memport_capacity(const struct fg_memport *p);
uint64_t fg_memport_alloc_failures(const struct fg_memport *p);
uint32_t fg_memport_buf_size(const struct fg_memport *p);

#endif /* FLOODGATE_MEMPORT_H */
