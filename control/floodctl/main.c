/* SPDX-License-Identifier: MIT */
/*
 * main.c — floodctl: dispatch on the first word through one table.
 *
 *   floodctl [--help] COMMAND [ARGS...]
 *   floodctl help [COMMAND]
 *   floodctl COMMAND --help
 *
 * `--help` is generated from the table, so a command exists in the help
 * exactly when it can be run. Commands come from the files of their
 * groups (floodctl.h); add a row here to add one.
 */
#include <stdio.h>
#include <string.h>

#include "floodctl.h"

static const struct fg_ctl_command *const commands[] = {
	&fg_ctl_cmd_status,
	&fg_ctl_cmd_stats,
	&fg_ctl_cmd_top,
	&fg_ctl_cmd_report,
	&fg_ctl_cmd_lookup,
	&fg_ctl_cmd_forget,
	&fg_ctl_cmd_remember,
	&fg_ctl_cmd_import_inn_history,
	&fg_ctl_cmd_explain,
	&fg_ctl_cmd_msgid,
	&fg_ctl_cmd_expire,
	&fg_ctl_cmd_snapshot,
	&fg_ctl_cmd_reload,
	&fg_ctl_cmd_reopen_logs,
	&fg_ctl_cmd_peers,
	&fg_ctl_cmd_throttle,
	&fg_ctl_cmd_go,
	&fg_ctl_cmd_pause,
	&fg_ctl_cmd_resume,
	&fg_ctl_cmd_downstreams,
	&fg_ctl_cmd_downstream,
	&fg_ctl_cmd_drain,
	&fg_ctl_cmd_shutdown,
	&fg_ctl_cmd_config,
	&fg_ctl_cmd_shadow,
};

static void usage(FILE *f)
{
	fputs("usage: floodctl [--help] COMMAND [ARGS...]\n"
	      "\n"
	      "The floodgate operator's tool. `floodctl COMMAND --help` describes one command.\n"
	      "Exit status: 0 success (explain: accepted), 1 a negative answer (rejected,\n"
	      "invalid, not in history, refused), 2 usage or I/O error; the commands that\n"
	      "ask floodctld also: 3 floodctld not running, 4 permission denied on its\n"
	      "socket, 5 malformed reply, 6 no reply in time.\n"
	      "\n"
	      "Commands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-11s %s\n  %-11s   floodctl %s %s\n", commands[i]->name,
			commands[i]->summary, "", commands[i]->name, commands[i]->args);
}

static const struct fg_ctl_command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct fg_ctl_command *cmd;

	if (argc < 2) {
		usage(stderr);
		return FG_CTL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    (strcmp(argv[1], "help") == 0 && argc == 2)) {
		usage(stdout);
		return FG_CTL_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0) {
		cmd = find(argv[2]);
		if (!cmd) {
			fprintf(stderr, "floodctl: no command '%s'\n", argv[2]);
			return FG_CTL_EXIT_USAGE;
		}
		fg_ctl_usage(cmd, stdout);
		return FG_CTL_EXIT_OK;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "floodctl: no command '%s'\n\n", argv[1]);
		usage(stderr);
		return FG_CTL_EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
