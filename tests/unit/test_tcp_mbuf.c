/* SPDX-License-Identifier: MIT */
/*
 * test_tcp_mbuf.c — sending by reference over DPDK mbufs (EAL with
 * --no-huge, no device): the TCP sends a 700 KB article held in 1448-octet
 * receive mbufs through mbuf.h's port half, as floodgate's port.c uses it
 * (tools/bench/tcpref_kit.h). On a port that chains (17 mbufs a frame,
 * and 2), every frame carrying article octets is a chain whose segments
 * after the head are indirect mbufs attached to the article's own mbufs,
 * within the frame's limit, and the peer reads exactly the octets queued,
 * every checksum right; on a port that cannot chain every frame is one
 * mbuf. Afterwards every article mbuf has its one reference back and
 * every indirect and TX mbuf is back in its pool. Each way once more with
 * checksum reuse: the article mbufs keep their payload sums in the
 * dynamic mbuf field (tk_keep_sums), the TCP derives the sums of the
 * attached slices from them, and every checksum is still right.
 */
#include <check.h>
#include <stdlib.h>

#include "bench/tcpref_kit.h"
#include "fgtest.h"

#define ART (700u * 1024u)

static const unsigned modes[] = { 17, 2, 1 };

static uint8_t art[ART];
static uint8_t stream[2 * ART + 4096];
static uint32_t stream_end;
static unsigned data_frames, chained_frames, max_segs;

static bool is_article_mbuf(const struct tk *k, const struct rte_mbuf *d)
{
	for (unsigned i = 0; i < k->n_art * k->copies; i++)
		if (k->art[i] == d)
			return true;
	return false;
}

/* Each frame as it leaves: its chain, its checksum, its octets. */
static void look(struct tk *k, struct rte_mbuf *m, uint32_t seq, uint32_t plen,
		 const uint8_t *th)
{
	static uint8_t flat[2048];
	const uint8_t *f, *ip;
	uint32_t ihl, l4, src, dst, off;

	(void)th;
	ck_assert_uint_le(m->pkt_len, sizeof(flat));
	ck_assert_uint_le(m->nb_segs, modes[*(int *)k->arg]);
	if (m->nb_segs > 1) {
		uint32_t sum = 0;

		chained_frames++;
		for (struct rte_mbuf *s = m; s; s = s->next) {
			sum += s->data_len;
			if (s == m) {
				ck_assert(RTE_MBUF_DIRECT(s));
				continue;
			}
			/* a slice of one of the article's own mbufs, not a copy */
			ck_assert(RTE_MBUF_CLONED(s));
			ck_assert(is_article_mbuf(k, rte_mbuf_from_indirect(s)));
		}
		ck_assert_uint_eq(sum, m->pkt_len);
	}
	max_segs = FG_MAX(max_segs, m->nb_segs);
	f = rte_pktmbuf_read(m, 0, m->pkt_len, flat);
	ck_assert_ptr_nonnull(f);
	ip = f + FG_ETH_HLEN;
	ihl = (ip[0] & 15u) * 4;
	l4 = (uint32_t)(ip[2] << 8 | ip[3]) - ihl;
	ck_assert_uint_eq(m->pkt_len, FG_ETH_HLEN + ihl + l4);
	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	ck_assert_uint_eq(fg_csum_fold(fg_csum_add(fg_ipv4_pseudo_sum(src, dst, 6, l4), ip + ihl,
						   l4)), 0);
	if (!plen)
		return;
	data_frames++;
	off = seq - (k->iss + 1);
	ck_assert_uint_le(off, stream_end);	/* in order: no loss here */
	ck_assert_uint_le(off + plen, sizeof(stream));
	memcpy(stream + off, ip + ihl + (l4 - plen), plen);
	stream_end = FG_MAX(stream_end, off + plen);
}

static int eal_up;

static void eal_start(void)
{
	if (eal_up)
		return;
	ck_assert_int_eq(tk_eal_start("test_tcp_mbuf", 192), 0);
	eal_up = 1;
}

START_TEST(test_article_from_mbufs)
{
	static struct fg_iov iov[ART / TK_PIECE + 3];
	static const char line[] = "TAKETHIS <bench@tcpref>\r\n", end[] = ".\r\n";
	uint32_t one = (uint32_t)(sizeof(line) - 1 + ART + sizeof(end) - 1);
	char name[16];
	struct tk k;
	int mode = _i % (int)FG_ARRAY_SIZE(modes);
	bool reuse = _i >= (int)FG_ARRAY_SIZE(modes);

	for (uint32_t i = 0; i < ART; i++)
		art[i] = (uint8_t)(i * 7 + (i >> 11));
	eal_start();
	stream_end = data_frames = chained_frames = max_segs = 0;
	snprintf(name, sizeof(name), "tm%d", _i);
	ck_assert_int_eq(tk_open(&k, name, modes[mode], false, 1, ART, art), 0);
	if (reuse)
		ck_assert_int_eq(tk_keep_sums(&k), 0);
	k.on_frame = look;
	k.arg = &mode;
	stream_end = 0;
	data_frames = 0;
	/* twice: the second send re-references the same mbufs */
	ck_assert_uint_eq(tk_send_article(&k, iov), one);
	ck_assert_uint_eq(tk_send_article(&k, iov), one);
	ck_assert_uint_eq(stream_end, 2 * one);
	for (unsigned r = 0; r < 2; r++) {
		const uint8_t *s = stream + r * one;

		ck_assert_mem_eq(s, line, sizeof(line) - 1);
		ck_assert_mem_eq(s + sizeof(line) - 1, art, ART);
		ck_assert_mem_eq(s + sizeof(line) - 1 + ART, end, sizeof(end) - 1);
	}
	ck_assert_uint_gt(data_frames, 2 * ART / 1460);
	ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_COPIED_OCTETS] +
				  k.st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS],
			  k.st.ctr[FG_CTR_TCP_TX_BYTES]);
	if (modes[mode] > 1) {
		ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS], 2 * ART);
		ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_COPIED_OCTETS], 2 * (one - ART));
		ck_assert_uint_gt(chained_frames, 0);
		/* a 1460-octet segment of 1448-octet pieces: the head and
		 * up to three slices, within the port's limit */
		ck_assert_uint_eq(max_segs, FG_MIN(modes[mode], 4u));
		/* derived for the slices that are most of their mbuf, read
		 * for the rest: together every referenced octet */
		ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS] +
					  k.st.ctr[FG_CTR_TCP_TX_CSUM_READ_OCTETS],
				  2 * ART);
		if (reuse)
			ck_assert_uint_gt(k.st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], ART);
		else
			ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], 0);
	} else {
		ck_assert_uint_eq(k.st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS], 0);
		ck_assert_uint_eq(chained_frames, 0);
		ck_assert_uint_eq(max_segs, 1);
	}
	/* every reference given back: the article's mbufs hold only ours,
	 * every indirect and TX mbuf is in its pool again */
	for (unsigned i = 0; i < k.n_art; i++)
		ck_assert_uint_eq(rte_mbuf_refcnt_read(k.art[i]), 1);
	ck_assert_uint_eq(rte_mempool_avail_count(k.ind), TK_IND_MBUFS);
	ck_assert_uint_eq(rte_mempool_avail_count(k.tx), TK_TX_MBUFS);
	tk_close_all(&k);
}
END_TEST

static Suite *tcp_mbuf_suite(void)
{
	Suite *s = suite_create("tcp_mbuf");
	TCase *t = tcase_create("mbuf");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_article_from_mbufs, 0, 2 * (int)FG_ARRAY_SIZE(modes));
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(tcp_mbuf_suite)
