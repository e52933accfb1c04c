/* SPDX-License-Identifier: MIT */
/*
 * bench_tcp_loss.c — the userspace TCP as a bulk sender over a lossy link:
 * one connection pushes a stream between two fg_tcp instances in this
 * process through a memlink (floodgate/memlink.h; tools/bench/tcp_bulk.h)
 * of 10 Gbit/s and 1 ms round trip that drops a seeded share of the data
 * segments, in simulated time — so the figures are the protocol's, the
 * same on any machine and in any load, and a run repeats exactly.
 *
 *   bench_tcp_loss [--quick | --full] [--mib N] [--md FILE]
 *
 * --quick (what `make bench` runs): 256 MiB a transfer; --full: 1 GiB.
 * Transfers: SACK recovery (RFC 6675) and NewReno (RFC 6582, SACK off on
 * both sides: the named baseline) at 1 % loss, and both at 0 % for
 * reference. Per transfer: simulated octets/s from the open to the last
 * octet delivered, octets sent again (payload sent less the stream),
 * fast recoveries, RTO expiries, and the throughput as a ratio of the
 * baseline's. Every transfer checks every octet, in order; one that does
 * not arrive whole fails the benchmark.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tcp_bulk.h"

#define LINK_BPS 10000000000ull
#define ONE_WAY_NS 500000ull		/* 1 ms round trip */
#define LOSS_PPM 10000u			/* 1 % */
#define SEED 33

struct run {
	const char *name;
	bool no_sack;
	uint32_t loss_ppm;
	struct bulk_result r;
	double cpu_s;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double gbps(const struct run *x)
{
	return x->r.sim_ns ? (double)x->r.received * 8 / (double)x->r.sim_ns : 0;
}

int main(int argc, char **argv)
{
	struct run runs[] = {
		{ .name = "NewReno, 1 % loss (baseline)", .no_sack = true, .loss_ppm = LOSS_PPM },
		{ .name = "SACK (RFC 6675), 1 % loss", .loss_ppm = LOSS_PPM },
		{ .name = "NewReno, no loss", .no_sack = true },
		{ .name = "SACK, no loss" },
	};
	const unsigned n = sizeof(runs) / sizeof(runs[0]);
	const char *md = NULL;
	uint64_t mib = 256;
	FILE *out;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			mib = 256;
		else if (!strcmp(argv[i], "--full"))
			mib = 1024;
		else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--md") && i + 1 < argc)
			md = argv[++i];
		else {
			fprintf(stderr, "usage: bench_tcp_loss [--quick|--full] [--mib N] [--md FILE]\n");
			return 2;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		struct bulk_cfg cfg = {
			.bytes = mib << 20, .loss_ppm = runs[i].loss_ppm, .no_sack = runs[i].no_sack,
			.delay_ns = ONE_WAY_NS, .rate_bps = LINK_BPS, .seed = SEED,
		};
		double t0 = cpu_now();

		if (bulk_run(&cfg, &runs[i].r) < 0) {
			fprintf(stderr, "bench_tcp_loss: %s: set-up failed\n", runs[i].name);
			return 1;
		}
		runs[i].cpu_s = cpu_now() - t0;
		if (runs[i].r.received != cfg.bytes || runs[i].r.mismatch || !runs[i].r.eof) {
			fprintf(stderr, "bench_tcp_loss: %s: %llu of %llu octets, %llu wrong\n",
				runs[i].name, (unsigned long long)runs[i].r.received,
				(unsigned long long)cfg.bytes, (unsigned long long)runs[i].r.mismatch);
			return 1;
		}
	}
	out = md ? fopen(md, "w") : stdout;
	if (!out) {
		perror(md);
		return 1;
	}
	fprintf(out, "| transfer (%llu MiB, one connection) | Gbit/s | x baseline | octets sent "
		"again | %% of the stream | segments lost by the link | recoveries | RTO "
		"expiries | CPU s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		(unsigned long long)mib);
	for (unsigned i = 0; i < n; i++) {
		const struct run *x = &runs[i];
		uint64_t again = x->r.tx_bytes - x->r.received;
		const uint64_t *c = x->r.st[0].ctr;

		fprintf(out, "| %s | %.3f | %.2f | %llu | %.2f | %llu | %llu | %llu | %.1f |\n",
			x->name, gbps(x), gbps(x) / gbps(&runs[0]), (unsigned long long)again,
			100.0 * (double)again / (double)x->r.received,
			(unsigned long long)x->r.dropped,
			(unsigned long long)(c[FG_CTR_TCP_SACK_RECOVERIES] +
					     (x->no_sack ? c[FG_CTR_TCP_FAST_RETRANS] : 0)),
			(unsigned long long)c[FG_CTR_TCP_RTO_EXPIRED], x->cpu_s);
	}
	fprintf(out, "\nTwo fg_tcp instances in one process over a memlink of %.0f Gbit/s and "
		"%.1f ms round trip dropping %.1f %% of the data segments (seeded, the same drops "
		"for every transfer of a loss rate), in simulated time: the figures are the "
		"protocol's and repeat exactly on any machine; only the CPU column is this "
		"machine's. Send ring and receive window %u MiB, MSS 1460, RTO at least 200 ms. "
		"Gbit/s: the stream over the simulated time from the open to its last octet; "
		"x baseline: against NewReno at 1 %% loss in the same run.\n",
		(double)LINK_BPS / 1e9, 2.0 * ONE_WAY_NS / 1e6, LOSS_PPM / 1e4,
		BULK_BUF >> 20);
	if (md)
		fclose(out);
	return 0;
}
