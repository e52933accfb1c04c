/* SPDX-License-Identifier: MIT */
/*
 * bench_wildmat.c — what the per-article newsgroup check and the
 * per-connection peer lookup cost.
 *
 *   bench_wildmat [--quick | --full] [--md FILE]
 *
 * Each case runs ROUNDS rounds of a fixed number of calls (more with
 * --full) and prints the fastest round's ns per call; --md writes the table as a Markdown
 * fragment (tools/bench/run.sh puts it into docs/benchmarks.md). INN's
 * uwildmat_poison(), loaded from libinn.so at run time, runs on the same
 * strings, the way innd uses it: the Newsgroups value split into names,
 * then one call per name.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/config.h"
#include "floodgate/wildmat.h"
#include "bench_kit.h"

typedef int inn_poison_fn(const char *text, const char *pat);

/* Many short rounds, keep the fastest: on a shared machine the minimum
 * is the figure least disturbed by other work. */
#define ROUNDS 25

struct wcase {
	const char *label, *pattern, *groups;
};

static const struct wcase cases[] = {
	{ "`*`, 1 group", "*", "comp.lang.c" },
	{ "full feed, 1 group", "*,!junk,!control.*,!*.test,@alt.binaries.warez.*",
	  "comp.lang.c" },
	{ "full feed, 3 groups", "*,!junk,!control.*,!*.test,@alt.binaries.warez.*",
	  "comp.lang.c,comp.unix.programmer, comp.std.c" },
	{ "full feed, 10 groups", "*,!junk,!control.*,!*.test,@alt.binaries.warez.*",
	  "alt.a,alt.b,alt.c,alt.d,alt.e,misc.a,misc.b,misc.c,misc.d,misc.e" },
	{ "partial feed, 3 groups", "comp.*,sci.*,news.*,!*.test,[a-m]*.answers",
	  "rec.arts.sf,news.answers,misc.test" },
};

static double now_ns(void)
{
	return (double)fg_mono_ns();
}

static volatile unsigned sink;

static double time_ours(const struct wcase *c, unsigned iters)
{
	size_t len = strlen(c->groups);
	double best = 1e30;

	for (int round = 0; round < ROUNDS; round++) {
		double t0 = now_ns();

		for (unsigned i = 0; i < iters; i++)
			sink += fg_wildmat_groups(c->pattern, c->groups, len);
		best = FG_MIN(best, (now_ns() - t0) / iters);
	}
	return best;
}

/* innd's way: split the value into NUL-terminated names, one call each. */
static int inn_groups(inn_poison_fn *inn, const char *pattern, const char *groups)
{
	char buf[512], *save = NULL, *name;
	int res = 0;

	snprintf(buf, sizeof(buf), "%s", groups);
	for (name = strtok_r(buf, ", \t\r\n", &save); name;
	     name = strtok_r(NULL, ", \t\r\n", &save)) {
		int r = inn(name, pattern);

		if (r == 2)
			return 2;
		res |= r;
	}
	return res;
}

static double time_inn(inn_poison_fn *inn, const struct wcase *c, unsigned iters)
{
	double best = 1e30;

	if (inn_groups(inn, c->pattern, c->groups) != (int)fg_wildmat_groups(c->pattern,
	    c->groups, strlen(c->groups))) {
		fprintf(stderr, "bench_wildmat: INN and floodgate disagree on %s\n", c->label);
		exit(1);
	}
	for (int round = 0; round < ROUNDS; round++) {
		double t0 = now_ns();

		for (unsigned i = 0; i < iters; i++)
			sink += (unsigned)inn_groups(inn, c->pattern, c->groups);
		best = FG_MIN(best, (now_ns() - t0) / iters);
	}
	return best;
}

/* 256 peers of 16 /32s each; the address looked up belongs to none. */
static double time_find_peer(unsigned iters)
{
	static char text[1 << 20];
	struct fg_config_errors errs;
	struct fg_config *cfg;
	size_t n = 0;
	uint8_t addr[4];
	double best = 1e30;

	for (int p = 0; p < FG_CONFIG_MAX_PEERS; p++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "[peer p%d]\n", p);
		for (int a = 0; a < FG_CONFIG_MAX_PEER_ADDRS; a++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "address 10.%d.%d.1\n",
					      p, a);
	}
	cfg = fg_config_load_text("bench", text, n, &errs);
	if (!cfg) {
		fg_config_errors_log(&errs);
		exit(1);
	}
	inet_pton(AF_INET, "192.0.2.1", addr);
	for (int round = 0; round < ROUNDS; round++) {
		double t0 = now_ns();

		for (unsigned i = 0; i < iters; i++)
			sink += fg_config_find_peer(cfg, AF_INET, addr) != NULL;
		best = FG_MIN(best, (now_ns() - t0) / iters);
	}
	fg_config_free(cfg);
	return best;
}

static double time_load_default(unsigned iters)
{
	struct fg_config_errors errs;
	double best = 1e30;

	for (int round = 0; round < ROUNDS; round++) {
		double t0 = now_ns();

		for (unsigned i = 0; i < iters; i++)
			fg_config_free(fg_config_load_default(&errs));
		best = FG_MIN(best, (now_ns() - t0) / iters);
	}
	return best;
}

int main(int argc, char **argv)
{
	unsigned iters = 20000;
	const char *md = NULL;
	void *lib = dlopen("libinn.so.9", RTLD_NOW);
	inn_poison_fn *inn = NULL;
	char cpu[128], row[256], table[4096] = "";
	FILE *out;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--full") == 0)
			iters = 200000;
		else if (strcmp(argv[i], "--md") == 0 && i + 1 < argc)
			md = argv[++i];
		else if (strcmp(argv[i], "--quick") != 0) {
			fprintf(stderr, "usage: %s [--quick|--full] [--md FILE]\n", argv[0]);
			return 2;
		}
	}
	if (!lib)
		lib = dlopen("/usr/lib/news/libinn.so.9", RTLD_NOW);
	if (lib)
		inn = (inn_poison_fn *)(uintptr_t)dlsym(lib, "uwildmat_poison");
	bench_cpu_model(cpu, sizeof(cpu));
	strcat(table, "| case | floodgate ns/call | INN uwildmat_poison ns/call |\n| --- | ---: | ---: |\n");
	for (size_t i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		double ours = time_ours(&cases[i], iters);
		double theirs = inn ? time_inn(inn, &cases[i], iters) : 0;

		snprintf(row, sizeof(row), "| %s | %.1f | %s%.1f |\n", cases[i].label, ours,
			 inn ? "" : "n/a ", theirs);
		strcat(table, row);
	}
	snprintf(row, sizeof(row), "| peer lookup, 256 peers x 16 prefixes, no match | %.1f | |\n",
		 time_find_peer(iters / 100 + 1));
	strcat(table, row);
	snprintf(row, sizeof(row), "| load the embedded default config | %.0f | |\n",
		 time_load_default(iters / 2000 + 1));
	strcat(table, row);
	printf("bench_wildmat (%s, best of %d rounds of %u calls):\n%s", cpu, ROUNDS, iters, table);
	if (md) {
		out = fopen(md, "w");
		if (!out) {
			perror(md);
			return 1;
		}
		fprintf(out, "### Newsgroups wildmat and peer lookup (`bench_wildmat`)\n\n"
			"Per article, `fg_wildmat_groups` decides the Newsgroups value against "
			"the peer's pattern; INN's `uwildmat_poison` runs on the same strings "
			"(split first, one call per group, as innd does). Peer lookup runs once "
			"per connection. Full feed: `%s`; partial feed: `%s`. %s; best of %d "
			"rounds of %u calls.\n\n%s", cases[1].pattern, cases[4].pattern, cpu,
			ROUNDS, iters, table);
		fclose(out);
	}
	return 0;
}
