/* SPDX-License-Identifier: MIT */
/*
 * cmd_shadow.c — floodctl shadow: where floodgate in shadow mode would
 * have answered otherwise than the site's own server (docs/operations.md,
 * "Shadow mode beside INN").
 *
 * It reads the report file the dataplane writes every second and at exit
 * (shadowrep.h): --file PATH, or shadow.status in the data directory of
 * floodgate.conf (-c CONFIG, else the embedded default). Nothing asks
 * floodctld: shadow mode runs without it.
 *
 * Exit status: 0 when floodgate refused nothing the server took, 1 when
 * it did (the headline figure is not 0), 2 when the file cannot be read.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "floodctl.h"
#include "floodgate/config.h"
#include "floodgate/shadowrep.h"

#define REPORT_MAX (1u << 20)

static const char *const class_text[FG_SHADOW__CLASSES] = {
	[FG_SHADOW_AGREE] = "agree (both took, both refused, or both deferred)",
	[FG_SHADOW_REFUSED_TOOK] = "floodgate would refuse, the server took",
	[FG_SHADOW_TOOK_REFUSED] = "floodgate would take, the server refused",
	[FG_SHADOW_TIMING] = "differ only in timing (one side deferred: 238 against 431)",
};

static int read_report(const char *path, struct fg_shadow_report *r)
{
	char *text = malloc(REPORT_MAX);
	unsigned line;
	size_t n;
	FILE *f;
	int rc;

	if (!text)
		return fg_ctl_fail(&fg_ctl_cmd_shadow, "out of memory");
	f = fopen(path, "r");
	if (!f) {
		rc = fg_ctl_fail(&fg_ctl_cmd_shadow, "%s: %s (is floodgate running in shadow mode?)",
				 path, strerror(errno));
		goto out_free;
	}
	n = fread(text, 1, REPORT_MAX, f);
	fclose(f);
	rc = fg_shadow_report_parse(text, n, r, &line);
	if (rc != 0)
		rc = fg_ctl_fail(&fg_ctl_cmd_shadow, "%s: line %u is not a shadow report's", path,
				 line);
out_free:
	free(text);
	return rc;
}

static void samples_json(struct fg_json *j, const struct fg_shadow_report *r, unsigned c)
{
	fg_json_arr(j, "samples");
	for (unsigned i = 0; i < r->n_samples[c]; i++) {
		const struct fg_shadow_sample *s = &r->samples[c][i];

		fg_json_obj(j, NULL);
		fg_json_str(j, "message_id", s->id);
		fg_json_u64(j, "floodgate", s->ours);
		fg_json_u64(j, "server", s->theirs);
		if (c == FG_SHADOW_REFUSED_TOOK)
			fg_json_str(j, "reason", fg_reason_name((enum fg_reason)s->reason));
		fg_json_close(j);
	}
	fg_json_close(j);
}

static void print_json(const struct fg_shadow_report *r, const char *path)
{
	struct fg_ctl_json doc;
	struct fg_json *j = fg_ctl_json_begin(&doc, stdout);

	fg_json_str(j, "file", path);
	fg_json_u64(j, "refused_took", r->n[FG_SHADOW_REFUSED_TOOK]);
	fg_json_obj(j, "classes");
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		fg_json_obj(j, fg_shadow_class_name(c));
		fg_json_u64(j, "count", r->n[c]);
		if (c == FG_SHADOW_REFUSED_TOOK) {
			fg_json_obj(j, "by_reason");
			for (unsigned k = 0; k < FG_REASON__COUNT; k++)
				if (r->refused_took[k])
					fg_json_u64(j, fg_reason_name((enum fg_reason)k),
						    r->refused_took[k]);
			fg_json_close(j);
		}
		if (c != FG_SHADOW_AGREE)
			samples_json(j, r, c);
		fg_json_close(j);
	}
	fg_json_close(j);
	fg_json_u64(j, "followups", r->followups);
	fg_json_u64(j, "not_compared", r->not_compared);
	fg_json_u64(j, "gaps", r->gaps);
	fg_json_u64(j, "flows", r->flows);
	fg_json_u64(j, "unanchored", r->unanchored);
	fg_ctl_json_end(&doc);
}

static void print_text(const struct fg_shadow_report *r)
{
	printf("floodgate would refuse what the server took: %llu%s\n",
	       (unsigned long long)r->n[FG_SHADOW_REFUSED_TOOK],
	       r->n[FG_SHADOW_REFUSED_TOOK] ? "   <- must be 0" : "");
	for (unsigned c = 0; c < FG_SHADOW__CLASSES; c++) {
		printf("%-13s %12llu  %s\n", fg_shadow_class_name(c), (unsigned long long)r->n[c],
		       class_text[c]);
		if (c == FG_SHADOW_REFUSED_TOOK)
			for (unsigned k = 0; k < FG_REASON__COUNT; k++)
				if (r->refused_took[k])
					printf("  %-24s %llu\n", fg_reason_name((enum fg_reason)k),
					       (unsigned long long)r->refused_took[k]);
		for (unsigned i = 0; c != FG_SHADOW_AGREE && i < r->n_samples[c]; i++) {
			const struct fg_shadow_sample *s = &r->samples[c][i];

			printf("  e.g. %s  floodgate %03u, server %03u", s->id, s->ours, s->theirs);
			if (c == FG_SHADOW_REFUSED_TOOK)
				printf(" (%s)", fg_reason_name((enum fg_reason)s->reason));
			putchar('\n');
		}
	}
	printf("followups     %12llu  TAKETHIS answers of an article whose CHECK was already "
	       "refused-took\n",
	       (unsigned long long)r->followups);
	printf("not compared  %12llu  answers of exchanges not seen whole (gaps %llu, flows "
	       "without their SYN %llu)\n",
	       (unsigned long long)r->not_compared, (unsigned long long)r->gaps,
	       (unsigned long long)r->unanchored);
	printf("flows         %12llu\n", (unsigned long long)r->flows);
}

static int default_path(const char *config, char *out, size_t len)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = config ? fg_config_load_file(config, &errs) : fg_config_load_default(&errs);
	if (!cfg)
		return fg_ctl_fail(&fg_ctl_cmd_shadow, "%s: %s", config ? config : "<default>",
				   errs.n ? errs.err[0].text : "cannot be loaded");
	snprintf(out, len, "%s/%s", cfg->data_dir, FG_SHADOW_STATUS_FILE);
	fg_config_free(cfg);
	return 0;
}

static int run_shadow(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *config = NULL;
	char path[FG_CONFIG_PATH_MAX + 32];
	struct fg_shadow_report *r;
	bool json = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': file = optarg; break;
		case 'c': config = optarg; break;
		case 'j': json = true; break;
		case 'h': fg_ctl_usage(&fg_ctl_cmd_shadow, stdout); return FG_CTL_EXIT_OK;
		default: fg_ctl_usage(&fg_ctl_cmd_shadow, stderr); return FG_CTL_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return fg_ctl_fail(&fg_ctl_cmd_shadow, "unexpected argument '%s'", argv[optind]);
	if (file)
		snprintf(path, sizeof(path), "%s", file);
	else if ((rc = default_path(config, path, sizeof(path))) != 0)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return fg_ctl_fail(&fg_ctl_cmd_shadow, "out of memory");
	rc = read_report(path, r);
	if (rc == 0) {
		if (json)
			print_json(r, path);
		else
			print_text(r);
		rc = r->n[FG_SHADOW_REFUSED_TOOK] ? FG_CTL_EXIT_NO : FG_CTL_EXIT_OK;
	}
	free(r);
	return rc;
}

const struct fg_ctl_command fg_ctl_cmd_shadow = {
	.name = "shadow",
	.args = "[--file PATH|-c CONFIG] [--json]",
	.summary = "shadow mode: where floodgate would answer otherwise than the site's server",
	.help = "  -f, --file PATH      the report file (default: shadow.status in the data\n"
		"                       directory of the configuration)\n"
		"  -c, --config FILE    floodgate.conf (default: the embedded one)\n"
		"      --json           one JSON object\n"
		"\nEach class of answer pair, with counts and sample Message-IDs: what floodgate\n"
		"would refuse that the server took, by floodgate's reason (the headline figure,\n"
		"which must be 0), what it would take that the server refused, and the\n"
		"answers that differ only in timing (238 against 431); then the answers not\n"
		"compared because the mirror or capture did not show their exchange whole.\n"
		"Exit status 1 when the headline figure is not 0.\n",
	.run = run_shadow,
};
