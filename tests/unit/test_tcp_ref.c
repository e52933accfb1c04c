/* SPDX-License-Identifier: MIT */
/*
 * test_tcp_ref.c — sending by reference (fg_tcp_send_ref) on the memory
 * port, in its three ways of building frames: copied (a port that cannot
 * chain), chained (pieces attached to the header buffer), and chained
 * with room for one piece a frame (segments cut where a second would
 * go). Every test reads the peer's side of the wire back into a stream
 * and compares it with what was queued, every segment's checksum
 * verified, and counts the references the TCP holds on the pieces'
 * buffers through acknowledgement, close, abort, RST, retransmission and
 * the instance's end. Every test ends with all buffers returned.
 */
#include <errno.h>

/* the fixture's helpers this file has no use for */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tcp_fixture.h"
#pragma GCC diagnostic pop

#define F_FIN 0x01
#define F_RST 0x04
#define F_ACK 0x10

/* The fixture's three ways: copied, chained, one piece a frame. */
static const unsigned mode_segs[] = { 0, 16, 2 };

/* The next setup is IPv6 (the v6 cases set it; every teardown clears it). */
static int ref_v6;

static void ref_setup_mode(int mode, struct fg_tcp_config *tc)
{
	fx_next_v6 = ref_v6;
	fx_next_tx_segs = mode_segs[mode];
	fx_setup_cfg(tc);
}

static void ref_setup(int mode)
{
	struct fg_tcp_config tc;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 64;
	ref_setup_mode(mode, &tc);
}

static void ref_teardown(void)
{
	fx_teardown();
	fx_next_tx_segs = 0;
	ref_v6 = 0;
}

/* ---- the peer's side: the stream as the wire carried it ---- */

#define STREAM_MAX (1u << 20)
static uint8_t stream[STREAM_MAX];
static uint32_t stream_end;	/* octets from our_seq seen so far */
static unsigned chained_seen, data_segs_seen;
static uint8_t got[STREAM_MAX];	/* octets the peer has, in or out of order */
static int gaps_ok;		/* losses expected: segments beyond a hole */

static void tx_csum_ok(const struct fx_tx *t)
{
	const uint8_t *ip = t->frame + 14;
	uint32_t sum;

	if (FX->v6) {
		uint32_t l4 = (uint32_t)(ip[4] << 8 | ip[5]);

		sum = fg_ipv6_pseudo_sum(ip + 8, ip + 24, 6, l4);
		ck_assert_uint_eq(fg_csum_fold(fg_csum_add(sum, ip + 40, l4)), 0);
	} else {
		uint32_t ihl = (ip[0] & 15u) * 4, l4 = (uint32_t)(ip[2] << 8 | ip[3]) - ihl;
		uint32_t src, dst;

		memcpy(&src, ip + 12, 4);
		memcpy(&dst, ip + 16, 4);
		sum = fg_ipv4_pseudo_sum(src, dst, 6, l4);
		ck_assert_uint_eq(fg_csum_fold(fg_csum_add(sum, ip + ihl, l4)), 0);
		ck_assert_uint_eq(t->len, 14 + ihl + l4);
	}
}

/* Every captured data segment into `stream` (a retransmission must carry
 * what the first copy did), its checksum checked; the capture emptied. */
static void harvest(void)
{
	for (unsigned i = 0; i < FX->n_tx; i++) {
		const struct fx_tx *t = &FX->tx[i];
		uint32_t off = t->seq - FX->our_seq;

		if (!t->is_tcp || !t->plen)
			continue;
		tx_csum_ok(t);
		ck_assert_uint_le(off + t->plen, STREAM_MAX);
		if (!gaps_ok)
			ck_assert_uint_le(off, stream_end);	/* nothing skipped */
		/* a retransmission carries what the first copy did */
		for (uint32_t j = 0; j < t->plen; j++)
			if (got[off + j])
				ck_assert_uint_eq(stream[off + j], t->payload[j]);
		memcpy(stream + off, t->payload, t->plen);
		memset(got + off, 1, t->plen);
		while (stream_end < STREAM_MAX && got[stream_end])
			stream_end++;
		data_segs_seen++;
		if (FX->tx_flags[i] & FG_TX_CHAINED)
			chained_seen++;
	}
	FX->n_tx = 0;
}

static uint32_t sent_end(void)
{
	harvest();
	return FX->our_seq + stream_end;
}

/* The peer acknowledges everything it has, window `wnd`. */
static void ack_all(uint16_t wnd)
{
	fx_seg(F_ACK, FX->pseq, sent_end(), wnd, NULL, 0);
}

/* Acknowledge until `len` octets have arrived (bounded rounds). */
static void pump(uint32_t len)
{
	for (unsigned round = 0; stream_end < len; round++) {
		ck_assert_uint_lt(round, 100000);
		ack_all(65535);
	}
	ack_all(65535);
}

static void stream_reset(void)
{
	memset(got, 0, sizeof(got));
	gaps_ok = 0;
	stream_end = 0;
	chained_seen = data_segs_seen = 0;
}

/* ---- pieces: buffers of the memory port, as received frames are ---- */

static void buf_drop(void *h)
{
	fg_memport_ops()->buf_unref(FX->mp, h);
}

static const uint8_t *pat(void)
{
	static uint8_t p[1 << 20];
	static int done;

	if (!done) {
		for (uint32_t i = 0; i < sizeof(p); i++)
			p[i] = (uint8_t)(i * 131 + (i >> 9) * 7 + 1);
		done = 1;
	}
	return p;
}

/* What the test queued, to compare the stream with. */
static uint8_t want[STREAM_MAX];
static uint32_t want_len;

static void want_add(const void *p, uint32_t n)
{
	ck_assert_uint_le(want_len + n, STREAM_MAX);
	memcpy(want + want_len, p, n);
	want_len += n;
}

/* A port buffer holding a copy of some of the pattern: the test's
 * reference on it, and its data. */
struct held {
	void *h;
	uint8_t *data;
};

static struct held hold_new(const uint8_t *src, uint32_t len)
{
	struct fg_rx_frame fr;

	ck_assert_int_eq(fg_memport_rx_frame(FX->mp, src, len, &fr), 0);
	return (struct held){ fr.handle, fr.data };
}

static int send_piece(struct held b, uint32_t off, uint32_t len)
{
	struct fg_iov v = { .base = b.data + off, .len = len, .handle = b.h };
	int rc = fg_tcp_send_ref(FX->conn, &v, 1);

	if (rc == 0)
		want_add(b.data + off, len);
	return rc;
}

/* `len` octets of the pattern from `off`, in buffers of `chunk` octets
 * (at most 2048, the fixture's buffers), queued by one fg_tcp_send_ref;
 * our references dropped, so only the TCP's keep them. */
static int send_pat(uint32_t off, uint32_t len, uint32_t chunk)
{
	struct fg_iov v[64] = { { 0 } };
	unsigned n = 0;
	int rc;

	for (uint32_t at = 0; at < len; at += chunk) {
		struct held b = hold_new(pat() + off + at, FG_MIN(chunk, len - at));

		ck_assert_uint_lt(n, 64);
		v[n++] = (struct fg_iov){ b.data, FG_MIN(chunk, len - at), b.h };
	}
	rc = fg_tcp_send_ref(FX->conn, v, n);
	for (unsigned i = 0; i < n; i++) {
		if (rc == 0)
			want_add(v[i].base, v[i].len);
		buf_drop(v[i].handle);
	}
	return rc;
}

static void send_text(const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	ck_assert_int_eq(fg_tcp_send(FX->conn, s, n), (int)n);
	want_add(s, n);
}

static void check_stream(void)
{
	harvest();
	ck_assert_uint_eq(stream_end, want_len);
	ck_assert_mem_eq(stream, want, want_len);
}

static uint64_t ctr(enum fg_counter id)
{
	return FX->st.ctr[id];
}

static void counters_add_up(void)
{
	ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_COPIED_OCTETS) + ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS),
			  ctr(FG_CTR_TCP_TX_BYTES));
}

static void begin(int mode)
{
	ref_setup(mode);
	stream_reset();
	want_len = 0;
	fx_handshake();
}

/* ---------------------------------------------------------------- tests */

/* Text, an article in three buffers, more text, a second article: the
 * peer gets exactly those octets, in order; with chaining the pieces'
 * octets are attached, never copied, and the text is copied. */
START_TEST(test_interleave)
{
	struct held a, b, c, d;
	uint64_t refd = 1001 + 1448 + 2047 + 777;

	begin(_i);
	a = hold_new(pat(), 1001);
	b = hold_new(pat() + 1001, 1448);
	c = hold_new(pat() + 2449, 2047);
	d = hold_new(pat() + 9000, 777);
	send_text("TAKETHIS <x@y>\r\n");	/* odd length: pieces at odd offsets */
	ck_assert_int_eq(send_piece(a, 0, 1001), 0);
	ck_assert_int_eq(send_piece(b, 0, 1448), 0);
	ck_assert_int_eq(send_piece(c, 0, 2047), 0);
	send_text("TAKETHIS <z@y>\r\n");
	ck_assert_int_eq(send_piece(d, 0, 777), 0);
	send_text(".\r\n");
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), (8u << 20) - refd);
	pump(want_len);
	check_stream();
	counters_add_up();
	if (mode_segs[_i]) {
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), refd);
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_COPIED_OCTETS), want_len - refd);
		ck_assert_uint_gt(chained_seen, 0);
		ck_assert_uint_ge(fg_memport_tx_attached(FX->mp), 4);
	} else {
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), 0);
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_COPIED_OCTETS), want_len);
		ck_assert_uint_eq(chained_seen, 0);
		ck_assert_uint_eq(fg_memport_tx_attached(FX->mp), 0);
	}
	/* everything acknowledged: only our own references are left */
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), 8u << 20);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
	ck_assert_uint_eq(fg_memport_refcnt(d.h), 1);
	buf_drop(a.h), buf_drop(b.h), buf_drop(c.h), buf_drop(d.h);
	ref_teardown();
}
END_TEST

/* A reference is held from the send to the acknowledgement of the last
 * octet of its piece: a partial ACK keeps it, the full one drops it. */
START_TEST(test_refs_until_acked)
{
	struct held a, b;

	begin(_i);
	a = hold_new(pat(), 2000);
	b = hold_new(pat() + 2000, 100);
	ck_assert_int_eq(send_piece(a, 0, 2000), 0);
	ck_assert_int_eq(send_piece(b, 0, 100), 0);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 2);
	ck_assert_uint_eq(fg_memport_refcnt(b.h), 2);
	fx_advance(0);
	harvest();
	ck_assert_uint_eq(stream_end, 2100);
	/* frames sent are freed by the port at once: what is left is ours
	 * and the TCP's */
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 2);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 1999, 65535, NULL, 0);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 2);
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), (8u << 20) - 101);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 2000, 65535, NULL, 0);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
	ck_assert_uint_eq(fg_memport_refcnt(b.h), 2);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 2100, 65535, NULL, 0);
	ck_assert_uint_eq(fg_memport_refcnt(b.h), 1);
	check_stream();
	buf_drop(a.h), buf_drop(b.h);
	ref_teardown();
}
END_TEST

/* Unacknowledged pieces lose the TCP's reference however the connection
 * ends: the app's abort, the peer's RST, retransmissions given up, the
 * instance destroyed. (mode = _i / 4, end = _i % 4) */
START_TEST(test_refs_dropped_at_end)
{
	int mode = _i / 4, end = _i % 4;
	struct held a;
	unsigned in_use;

	begin(mode);
	a = hold_new(pat(), 2000);
	ck_assert_int_eq(send_piece(a, 0, 2000), 0);
	fx_advance(0);
	harvest();
	ck_assert_uint_gt(stream_end, 0);	/* it had its chance to go */
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 2);
	switch (end) {
	case 0:
		fg_tcp_abort(FX->conn);
		break;
	case 1:
		fx_seg(F_RST, FX->pseq, 0, 0, NULL, 0);
		ck_assert_uint_eq(FX->closes, 1);
		break;
	case 2:
		/* nothing acknowledged: every RTO until the TCP gives up */
		for (unsigned k = 0; k < 1000 && FX->closes == 0; k++)
			fx_advance(1000 * FX_MS);
		ck_assert_uint_eq(FX->closes, 1);
		ck_assert_int_eq(FX->close_why, FG_TCP_CLOSE_TIMEOUT);
		break;
	default:
		/* the instance goes with the piece queued */
		in_use = fg_memport_in_use(FX->mp);
		fg_tcp_destroy(FX->tcp);
		FX->tcp = NULL;
		ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
		ck_assert_uint_eq(fg_memport_in_use(FX->mp), in_use);
		break;
	}
	if (FX->tcp)
		fx_advance(0);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
	buf_drop(a.h);
	ref_teardown();
}
END_TEST

/* go-back-N after an RTO and the fast retransmit re-send from the
 * pieces: the same octets again, attached again when the port chains. */
START_TEST(test_retransmit_from_refs)
{
	uint64_t refd0, segs;

	begin(_i);
	send_text("T");
	ck_assert_int_eq(send_pat(0, 6000, 2000), 0);
	fx_advance(0);
	harvest();
	ck_assert_uint_gt(stream_end, 1);	/* the initial window's worth */
	refd0 = ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS);
	/* RTO: everything from snd_una goes again */
	segs = ctr(FG_CTR_TCP_RETRANS_SEGS);
	for (unsigned k = 0; k < 10 && ctr(FG_CTR_TCP_RETRANS_SEGS) == segs; k++)
		fx_advance(1100 * FX_MS);
	ck_assert_uint_gt(ctr(FG_CTR_TCP_RETRANS_SEGS), segs);
	harvest();	/* compares each retransmission with the first copy */
	if (mode_segs[_i])
		ck_assert_uint_gt(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), refd0);
	pump(6001);
	check_stream();
	counters_add_up();
	ref_teardown();	/* every buffer returned: the teardown checks */
}
END_TEST

START_TEST(test_fast_retransmit_refs)
{
	uint32_t first_len;
	uint64_t fr;

	begin(_i);
	ck_assert_int_eq(send_pat(0, 8000, 1600), 0);
	fx_advance(0);
	ck_assert_uint_ge(FX->n_tx, 3);	/* the initial window */
	first_len = FX->tx[0].plen;
	harvest();
	fr = ctr(FG_CTR_TCP_FAST_RETRANS);
	for (int k = 0; k < 3; k++)
		fx_seg(F_ACK, FX->pseq, FX->our_seq, 65535, NULL, 0);
	ck_assert_uint_eq(ctr(FG_CTR_TCP_FAST_RETRANS), fr + 1);
	ck_assert_uint_ge(FX->n_tx, 1);
	ck_assert_uint_eq(FX->tx[0].seq, FX->our_seq);
	ck_assert_uint_eq(FX->tx[0].plen, first_len);
	if (mode_segs[_i])
		ck_assert(FX->tx_flags[0] & FG_TX_CHAINED);
	harvest();
	pump(8000);
	check_stream();
	ref_teardown();
}
END_TEST

/* The cap: all or nothing, EAGAIN, nothing queued by a refusal;
 * on_writable once the acknowledged octets free what was asked. */
START_TEST(test_cap_and_writable)
{
	struct fg_tcp_config tc;
	struct held a;
	uint64_t full;

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.sndref_max = 4096;
	ref_setup_mode(_i, &tc);
	stream_reset();
	want_len = 0;
	fx_handshake();
	a = hold_new(pat(), 2048);
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), 4096);
	ck_assert_int_eq(send_pat(0, 3000, 1500), 0);
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), 1096);
	full = ctr(FG_CTR_TCP_SEND_REF_FULL);
	/* two pieces, the second beyond the cap: neither is queued */
	{
		struct fg_iov v[2] = { { a.data, 500, a.h }, { a.data + 500, 1500, a.h } };

		errno = 0;
		ck_assert_int_eq(fg_tcp_send_ref(FX->conn, v, 2), -1);
		ck_assert_int_eq(errno, EAGAIN);
	}
	ck_assert_uint_eq(ctr(FG_CTR_TCP_SEND_REF_FULL), full + 1);
	ck_assert_uint_eq(fg_tcp_ref_space(FX->conn), 1096);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);	/* no reference taken */
	fx_advance(0);
	harvest();
	ck_assert_uint_eq(stream_end, 3000);	/* only the first send went */
	ck_assert_uint_eq(FX->writables, 0);
	/* 700 acknowledged: 1796 free, not yet the 2000 asked for */
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 700, 65535, NULL, 0);
	ck_assert_uint_eq(FX->writables, 0);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 3000, 65535, NULL, 0);
	ck_assert_uint_eq(FX->writables, 1);
	ck_assert_int_eq(send_piece(a, 0, 2000), 0);
	pump(5000);
	check_stream();
	ck_assert_uint_eq(FX->writables, 1);
	buf_drop(a.h);
	ref_teardown();
}
END_TEST

/* Bad calls: a piece with octets but no data, and any send once the
 * app closed: EINVAL, nothing queued, no reference taken. */
START_TEST(test_bad_calls)
{
	struct held a;
	struct fg_iov bad = { NULL, 10, NULL };
	struct fg_iov empty = { NULL, 0, NULL };

	begin(_i);
	a = hold_new(pat(), 100);
	errno = 0;
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, &bad, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, &empty, 1), 0);	/* nothing to do */
	ck_assert_int_eq(fg_tcp_send_ref(FX->conn, NULL, 0), 0);
	fg_tcp_close(FX->conn);
	errno = 0;
	ck_assert_int_eq(send_piece(a, 0, 100), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
	buf_drop(a.h);
	ref_teardown();
}
END_TEST

/* A piece without a handle is copied into the send buffer (counted
 * copied), and it too is all or nothing against the buffer's space. */
START_TEST(test_null_handle_copied)
{
	struct fg_tcp_config tc;
	struct held a;
	static uint8_t text[2000];

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.sndbuf = 1024;
	ref_setup_mode(_i, &tc);
	stream_reset();
	want_len = 0;
	fx_handshake();
	a = hold_new(pat(), 700);
	memset(text, 'q', sizeof(text));
	{
		struct fg_iov v[2] = { { a.data, 700, a.h }, { text, 2000, NULL } };

		errno = 0;
		ck_assert_int_eq(fg_tcp_send_ref(FX->conn, v, 2), -1);
		ck_assert_int_eq(errno, EAGAIN);
		ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
		v[1].len = 900;
		ck_assert_int_eq(fg_tcp_send_ref(FX->conn, v, 2), 0);
		want_add(a.data, 700);
		want_add(text, 900);
	}
	ck_assert_uint_eq(fg_tcp_send_space(FX->conn), 1024 - 900);
	pump(1600);
	check_stream();
	counters_add_up();
	if (mode_segs[_i])
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), 700);
	ck_assert_uint_ge(ctr(FG_CTR_TCP_TX_COPIED_OCTETS), 900);
	buf_drop(a.h);
	ref_teardown();
}
END_TEST

/* The peer's window bounds what leaves; a piece longer than a segment
 * is sent as slices of it, each octet exactly once (no loss here). */
START_TEST(test_window_limited_and_spanning)
{
	struct held a;

	begin(_i);
	a = hold_new(pat(), 2048);	/* one buffer, two segments */
	fx_seg(F_ACK, FX->pseq, FX->our_seq, 1000, NULL, 0);	/* a window of 1000 */
	ck_assert_int_eq(send_piece(a, 0, 2048), 0);
	ck_assert_int_eq(send_pat(3000, 6000, 2000), 0);
	fx_advance(0);
	harvest();
	ck_assert_uint_eq(stream_end, 1000);
	ck_assert_uint_eq(data_segs_seen, 1);
	fx_seg(F_ACK, FX->pseq, FX->our_seq + 1000, 3000, NULL, 0);
	harvest();
	/* the window's right edge, less what sender SWS avoidance holds */
	ck_assert_uint_gt(stream_end, 1000);
	ck_assert_uint_le(stream_end, 4000);
	for (unsigned round = 0; stream_end < 8048; round++) {
		ck_assert_uint_lt(round, 100);
		ack_all(3000);
	}
	ack_all(3000);
	check_stream();
	ck_assert_uint_eq(ctr(FG_CTR_TCP_RETRANS_SEGS), 0);
	ck_assert_uint_eq(fg_memport_refcnt(a.h), 1);
	buf_drop(a.h);
	ref_teardown();
}
END_TEST

/* Many small pieces: 300 of 7 octets, each in its own buffer, then 200
 * adjoining slices of one buffer (merged into one descriptor: one
 * reference). A chained frame carries at most tx_max_segs - 1 pieces. */
START_TEST(test_many_small_pieces)
{
	static struct held bufs[300];
	struct held one;

	begin(_i);
	for (unsigned i = 0; i < 300; i++) {
		bufs[i] = hold_new(pat() + 7 * i, 7);
		ck_assert_int_eq(send_piece(bufs[i], 0, 7), 0);
	}
	one = hold_new(pat() + 5000, 2000);
	for (unsigned i = 0; i < 200; i++)
		ck_assert_int_eq(send_piece(one, 10 * i, 10), 0);
	ck_assert_uint_eq(fg_memport_refcnt(one.h), 2);	/* one reference for 200 */
	fx_advance(0);
	for (unsigned i = 0; i < FX->n_tx; i++)
		if (mode_segs[_i] && FX->tx[i].plen && FX->tx[i].plen < 2000)
			ck_assert_uint_le(FX->tx[i].plen, 7 * (mode_segs[_i] - 1) + 2000);
	pump(want_len);
	check_stream();
	if (mode_segs[_i] == 16)
		/* 300 pieces at 15 a frame: at least 20 frames for them */
		ck_assert_uint_ge(data_segs_seen, 20);
	for (unsigned i = 0; i < 300; i++) {
		ck_assert_uint_eq(fg_memport_refcnt(bufs[i].h), 1);
		buf_drop(bufs[i].h);
	}
	ck_assert_uint_eq(fg_memport_refcnt(one.h), 1);
	buf_drop(one.h);
	ref_teardown();
}
END_TEST

/* The piece descriptors of the instance are a bound too (EAGAIN). */
START_TEST(test_descriptor_pool)
{
	struct fg_tcp_config tc;
	struct held b[4];

	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8;
	tc.sndref_pieces = 3;
	ref_setup_mode(_i, &tc);
	stream_reset();
	want_len = 0;
	fx_handshake();
	for (unsigned i = 0; i < 4; i++)
		b[i] = hold_new(pat() + 100 * i, 100);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(send_piece(b[i], 0, 100), 0);
	errno = 0;
	ck_assert_int_eq(send_piece(b[3], 0, 100), -1);
	ck_assert_int_eq(errno, EAGAIN);
	pump(300);
	ck_assert_uint_eq(FX->writables, 1);
	ck_assert_int_eq(send_piece(b[3], 0, 100), 0);
	pump(400);
	check_stream();
	for (unsigned i = 0; i < 4; i++)
		buf_drop(b[i].h);
	ref_teardown();
}
END_TEST

/* A 700 KB article in 1448-octet receive buffers, behind its TAKETHIS
 * line: the whole of it arrives, and with chaining none of it is copied. */
START_TEST(test_article_700k)
{
	enum { ART = 700 * 1024, SEG = 1448 };
	static struct held bufs[ART / SEG + 1];
	unsigned nb = 0;

	begin(_i);
	send_text("TAKETHIS <big@x>\r\n");
	for (uint32_t off = 0; off < ART; off += SEG) {
		uint32_t n = FG_MIN((uint32_t)SEG, ART - off);

		bufs[nb] = hold_new(pat() + off, n);
		ck_assert_int_eq(send_piece(bufs[nb], 0, n), 0);
		buf_drop(bufs[nb].h);	/* the TCP's reference keeps it */
		nb++;
	}
	send_text("\r\n.\r\n");
	pump(want_len);
	check_stream();
	counters_add_up();
	if (mode_segs[_i])
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), ART);
	else
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), 0);
	ref_teardown();	/* every buffer returned: the teardown checks */
}
END_TEST

/* The same over IPv6: its checksum over chained pieces. */
START_TEST(test_interleave_v6)
{
	ref_v6 = 1;
	begin(_i);
	send_text("TAKETHIS <v6@y>\r\n");
	ck_assert_int_eq(send_pat(1, 7001, 1447), 0);	/* odd lengths */
	send_text(".\r\n");
	ck_assert_int_eq(FX->v6, 1);
	pump(want_len);
	check_stream();
	counters_add_up();
	if (mode_segs[_i])
		ck_assert_uint_eq(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), 7001);
	ref_teardown();
}
END_TEST

/* Segments lost on the way (net's fault knob, seeded): the losses are
 * repaired from the references by fast retransmit and RTO, and the peer
 * still gets exactly the article; the references all come back. */
START_TEST(test_lossy_article)
{
	struct fg_net_faults faults = { .tx_drop_ppm = 30000, .seed = 11 };
	uint32_t last = 0;

	begin(_i);
	ck_assert_int_eq(fg_net_set_faults(FX->net, &faults), 0);
	gaps_ok = 1;
	send_text("TAKETHIS <lossy@y>\r\n");
	for (uint32_t off = 0; off < 200000; off += 60000)
		ck_assert_int_eq(send_pat(off, FG_MIN(60000u, 200000 - off), 1448), 0);
	send_text(".\r\n");
	fx_advance(0);
	for (unsigned round = 0; stream_end < want_len; round++) {
		ck_assert_uint_lt(round, 20000);
		/* the peer acknowledges what it has in order (a hole repeats
		 * its ACK: duplicate ACKs), and time passes when nothing moves */
		last = stream_end;
		ack_all(65535);
		if (stream_end == last)
			fx_advance(300 * FX_MS);
	}
	ack_all(65535);
	check_stream();
	counters_add_up();
	ck_assert_uint_gt(FX->st.ctr[FG_CTR_NET_FAULT_TX_DROP], 0);
	ck_assert_uint_gt(ctr(FG_CTR_TCP_RETRANS_SEGS), 0);
	if (mode_segs[_i])
		ck_assert_uint_gt(ctr(FG_CTR_TCP_TX_REFERENCED_OCTETS), 200000);
	ref_teardown();	/* every buffer returned: the teardown checks */
}
END_TEST

static Suite *tcp_ref_suite(void)
{
	Suite *s = suite_create("tcp_ref");
	TCase *t = tcase_create("ref");
	int modes = (int)FG_ARRAY_SIZE(mode_segs);

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_interleave, 0, modes);
	tcase_add_loop_test(t, test_refs_until_acked, 0, modes);
	tcase_add_loop_test(t, test_refs_dropped_at_end, 0, 4 * modes);
	tcase_add_loop_test(t, test_retransmit_from_refs, 0, modes);
	tcase_add_loop_test(t, test_fast_retransmit_refs, 0, modes);
	tcase_add_loop_test(t, test_cap_and_writable, 0, modes);
	tcase_add_loop_test(t, test_bad_calls, 0, modes);
	tcase_add_loop_test(t, test_null_handle_copied, 0, modes);
	tcase_add_loop_test(t, test_window_limited_and_spanning, 0, modes);
	tcase_add_loop_test(t, test_many_small_pieces, 0, modes);
	tcase_add_loop_test(t, test_descriptor_pool, 0, modes);
	tcase_add_loop_test(t, test_article_700k, 0, modes);
	tcase_add_loop_test(t, test_interleave_v6, 0, modes);
	tcase_add_loop_test(t, test_lossy_article, 0, modes);
	suite_add_tcase(s, t);
	return s;
}

FG_TEST_MAIN(tcp_ref_suite)
