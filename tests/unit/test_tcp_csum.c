/* SPDX-License-Identifier: MIT */
/*
 * test_tcp_csum.c — checksum reuse and TSO on the memory port.
 *
 *   1. fg_csum_derive against a straightforward fg_csum_add: random
 *      payloads, random pieces at odd and even offsets, pieces spanning
 *      many buffers put together with fg_csum_combine and fg_csum_swap;
 *   2. the receive path keeps each verified segment's payload sum with
 *      its buffer, and clears it where the port verified the segment;
 *   3. payload received from the peer, held and sent back by reference
 *      with software checksums: every wire checksum verified, and the
 *      counters say the sums were derived, not read; a stored sum made
 *      wrong on purpose shows as a wire checksum the receiver refuses;
 *      a piece with no kept sum is read;
 *   4. TSO: frames larger than the MSS go to the port marked FG_TX_TSO
 *      with the segment size, the memory port cuts them as a port's
 *      segmentation would, and the peer's stream is exactly what was
 *      queued; without TSO (the same queue) no frame exceeds the MSS.
 */
#include <stdlib.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tcp_fixture.h"
#pragma GCC diagnostic pop

#define F_ACK 0x10
#define MSS 1460u

/* A sum modulo 0xffff, 16 bits: 0 and 0xffff are one value. */
static uint32_t canon(uint32_t s)
{
	return fg_csum_fold16(s) % 0xffffu;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* ---- 1. the arithmetic ---- */

START_TEST(derive_matches_reading)
{
	static uint8_t buf[4096];

	for (unsigned trial = 0; trial < 20000; trial++) {
		uint32_t len = 1 + rnd() % sizeof(buf), a = rnd() % len, n = rnd() % (len - a + 1);
		uint32_t whole;

		for (uint32_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		if (trial % 7 == 0)
			memset(buf, 0xff, len);	/* sums that fold to 0xffff */
		whole = fg_csum_add(0, buf, len);
		ck_assert_uint_eq(canon(fg_csum_derive(buf, len, whole, buf + a, n)),
				  canon(fg_csum_add(0, buf + a, n)));
	}
}
END_TEST

START_TEST(derive_edges)
{
	static const uint8_t b[] = { 0x12, 0x34, 0x56, 0x78, 0x9a };
	uint32_t whole = fg_csum_add(0, b, sizeof(b));

	/* the whole range, an empty piece at either end, one odd octet */
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b, 5)), canon(whole));
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b, 0)), 0);
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b + 5, 0)), 0);
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b + 3, 1)), 0x7800);
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b + 4, 1)), 0x9a00);
	ck_assert_uint_eq(canon(fg_csum_derive(b, 5, whole, b + 1, 2)), 0x3456);
	/* swap and subtract undo each other */
	ck_assert_uint_eq(fg_csum_swap(fg_csum_swap(0x1234)), 0x1234);
	ck_assert_uint_eq(canon(fg_csum_sub(fg_csum_combine(0xabcd, 0x1357), 0x1357)),
			  canon(0xabcd));
}
END_TEST

/* A stream cut into buffers of random sizes, each with its kept sum; a
 * random range of the stream summed from the buffers' pieces (each piece
 * derived, swapped when it starts at an odd offset of the range) equals
 * the stream's range read straight. */
START_TEST(pieces_across_buffers)
{
	static uint8_t stream[64 * 1024];
	uint32_t cut[200], sums[200];
	unsigned nb;

	for (unsigned trial = 0; trial < 300; trial++) {
		uint32_t at = 0, lo, hi, sum = 0, pos;

		for (uint32_t i = 0; i < sizeof(stream); i++)
			stream[i] = (uint8_t)rnd();
		for (nb = 0; at < sizeof(stream) && nb < 199; nb++) {
			cut[nb] = at;
			uint32_t r = 1 + rnd() % 1500;

			at += FG_MIN(r, (uint32_t)sizeof(stream) - at);
		}
		cut[nb] = at;
		for (unsigned b = 0; b < nb; b++)
			sums[b] = fg_csum_add(0, stream + cut[b], cut[b + 1] - cut[b]);
		lo = rnd() % at;
		hi = lo + rnd() % (at - lo + 1);
		pos = lo;
		for (unsigned b = 0; b < nb && pos < hi; b++) {
			uint32_t s, e, ps;

			if (cut[b + 1] <= pos)
				continue;
			s = pos;
			e = FG_MIN(hi, cut[b + 1]);
			ps = fg_csum_derive(stream + cut[b], cut[b + 1] - cut[b], sums[b],
					    stream + s, e - s);
			sum = fg_csum_combine(sum, ((s - lo) & 1) ? fg_csum_swap(ps) : ps);
			pos = e;
		}
		ck_assert_uint_eq(pos, hi);
		ck_assert_uint_eq(canon(sum), canon(fg_csum_add(0, stream + lo, hi - lo)));
	}
}
END_TEST

/* ---- 2.-4. the TCP on the memory port ---- */

static void setup_mode(unsigned tx_segs, uint32_t tso)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.rcvbuf = 1u << 20;
	fx_next_tx_segs = tx_segs;
	fx_next_tso = tso;
	fx_setup_cfg(&tc);
	fx_handshake();
	FX->hold_all = 1;
}

static void teardown(void)
{
	for (unsigned i = 0; FX->conn && i < FX->n_held; i++)
		fg_tcp_release(FX->conn, &FX->held[i]);
	FX->n_held = 0;
	fx_teardown();
	fx_next_tx_segs = 0;
	fx_next_tso = 0;
}

static void setup_chained(void)
{
	setup_mode(16, 0);
}

/* The peer sends `n` segments of random payload (odd lengths among them);
 * the app holds each. Their octets into `all` (returned: how many). */
static uint32_t peer_sends(unsigned n, uint8_t *all)
{
	uint32_t total = 0;

	for (unsigned i = 0; i < n; i++) {
		uint8_t d[MSS];
		uint32_t len = i % 3 == 1 ? 1001 + rnd() % 400 : MSS;

		for (uint32_t j = 0; j < len; j++)
			d[j] = (uint8_t)rnd();
		fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, d, len);
		FX->pseq += len;
		memcpy(all + total, d, len);
		total += len;
	}
	ck_assert_uint_eq(FX->n_held, n);
	return total;
}

/* Every data frame captured: its TCP checksum checked as a receiver
 * does; the payload appended to `out` at its sequence offset. Returns
 * the frames whose checksum is wrong. */
static unsigned harvest(uint8_t *out, uint32_t *end)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < FX->n_tx; i++) {
		const struct fx_tx *t = &FX->tx[i];
		const uint8_t *ip = t->frame + 14;
		uint32_t ihl = (ip[0] & 15u) * 4, l4 = (uint32_t)(ip[2] << 8 | ip[3]) - ihl;
		uint32_t src, dst, off;

		if (!t->is_tcp || !t->plen)
			continue;
		memcpy(&src, ip + 12, 4);
		memcpy(&dst, ip + 16, 4);
		ck_assert_uint_eq(fg_csum_fold(fg_csum_add(0, ip, ihl)), 0);
		if (fg_csum_fold(fg_csum_add(fg_ipv4_pseudo_sum(src, dst, 6, l4), ip + ihl, l4)) !=
		    0) {
			bad++;
			continue;
		}
		off = t->seq - FX->our_seq;
		memcpy(out + off, t->payload, t->plen);
		if (off + t->plen > *end)
			*end = off + t->plen;
	}
	FX->n_tx = 0;
	return bad;
}

static uint8_t sent_in[1 << 18], wire[1 << 18];

/* Send the held payload back: each held iov cut at random into pieces
 * (odd offsets among them), in order. */
static uint32_t echo_held(void)
{
	uint32_t q = 0;

	for (unsigned i = 0; i < FX->n_held; i++) {
		const struct fg_iov *h = &FX->held[i];
		uint32_t off = 0;

		while (off < h->len) {
			uint32_t r = 1 + rnd() % 900, k = FG_MIN(h->len - off, r);
			struct fg_iov v = { h->base + off, k, h->handle };

			ck_assert_int_eq(fg_tcp_send_ref(FX->conn, &v, 1), 0);
			off += k;
			q += k;
		}
	}
	return q;
}

/* Acknowledge until `len` octets arrived; the frames with bad checksums. */
static unsigned pump(uint32_t len, uint32_t *end)
{
	unsigned bad = 0;

	fg_net_poll(FX->net, FX->now);
	for (unsigned round = 0; round < 200 && *end < len; round++) {
		bad += harvest(wire, end);
		fx_seg(F_ACK, FX->pseq, FX->our_seq + *end, 65535, NULL, 0);
	}
	bad += harvest(wire, end);
	return bad;
}

START_TEST(rx_keeps_sum)
{
	struct fg_buf_sum *bs;
	uint32_t n = peer_sends(3, sent_in);

	ck_assert_uint_gt(n, 0);
	for (unsigned i = 0; i < FX->n_held; i++) {
		const struct fg_iov *h = &FX->held[i];

		bs = fg_memport_ops()->buf_sum(FX->mp, h->handle);
		ck_assert_ptr_eq(bs->start, h->base);
		ck_assert_uint_eq(bs->len, h->len);
		ck_assert_uint_eq(canon(bs->sum), canon(fg_csum_add(0, h->base, h->len)));
	}
}
END_TEST

/* A data segment of the peer's in a fresh buffer, as a port that
 * verified its checksums hands it over (`flags`); its buffer's kept sum
 * set to `kept` first (the port's, or a stale one), then received. */
static struct fg_buf_sum *rx_port_verified(const char *text, uint32_t flags,
					   struct fg_buf_sum kept)
{
	struct fg_rx_frame fr;
	uint32_t len = (uint32_t)strlen(text);
	struct fg_craft_tcp c = {
		.dst_mac = FX->mac, .src_mac = FX->peer_mac, .src = FX->peer, .dst = FX->addr,
		.sport = FX_PEER_PORT, .dport = 119, .seq = FX->pseq, .ack = FX->our_seq,
		.flags = F_ACK, .wnd = 65535, .data = text, .len = len,
	};
	struct fg_buf_sum *bs;

	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, NULL, 74 + len, &fr), 0);
	fr.len = fg_craft_tcp_frame(fr.data, &c);
	fr.flags = flags;
	bs = fg_memport_ops()->buf_sum(FX->mp, fr.handle);
	*bs = kept;
	if (bs->start)	/* where the payload lies in this buffer */
		bs->start = fr.data + 54;
	fg_net_rx(FX->net, &fr, 1, FX->now);
	ck_assert_uint_eq(FX->n_held, 1);
	return bs;
}

/* A segment the port verified: nothing summed, the buffer's old sum
 * (from an earlier use) cleared. */
START_TEST(rx_port_verified_clears)
{
	struct fg_buf_sum *bs = rx_port_verified("port verified", FG_RX_IP_CSUM_OK |
						 FG_RX_L4_CSUM_OK,
						 (struct fg_buf_sum){ (const uint8_t *)1, 13,
								      0x1234, NULL, 0 });

	ck_assert_ptr_null(bs->start);
}
END_TEST

/* A segment the port verified and summed itself (port.c's GRO
 * candidates: FG_RX_SUM_KEPT): its sum stays as the port kept it. */
START_TEST(rx_port_kept_stays)
{
	static const char text[] = "port summed it";
	uint32_t sum = fg_csum_add(0, text, 14);
	struct fg_buf_sum *bs = rx_port_verified(text, FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK |
						 FG_RX_SUM_KEPT,
						 (struct fg_buf_sum){ (const uint8_t *)1, 14, sum,
								      NULL, 0 });

	ck_assert_ptr_eq(bs->start, FX->held[0].base);
	ck_assert_uint_eq(canon(bs->sum), canon(fg_csum_add(0, FX->held[0].base, 14)));
}
END_TEST

START_TEST(echo_reuses_sums)
{
	uint32_t n = peer_sends(40, sent_in), end = 0;

	ck_assert_uint_eq(echo_held(), n);
	ck_assert_uint_eq(pump(n, &end), 0);
	ck_assert_uint_eq(end, n);
	ck_assert_mem_eq(wire, sent_in, n);
	/* sums derived for most octets: a piece is read only when it is the
	 * smaller part of its buffer */
	ck_assert_uint_gt(FX->st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], n / 2);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS] +
				  FX->st.ctr[FG_CTR_TCP_TX_CSUM_READ_OCTETS],
			  FX->st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS]);
}
END_TEST

/* A kept sum made wrong: the frames carrying that buffer's octets fail
 * the receiver's check (so the sum was used, not read again), and only
 * those. */
START_TEST(corrupt_sum_caught)
{
	uint32_t n = peer_sends(4, sent_in), end = 0;
	struct fg_buf_sum *bs = fg_memport_ops()->buf_sum(FX->mp, FX->held[2].handle);
	struct fg_iov v[4];
	unsigned bad;

	bs->sum = fg_csum_combine(bs->sum, 0x0101);
	for (unsigned i = 0; i < 4; i++)
		v[i] = FX->held[i];
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, v, 4), 0);
	fg_net_poll(FX->net, FX->now);
	bad = harvest(wire, &end);
	ck_assert_uint_eq(bad, 1);
	ck_assert_uint_lt(end, n);
	ck_assert_uint_gt(FX->st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], 0);
}
END_TEST

/* A buffer's head sent alone (the smaller part: read), then its tail in a
 * later segment: the tail's sum is the kept one less the head's, learnt
 * at the cut, and nothing of it is read. */
START_TEST(cut_learnt)
{
	uint32_t n = peer_sends(1, sent_in), end = 0;
	const struct fg_iov *h = &FX->held[0];
	struct fg_iov head = { h->base, 301, h->handle }, tail = { h->base + 301, n - 301, h->handle };

	ck_assert_uint_eq(n, MSS);
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, &head, 1), 0);
	ck_assert_uint_eq(pump(301, &end), 0);
	ck_assert_ptr_eq(fg_memport_ops()->buf_sum(FX->mp, h->handle)->cut, h->base + 301);
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, &tail, 1), 0);
	ck_assert_uint_eq(pump(n, &end), 0);
	ck_assert_uint_eq(end, n);
	ck_assert_mem_eq(wire, sent_in, n);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_CSUM_READ_OCTETS], 301);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], n - 301);
}
END_TEST

/* A buffer with no kept sum (a merged packet's piece, a port that
 * verified): its octets are read, and the checksum is right. */
START_TEST(no_sum_reads)
{
	uint32_t n = peer_sends(6, sent_in), end = 0;

	for (unsigned i = 0; i < FX->n_held; i++)
		fg_memport_ops()->buf_sum(FX->mp, FX->held[i].handle)->start = NULL;
	ck_assert_uint_eq(echo_held(), n);
	ck_assert_uint_eq(pump(n, &end), 0);
	ck_assert_mem_eq(wire, sent_in, n);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_CSUM_READ_OCTETS], n);
}
END_TEST

/* ---- 4. TSO ---- */

static unsigned tso_frames(void)
{
	unsigned k = 0;

	for (unsigned i = 0; i < FX->n_tx; i++)
		if (FX->tx_flags[i] & FG_TX_TSO)
			k++;
	return k;
}

static void tso_run(uint32_t tso)
{
	uint32_t n, end = 0, segs;
	unsigned max_plen = 0, tso_seen = 0;

	setup_mode(16, tso);
	n = peer_sends(40, sent_in);
	ck_assert_uint_eq(echo_held(), n);
	fg_net_poll(FX->net, FX->now);
	for (unsigned round = 0; round < 400 && end < n; round++) {
		tso_seen += tso_frames();
		for (unsigned i = 0; i < FX->n_tx; i++)
			if (FX->tx[i].plen > max_plen)
				max_plen = FX->tx[i].plen;
		ck_assert_uint_eq(harvest(wire, &end), 0);
		fx_seg(F_ACK, FX->pseq, FX->our_seq + end, 65535, NULL, 0);
	}
	ck_assert_uint_eq(end, n);
	ck_assert_mem_eq(wire, sent_in, n);
	/* no wire segment over the MSS, TSO or not */
	ck_assert_uint_le(max_plen, MSS);
	segs = (uint32_t)FX->st.ctr[FG_CTR_TCP_TX_TSO_SEGS];
	if (tso) {
		ck_assert_uint_gt(FX->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES], 0);
		ck_assert_uint_eq(fg_memport_tx_tso(FX->mp), FX->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES]);
		ck_assert_uint_ge(tso_seen, segs);
		ck_assert_uint_gt(segs, FX->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES]);
	} else {
		ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES], 0);
		ck_assert_uint_eq(tso_seen, 0);
	}
	teardown();
}

START_TEST(tso_stream_exact)
{
	tso_run(65535);
}
END_TEST

START_TEST(tso_off_same_stream)
{
	tso_run(0);
}
END_TEST

/* The port cannot chain: TSO is asked for but the frame's copied octets
 * stay within one MSS, so no frame outgrows its buffer. */
START_TEST(tso_without_chaining)
{
	uint32_t n, end = 0;

	setup_mode(0, 65535);
	n = peer_sends(20, sent_in);
	ck_assert_uint_eq(echo_held(), n);
	ck_assert_uint_eq(pump(n, &end), 0);
	ck_assert_uint_eq(end, n);
	ck_assert_mem_eq(wire, sent_in, n);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_TSO_FRAMES], 0);
	ck_assert_uint_eq(FX->st.ctr[FG_CTR_TCP_TX_NOBUF], 0);
	teardown();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tcp_csum");
	TCase *tc = tcase_create("arith");

	tcase_add_test(tc, derive_matches_reading);
	tcase_add_test(tc, derive_edges);
	tcase_add_test(tc, pieces_across_buffers);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("reuse");
	tcase_add_checked_fixture(tc, setup_chained, teardown);
	tcase_add_test(tc, rx_keeps_sum);
	tcase_add_test(tc, rx_port_verified_clears);
	tcase_add_test(tc, rx_port_kept_stays);
	tcase_add_test(tc, echo_reuses_sums);
	tcase_add_test(tc, corrupt_sum_caught);
	tcase_add_test(tc, no_sum_reads);
	tcase_add_test(tc, cut_learnt);
	suite_add_tcase(s, tc);
	tc = tcase_create("tso");
	tcase_add_test(tc, tso_stream_exact);
	tcase_add_test(tc, tso_off_same_stream);
	tcase_add_test(tc, tso_without_chaining);
	suite_add_tcase(s, tc);
	return s;
}

FG_TEST_MAIN(suite)
