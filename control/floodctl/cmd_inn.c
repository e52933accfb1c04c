/* SPDX-License-Identifier: MIT */
/*
 * cmd_inn.c — floodctl import-inn-history: a site switching from INN
 * brings INN's history (docs/operations.md, "Switching a site from INN").
 *
 *   floodctl import-inn-history [-c CONFIG] [--data-dir DIR] [--json] FILE...
 *
 * 1. Read each hisv6 history file (INN's pathdb/history, text) line by
 *    line (innhist.h, fg_hisv6_parse). Lines with a token (an article INN
 *    stored) and without one (an ID INN remembers: refused, or its article
 *    expired) are both taken: INN would refuse either again.
 * 2. Skip a line whose arrival is more than cutoff + 1 day ago: any article
 *    it names is dated before now - cutoff (its date is at most a day after
 *    its arrival, docs/rules.md), so the rules refuse it as too old anyway.
 *    Malformed lines are skipped, counted, and the first few shown.
 * 3. Write <data-dir>/inn-history.fgf (sorted, deduplicated, through a
 *    temporary file, synced, renamed) with its window: in force until
 *    now + cutoff + 1 day, after which every article INN had is too old
 *    for the rules. Map it again with its checksum checked.
 * Runs beside a running floodctld and dataplane (the engines map the new
 * file within a second) or before them. Needs write access to data-dir:
 * run it as the user the services run as.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/config.h"
#include "floodgate/datadir.h"
#include "floodgate/innhist.h"
#include "floodgate/sbuf.h"
#include "floodctl.h"

#define SHOW_BAD 5
#define DAY 86400

struct import {
	uint8_t (*h)[FG_MD5_LEN];
	size_t n, cap;
	uint64_t lines, taken, remembered, too_old, bad;
	fg_time_t oldest;	/* arrivals before this are skipped */
};

static int take(struct import *im, const uint8_t *hash)
{
	if (im->n == im->cap) {
		size_t cap = im->cap ? 2 * im->cap : 1u << 16;
		void *p = realloc(im->h, cap * FG_MD5_LEN);

		if (!p)
			return -ENOMEM;
		im->h = p;
		im->cap = cap;
	}
	memcpy(im->h[im->n++], hash, FG_MD5_LEN);
	return 0;
}

static int one_line(struct import *im, const char *file, const char *s, size_t len)
{
	struct fg_hisv6_line l;
	const char *why;
	int rc;

	im->lines++;
	rc = fg_hisv6_parse(s, len, &l, &why);
	if (rc < 0) {
		if (im->bad++ < SHOW_BAD)
			fprintf(stderr, "floodctl import-inn-history: %s:%llu: %s (skipped)\n", file,
				(unsigned long long)im->lines, why);
		return 0;
	}
	if (rc == 0)
		return 0;
	if (l.arrived < im->oldest) {
		im->too_old++;
		return 0;
	}
	im->taken++;
	if (!l.has_token)
		im->remembered++;
	return take(im, l.hash);
}

/* Every line of one file; 0 or -errno. */
static int read_file(struct import *im, const char *file)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!f)
		return -errno;
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			len--;
		rc = one_line(im, file, line, (size_t)len);
	}
	if (rc == 0 && ferror(f))
		rc = -EIO;
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

static int run_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "data-dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct fg_ctl_command *cmd = &fg_ctl_cmd_import_inn_history;
	const char *config = NULL, *dir = NULL, *why;
	struct import im = { 0 };
	struct fg_config_errors errs;
	struct fg_config *cfg;
	struct fg_foreign *f;
	char path[PATH_MAX];
	fg_time_t now = time(NULL), until;
	bool json = false;
	size_t written = 0;
	int opt, rc, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'd': dir = optarg; break;
		case 'j': json = true; break;
		case 'h': fg_ctl_usage(cmd, stdout); return FG_CTL_EXIT_OK;
		default: fg_ctl_usage(cmd, stderr); return FG_CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fg_ctl_usage(cmd, stderr);
		return FG_CTL_EXIT_USAGE;
	}
	memset(&errs, 0, sizeof(errs));
	cfg = config ? fg_config_load_file(config, &errs) : fg_config_load_default(&errs);
	if (!cfg)
		return fg_ctl_fail(cmd, "%s: %s", config ? config : "<default>",
				   errs.n ? errs.err[0].text : "cannot be loaded");
	if (snprintf(path, sizeof(path), "%s/%s", dir ? dir : cfg->data_dir, FG_FOREIGN_FILE) >=
	    (int)sizeof(path)) {
		fg_config_free(cfg);
		return fg_ctl_fail(cmd, "data-dir: path too long");
	}
	im.oldest = now - cfg->cutoff - DAY;
	until = now + cfg->cutoff + DAY;
	fg_config_free(cfg);
	for (int i = optind; i < argc; i++) {
		rc = read_file(&im, argv[i]);
		if (rc < 0) {
			free(im.h);
			return fg_ctl_fail(cmd, "%s: %s", argv[i], strerror(-rc));
		}
	}
	rc = fg_foreign_write(path, im.h, im.n, now, until, &written);
	free(im.h);
	if (rc < 0)
		return fg_ctl_fail(cmd, "%s: %s", path, strerror(-rc));
	f = fg_foreign_open(path, true, &err, &why);
	if (!f)
		return fg_ctl_fail(cmd, "%s: written, but reading it back: %s", path, why);
	fg_foreign_close(f);
	if (json) {
		struct fg_sbuf out;
		struct fg_json j;

		fg_sbuf_init(&out);
		fg_json_begin(&j, &out);
		fg_json_str(&j, "file", path);
		fg_json_u64(&j, "lines", im.lines);
		fg_json_u64(&j, "taken", im.taken);
		fg_json_u64(&j, "remembered_only", im.remembered);
		fg_json_u64(&j, "older_than_cutoff", im.too_old);
		fg_json_u64(&j, "malformed", im.bad);
		fg_json_u64(&j, "ids", written);
		fg_json_i64(&j, "imported", now);
		fg_json_i64(&j, "until", until);
		fg_json_end(&j);
		fwrite(out.p, 1, out.len, stdout);
		fputs("\n", stdout);
		fg_sbuf_free(&out);
	} else {
		char when[64];
		time_t u = (time_t)until;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&u));
		printf("imported %zu IDs of INN's history into %s\n"
		       "  %llu lines: %llu taken (%llu of them remembered IDs without an article), "
		       "%llu older than the cutoff + 1 day skipped, %llu malformed skipped\n"
		       "  consulted on a miss of floodgate's history until %s (cutoff + 1 day)\n",
		       written, path, (unsigned long long)im.lines, (unsigned long long)im.taken,
		       (unsigned long long)im.remembered, (unsigned long long)im.too_old,
		       (unsigned long long)im.bad, when);
	}
	return FG_CTL_EXIT_OK;
}

const struct fg_ctl_command fg_ctl_cmd_import_inn_history = {
	.name = "import-inn-history",
	.args = "[-c CONFIG] [--data-dir DIR] [--json] FILE...",
	.summary = "import INN's history (hisv6 text) as a table consulted on a miss",
	.help = "  -c, --config FILE  take data-dir and cutoff from this floodgate.conf\n"
		"  --data-dir DIR     write the table here instead of data-dir\n"
		"  --json             the counts as one JSON object\n"
		"\nReads INN's history files (pathdb/history; '-' reads stdin) and writes\n"
		"<data-dir>/inn-history.fgf: the MD5 of every Message-ID INN holds (with an\n"
		"article or only remembered) that arrived within cutoff + 1 day. The engines\n"
		"map it within a second and, until cutoff + 1 day from now, refuse as a\n"
		"duplicate every offer of an ID it holds that floodgate's own history does\n"
		"not. A new import replaces the table. Malformed lines are skipped, counted\n"
		"and the first few shown. Run it as the user the services run as.\n",
	.run = run_import,
};
