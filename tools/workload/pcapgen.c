/* SPDX-License-Identifier: MIT */
/*
 * pcapgen.c — libpcap file writer for synthetic TCP flows (format and
 * flow shape in pcapgen.h). Multi-octet fields are written big-endian on
 * the wire and in host order in the pcap headers, as libpcap expects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/pcapgen.h"

#define ETH_LEN 14
#define IP_LEN 20
#define TCP_LEN 20
#define IP6_LEN 40
#define PKT_MAX (ETH_LEN + IP6_LEN + TCP_LEN + 4 + FG_PCAP_MSS)
#define NS_PER_BYTE 8		/* 1 Gbit/s */

enum { F_FIN = 0x01, F_SYN = 0x02, F_PSH = 0x08, F_ACK = 0x10 };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t fg_pcap_ip_checksum(const void *hdr, size_t len)
{
	return fold(sum16(hdr, len, 0));
}

uint16_t fg_pcap_tcp_checksum(uint32_t saddr, uint32_t daddr, const void *tcp, size_t len)
{
	uint32_t sum = (saddr >> 16) + (saddr & 0xffff) + (daddr >> 16) + (daddr & 0xffff) +
		       6 /* IPPROTO_TCP */ + (uint32_t)len;

	return fold(sum16(tcp, len, sum));
}

void fg_pcap_v6_addr(uint32_t a, uint8_t out[16])
{
	memset(out, 0, 16);
	out[0] = 0xfd;
	put32(out + 12, a);
}

/* The TCP checksum over the IPv6 pseudo-header (RFC 8200 8.1). */
static uint16_t tcp6_checksum(const uint8_t *src, const uint8_t *dst, const void *tcp, size_t len)
{
	return fold(sum16(tcp, len, sum16(src, 16, sum16(dst, 16, 6u + (uint32_t)len))));
}

int fg_pcap_open(struct fg_pcap *w, const char *path, uint64_t start_ns)
{
	/* 24 octets, no padding: the libpcap global header in host order */
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t thiszone;
		uint32_t sigfigs, snaplen, linktype;
	} gh = { 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1 /* LINKTYPE_ETHERNET */ };

	memset(w, 0, sizeof(*w));
	w->pkt = malloc(PKT_MAX);
	if (!w->pkt)
		return -ENOMEM;
	w->fp = fopen(path, "wb");
	if (!w->fp) {
		int rc = -errno;

		free(w->pkt);
		w->pkt = NULL;
		return rc;
	}
	w->t_ns = start_ns;
	fwrite(&gh, sizeof(gh), 1, w->fp);
	return ferror(w->fp) ? -EIO : 0;
}

int fg_pcap_close(struct fg_pcap *w)
{
	int rc = 0;

	if (w->fp) {
		if (ferror(w->fp))
			rc = -EIO;
		if (fclose(w->fp) != 0 && rc == 0)
			rc = -errno;
		w->fp = NULL;
	}
	free(w->pkt);
	w->pkt = NULL;
	return rc;
}

/* One packet from the client (to_server) or from the server. */
static int emit(struct fg_pcap *w, struct fg_pcap_flow *fl, bool to_server, uint8_t flags,
		const void *data, size_t len)
{
	size_t ip_len = fl->v6 ? IP6_LEN : IP_LEN;
	uint8_t *p = w->pkt, *ip = p + ETH_LEN, *tcp = ip + ip_len;
	size_t tcp_len = TCP_LEN + ((flags & F_SYN) ? 4 : 0), total = ip_len + tcp_len + len;
	uint32_t src = to_server ? fl->caddr : fl->saddr, dst = to_server ? fl->saddr : fl->caddr;
	uint32_t rec[4];

	memcpy(p, to_server ? fl->smac : fl->cmac, 6);
	memcpy(p + 6, to_server ? fl->cmac : fl->smac, 6);
	put16(p + 12, fl->v6 ? 0x86dd : 0x0800);
	memset(ip, 0, ip_len);
	if (fl->v6) {
		put32(ip, 6u << 28);
		put16(ip + 4, (uint16_t)(total - IP6_LEN));
		ip[6] = 6;
		ip[7] = 64;
		fg_pcap_v6_addr(src, ip + 8);
		fg_pcap_v6_addr(dst, ip + 24);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)total);
		put16(ip + 4, to_server ? fl->c_ipid++ : fl->s_ipid++);
		put16(ip + 6, 0x4000);			/* DF */
		ip[8] = 64;
		ip[9] = 6;
		put32(ip + 12, src);
		put32(ip + 16, dst);
		put16(ip + 10, fg_pcap_ip_checksum(ip, IP_LEN));
	}
	memset(tcp, 0, tcp_len);
	put16(tcp, to_server ? fl->cport : fl->sport);
	put16(tcp + 2, to_server ? fl->sport : fl->cport);
	put32(tcp + 4, to_server ? fl->cseq : fl->sseq);
	put32(tcp + 8, (flags & F_ACK) ? (to_server ? fl->sseq : fl->cseq) : 0);
	tcp[12] = (uint8_t)((tcp_len / 4) << 4);
	tcp[13] = flags;
	put16(tcp + 14, 65535);
	if (flags & F_SYN) {
		tcp[20] = 2;				/* MSS option (RFC 793 3.1) */
		tcp[21] = 4;
		put16(tcp + 22, fl->mss);
	}
	if (len)
		memcpy(tcp + tcp_len, data, len);
	put16(tcp + 16, fl->v6 ? tcp6_checksum(ip + 8, ip + 24, tcp, tcp_len + len)
			       : fg_pcap_tcp_checksum(src, dst, tcp, tcp_len + len));
	rec[0] = (uint32_t)(w->t_ns / 1000000000ull);
	rec[1] = (uint32_t)(w->t_ns % 1000000000ull / 1000);
	rec[2] = rec[3] = (uint32_t)(ETH_LEN + total);
	fwrite(rec, 4, 4, w->fp);
	fwrite(p, 1, ETH_LEN + total, w->fp);
	w->t_ns += (ETH_LEN + total + 24) * NS_PER_BYTE;	/* + preamble, FCS, gap */
	w->packets++;
	/* sequence space: SYN and FIN count one, data its length (RFC 793 3.3) */
	if (to_server)
		fl->cseq += (uint32_t)len + ((flags & (F_SYN | F_FIN)) ? 1 : 0);
	else
		fl->sseq += (uint32_t)len + ((flags & (F_SYN | F_FIN)) ? 1 : 0);
	return ferror(w->fp) ? -EIO : 0;
}

int fg_pcap_flow_open(struct fg_pcap *w, struct fg_pcap_flow *fl, uint32_t isn_c, uint32_t isn_s)
{
	int rc;

	fl->cseq = isn_c;
	fl->sseq = isn_s;
	if (fl->mss == 0)
		fl->mss = FG_PCAP_MSS;
	rc = emit(w, fl, true, F_SYN, NULL, 0);
	if (rc == 0)
		rc = emit(w, fl, false, F_SYN | F_ACK, NULL, 0);
	if (rc == 0)
		rc = emit(w, fl, true, F_ACK, NULL, 0);
	return rc;
}

int fg_pcap_client_data(struct fg_pcap *w, struct fg_pcap_flow *fl, const void *data, size_t len)
{
	const uint8_t *p = data;
	int rc = 0;

	while (len > 0 && rc == 0) {
		size_t n = len > fl->mss ? fl->mss : len;

		rc = emit(w, fl, true, (uint8_t)(F_ACK | (n == len ? F_PSH : 0)), p, n);
		w->payload_bytes += n;
		p += n;
		len -= n;
	}
	return rc;
}

void fg_pcap_server_sent(struct fg_pcap_flow *fl, size_t n)
{
	fl->sseq += (uint32_t)n;
}

int fg_pcap_flow_close(struct fg_pcap *w, struct fg_pcap_flow *fl)
{
	int rc = emit(w, fl, true, F_FIN | F_ACK, NULL, 0);

	if (rc == 0)
		rc = emit(w, fl, false, F_FIN | F_ACK, NULL, 0);
	if (rc == 0)
		rc = emit(w, fl, true, F_ACK, NULL, 0);
	return rc;
}

int fg_pcap_parse_endpoint(const char *s, uint32_t *addr, uint16_t *port)
{
	unsigned a, b, c, d, p;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u:%u%c", &a, &b, &c, &d, &p, &tail) != 5 ||
	    a > 255 || b > 255 || c > 255 || d > 255 || p == 0 || p > 65535)
		return -EINVAL;
	*addr = a << 24 | b << 16 | c << 8 | d;
	*port = (uint16_t)p;
	return 0;
}
