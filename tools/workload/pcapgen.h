/* SPDX-License-Identifier: MIT */
/*
 * pcapgen.h — writes TCP client streams as a pcap for passive replay.
 *
 * File format: classic libpcap (magic 0xa1b2c3d4, microsecond stamps,
 * version 2.4, snaplen 65535, LINKTYPE_ETHERNET). Every packet is
 * Ethernet II / IPv4 (20 octets, DF, TTL 64, header checksum) / TCP (20
 * octets, 24 on SYNs with an MSS option; checksum over the RFC 793
 * pseudo-header). A flow is:
 *
 *   client SYN (seq ISN_c, MSS)    server SYN+ACK (seq ISN_s, ack ISN_c+1)
 *   client ACK                     client data segments, at most MSS octets
 *                                  each, PSH on the last of each write
 *   client FIN+ACK                 server FIN+ACK        client ACK
 *
 * The server's data is not in the file (only its handshake and FIN), but
 * the client's ack numbers advance by the octets the server would have
 * sent (fg_pcap_server_sent), so the stream stays plausible to a tool
 * that checks both directions' sequence space. Timestamps advance with
 * the octets written at a nominal 1 Gbit/s from a given start.
 */
#ifndef FLOODGATE_PCAPGEN_H
#define FLOODGATE_PCAPGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "workload/workload.h"

#define FG_PCAP_MSS 1460

struct fg_pcap {
	FILE *fp;
	uint64_t t_ns;		/* current packet time, ns since the epoch */
	uint64_t packets;
	uint64_t payload_bytes;	/* client data octets */
	uint8_t *pkt;		/* one packet's scratch */
};

struct fg_pcap_flow {
	uint8_t cmac[6], smac[6];
	uint32_t caddr, saddr;	/* host byte order */
	/* IPv6 instead: the addresses are fd00::A.B.C.D (RFC 4193 space,
	 * the IPv4 address in the last 32 bits: fg_pcap_v6_addr) */
	bool v6;
	uint16_t cport, sport;
	uint32_t cseq;		/* next client sequence number */
	uint32_t sseq;		/* next server sequence number (= the client's ack) */
	uint16_t c_ipid, s_ipid;
	uint16_t mss;
};

int fg_pcap_open(struct fg_pcap *w, const char *path, uint64_t start_ns);
/* Flush and close; 0 or -errno (a short write shows here). */
int fg_pcap_close(struct fg_pcap *w);

/* Fill a flow's addresses and ISNs (isn_c, isn_s) and write its handshake. */
int fg_pcap_flow_open(struct fg_pcap *w, struct fg_pcap_flow *fl, uint32_t isn_c, uint32_t isn_s);
/* One client write: MSS-sized segments, PSH on the last. */
int fg_pcap_client_data(struct fg_pcap *w, struct fg_pcap_flow *fl, const void *data, size_t len);
/* The server would have sent `n` octets (not captured): advance the ack. */
void fg_pcap_server_sent(struct fg_pcap_flow *fl, size_t n);
/* Client FIN, server FIN, client ACK. */
int fg_pcap_flow_close(struct fg_pcap *w, struct fg_pcap_flow *fl);

/* RFC 1071 one's-complement sum helpers (exposed for tests). */
uint16_t fg_pcap_ip_checksum(const void *hdr, size_t len);
uint16_t fg_pcap_tcp_checksum(uint32_t saddr, uint32_t daddr, const void *tcp, size_t len);

/* The IPv6 address a v6 flow uses for host-order IPv4 address `a`. */
void fg_pcap_v6_addr(uint32_t a, uint8_t out[16]);

/* "A.B.C.D:PORT" -> host-order address and port; 0 or -EINVAL. */
int fg_pcap_parse_endpoint(const char *s, uint32_t *addr, uint16_t *port);

/* ---- the workload as a capture (pcapfeed.c) ---- */

enum fg_pcapfeed_mode {
	FG_PCAPFEED_CHECK = 0,
	FG_PCAPFEED_TAKETHIS,
	FG_PCAPFEED_IHAVE,
};

struct fg_pcapfeed_opts {
	unsigned conns;		/* per peer */
	unsigned window;	/* offers per client write */
	enum fg_pcapfeed_mode mode;
	bool mode_stream;
	bool capabilities;
	uint32_t server_addr;	/* host order */
	uint16_t server_port;
	bool v6;		/* flows over IPv6 (fg_pcap_v6_addr of each address) */
};

struct fg_pcapfeed_stats {
	unsigned flows;
	uint64_t packets;
	uint64_t payload_bytes;
	uint64_t offers;
	uint64_t articles;
	/* The answers of a server that decides the capture in order, frame by
	 * frame (floodgate's passive mode): an offer of an ID whose article
	 * another flow still owes is deferred; one whose article has come is
	 * refused; the first article of each wanted ID is accepted, every
	 * other article rejected. */
	uint64_t want;		/* 238 (CHECK), 335 (IHAVE) */
	uint64_t defer;		/* 431, 436 */
	uint64_t refuse;	/* 438, 435 */
	uint64_t accept;	/* 239, 235 */
	uint64_t reject;	/* 439, 437 */
};

/*
 * Write the client side of the workload: peers x conns flows, client
 * addresses 198.18.P.Q (RFC 2544's benchmarking range, one per peer),
 * ports 40000 + connection. Flows take turns, one write of up to
 * `window` offers each, so the capture interleaves them as a live feed
 * would. The answers are not recorded, so the client acts on the model's
 * expected answers: CHECK/IHAVE of a valid ID not offered before in the
 * file gets 238/335 and the article follows in that flow's next write;
 * every other offer gets 438/435. No 431s occur.
 */
int fg_pcapfeed_write(const struct fg_wl *wl, const struct fg_pcapfeed_opts *o,
		      const char *path, struct fg_pcapfeed_stats *st);

#endif /* FLOODGATE_PCAPGEN_H */
