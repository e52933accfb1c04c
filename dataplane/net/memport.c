/* SPDX-License-Identifier: MIT */
/*
 * memport.c — fixed pool of reference-counted buffers (see memport.h).
 *
 * Layout: one allocation of n_bufs slots, each a struct mbuf header
 * followed by buf_size data bytes; free slots form a singly linked list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"
#include "floodgate/memport.h"
#include "floodgate/wire.h"

/* A piece attached to a TX buffer (tx_attach). */
struct mp_att {
	struct mbuf *m;
	const uint8_t *data;
	uint32_t len;
};

struct mbuf {
	struct mbuf *next_free;
	uint32_t refcnt;
	uint32_t n_att, cap_att;
	struct mp_att *att;		/* grown on demand, kept with the slot */
	struct fg_buf_sum sum;		/* the payload sum TCP keeps (buf_sum) */
	uint8_t data[];
};

struct fg_memport {
	uint8_t *slab;
	size_t slot_size;
	uint32_t buf_size;
	unsigned n_bufs;
	unsigned in_use;
	uint64_t alloc_fail;
	uint64_t tx_attached, tx_chained, tx_tso;
	struct mbuf *free_list;
	fg_memport_sink_fn *sink;
	void *sink_arg;
	fg_memport_sink_fn *kernel;	/* the exception path's receiver; NULL: none */
	void *kernel_arg;
};

struct fg_memport *fg_memport_create(unsigned n_bufs, uint32_t buf_size,
				     fg_memport_sink_fn *sink, void *sink_arg)
{
	struct fg_memport *p = calloc(1, sizeof(*p));

	if (!p || n_bufs == 0 || buf_size == 0)
		goto out_free_port;
	p->slot_size = (sizeof(struct mbuf) + buf_size + 63) & ~(size_t)63;
	p->slab = malloc(p->slot_size * n_bufs);
	if (!p->slab)
		goto out_free_port;
	p->buf_size = buf_size;
	p->n_bufs = n_bufs;
	p->sink = sink;
	p->sink_arg = sink_arg;
	for (unsigned i = n_bufs; i-- > 0;) {
		struct mbuf *m = (struct mbuf *)(p->slab + i * p->slot_size);

		m->refcnt = 0;
		m->n_att = m->cap_att = 0;
		m->att = NULL;
		m->next_free = p->free_list;
		p->free_list = m;
	}
	return p;

out_free_port:
	free(p);
	return NULL;
}

void fg_memport_destroy(struct fg_memport *p)
{
	if (!p)
		return;
	if (p->in_use)
		FG_LOG_WARN("memport", "destroyed with %u buffers still referenced", p->in_use);
	for (unsigned i = 0; i < p->n_bufs; i++)
		free(((struct mbuf *)(p->slab + i * p->slot_size))->att);
	free(p->slab);
	free(p);
}

static struct mbuf *mbuf_get(struct fg_memport *p)
{
	struct mbuf *m = p->free_list;

	if (!m) {
		p->alloc_fail++;
		return NULL;
	}
	p->free_list = m->next_free;
	m->refcnt = 1;
	m->sum.start = NULL;
	p->in_use++;
	return m;
}

static void mp_ref(void *port, void *handle)
{
	struct mbuf *m = handle;

	(void)port;
	FG_ASSERT(m->refcnt > 0);
	m->refcnt++;
}

static void mp_unref(void *port, void *handle)
{
	struct fg_memport *p = port;
	struct mbuf *m = handle;

	FG_ASSERT(m->refcnt > 0);
	if (--m->refcnt)
		return;
	for (uint32_t i = 0; i < m->n_att; i++)
		mp_unref(p, m->att[i].m);
	m->n_att = 0;
	m->next_free = p->free_list;
	p->free_list = m;
	p->in_use--;
}

static uint8_t *mp_tx_alloc(void *port, uint32_t size, void **handle)
{
	struct fg_memport *p = port;
	struct mbuf *m;

	if (size > p->buf_size)
		return NULL;
	m = mbuf_get(p);
	if (!m)
		return NULL;
	*handle = m;
	return m->data;
}

static void mp_tx_free(void *port, void *handle)
{
	mp_unref(port, handle);
}

static int mp_tx_attach(void *port, void *frame, void *piece, const uint8_t *data,
			uint32_t len)
{
	struct fg_memport *p = port;
	struct mbuf *m = frame;

	if (m->n_att == m->cap_att) {
		uint32_t cap = m->cap_att ? 2 * m->cap_att : 8;
		struct mp_att *a = realloc(m->att, cap * sizeof(*a));

		if (!a)
			return -ENOBUFS;
		m->att = a;
		m->cap_att = cap;
	}
	mp_ref(p, piece);
	m->att[m->n_att++] = (struct mp_att){ piece, data, len };
	p->tx_attached++;
	return 0;
}

/* A chained frame as the wire carries it: its own octets, then each
 * piece's, in a scratch buffer the caller frees; NULL without memory. */
static uint8_t *mp_flatten(const struct fg_tx_frame *f)
{
	const struct mbuf *m = f->handle;
	uint32_t att = 0, own;
	uint8_t *t, *at;

	for (uint32_t i = 0; i < m->n_att; i++)
		att += m->att[i].len;
	FG_ASSERT(att <= f->len);
	own = f->len - att;
	t = malloc(f->len ? f->len : 1);
	if (!t)
		return NULL;
	memcpy(t, f->data, own);
	at = t + own;
	for (uint32_t i = 0; i < m->n_att; i++) {
		memcpy(at, m->att[i].data, m->att[i].len);
		at += m->att[i].len;
	}
	return t;
}

/* A port without VLAN offload: the tag goes in by software, after the
 * MAC addresses (IEEE 802.1Q), so the sink sees the frame as the wire. */
static void mp_sink_tagged(struct fg_memport *p, const struct fg_tx_frame *f)
{
	uint8_t *t = malloc((size_t)f->len + FG_VLAN_HLEN);

	if (!t)
		return;
	memcpy(t, f->data, 12);
	fg_wr16(t + 12, FG_ETHERTYPE_VLAN);
	fg_wr16(t + 14, f->vlan & 0xfff);
	memcpy(t + 16, f->data + 12, f->len - 12);
	p->sink(p->sink_arg, t, f->len + FG_VLAN_HLEN, f->flags);
	free(t);
}

/* One frame or segment to the sink, tagged when it asks for a VLAN. */
static void mp_sink(struct fg_memport *p, const struct fg_tx_frame *f)
{
	if (p->sink && f->data && (f->flags & FG_TX_VLAN) && f->len >= FG_ETH_HLEN)
		mp_sink_tagged(p, f);
	else if (p->sink && f->data)
		p->sink(p->sink_arg, f->data, f->len, f->flags);
}

/*
 * A TSO frame cut as a port's segmentation would (DPDK's GSO, which
 * net_tap uses): segments of tso_segsz payload octets behind copies of
 * the headers, each with its own IP length (IPv4: identification + i and
 * a header checksum), sequence number and TCP checksum; FIN and PSH only
 * on the last. The sink sees them with FG_TX_TSO still set (and no
 * FG_TX_CSUM_OFFLOAD: their checksums are complete).
 */
static void mp_tso(struct fg_memport *p, const struct fg_tx_frame *f)
{
	const uint8_t *ip = f->data + FG_ETH_HLEN;
	bool v6 = f->flags & FG_TX_IPV6;
	uint32_t l3 = v6 ? FG_IP6_HLEN : (ip[0] & 15u) * 4u;
	uint32_t hdr = FG_ETH_HLEN + l3 + (uint32_t)(ip[l3 + 12] >> 4) * 4u;
	uint32_t seq = fg_rd32(ip + l3 + 4), seg = f->tso_segsz;
	uint8_t *t = malloc(hdr + seg);

	p->tx_tso++;
	if (!t || !seg)
		goto out;
	for (uint32_t off = hdr, i = 0; off < f->len; off += seg, i++) {
		uint32_t k = FG_MIN(seg, f->len - off), l4 = hdr - FG_ETH_HLEN - l3 + k;
		struct fg_tx_frame g = *f;
		uint8_t *tip = t + FG_ETH_HLEN, *th = tip + l3;
		uint32_t sum;

		memcpy(t, f->data, hdr);
		memcpy(t + hdr, f->data + off, k);
		if (v6) {
			fg_wr16(tip + 4, (uint16_t)l4);
			sum = fg_ipv6_pseudo_sum(tip + 8, tip + 24, FG_IP_PROTO_TCP, l4);
		} else {
			fg_wr16(tip + 2, (uint16_t)(l3 + l4));
			fg_wr16(tip + 4, (uint16_t)(fg_rd16(ip + 4) + i));
			fg_wr16(tip + 10, 0);
			fg_wr16(tip + 10, fg_csum_fold(fg_csum_add(0, tip, l3)));
			sum = fg_ipv4_pseudo_sum(fg_rdaddr(tip + 12), fg_rdaddr(tip + 16),
						 FG_IP_PROTO_TCP, l4);
		}
		fg_wr32(th + 4, seq + (off - hdr));
		if (off + k < f->len)
			th[13] &= (uint8_t)~0x09;	/* FIN and PSH: the last segment's */
		fg_wr16(th + 16, 0);
		fg_wr16(th + 16, fg_csum_fold(fg_csum_add(sum, th, l4)));
		g.data = t;
		g.len = hdr + k;
		g.flags &= ~FG_TX_CSUM_OFFLOAD;
		mp_sink(p, &g);
	}
out:
	free(t);
}

static unsigned mp_tx_burst(void *port, struct fg_tx_frame *frames, unsigned n)
{
	struct fg_memport *p = port;

	for (unsigned i = 0; i < n; i++) {
		struct fg_tx_frame f = frames[i];
		uint8_t *flat = NULL;

		if (((struct mbuf *)f.handle)->n_att) {
			p->tx_chained++;
			flat = mp_flatten(&f);
			f.data = flat;
		}
		if ((f.flags & FG_TX_TSO) && f.data)
			mp_tso(p, &f);
		else
			mp_sink(p, &f);
		free(flat);
		mp_unref(p, f.handle);
	}
	return n;
}

/* The kernel sees the frame now, as a tap's kernel side would: a copy,
 * so no reference outlives the call. */
static int mp_to_kernel(void *port, const struct fg_rx_frame *f)
{
	struct fg_memport *p = port;

	if (!p->kernel)
		return -ENOTSUP;
	p->kernel(p->kernel_arg, f->data, f->len, f->flags);
	return 0;
}

void fg_memport_set_kernel(struct fg_memport *p, fg_memport_sink_fn *fn, void *arg)
{
	p->kernel = fn;
	p->kernel_arg = arg;
}

static struct fg_buf_sum *mp_buf_sum(void *port, void *handle)
{
	(void)port;
	return &((struct mbuf *)handle)->sum;
}

static const struct fg_port_ops memport_ops = {
	.buf_ref = mp_ref,
	.buf_unref = mp_unref,
	.tx_alloc = mp_tx_alloc,
	.tx_free = mp_tx_free,
	.tx_burst = mp_tx_burst,
	.to_kernel = mp_to_kernel,
	.tx_attach = mp_tx_attach,
	.buf_sum = mp_buf_sum,
};

const struct fg_port_ops *fg_memport_ops(void)
{
	return &memport_ops;
}

int fg_memport_rx_frame(struct fg_memport *p, const void *data, uint32_t len,
			struct fg_rx_frame *out)
{
	struct mbuf *m;

	if (len > p->buf_size)
		return -ENOBUFS;
	m = mbuf_get(p);
	if (!m)
		return -ENOBUFS;
	if (data)
		memcpy(m->data, data, len);
	out->data = m->data;
	out->len = len;
	out->flags = 0;
	out->handle = m;
	return 0;
}

unsigned fg_memport_in_use(const struct fg_memport *p)
{
	return p->in_use;
}

uint64_t fg_memport_tx_attached(const struct fg_memport *p)
{
	return p->tx_attached;
}

uint64_t fg_memport_tx_tso(const struct fg_memport *p)
{
	return p->tx_tso;
}

uint64_t fg_memport_tx_chained(const struct fg_memport *p)
{
	return p->tx_chained;
}

uint32_t fg_memport_refcnt(const void *handle)
{
	return ((const struct mbuf *)handle)->refcnt;
}

unsigned fg_memport_capacity(const struct fg_memport *p)
{
	return p->n_bufs;
}

uint64_t fg_memport_alloc_failures(const struct fg_memport *p)
{
	return p->alloc_fail;
}

uint32_t fg_memport_buf_size(const struct fg_memport *p)
{
	return p->buf_size;
}

uint32_t fg_craft_tcp_frame(uint8_t *frame, const struct fg_craft_tcp *c)
{
	uint32_t hl = FG_TCP_HLEN + c->optlen, l4 = hl + c->len;
	uint32_t l3 = c->src6 ? FG_IP6_HLEN : FG_IP_HLEN;
	uint8_t *th = frame + FG_ETH_HLEN + l3;
	uint32_t sum;

	if (c->src6) {
		fg_net_build_ipv6(frame, c->dst_mac, c->src_mac, c->src6, c->dst6,
				  FG_IP_PROTO_TCP, l4, 64);
		sum = fg_ipv6_pseudo_sum(c->src6, c->dst6, FG_IP_PROTO_TCP, l4);
	} else {
		fg_net_build_ipv4(frame, c->dst_mac, c->src_mac, c->src, c->dst, FG_IP_PROTO_TCP,
				  l4, 0, 0);
		sum = fg_ipv4_pseudo_sum(c->src, c->dst, FG_IP_PROTO_TCP, l4);
	}
	fg_wr16(th, c->sport);
	fg_wr16(th + 2, c->dport);
	fg_wr32(th + 4, c->seq);
	fg_wr32(th + 8, c->ack);
	th[12] = (uint8_t)((hl / 4) << 4);
	th[13] = c->flags;
	fg_wr16(th + 14, c->wnd);
	fg_wr32(th + 16, 0);	/* checksum, urgent pointer */
	if (c->optlen)
		memcpy(th + FG_TCP_HLEN, c->opts, c->optlen);
	if (c->len)
		memcpy(th + hl, c->data, c->len);
	fg_wr16(th + 16, fg_csum_fold(fg_csum_add(sum, th, l4)));
	return FG_ETH_HLEN + l3 + l4;
}

uint32_t fg_craft_arp_request(uint8_t *frame, const uint8_t *src_mac, uint32_t src,
			      uint32_t target)
{
	uint8_t *a = frame + FG_ETH_HLEN;

	memset(frame, 0, 60);
	memset(frame, 0xff, FG_ETH_ALEN);
	memcpy(frame + FG_ETH_ALEN, src_mac, FG_ETH_ALEN);
	fg_wr16(frame + 12, 0x0806);
	fg_wr16(a, 1);			/* hardware: Ethernet */
	fg_wr16(a + 2, 0x0800);		/* protocol: IPv4 */
	a[4] = FG_ETH_ALEN;
	a[5] = 4;
	fg_wr16(a + 6, 1);		/* request */
	memcpy(a + 8, src_mac, FG_ETH_ALEN);
	memcpy(a + 14, &src, 4);
	memcpy(a + 24, &target, 4);
	return 60;
}
