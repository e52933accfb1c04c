/* SPDX-License-Identifier: MIT */
/*
 * bench_parsers.c — ns per call of the date and Message-ID parsers, next to
 * INN's own on the same strings.
 *
 *   bench_parsers [--quick | --full] [--md FILE] [--seconds S]
 *
 * The date rows time both of floodgate's readings (date-syntax inn, the
 * default, and rfc5322) against INN's one parser.
 *
 * Each row runs both implementations over the same realistic inputs (the
 * forms real feeds carry, all of them valid to both parsers, checked
 * before timing), cycling through them so no single string is learnt by
 * the branch predictor, for about S seconds (0.4 by default and with
 * --quick, 2 with --full: the flags tools/bench/run.sh passes) per run; the
 * best of three runs is reported. INN's functions come from libinn.a
 * (inn2-dev): parsedate_rfc5322_lax() is what innd and `convdate -n` use
 * for Date and Injection-Date, IsValidMessageID() what innd uses for
 * Message-IDs, makedate() what it writes Date headers with. INN's take
 * NUL-terminated strings and measure them; ours take (pointer, length),
 * so each INN call also pays a strlen, as it does in innd.
 *
 * Prints a table; with --md FILE also writes it as a markdown fragment
 * (with the machine it ran on) for docs/benchmarks.md. Runs in ~10 s.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/date.h"
#include "floodgate/msgid.h"
#include "bench_kit.h"

/* INN 2.7 libinn.h; declared here rather than included, as INN's headers
 * are not written for our warning set. */
extern time_t parsedate_rfc5322_lax(const char *date);
extern bool IsValidMessageID(const char *string, bool stripspaces, bool laxsyntax);
extern bool makedate(time_t date, bool local, char *buff, size_t buflen);

static const char *const dates[] = {
	"Sun, 03 Aug 2008 16:02:50 +0000",
	"Mon, 14 Oct 2024 09:12:33 +0200",
	"Tue, 1 Apr 2025 23:59:59 -0700 (PDT)",
	"14 Oct 2024 09:12:33 GMT",
	"Wed, 5 Mar 2025 7:04:01 -0500",
	"Thu, 20 Feb 2025 11:00:00 +0100 (CET)",
	"Fri, 31 Jan 2025 18:30:12 UT",
	"Sat, 18 Jan 25 03:03:03 +0000",
	"Sun, 12 Jan 2025 13:14:15 EST",
	"Mon, 06 Jan 2025 00:00:00 -0000",
	"Tue, 24 Dec 2024 16:45 +0530",
	"Wed, 11 Dec 2024 08:08:08 +0000 (UTC)",
	"Thu, 28 Nov 2024 19:20:21\r\n +0900",
	"Fri, 15 Nov 2024 22:22:22 Z",
	"2 Nov 2024 02:02:02 PST",
	"Sat, 26 Oct 2024 10:10:10 +1000 (AEST)",
};

static const char *const msgids[] = {
	"<foo$v=3$XYZ@faq-site.example>",
	"<slrnvq1abc.4d5.user@host.invalid>",
	"<a1b2c3d4-e5f6-7890-abcd-ef1234567890n@googlegroups.com>",
	"<ufG7xQ$1k8$1@dont-email.me>",
	"<87k0bq1xyz.fsf@example.org>",
	"<vd2s1h$3a0kf$1@news.eternal-september.org>",
	"<6712ab34$0$28512$426a74cc@news.free.fr>",
	"<m2h6w3i1qz.fsf@somewhere.example.com>",
	"<20241014091233.1234@news.example.net>",
	"<lq0j2vF9abcU1@mid.individual.net>",
	"<0001HW.2C8E9A3B00123456B0123456@news.example.com>",
	"<XnsB1E2A3B4C5D6E7F8@127.0.0.1>",
	"<ab12cd34ef56$1$2$3@nntp.example.org>",
	"<part1of3.AbCdEfGhIjKlMnOp@powerpost2000AA.local>",
	"<7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d@example.invalid>",
	"<pan.2024.10.14.09.12.33.123456@example.com>",
};

#define N_IN 16

static size_t date_len[N_IN], msgid_len[N_IN];
static volatile int64_t sink;

static double now(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

/* One implementation of one row: run `iters` calls, return the sum of results. */
typedef int64_t bench_fn(uint64_t iters);

static int64_t fg_date(uint64_t iters)
{
	int64_t acc = 0;
	fg_time_t t;

	for (uint64_t i = 0; i < iters; i++) {
		fg_date_parse(dates[i % N_IN], date_len[i % N_IN], &t);
		acc += t;
	}
	return acc;
}

static int64_t fg_date_inn(uint64_t iters)
{
	int64_t acc = 0;
	fg_time_t t;

	for (uint64_t i = 0; i < iters; i++) {
		fg_date_parse_inn(dates[i % N_IN], date_len[i % N_IN], &t, NULL);
		acc += t;
	}
	return acc;
}

static int64_t inn_date(uint64_t iters)
{
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += parsedate_rfc5322_lax(dates[i % N_IN]);
	return acc;
}

static int64_t fg_header(uint64_t iters)
{
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += fg_msgid_classify(msgids[i % N_IN], msgid_len[i % N_IN], NULL);
	return acc;
}

static int64_t inn_msgid(uint64_t iters)
{
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += IsValidMessageID(msgids[i % N_IN], false, false);
	return acc;
}

static int64_t fg_wire(uint64_t iters)
{
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += fg_msgid_valid_wire(msgids[i % N_IN], msgid_len[i % N_IN]);
	return acc;
}

static int64_t fg_format(uint64_t iters)
{
	char buf[FG_DATE_FORMAT_LEN + 1];
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		fg_date_format(1700000000 + (fg_time_t)(i * 7919), buf, sizeof(buf));
		acc += buf[5];
	}
	return acc;
}

static int64_t inn_format(uint64_t iters)
{
	char buf[64];
	int64_t acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		makedate((time_t)(1700000000 + (int64_t)(i * 7919)), false, buf, sizeof(buf));
		acc += buf[5];
	}
	return acc;
}

/* Best of three runs of about `secs` each, in ns per call. */
static double measure(bench_fn *fn, double secs)
{
	uint64_t iters = 1024;
	double best = 1e30;

	for (;;) {	/* calibrate */
		double t0 = now();

		sink += fn(iters);
		if (now() - t0 > secs / 8)
			break;
		iters *= 2;
	}
	iters *= 8;
	for (int r = 0; r < 3; r++) {
		double t0 = now(), ns;

		sink += fn(iters);
		ns = (now() - t0) * 1e9 / (double)iters;
		if (ns < best)
			best = ns;
	}
	return best;
}

struct row {
	const char *what;
	bench_fn *ours, *inn;
	const char *inn_name;
	double ns_ours, ns_inn;
};

/* Both parsers must agree on every benchmark input, or the race is unfair. */
static int check_inputs(void)
{
	int bad = 0;

	for (int i = 0; i < N_IN; i++) {
		fg_time_t t = 0;

		date_len[i] = strlen(dates[i]);
		msgid_len[i] = strlen(msgids[i]);
		if (fg_date_parse(dates[i], date_len[i], &t) != 0 || t != parsedate_rfc5322_lax(dates[i])) {
			fprintf(stderr, "bench_parsers: parsers disagree on \"%s\"\n", dates[i]);
			bad++;
		}
		if (fg_date_parse_inn(dates[i], date_len[i], &t, NULL) != 0 ||
		    t != parsedate_rfc5322_lax(dates[i])) {
			fprintf(stderr, "bench_parsers: the inn reading and INN disagree on \"%s\"\n",
				dates[i]);
			bad++;
		}
		if (!fg_msgid_valid_header(msgids[i], msgid_len[i]) ||
		    !IsValidMessageID(msgids[i], false, false)) {
			fprintf(stderr, "bench_parsers: \"%s\" is not valid to both\n", msgids[i]);
			bad++;
		}
	}
	return bad;
}

static void print_table(FILE *out, bool md, const struct row *rows, size_t n)
{
	char cpu[160];

	bench_cpu_model(cpu, sizeof(cpu));
	if (md) {
		fprintf(out, "### Parsers: floodgate against INN %s\n\n", "2.7 (libinn.a)");
		fprintf(out, "%s, %ld online CPUs, one thread; ns per call, best of 3; "
			"16 realistic inputs per row, cycled.\n\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
		fprintf(out, "| what | floodgate ns | INN function | INN ns | INN / floodgate |\n");
		fprintf(out, "| --- | ---: | --- | ---: | ---: |\n");
	} else {
		fprintf(out, "%s, %ld online CPUs\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
		fprintf(out, "%-32s %13s  %-26s %8s %9s\n", "what", "floodgate ns", "INN function",
			"INN ns", "INN/fg");
	}
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		if (md && r->inn)
			fprintf(out, "| %s | %.1f | `%s` | %.1f | %.2f |\n", r->what, r->ns_ours,
				r->inn_name, r->ns_inn, r->ns_inn / r->ns_ours);
		else if (md)
			fprintf(out, "| %s | %.1f | — | — | — |\n", r->what, r->ns_ours);
		else if (r->inn)
			fprintf(out, "%-32s %13.1f  %-26s %8.1f %9.2f\n", r->what, r->ns_ours,
				r->inn_name, r->ns_inn, r->ns_inn / r->ns_ours);
		else
			fprintf(out, "%-32s %13.1f  %-26s %8s %9s\n", r->what, r->ns_ours, "-", "-", "-");
	}
}

int main(int argc, char **argv)
{
	struct row rows[] = {
		{ "date parse, date-syntax inn", fg_date_inn, inn_date, "parsedate_rfc5322_lax", 0, 0 },
		{ "date parse, date-syntax rfc5322", fg_date, inn_date, "parsedate_rfc5322_lax", 0, 0 },
		{ "Message-ID header form", fg_header, inn_msgid, "IsValidMessageID", 0, 0 },
		{ "Message-ID wire form", fg_wire, NULL, NULL, 0, 0 },
		{ "date format", fg_format, inn_format, "makedate", 0, 0 },
	};
	const char *md = NULL;
	double secs = 0.4;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--md") == 0 && i + 1 < argc) {
			md = argv[++i];
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			secs = atof(argv[++i]);
		} else if (strcmp(argv[i], "--quick") == 0) {
			secs = 0.4;
		} else if (strcmp(argv[i], "--full") == 0) {
			secs = 2.0;
		} else {
			fprintf(stderr, "usage: %s [--quick | --full] [--md FILE] [--seconds S]\n",
				argv[0]);
			return 2;
		}
	}
	if (check_inputs() != 0)
		return 1;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		rows[i].ns_ours = measure(rows[i].ours, secs);
		if (rows[i].inn)
			rows[i].ns_inn = measure(rows[i].inn, secs);
	}
	print_table(stdout, false, rows, sizeof(rows) / sizeof(rows[0]));
	if (md) {
		f = fopen(md, "w");
		if (!f) {
			fprintf(stderr, "bench_parsers: %s: %s\n", md, strerror(errno));
			return 1;
		}
		print_table(f, true, rows, sizeof(rows) / sizeof(rows[0]));
		fclose(f);
	}
	return 0;
}
