/* SPDX-License-Identifier: MIT */
/*
 * fuzz_passive.c — arbitrary frames into shadow mode (dataplane/passive:
 * net, TCP's passive reassembly and tcpsess, and on into the session
 * engine; the server's half into shadow.c's reassembly, answer lines and
 * pairing with the engine's decisions): what a mirror port or a capture
 * file can hold is untrusted input.
 *
 * Input: a sequence of records
 *     op (1)  len (2, big-endian)  body (len)
 * op & 0x07  advances the capture clock by that many seconds first;
 * op & 0x18  0: body is a whole frame, fed as is;
 *            1: body is [seq offset (4) | TCP flags (1) | payload] of a
 *               client segment of flow (op >> 5) & 3: the harness wraps it
 *               in Ethernet/IPv4/TCP from 198.18.0.N to 198.19.0.1:119,
 *               with the sequence number relative to that flow's ISN, so
 *               mutations reach the reassembly instead of the parser;
 *            2: the same from the server side (its SYN anchors the
 *               server's half, its text is the answers shadow mode
 *               compares; its RST ends a flow);
 *            3: the same as 1 inside an 802.1Q tag;
 * op & 0x80  the frame's buffer comes with "checksums verified" flags.
 * Between records the engine is polled and deferred work run. At the end
 * every flow is ended and every packet buffer must be back in the pool,
 * and shadow mode's figures must add up: every pair is in one class.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/memport.h"
#include "floodgate/passive.h"
#include "floodgate/session.h"
#include "floodgate/shadow.h"

#define START ((uint64_t)1790000000 * 1000000000ull)

static const char conf_text[] =
	"[site]\npath-identity fuzz.test\nlisten 198.19.0.1:119\n"
	"[session]\nclock-skew-limit 0\n[history]\ncapacity 4096\n"
	"[peer f]\naddress 198.18.0.0/16\n";

struct fz {
	struct fg_config *cfg;
	void *hmem;
	struct fg_history *h;
	struct fg_memport *mp;
	struct fg_nntp_counters st;
	struct fg_sink_null *sink;
	struct fg_nntp_engine *e;
	struct fg_passive *pv;
	uint64_t now_ns;
};

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

static int up(struct fz *z)
{
	struct fg_config_errors errs;
	struct fg_history_params hp = { .capacity = 4096, .alarm_load_pct = 90,
					.now = (fg_time_t)(START / 1000000000ull) };
	struct fg_nntp_engine_params ep = { 0 };
	struct fg_passive_params pp = { 0 };
	size_t hl;

	memset(z, 0, sizeof(*z));
	z->cfg = fg_config_load_text("fuzz", conf_text, sizeof(conf_text) - 1, &errs);
	hl = fg_history_region_size(hp.capacity, 0);
	z->hmem = aligned_alloc(64, hl);
	z->mp = fg_memport_create(600, 2048, NULL, NULL);
	z->sink = fg_sink_null_create(0);
	if (!z->cfg || !z->hmem || !z->mp || !z->sink)
		return -1;
	memset(hp.seed, 7, sizeof(hp.seed));
	z->h = fg_history_create(z->hmem, hl, &hp);
	ep.cfg = z->cfg;
	ep.history = z->h;
	ep.sink_ops = &fg_sink_null_ops;
	ep.sink = z->sink;
	ep.stats = &z->st;
	ep.max_sessions = 8;
	ep.max_xfers = 32;
	ep.max_holds = 256;
	z->e = z->h ? fg_nntp_engine_create(&ep) : NULL;
	pp.engine = z->e;
	pp.cfg = z->cfg;
	pp.ops = fg_memport_ops();
	pp.port = z->mp;
	pp.stats = &z->st.s;
	pp.max_flows = 8;
	pp.segs = 512;
	pp.max_segs = 64;
	pp.max_ooo = 16;
	pp.shadow = true;
	z->pv = z->e ? fg_passive_create(&pp) : NULL;
	z->now_ns = START;
	return z->pv ? 0 : -1;
}

static const enum fg_counter class_ctr[FG_SHADOW__CLASSES] = {
	[FG_SHADOW_AGREE] = FG_CTR_SHADOW_AGREE,
	[FG_SHADOW_REFUSED_TOOK] = FG_CTR_SHADOW_REFUSED_TOOK,
	[FG_SHADOW_TOOK_REFUSED] = FG_CTR_SHADOW_TOOK_REFUSED,
	[FG_SHADOW_TIMING] = FG_CTR_SHADOW_TIMING,
};

static void down(struct fz *z)
{
	struct fg_shadow_report r;
	uint64_t by_reason = 0;

	fg_passive_end_all(z->pv);
	for (int i = 0; i < 50 && (fg_nntp_engine_xfers(z->e) || fg_passive_flows(z->pv)); i++) {
		z->now_ns += 2000000000ull;
		fg_nntp_engine_poll(z->e, (fg_time_t)(z->now_ns / 1000000000ull), z->now_ns);
		fg_passive_work(z->pv);
	}
	/* nothing may keep a buffer once every flow is over */
	FG_ASSERT(fg_passive_flows(z->pv) == 0);
	FG_ASSERT(fg_memport_in_use(z->mp) == 0);
	fg_shadow_report(fg_passive_shadow(z->pv), &r);
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		FG_ASSERT(r.n[c] == z->st.s.ctr[class_ctr[c]]);
		FG_ASSERT(r.n_samples[c] <= FG_SHADOW_SAMPLES);
		for (unsigned k = 0; k < r.n_samples[c]; k++)
			FG_ASSERT(memchr(r.samples[c][k].id, 0, sizeof(r.samples[c][k].id)));
	}
	for (unsigned k = 0; k < FG_REASON__COUNT; k++)
		by_reason += r.refused_took[k];
	FG_ASSERT(by_reason == r.n[FG_SHADOW_REFUSED_TOOK]);
	fg_passive_destroy(z->pv);
	fg_nntp_engine_destroy(z->e);
	fg_sink_null_destroy(z->sink);
	fg_memport_destroy(z->mp);
	fg_history_detach(z->h);
	free(z->hmem);
	fg_config_free(z->cfg);
}

/* Ethernet (tagged or not) / IPv4 / TCP around a body of kind 1..3. */
static uint32_t wrap(uint8_t *f, unsigned kind, unsigned flow, const uint8_t *b, uint32_t n)
{
	static const uint32_t isn[4] = { 0x10000000u, 0xfffffff0u, 7u, 0x80000000u };
	uint32_t client = 0xc6120001u + flow, server = 0xc6130001u, off = 14, l4;
	uint8_t *ip, *th;

	if (n < 5)
		return 0;
	memset(f, 0, 14 + 4 + 40);
	if (kind == 3) {
		put16(f + 12, 0x8100);
		put16(f + 16, 0x0800);
		off = 18;
	} else {
		put16(f + 12, 0x0800);
	}
	ip = f + off;
	th = ip + 20;
	l4 = 20 + n - 5;
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4));
	ip[8] = 64;
	ip[9] = 6;
	put32(ip + 12, kind == 2 ? server : client);
	put32(ip + 16, kind == 2 ? client : server);
	put16(th, kind == 2 ? 119 : (uint16_t)(40000 + flow));
	put16(th + 2, kind == 2 ? (uint16_t)(40000 + flow) : 119);
	put32(th + 4, isn[flow] + ((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
				   (uint32_t)b[2] << 8 | b[3]));
	th[12] = 5 << 4;
	th[13] = b[4];
	memcpy(th + 20, b + 5, n - 5);
	return off + 20 + l4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[2048];
	struct fz z;
	size_t i = 0;

	if (up(&z) != 0)
		abort();
	while (i + 3 <= size) {
		uint8_t op = data[i];
		uint32_t n = (uint32_t)data[i + 1] << 8 | data[i + 2], len;
		unsigned kind = (op >> 3) & 3;
		struct fg_rx_frame fr;

		i += 3;
		if (n > size - i || n > 1400)
			break;
		z.now_ns += (uint64_t)(op & 7) * 1000000000ull;
		if (kind == 0) {
			memcpy(frame, data + i, n);
			len = n;
		} else {
			len = wrap(frame, kind, (op >> 5) & 3, data + i, n);
		}
		i += n;
		if (!len || fg_memport_rx_frame(z.mp, frame, len, &fr) != 0)
			continue;
		if (op & 0x80)
			fr.flags = FG_RX_IP_CSUM_OK | FG_RX_L4_CSUM_OK;
		fg_passive_rx(z.pv, &fr, 1, &z.now_ns, 0, 0);
		fg_nntp_engine_poll(z.e, (fg_time_t)(z.now_ns / 1000000000ull), z.now_ns);
		fg_passive_work(z.pv);
	}
	down(&z);
	return 0;
}
