/* SPDX-License-Identifier: MIT */
/*
 * bench_tcpref.c — the userspace TCP sending 700 KB articles out of DPDK
 * mbufs, by reference against by copy, on one core with no device and no
 * kernel (tools/bench/tcpref_kit.h: the port half of floodgate's port.c,
 * the peer acknowledging at once).
 *
 *   bench_tcpref [--quick | --full] [--articles N] [--runs R] [--md FILE]
 *
 * Two ways of sending the same article, each behind its TAKETHIS line:
 *   copy       a port that cannot chain (tx_max_segs 1): the TCP copies
 *              every octet into its frames; the named baseline;
 *   reference  a port that chains 17 mbufs (floodgate's limit): the
 *              article's octets leave as indirect mbufs attached to the
 *              receive mbufs that hold them;
 * each with the TCP checksum in software and left to the port (a NIC's
 * offload: then by reference nothing reads the article). With software
 * checksums, by reference twice: reading the pieces to sum them, and
 * with checksum reuse (each receive mbuf keeping its payload's sum, as
 * the receive path keeps it when it verifies a segment: tk_keep_sums),
 * when the sums are derived and the article is not read at all. The article is held in 48 copies sent in turn
 * (34 MB of mbufs: more than the caches), as a feed's articles are
 * different ones. Each run sends N articles one after another on one
 * connection and times the loop in the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: the machine is shared). The loop includes
 * the peer's side (its ACKs crafted and received, each frame read at its
 * head and freed, as a NIC frees what it sent), the same for both ways.
 * Runs alternate the five ways (R of each); each way's figure is its
 * median run, and its ratio is its CPU per article over copy's with the
 * same checksum, from the same invocation. A run counts only if every
 * article arrived whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_kit.h"
#include "tcpref_kit.h"

#define ART (700u * 1024u)
#define COPIES 48	/* the article's copies in mbufs: 34 MB */
#define WAYS 5

struct result {
	double cpu_us;		/* per article */
	double gbit;		/* article payload, per CPU second */
	uint64_t copied, referenced;	/* octets, the TCP's counters */
	uint64_t reused;		/* octets whose checksum was derived */
};

static double thread_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_run(unsigned segs, bool offload, bool reuse, unsigned articles,
		   const uint8_t *art, unsigned tag, struct result *r)
{
	static struct fg_iov iov[ART / TK_PIECE + 3];
	char name[24];
	struct tk k;
	uint64_t octets = 0;
	double t0, t1;

	snprintf(name, sizeof(name), "br%u", tag);
	if (tk_open(&k, name, segs, offload, COPIES, ART, art) != 0 ||
	    (reuse && tk_keep_sums(&k) != 0)) {
		fprintf(stderr, "bench_tcpref: set-up failed\n");
		tk_close_all(&k);
		return -1;
	}
	t0 = thread_s();
	for (unsigned i = 0; i < articles; i++) {
		uint32_t n = tk_send_article(&k, iov);

		if (!n) {
			fprintf(stderr, "bench_tcpref: article %u did not arrive whole\n", i);
			tk_close_all(&k);
			return -1;
		}
		octets += n;
	}
	t1 = thread_s();
	r->cpu_us = (t1 - t0) * 1e6 / articles;
	r->gbit = (double)articles * ART * 8 / (t1 - t0) / 1e9;
	r->copied = k.st.ctr[FG_CTR_TCP_TX_COPIED_OCTETS];
	r->referenced = k.st.ctr[FG_CTR_TCP_TX_REFERENCED_OCTETS];
	r->reused = k.st.ctr[FG_CTR_TCP_TX_CSUM_REUSED_OCTETS];
	tk_close_all(&k);
	(void)octets;
	return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	double x = ((const struct result *)a)->cpu_us, y = ((const struct result *)b)->cpu_us;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const way[WAYS] = {
		"copy, software checksum (baseline)", "reference, software checksum read",
		"reference, software checksum reused", "copy, checksum offloaded (baseline)",
		"reference, checksum offloaded",
	};
	static const unsigned segs[WAYS] = { 1, 17, 17, 1, 17 };
	static const bool offload[WAYS] = { false, false, false, true, true };
	static const bool reuse[WAYS] = { false, false, true, false, false };
	static const int base[WAYS] = { 0, 0, 0, 3, 3 };
	unsigned articles = 200, runs = 3;
	const char *md = NULL;
	struct result res[WAYS][9], med[WAYS];
	static uint8_t art[ART];
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			articles = 200;
			runs = 3;
		} else if (!strcmp(argv[i], "--full")) {
			articles = 1000;
			runs = 5;
		} else if (!strcmp(argv[i], "--articles") && i + 1 < argc) {
			articles = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--md") && i + 1 < argc) {
			md = argv[++i];
		} else {
			fprintf(stderr, "usage: bench_tcpref [--quick|--full] [--articles N] "
					"[--runs R] [--md FILE]\n");
			return 2;
		}
	}
	runs = FG_MIN(FG_MAX(runs, 1u), 9u);
	articles = FG_MAX(articles, 1u);
	for (uint32_t i = 0; i < ART; i++)
		art[i] = (uint8_t)(i * 13 + (i >> 10));
	if (tk_eal_start("bench_tcpref", 512) != 0) {
		fprintf(stderr, "bench_tcpref: EAL did not start\n");
		return 1;
	}
	for (unsigned r = 0; r < runs; r++)
		for (int w = 0; w < WAYS; w++)
			if (one_run(segs[w], offload[w], reuse[w], articles, art,
				    WAYS * r + (unsigned)w, &res[w][r]) != 0)
				return 1;
	for (int w = 0; w < WAYS; w++) {
		qsort(res[w], runs, sizeof(res[w][0]), cmp_cpu);
		med[w] = res[w][runs / 2];
		if ((segs[w] > 1) != (med[w].referenced != 0) ||
		    reuse[w] != (med[w].reused > med[w].referenced / 2)) {
			fprintf(stderr, "bench_tcpref: %s did not send as named\n", way[w]);
			return 1;
		}
	}
	printf("%-38s %10s %8s %7s %12s %12s %12s\n", "700 KB articles (one core, no device)",
	       "CPU us/art", "Gbit/s", "ratio", "copied", "referenced", "csum reused");
	for (int w = 0; w < WAYS; w++)
		printf("%-38s %10.1f %8.2f %7.3f %12lu %12lu %12lu\n", way[w], med[w].cpu_us,
		       med[w].gbit, med[w].cpu_us / med[base[w]].cpu_us, med[w].copied,
		       med[w].referenced, med[w].reused);
	if (md) {
		f = fopen(md, "w");
		if (!f) {
			perror(md);
			return 1;
		}
		fprintf(f, "### Userspace TCP: 700 KB articles sent from mbufs, by reference and by "
			   "copy\n\n| way (one core, no device) | CPU µs per article | article "
			   "Gbit/s per CPU second | CPU vs its baseline | octets copied | octets "
			   "referenced | of them, checksum derived |\n"
			   "|---|---:|---:|---:|---:|---:|---:|\n");
		for (int w = 0; w < WAYS; w++)
			fprintf(f, "| %s | %.1f | %.2f | %.3f | %lu | %lu | %lu |\n", way[w],
				med[w].cpu_us, med[w].gbit, med[w].cpu_us / med[base[w]].cpu_us,
				med[w].copied, med[w].referenced, med[w].reused);
		fprintf(f, "\nMedians of %u runs of %u articles each, the five ways alternated; "
			   "the article in %u copies sent in turn; load average %.2f. The baseline of "
			   "each way is copy with the same checksum. The CPU includes the peer's side "
			   "(ACKs, frames read and freed), the same for every way.\n",
			runs, articles, COPIES, bench_load_average());
		fclose(f);
	}
	return 0;
}
