/* SPDX-License-Identifier: MIT */
/*
 * fuzz_portack.c — what a downstream says to a worker's acker (portack.h)
 * from arbitrary bytes: two TCP stacks on memory ports, floodgate's and a
 * server's whose lines are the input, one line after the greeting for
 * each command floodgate completes (MODE STREAM, an article's ".", CHECK).
 * Three articles are handed over; the clock runs past their deadline.
 * Beyond "no crash": each gets exactly one result, none is left out, and
 * every buffer is back at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/portack.h"
#include "memwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MS 1000000ull

static struct mw_side A, B;
static uint64_t now;
static const uint8_t *in;
static size_t in_len, in_off;
static struct fg_tcp_conn *srv;
static char sline[512];
static size_t slen;
static int body;
static unsigned results;

/* The server's next input line (through its '\n', or the rest). */
static void say_next(void)
{
	const uint8_t *nl;
	size_t n;

	if (!srv || in_off >= in_len)
		return;
	nl = memchr(in + in_off, '\n', in_len - in_off);
	n = nl ? (size_t)(nl - (in + in_off)) + 1 : in_len - in_off;
	if (fg_tcp_send(srv, in + in_off, (uint32_t)n) >= 0)
		in_off += n;
}

static void *s_accept(void *app, struct fg_tcp_conn *tc, const struct fg_endpoint *peer,
		      const struct fg_endpoint *local)
{
	(void)app, (void)peer, (void)local;
	if (srv)
		return NULL;
	srv = tc;
	say_next();
	return &srv;
}

static uint32_t s_data(void *ctx, struct fg_tcp_conn *tc, const struct fg_iov *iov, unsigned n)
{
	uint32_t took = 0;

	(void)ctx, (void)tc;
	for (unsigned k = 0; k < n; k++)
		for (uint32_t j = 0; j < iov[k].len; j++, took++) {
			char ch = (char)iov[k].base[j];

			if (ch != '\n') {
				if (slen < sizeof(sline) - 1)
					sline[slen++] = ch;
				continue;
			}
			sline[slen] = '\0';
			if (body && strcmp(sline, ".\r") == 0) {
				body = 0;
				say_next();
			} else if (!body && strncmp(sline, "TAKETHIS", 8) == 0) {
				body = 1;
			} else if (!body) {
				say_next();	/* MODE STREAM, CHECK */
			}
			slen = 0;
		}
	return took;
}

static void s_close(void *ctx, struct fg_tcp_conn *tc, enum fg_tcp_close_reason why)
{
	(void)ctx, (void)tc, (void)why;
	srv = NULL;
}

static const struct fg_tcp_app_ops server_ops = {
	.on_accept = s_accept, .on_data = s_data, .on_close = s_close,
};

static void on_res(void *arg, const struct fg_relay_ack_result *r)
{
	(void)arg;
	if (r->cookie >= 3 || (results & (1u << r->cookie)))
		abort();	/* one result each */
	results |= 1u << r->cookie;
}

static void step(struct fg_portack *pa, struct fg_relay_acker *ak)
{
	now += MS;
	fg_portack_set_time(pa, now);
	for (unsigned i = 0; i < 4; i++) {
		mw_deliver(&A, now);
		mw_deliver(&B, now);
		fg_net_poll(A.net, now);
		fg_net_poll(B.net, now);
		fg_portack_poll(pa, now);
	}
	fg_relay_ack_results(ak, on_res, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char conf[] =
		"[dataplane]\naddress 198.18.0.1/24\n"
		"[downstream d]\naddress 198.18.0.2:119\nacknowledges on\nwindow 2\n";
	static const char *const ids[] = { "<a@x>", "<b@x>", "<c@x>" };
	static const char art[] = "Subject: x\r\n\r\nbody\r\n";
	struct fg_config_errors errs;
	struct fg_config *cfg = fg_config_load_text("f", conf, strlen(conf), &errs);
	struct fg_portack_params pp = { .max_pending = 8, .reconnect_min_ns = 5 * MS,
					.reconnect_max_ns = 20 * MS };
	struct fg_endpoint local = { .family = AF_INET };
	struct fg_iov piece = { (const uint8_t *)art, sizeof(art) - 1, NULL };
	struct fg_portack *pa;
	struct fg_relay_acker *ak;

	if (!cfg)
		abort();
	in = data;
	in_len = size;
	in_off = slen = 0;
	body = 0;
	srv = NULL;
	results = 0;
	now = 1000 * MS;
	if (mw_side_up(&A, &B, "198.18.0.1", 1, &fg_portack_tcp_ops, 2048) != 0 ||
	    mw_side_up(&B, &A, "198.18.0.2", 2, &server_ops, 2048) != 0)
		abort();
	pp.cfg = cfg;
	pp.stats = &A.st;
	pa = fg_portack_create(&pp);
	if (!pa)
		abort();
	inet_pton(AF_INET, "198.18.0.1", local.addr);
	fg_portack_attach(pa, A.tcp, &local);
	ak = fg_portack_acker(pa);
	for (unsigned t = 0; t < 5; t++)
		step(pa, ak);
	for (uint64_t i = 0; i < 3; i++) {
		struct fg_relay_ack_art a = { .cookie = i, .id = ids[i], .id_len = 5,
					      .piece = &piece, .npiece = 1,
					      .deadline_ns = now + 30 * MS };

		if (fg_relay_ack_send(ak, &a) != 0)
			abort();
	}
	for (unsigned t = 0; t < 40; t++)
		step(pa, ak);
	if (results != 7 || fg_relay_ack_out(ak) != 0)
		abort();	/* every one answered by its deadline */
	fg_portack_abort_all(pa);
	fg_relay_acker_destroy(ak);
	if (mw_side_down(&A) || mw_side_down(&B))
		abort();	/* every buffer back */
	fg_config_free(cfg);
	return 0;
}
