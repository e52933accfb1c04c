/* SPDX-License-Identifier: MIT */
/*
 * bench_rules.c — speed of the header-section scanner and of the full
 * admission decision, on realistic articles.
 *
 *   bench_rules [--quick|--full] [--md FILE]
 *
 * The workload: a set of generated INN-style header sections of about
 * 1 KB (Path of 6-10 hops, folded References and Injection-Info, the usual
 * dozen and a half fields; 70 % with Injection-Date), scanned and decided
 * in a loop. What is timed:
 *   scan          fg_article_init + fg_article_scan of one header section
 *                 (reported as GB/s of header octets, and ns per article);
 *   decide/new    fg_rules_decide on a scanned article history does not
 *                 know: every step runs, the article is accepted;
 *   decide/dup    the same when history knows the ID (the common case);
 *   scan+decide   both, as a TAKETHIS of a new article costs;
 *   offer         fg_rules_offer (a CHECK) of an unknown ID.
 * History is a stand-in (an open-addressing set of 64-bit FNV-1a hashes),
 * so its cost is a realistic few ns, not the real table's. Each figure is
 * the best of five runs. The working set is small enough to stay in cache:
 * a real dataplane reads each header once, fresh from the NIC, so these
 * are upper bounds of the code's own speed, not of the memory system's.
 */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/article.h"
#include "floodgate/config.h"
#include "floodgate/date.h"
#include "floodgate/rules.h"
#include "bench_kit.h"

#define N_ARTICLES 1024
#define NOW ((fg_time_t)1767225600)

struct bench_article {
	char text[2048];
	size_t len;
	char msgid[96];
	size_t msgid_len;
	struct fg_article art;
};

static struct bench_article *arts;
static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rng(void)
{
	return bench_rng(&rng_state);
}

static double now_ns(void)
{
	return (double)fg_mono_ns();
}

/* ---------------------------------------------------------------- history stand-in */

#define SET_SIZE 4096	/* power of two, > 2 * N_ARTICLES */
static uint64_t set[SET_SIZE];
static bool know_all;

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h | 1;	/* 0 marks an empty slot */
}

static void set_add(const char *s, size_t len)
{
	uint64_t h = fnv1a(s, len);

	for (size_t i = h & (SET_SIZE - 1);; i = (i + 1) & (SET_SIZE - 1))
		if (set[i] == 0 || set[i] == h) {
			set[i] = h;
			return;
		}
}

static enum fg_rules_id_state lookup(void *ctx, const char *id, size_t len, const void *key)
{
	uint64_t h = fnv1a(id, len);

	(void)ctx;
	(void)key;
	for (size_t i = h & (SET_SIZE - 1);; i = (i + 1) & (SET_SIZE - 1)) {
		if (set[i] == h)
			return know_all ? FG_RULES_ID_KNOWN : FG_RULES_ID_UNKNOWN;
		if (set[i] == 0)
			return FG_RULES_ID_UNKNOWN;
	}
}

/* ---------------------------------------------------------------- articles */

static const char *const groups[] = {
	"comp.lang.c", "comp.unix.programmer", "news.software.nntp", "rec.arts.sf.written",
	"sci.physics", "alt.test", "de.comp.os.unix.linux.misc", "uk.rec.cycling",
};
static const char *const words[] = {
	"strict", "aliasing", "kernel", "bypass", "history", "propagation", "cutoff",
	"injection", "date", "feed", "peer", "transit", "spool", "overview", "expiry",
};

static size_t put(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static size_t put(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + n, 2048 - n, fmt, ap);
	va_end(ap);
	return n + (size_t)w;
}

static size_t gen_path(char *b, size_t n)
{
	unsigned hops = 6 + (unsigned)(rng() % 5);

	n = put(b, n, "Path: ");
	for (unsigned i = 0; i < hops; i++)
		n = put(b, n, "news-%02u.feeder%u.example.net!", (unsigned)(rng() % 40),
			(unsigned)(rng() % 9));
	return put(b, n, ".POSTED.198.51.100.%u!not-for-mail\r\n", (unsigned)(rng() % 250));
}

static size_t gen_subject(char *b, size_t n)
{
	n = put(b, n, "Subject: Re: ");
	for (unsigned i = 0, w = 4 + (unsigned)(rng() % 5); i < w; i++)
		n = put(b, n, "%s%s", i ? " " : "", words[rng() % FG_ARRAY_SIZE(words)]);
	return put(b, n, "\r\n");
}

static size_t gen_dates(char *b, size_t n)
{
	char d[64];
	fg_time_t t = NOW - (fg_time_t)(rng() % (5 * 86400));

	fg_date_format(t, d, sizeof(d));
	n = put(b, n, "Date: %s\r\n", d);
	if (rng() % 10 < 7) {
		fg_date_format(t + (fg_time_t)(rng() % 600), d, sizeof(d));
		n = put(b, n, "Injection-Date: %s\r\n", d);
	}
	return n;
}

static void gen_article(struct bench_article *a, unsigned i)
{
	char *b = a->text;
	size_t n = 0;

	a->msgid_len = (size_t)snprintf(a->msgid, sizeof(a->msgid), "<%016" PRIx64 ".%u.fsf@host%u.example.org>",
					rng(), i, (unsigned)(rng() % 100));
	n = gen_path(b, n);
	n = put(b, n, "From: Poster %u <poster%u@example.org>\r\n", i, (unsigned)(rng() % 1000));
	n = put(b, n, "Newsgroups: %s", groups[rng() % FG_ARRAY_SIZE(groups)]);
	if (rng() % 4 == 0)
		n = put(b, n, ",%s", groups[rng() % FG_ARRAY_SIZE(groups)]);
	n = put(b, n, "\r\n");
	n = gen_subject(b, n);
	n = gen_dates(b, n);
	n = put(b, n, "Organization: Example Networks\r\nLines: %u\r\n", 5 + (unsigned)(rng() % 80));
	n = put(b, n, "Message-ID: %s\r\n", a->msgid);
	n = put(b, n, "References: <%016" PRIx64 "@example.net>\r\n <%016" PRIx64 "@example.com>\r\n"
		" <slrn%08" PRIx64 ".abc.user@example.org>\r\n", rng(), rng(), rng() & 0xffffffff);
	n = put(b, n, "NNTP-Posting-Host: 198.51.100.%u\r\nMime-Version: 1.0\r\n"
		"Content-Type: text/plain; charset=UTF-8; format=flowed\r\n"
		"Content-Transfer-Encoding: 8bit\r\n", (unsigned)(rng() % 250));
	n = put(b, n, "Injection-Info: news.example.com; posting-host=\"198.51.100.%u\";\r\n"
		"\tlogging-data=\"%u\"; mail-complaints-to=\"abuse@example.com\"\r\n",
		(unsigned)(rng() % 250), (unsigned)(rng() % 100000));
	n = put(b, n, "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:115.0) Thunderbird/115.6.0\r\n");
	n = put(b, n, "\r\nbody\r\n.\r\n");
	a->len = n;
	fg_article_init(&a->art, FG_ARTICLE_WIRE);
	if (fg_article_scan(&a->art, a->text, a->len) != FG_ARTICLE_COMPLETE) {
		fprintf(stderr, "bench_rules: generated article %u does not scan\n", i);
		exit(1);
	}
}

/* ---------------------------------------------------------------- timing */

struct ctx {
	struct fg_rules rules;
	const struct fg_config_peer *peer;
	struct fg_stats stats;
};

static volatile uint64_t sink;

enum kind { K_SCAN, K_DECIDE, K_SCAN_DECIDE, K_OFFER };

static double run_once(struct ctx *c, enum kind k, unsigned passes)
{
	struct fg_article scratch;
	struct fg_rules_verdict v;
	struct fg_rules_input in = { .now = NOW, .peer = c->peer };
	uint64_t acc = 0;
	double t0 = now_ns();

	for (unsigned p = 0; p < passes; p++) {
		for (unsigned i = 0; i < N_ARTICLES; i++) {
			struct bench_article *a = &arts[i];

			if (k == K_OFFER) {
				acc += fg_rules_offer(&c->rules, a->msgid, a->msgid_len, NULL, NULL, &c->stats);
				continue;
			}
			in.art = &a->art;
			if (k != K_DECIDE) {
				fg_article_init(&scratch, FG_ARTICLE_WIRE);
				acc += fg_article_scan(&scratch, a->text, a->len) + scratch.body_off;
				in.art = &scratch;
			}
			if (k == K_SCAN)
				continue;
			in.arg = a->msgid;
			in.arg_len = a->msgid_len;
			in.size = a->len - 3;
			acc += fg_rules_decide(&c->rules, &in, &v, &c->stats);
		}
	}
	sink += acc;
	return (now_ns() - t0) / ((double)passes * N_ARTICLES);
}

static double best_of_5(struct ctx *c, enum kind k, unsigned passes)
{
	double best = 1e30;

	for (int r = 0; r < 5; r++) {
		double ns = run_once(c, k, passes);

		if (ns < best)
			best = ns;
	}
	return best;
}

static struct fg_config *bench_config(void)
{
	static const char text[] =
		"[site]\npath-identity news.example.net\npath-identity hub.example.net\n"
		"[peer upstream]\naddress 192.0.2.10\nnewsgroups *,!junk,!control.*,@alt.binaries.warez.*\n";
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = fg_config_load_text("bench", text, sizeof(text) - 1, &errs);
	if (!cfg) {
		fprintf(stderr, "bench_rules: %s\n", errs.n ? errs.err[0].text : "config");
		exit(1);
	}
	return cfg;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'f' },
		{ "md", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct fg_rules_history hist = { lookup, NULL, NULL };
	const char *md = NULL, *mode = "quick";
	unsigned passes = 500;
	struct fg_config *cfg;
	struct ctx *c;
	double hdr_bytes = 0, ns[5], load = bench_load_average();
	char cpu[128];
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'q') {
			passes = 500, mode = "quick";
		} else if (o == 'f') {
			passes = 5000, mode = "full";
		} else if (o == 'm') {
			md = optarg;
		} else {
			fprintf(stderr, "usage: bench_rules [--quick|--full] [--md FILE]\n");
			return 2;
		}
	}
	cfg = bench_config();
	arts = calloc(N_ARTICLES, sizeof(*arts));
	c = calloc(1, sizeof(*c));
	if (!arts || !c)
		return 1;
	for (unsigned i = 0; i < N_ARTICLES; i++) {
		gen_article(&arts[i], i);
		set_add(arts[i].msgid, arts[i].msgid_len);
		hdr_bytes += (double)arts[i].art.body_off;
	}
	hdr_bytes /= N_ARTICLES;
	fg_rules_init(&c->rules, cfg, &hist);
	c->peer = fg_config_peer_by_name(cfg, "upstream");

	ns[0] = best_of_5(c, K_SCAN, passes);
	know_all = false;
	ns[1] = best_of_5(c, K_DECIDE, passes);
	ns[3] = best_of_5(c, K_SCAN_DECIDE, passes);
	ns[4] = best_of_5(c, K_OFFER, passes);
	know_all = true;
	ns[2] = best_of_5(c, K_DECIDE, passes);
	if (c->stats.ctr[FG_CTR_RULES_REJECTED] != c->stats.rejected[FG_REASON_DUPLICATE]) {
		fprintf(stderr, "bench_rules: a generated article was rejected for another reason\n");
		return 1;
	}

	printf("bench_rules (%s): %u articles, header section %.0f octets on average, %s, "
	       "load average %.2f\n", mode, N_ARTICLES, hdr_bytes, bench_cpu_model(cpu, sizeof(cpu)),
	       load);
	printf("%-44s %10s %14s\n", "what", "ns/call", "rate");
	printf("%-44s %10.1f %11.2f GB/s\n", "scan a header section", ns[0], hdr_bytes / ns[0]);
	printf("%-44s %10.1f %11.2f M/s\n", "decide: new article (all 15 steps, accepted)", ns[1], 1e3 / ns[1]);
	printf("%-44s %10.1f %11.2f M/s\n", "decide: duplicate (history knows the ID)", ns[2], 1e3 / ns[2]);
	printf("%-44s %10.1f %11.2f M/s\n", "scan + decide: new article (TAKETHIS)", ns[3], 1e3 / ns[3]);
	printf("%-44s %10.1f %11.2f M/s\n", "offer: unknown ID (CHECK)", ns[4], 1e3 / ns[4]);
	if (md) {
		FILE *f = fopen(md, "w");

		if (!f) {
			perror(md);
			return 1;
		}
		fprintf(f, "### Header scanner and admission rules (`bench_rules`)\n\n"
			"%s, one core; %u generated INN-style articles, header sections of %.0f octets\n"
			"on average (70 %% with Injection-Date); best of 5 runs of %u passes (`--%s`),\n"
			"load average %.2f when it started (on a shared machine, other jobs slow it).\n"
			"History is a stand-in hash set; the working set stays in cache.\n\n"
			"| what | ns per call | rate |\n| --- | ---: | ---: |\n"
			"| scan a header section | %.1f | %.2f GB/s |\n"
			"| decide: new article (all 15 steps, accepted) | %.1f | %.2f M/s |\n"
			"| decide: duplicate (history knows the ID) | %.1f | %.2f M/s |\n"
			"| scan + decide: new article (TAKETHIS) | %.1f | %.2f M/s |\n"
			"| offer: unknown ID (CHECK) | %.1f | %.2f M/s |\n",
			cpu, N_ARTICLES, hdr_bytes, passes, mode, load,
			ns[0], hdr_bytes / ns[0], ns[1], 1e3 / ns[1], ns[2], 1e3 / ns[2],
			ns[3], 1e3 / ns[3], ns[4], 1e3 / ns[4]);
		fclose(f);
	}
	fg_config_free(cfg);
	free(arts);
	free(c);
	return 0;
}
