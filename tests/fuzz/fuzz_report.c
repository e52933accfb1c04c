/* SPDX-License-Identifier: MIT */
/*
 * fuzz_report.c — the daily report's day files (report.h) from arbitrary
 * bytes: floodctld reads what it (or a crash of it, or another build)
 * left in <data-dir>/report. Beyond "no crash, no overread": every sample
 * the reader delivers has names of the format's shape, at most the
 * table's peers and downstreams, and written back and read again gives
 * the same sample; summing the samples and rendering the three forms
 * puts every peer's name in the HTML escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fg_report_sample scratch, again;
static struct fg_report *sum;
static const struct fg_report_sample *want;	/* what `same` compares with */

static void shaped(const char *s)
{
	if (!*s)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			abort();
}

static int same(void *arg, const struct fg_report_sample *s)
{
	(void)arg;
	if (s->time != want->time || s->interval != want->interval ||
	    s->n_peers != want->n_peers || s->n_ds != want->n_ds ||
	    memcmp(s->peer, want->peer, s->n_peers * sizeof(s->peer[0])) != 0 ||
	    memcmp(s->ds, want->ds, s->n_ds * sizeof(s->ds[0])) != 0)
		abort();
	return 1;	/* one sample only */
}

static int check(void *arg, const struct fg_report_sample *s)
{
	struct fg_sbuf b;
	unsigned damaged;

	(void)arg;
	if (s->n_peers > FG_REGION_PEERS || s->n_ds > FG_CONFIG_MAX_DOWNSTREAMS)
		abort();
	for (unsigned i = 0; i < s->n_peers; i++)
		shaped(s->peer[i].name);
	for (unsigned i = 0; i < s->n_ds; i++)
		shaped(s->ds[i].name);
	fg_sbuf_init(&b);
	fg_sbuf_printf(&b, "%s %d\n", FG_REPORT_MAGIC, FG_REPORT_VERSION);
	fg_report_format(&b, s);
	if (b.failed || (want = s, fg_report_parse(b.p, b.len, &again, same, NULL, &damaged)) != 1)
		abort();
	fg_sbuf_free(&b);
	fg_report_add(sum, s);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_sbuf b;
	unsigned damaged;

	sum = fg_report_new(0, INT64_C(1) << 40);
	if (!sum)
		return 0;
	fg_report_parse((const char *)data, size, &scratch, check, NULL, &damaged);
	fg_sbuf_init(&b);
	fg_report_text(sum, &b);
	fg_report_json(sum, &b);
	fg_sbuf_reset(&b);
	fg_report_html(sum, &b);
	fg_sbuf_put(&b, "", 1);
	/* every peer's name is in the page as its escaped form */
	for (unsigned i = 0; i < sum->n_peers; i++) {
		char e[FG_REGION_NAME_MAX * 6] = "", *o = e;

		for (const char *c = sum->peer[i].name; *c; c++)
			o += sprintf(o, "%s", *c == '<' ? "&lt;" : *c == '>' ? "&gt;" :
				     *c == '&' ? "&amp;" : *c == '"' ? "&quot;" :
				     *c == '\'' ? "&#39;" : (char[2]){ *c, 0 });
		if (!strstr(b.p, e))
			abort();
	}
	fg_sbuf_free(&b);
	fg_report_free(sum);
	return 0;
}
