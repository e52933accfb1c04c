/* SPDX-License-Identifier: MIT */
/*
 * test_pcapgen.c — the pcap writer's output, read back with libpcap and
 * checked independently: handshake shape, sequence continuity, segment
 * sizes, IPv4 and TCP checksums (recomputed here, not with the writer's
 * helpers), and the reassembled client stream against the workload.
 */
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload/pcapgen.h"
#include "workload/workload.h"
#include "fgtest.h"

#define MAX_FLOWS 16

struct flow {
	uint32_t caddr;
	uint16_t cport;
	int stage;		/* 0 SYN seen, 1 SYN-ACK, 2 ACK, 3 data, 4 FIN, 5 server FIN, 6 done */
	uint32_t isn_c, isn_s, next_c;
	char *data;
	size_t len;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* RFC 1071, written apart from the writer: the sum over data must fold to 0xffff. */
static uint32_t rfc1071(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i < len; i++)
		sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static struct flow *flow_of(struct flow *f, unsigned *n, uint32_t caddr, uint16_t cport)
{
	for (unsigned i = 0; i < *n; i++)
		if (f[i].caddr == caddr && f[i].cport == cport)
			return &f[i];
	ck_assert_uint_lt(*n, MAX_FLOWS);
	memset(&f[*n], 0, sizeof(f[*n]));
	f[*n].caddr = caddr;
	f[*n].cport = cport;
	f[*n].stage = -1;
	return &f[(*n)++];
}

/* One packet: checksums, then the flow's state machine. */
static void packet(struct flow *flows, unsigned *nf, const uint8_t *p, size_t len,
		   uint32_t server)
{
	const uint8_t *ip = p + 14, *tcp;
	size_t ihl, tot, thl, plen;
	uint32_t src, dst, seq, ack, sum;
	uint8_t fl;
	bool to_server;
	struct flow *f;

	ck_assert_uint_ge(len, 54);
	ck_assert_uint_eq(get16(p + 12), 0x0800);
	ck_assert_uint_eq(ip[0], 0x45);
	ihl = 20;
	tot = get16(ip + 2);
	ck_assert_uint_eq(tot + 14, len);
	ck_assert_uint_eq(rfc1071(ip, ihl, 0), 0xffff);	/* IPv4 header checksum */
	ck_assert_uint_eq(ip[9], 6);
	src = get32(ip + 12);
	dst = get32(ip + 16);
	tcp = ip + ihl;
	thl = (size_t)(tcp[12] >> 4) * 4;
	plen = tot - ihl - thl;
	sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + 6 + (uint32_t)(tot - ihl);
	ck_assert_uint_eq(rfc1071(tcp, tot - ihl, sum), 0xffff);	/* TCP checksum */
	ck_assert_uint_le(plen, FG_PCAP_MSS);
	to_server = dst == server;
	f = flow_of(flows, nf, to_server ? src : dst, get16(tcp + (to_server ? 0 : 2)));
	seq = get32(tcp + 4);
	ack = get32(tcp + 8);
	fl = tcp[13];
	if (f->stage == -1) {			/* SYN with MSS */
		ck_assert(to_server && fl == 0x02 && plen == 0);
		ck_assert_uint_eq(thl, 24);
		ck_assert(tcp[20] == 2 && tcp[21] == 4 && get16(tcp + 22) == FG_PCAP_MSS);
		f->isn_c = seq;
		f->next_c = seq + 1;
		f->stage = 0;
	} else if (f->stage == 0) {		/* SYN+ACK acks ISN+1 */
		ck_assert(!to_server && fl == 0x12);
		ck_assert_uint_eq(ack, f->isn_c + 1);
		f->isn_s = seq;
		f->stage = 1;
	} else if (!to_server) {		/* the server's FIN */
		ck_assert_int_eq(f->stage, 4);
		ck_assert_uint_eq(fl, 0x11);
		ck_assert_uint_eq(ack, f->next_c);
		f->stage = 5;
	} else {
		ck_assert_msg(seq == f->next_c, "sequence gap: %u, expected %u", seq, f->next_c);
		ck_assert(fl & 0x10);
		ck_assert(ack - f->isn_s >= 1);	/* acks move forward from ISN_s + 1 */
		if (fl & 0x01) {
			ck_assert_int_eq(f->stage, 3);
			f->next_c++;
			f->stage = 4;
		} else if (f->stage == 5) {
			ck_assert_uint_eq(plen, 0);
			f->stage = 6;
		} else {
			f->stage = plen ? 3 : 2;
			f->data = realloc(f->data, f->len + plen + 1);
			memcpy(f->data + f->len, tcp + thl, plen);
			f->len += plen;
			f->data[f->len] = '\0';
			f->next_c += (uint32_t)plen;
		}
	}
}

static unsigned count(const char *s, const char *needle)
{
	unsigned n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static struct fg_wl *small_workload(void)
{
	struct fg_wl_params p;

	fg_wl_params_default(&p);
	p.articles = 300;
	p.peers = 3;
	p.dups = 3;
	p.now = 1700000000;
	return fg_wl_create(&p);
}

static unsigned read_back(const char *path, struct flow *flows, uint32_t server)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned nf = 0;
	long long last = 0;

	ck_assert_msg(pc != NULL, "%s", err);
	ck_assert_int_eq(pcap_datalink(pc), DLT_EN10MB);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		long long t = (long long)h->ts.tv_sec * 1000000 + h->ts.tv_usec;

		ck_assert_int_ge(t, last);			/* timestamps never go back */
		ck_assert_int_ge(h->ts.tv_sec, 1700000000);
		last = t;
		ck_assert_uint_eq(h->caplen, h->len);
		packet(flows, &nf, data, h->caplen, server);
	}
	pcap_close(pc);
	return nf;
}

static unsigned count_class(const struct fg_wl *wl, uint32_t n, enum fg_wl_class c)
{
	unsigned k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += fg_wl_class_of(wl, i) == c;
	return k;
}

START_TEST(test_check_mode_flows)
{
	struct fg_wl *wl = small_workload();
	struct fg_pcapfeed_opts o = { .conns = 2, .window = 16, .mode = FG_PCAPFEED_CHECK,
				      .mode_stream = true, .server_addr = 0xc6130001, .server_port = 119 };
	struct fg_pcapfeed_stats st;
	struct flow flows[MAX_FLOWS];
	char path[] = "/tmp/fg_pcapgen_XXXXXX";
	int fd = mkstemp(path);
	unsigned nf, checks = 0, takethis = 0, valid_first = 0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(fg_pcapfeed_write(wl, &o, path, &st), 0);
	ck_assert_uint_eq(st.flows, 6);
	ck_assert_uint_eq(st.offers, 900);
	nf = read_back(path, flows, 0xc6130001);
	ck_assert_uint_eq(nf, 6);
	for (unsigned i = 0; i < nf; i++) {
		ck_assert_int_eq(flows[i].stage, 6);		/* full close seen */
		ck_assert(strncmp(flows[i].data, "MODE STREAM\r\n", 13) == 0);
		ck_assert_str_eq(flows[i].data + flows[i].len - 6, "QUIT\r\n");
		ck_assert_uint_eq(flows[i].next_c - flows[i].isn_c - 2, flows[i].len);
		checks += count(flows[i].data, "\r\nCHECK <");
		takethis += count(flows[i].data, "\r\nTAKETHIS <");
		free(flows[i].data);
	}
	/* every offer is a CHECK; one TAKETHIS per article whose ID is valid */
	ck_assert_uint_eq(checks, 900);
	for (uint32_t i = 0; i < 300; i++)
		valid_first += fg_wl_class_of(wl, i) != FG_WL_BADID;
	ck_assert_uint_eq(takethis, valid_first);
	ck_assert_uint_eq(st.articles, valid_first);
	/* the in-order answers: a 238 per valid ID (again after a reject a
	 * server does not remember), every offer answered once, each article
	 * decided once, accepted only when wanted */
	ck_assert_uint_ge(st.want, valid_first);
	ck_assert_uint_eq(st.want + st.defer + st.refuse, st.offers);
	ck_assert_uint_eq(st.accept + st.reject, st.articles);
	ck_assert_uint_eq(st.accept, count_class(wl, 300, FG_WL_WANTED));
	ck_assert_uint_gt(st.defer, 0);		/* flows interleave: some offers come early */
	unlink(path);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_takethis_mode_and_segments)
{
	struct fg_wl *wl = small_workload();
	struct fg_pcapfeed_opts o = { .conns = 1, .window = 64, .mode = FG_PCAPFEED_TAKETHIS,
				      .mode_stream = false, .server_addr = 0xc6130001, .server_port = 119 };
	struct fg_pcapfeed_stats st;
	struct flow flows[MAX_FLOWS];
	char path[] = "/tmp/fg_pcapgen_XXXXXX";
	int fd = mkstemp(path);
	unsigned nf;
	uint64_t bytes = 0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(fg_pcapfeed_write(wl, &o, path, &st), 0);
	nf = read_back(path, flows, 0xc6130001);
	ck_assert_uint_eq(nf, 3);
	for (unsigned i = 0; i < nf; i++) {
		ck_assert(strncmp(flows[i].data, "TAKETHIS <", 10) == 0);
		ck_assert_uint_eq(count(flows[i].data, "TAKETHIS <"), 300);
		ck_assert_uint_eq(count(flows[i].data, "\r\n.\r\n"), 300);	/* one end per article */
		bytes += flows[i].len;
		free(flows[i].data);
	}
	ck_assert_uint_eq(bytes, st.payload_bytes);
	ck_assert_uint_eq(st.articles, 900);
	/* TAKETHIS without CHECK: the first copy of each wanted ID is
	 * accepted, every other copy rejected; nothing is asked for */
	ck_assert_uint_eq(st.accept, count_class(wl, 300, FG_WL_WANTED));
	ck_assert_uint_eq(st.accept + st.reject, 900);
	ck_assert_uint_eq(st.want + st.defer + st.refuse, 0);
	/* 2 KB articles in 1460-octet segments: far more packets than writes */
	ck_assert_uint_gt(st.packets, bytes / FG_PCAP_MSS);
	unlink(path);
	fg_wl_free(wl);
}
END_TEST

START_TEST(test_endpoint_parse_and_errors)
{
	uint32_t a;
	uint16_t p;
	struct fg_wl *wl = small_workload();
	struct fg_pcapfeed_opts o = { .conns = 1, .window = 4 };
	struct fg_pcapfeed_stats st;

	ck_assert_int_eq(fg_pcap_parse_endpoint("198.19.0.1:119", &a, &p), 0);
	ck_assert_uint_eq(a, 0xc6130001);
	ck_assert_uint_eq(p, 119);
	ck_assert_int_lt(fg_pcap_parse_endpoint("198.19.0.1", &a, &p), 0);
	ck_assert_int_lt(fg_pcap_parse_endpoint("300.1.1.1:1", &a, &p), 0);
	ck_assert_int_lt(fg_pcap_parse_endpoint("1.1.1.1:0", &a, &p), 0);
	ck_assert_int_lt(fg_pcapfeed_write(wl, &o, "/nonexistent/dir/x.pcap", &st), 0);
	o.conns = 0;
	ck_assert_int_lt(fg_pcapfeed_write(wl, &o, "/tmp/never.pcap", &st), 0);
	fg_wl_free(wl);
}
END_TEST

static Suite *pcapgen_suite(void)
{
	Suite *s = suite_create("pcapgen");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);	/* slow under ASan: every packet is checked */
	tcase_add_test(tc, test_check_mode_flows);
	tcase_add_test(tc, test_takethis_mode_and_segments);
	tcase_add_test(tc, test_endpoint_parse_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(pcapgen_suite)
