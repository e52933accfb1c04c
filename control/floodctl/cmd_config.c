/* SPDX-License-Identifier: MIT */
/*
 * cmd_config.c — `floodctl config`: the embedded default configuration,
 * and a check of a file, both without floodctld.
 *
 *   floodctl config --default       print fg_config_default_text, the file
 *                                   that runs when none is given; the
 *                                   starting point of a site's own file and
 *                                   of the demo's (tools/demo)
 *   floodctl config --check FILE    load FILE as floodctld would: every
 *                                   error and warning with file:line; exit 1
 *                                   when it has errors; --json: one object,
 *                                   each problem {file, line, key, message}
 *     --for PROGRAM                 and what PROGRAM (floodctld, floodgate,
 *                                   floodgate-host) refuses at start in it,
 *                                   in its words (fg_config_refusals); what
 *                                   depends on the host is named, not checked
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/config.h"
#include "floodctl.h"

/* Each problem as {"file", "line", "key", "message"}; line null when the
 * problem is not one line's. */
static void json_problems(struct fg_json *j, const char *key, const char *path,
			  const struct fg_config_error *e, unsigned n)
{
	fg_json_arr(j, key);
	for (unsigned i = 0; i < n; i++) {
		fg_json_obj(j, NULL);
		fg_json_str(j, "file", path);
		if (e[i].line)
			fg_json_u64(j, "line", e[i].line);
		else
			fg_json_null(j, "line");
		fg_json_strn(j, "key", e[i].key_len ? e[i].text + e[i].key_off : NULL, e[i].key_len);
		fg_json_str(j, "message", e[i].text + e[i].msg_off);
		fg_json_close(j);
	}
	fg_json_close(j);
}

#define MAX_REFUSALS 16

/* The program's refusals of a loaded file: how many (n may exceed what
 * fits in why). */
static unsigned refusals(const struct fg_config *cfg, int prog,
			 char (*why)[FG_CONFIG_REFUSAL_MAX])
{
	return cfg && prog >= 0 ? fg_config_refusals(cfg, (enum fg_program)prog, why,
						     MAX_REFUSALS) : 0;
}

static int check_file_json(const char *path, int prog)
{
	static char why[MAX_REFUSALS][FG_CONFIG_REFUSAL_MAX];
	struct fg_config_errors errs;
	struct fg_config *cfg;
	struct fg_ctl_json doc;
	struct fg_json *j;
	unsigned n;

	memset(&errs, 0, sizeof(errs));
	cfg = fg_config_load_file(path, &errs);
	n = refusals(cfg, prog, why);
	j = fg_ctl_json_begin(&doc, stdout);
	fg_json_str(j, "file", path);
	fg_json_bool(j, "ok", cfg != NULL && n == 0);
	json_problems(j, "errors", path, errs.err, errs.n);
	fg_json_u64(j, "errors_total", errs.total);
	json_problems(j, "warnings", path, errs.warn, errs.n_warn);
	if (prog >= 0) {
		fg_json_arr(j, "refused_at_start");
		for (unsigned i = 0; i < FG_MIN(n, (unsigned)MAX_REFUSALS); i++)
			fg_json_str(j, NULL, why[i]);
		fg_json_close(j);
		fg_json_str(j, "not_checked_host",
				 fg_config_host_refusals((enum fg_program)prog));
	}
	fg_ctl_json_end(&doc);
	fg_config_free(cfg);
	return cfg && n == 0 ? FG_CTL_EXIT_OK : FG_CTL_EXIT_NO;
}

static int check_file(const char *path, int prog)
{
	static char why[MAX_REFUSALS][FG_CONFIG_REFUSAL_MAX];
	struct fg_config_errors errs;
	struct fg_config *cfg;
	unsigned n;

	memset(&errs, 0, sizeof(errs));
	cfg = fg_config_load_file(path, &errs);
	for (unsigned i = 0; i < errs.n_warn; i++)
		fprintf(stderr, "warning: %s\n", errs.warn[i].text);
	for (unsigned i = 0; i < errs.n; i++)
		fprintf(stderr, "error: %s\n", errs.err[i].text);
	if (errs.total > errs.n)
		fprintf(stderr, "error: ... %u more\n", errs.total - errs.n);
	n = refusals(cfg, prog, why);
	for (unsigned i = 0; i < FG_MIN(n, (unsigned)MAX_REFUSALS); i++)
		fprintf(stderr, "error: refused at start: %s\n", why[i]);
	if (prog >= 0)
		fprintf(stderr, "note: not checked here (depends on the host): %s\n",
			fg_config_host_refusals((enum fg_program)prog));
	fg_config_free(cfg);
	if (!cfg || n)
		return FG_CTL_EXIT_NO;
	printf("%s: ok\n", path);
	return FG_CTL_EXIT_OK;
}

static int run_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "default", no_argument, NULL, 'd' },
		{ "check", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "for", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *check = NULL;
	bool def = false, json = false;
	int o, prog = -1;
	enum fg_program p;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			def = true;
			break;
		case 'k':
			check = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			if (fg_config_program_parse(optarg, &p) != 0) {
				fprintf(stderr, "floodctl config: --for floodctld, floodgate or "
					"floodgate-host, not %s\n", optarg);
				return FG_CTL_EXIT_USAGE;
			}
			prog = (int)p;
			break;
		case 'h':
			fg_ctl_usage(&fg_ctl_cmd_config, stdout);
			return FG_CTL_EXIT_OK;
		default:
			goto usage;
		}
	}
	if (optind != argc || def == (check != NULL) || ((json || prog >= 0) && def))
		goto usage;
	if (check)
		return json ? check_file_json(check, prog) : check_file(check, prog);
	fputs(fg_config_default_text, stdout);
	return FG_CTL_EXIT_OK;
usage:
	fg_ctl_usage(&fg_ctl_cmd_config, stderr);
	return FG_CTL_EXIT_USAGE;
}

const struct fg_ctl_command fg_ctl_cmd_config = {
	.name = "config",
	.args = "--default | --check FILE [--for PROGRAM] [--json]",
	.summary = "print the embedded default configuration, or check a file",
	.help = "  --default          print the embedded floodgate.conf (what runs without -c)\n"
		"  --check FILE       load FILE as floodctld would; its errors and warnings\n"
		"                     on stderr with file:line; exit 1 if it has errors\n"
		"  --for PROGRAM      with --check: and what PROGRAM (floodctld, floodgate,\n"
		"                     floodgate-host) refuses at start in it, as it says it;\n"
		"                     what depends on the host is named, not checked\n"
		"  --json             with --check: one object, each problem with its file,\n"
		"                     line, key and message\n",
	.run = run_config,
};
