/* SPDX-License-Identifier: MIT */
/*
 * floodctl.h — the operator CLI's command table and shared helpers.
 *
 * Every command is one struct fg_ctl_command, defined in the file of its
 * group (cmd_article.c: explain, msgid) and listed once in main.c's
 * `commands` table; main() dispatches on the first word and generates
 * `floodctl --help` from the table, so adding a command (status, stats,
 * lookup, expire, snapshot, reload...) is one struct and one table row.
 *
 * Exit status, for every command: 0 success (for explain: accepted), 1 a
 * negative answer (rejected, invalid, not in history, refused), 2 usage or
 * I/O error; for the commands that ask floodctld also 3 not running,
 * 4 permission denied, 5 malformed reply, 6 timeout.
 */
#ifndef FLOODGATE_FLOODCTL_H
#define FLOODGATE_FLOODCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/sbuf.h"

#define FG_CTL_EXIT_OK 0
#define FG_CTL_EXIT_NO 1
#define FG_CTL_EXIT_USAGE 2
/* the commands that ask floodctld (cmd_daemon.c) */
#define FG_CTL_EXIT_DOWN 3	/* floodctld is not running */
#define FG_CTL_EXIT_DENIED 4	/* no permission on its control socket */
#define FG_CTL_EXIT_PROTO 5	/* a malformed reply */
#define FG_CTL_EXIT_TIMEOUT 6	/* no reply in time */

struct fg_ctl_command {
	const char *name;
	const char *args;	/* synopsis after the name */
	const char *summary;	/* one line for `floodctl --help` */
	const char *help;	/* the options, for `floodctl NAME --help` */
	/* argv[0] is the command's name; returns the exit status */
	int (*run)(int argc, char **argv);
};

extern const struct fg_ctl_command fg_ctl_cmd_explain;
extern const struct fg_ctl_command fg_ctl_cmd_msgid;
extern const struct fg_ctl_command fg_ctl_cmd_status;
extern const struct fg_ctl_command fg_ctl_cmd_stats;
extern const struct fg_ctl_command fg_ctl_cmd_report;
extern const struct fg_ctl_command fg_ctl_cmd_lookup;
extern const struct fg_ctl_command fg_ctl_cmd_forget;
extern const struct fg_ctl_command fg_ctl_cmd_remember;
extern const struct fg_ctl_command fg_ctl_cmd_throttle;
extern const struct fg_ctl_command fg_ctl_cmd_go;
extern const struct fg_ctl_command fg_ctl_cmd_pause;
extern const struct fg_ctl_command fg_ctl_cmd_resume;
extern const struct fg_ctl_command fg_ctl_cmd_expire;
extern const struct fg_ctl_command fg_ctl_cmd_snapshot;
extern const struct fg_ctl_command fg_ctl_cmd_reload;
extern const struct fg_ctl_command fg_ctl_cmd_reopen_logs;
extern const struct fg_ctl_command fg_ctl_cmd_peers;
extern const struct fg_ctl_command fg_ctl_cmd_drain;
extern const struct fg_ctl_command fg_ctl_cmd_downstreams;
extern const struct fg_ctl_command fg_ctl_cmd_downstream;
extern const struct fg_ctl_command fg_ctl_cmd_shutdown;
extern const struct fg_ctl_command fg_ctl_cmd_top;
extern const struct fg_ctl_command fg_ctl_cmd_config;
extern const struct fg_ctl_command fg_ctl_cmd_import_inn_history;
extern const struct fg_ctl_command fg_ctl_cmd_shadow;

/* cmd_daemon.c, for every command that asks floodctld: the control socket
 * of floodgate.conf `file` (NULL: the embedded default) into out; 0 or an
 * exit status. */
int fg_ctl_socket_from_config(const struct fg_ctl_command *cmd, const char *file, char *out,
			      size_t len);
/* A failed fg_ctl_call (rc < 0) as one line on stderr; its exit status. */
int fg_ctl_call_failed(const struct fg_ctl_command *cmd, const char *socket, int timeout_s,
		       int rc, const char *why);

/* "usage: floodctl NAME ARGS" and the command's help, to `f`. */
void fg_ctl_usage(const struct fg_ctl_command *cmd, FILE *f);
/* "floodctl NAME: message" on stderr; returns FG_CTL_EXIT_USAGE. */
int fg_ctl_fail(const struct fg_ctl_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * One JSON object per output, written with the writer every part of the
 * project uses (sbuf.h's fg_json: keys in order, any octet string escaped
 * into valid JSON — article text is not UTF-8-clean) and printed to f as
 * one line at the end.
 */
struct fg_ctl_json {
	struct fg_json j;
	struct fg_sbuf b;
	FILE *f;
};

/* The document's writer, its top object open. */
struct fg_json *fg_ctl_json_begin(struct fg_ctl_json *doc, FILE *f);
/* Close it, print it and a newline to f, free it. */
void fg_ctl_json_end(struct fg_ctl_json *doc);

/* Write `len` octets to `f` with control and 8-bit octets as \xNN. */
void fg_ctl_print_escaped(FILE *f, const char *s, size_t len);

/* Parse "--now": decimal epoch seconds or an RFC 5322 date-time. */
int fg_ctl_parse_time(const char *s, int64_t *out);
/* "3d 4h 5m 6s" (or "-…" for a negative span) into buf. */
const char *fg_ctl_format_span(int64_t secs, char *buf, size_t len);

#endif /* FLOODGATE_FLOODCTL_H */
