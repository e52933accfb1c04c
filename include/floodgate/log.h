/* SPDX-License-Identifier: MIT */
/*
 * log.h — the one log facility. Library and dataplane code never printf
 * and never exit: they log with a level and return an error; only main()
 * decides to stop.
 *
 * Where lines go is the program's choice, once at start (fg_log_open,
 * from floodgate.conf [log]):
 *
 *   stderr   "LEVEL component: message" lines. With timestamps (`on`,
 *            or `auto`, the default, unless systemd runs the program:
 *            $INVOCATION_ID or $JOURNAL_STREAM set) each line starts
 *            with the UTC time in ISO 8601, milliseconds:
 *            "2026-12-01T20:34:36.123Z warn relay: ...". When stderr is
 *            the journal (systemd's $JOURNAL_STREAM names its device and
 *            inode) the line starts with "<N>" instead, N the syslog
 *            priority, which journald takes as the line's priority
 *            (sd-daemon(3)); the journal keeps the time itself.
 *   journal  one datagram per line to journald's native socket
 *            (/run/systemd/journal/socket), fields PRIORITY,
 *            SYSLOG_IDENTIFIER (the program), MESSAGE ("component:
 *            message"), FG_COMPONENT, and where the caller names them
 *            (fg_log_ctx) FG_PEER and FG_MSGID. A field that holds a
 *            newline uses the protocol's length-prefixed form.
 *   syslog   one RFC 3164 datagram per line to /dev/log, facility
 *            daemon: "<PRI>Mmm dd hh:mm:ss ident[pid]: component: message".
 *
 * A line that cannot be sent (journald or syslogd not there) goes to
 * stderr instead, so nothing is lost silently. A program or a test may
 * also install its own sink (tests capture lines to assert on a clean
 * log); a sink overrides the target.
 */
#ifndef FLOODGATE_LOG_H
#define FLOODGATE_LOG_H

#include <stdarg.h>

#include "floodgate/common.h"

enum fg_log_level {
	FG_LOG_ERR = 0,
	FG_LOG_WARN = 1,
	FG_LOG_NOTICE = 2,
	FG_LOG_INFO = 3,
	FG_LOG_DEBUG = 4,
};

/* floodgate.conf [log] target */
enum fg_log_target {
	FG_LOG_TO_STDERR = 0,
	FG_LOG_TO_JOURNAL = 1,
	FG_LOG_TO_SYSLOG = 2,
};

/* floodgate.conf [log] timestamps: the stderr target's time prefix */
enum fg_log_timestamps {
	FG_LOG_TIME_AUTO = 0,	/* unless systemd runs us ($INVOCATION_ID, $JOURNAL_STREAM) */
	FG_LOG_TIME_ON = 1,	/* always, unless stderr is the journal */
	FG_LOG_TIME_OFF = 2,
};

#define FG_LOG_JOURNAL_SOCKET "/run/systemd/journal/socket"
#define FG_LOG_SYSLOG_SOCKET "/dev/log"

/* What a line is about, for the journal's fields; either may be NULL. */
struct fg_log_ctx {
	const char *peer;
	const char *msgid;
};

typedef void fg_log_sink_fn(enum fg_log_level level, const char *component,
			    const char *msg, void *arg);

/* Messages above this level are dropped before formatting. */
void fg_log_set_level(enum fg_log_level level);
enum fg_log_level fg_log_get_level(void);
/* Install a sink; NULL restores the configured target. */
void fg_log_set_sink(fg_log_sink_fn *fn, void *arg);
/* "err", "warn", "notice", "info", "debug" -> level; -EINVAL otherwise. */
int fg_log_level_parse(const char *name);
const char *fg_log_level_name(enum fg_log_level level);

/*
 * Send lines to `target` from now on, as program `ident` (at most 31
 * octets kept). `socket_path` NULL is the target's standard socket (tests
 * pass their own). 0, or -errno when the target's socket cannot be made
 * (the target is then stderr). Call it before the program starts threads.
 */
int fg_log_open(enum fg_log_target target, enum fg_log_timestamps ts, const char *ident,
		const char *socket_path);
/* Back to stderr, today's format; closes the target's socket. */
void fg_log_close(void);

void fg_log(enum fg_log_level level, const char *component, const char *fmt, ...)
	FG_PRINTF(3, 4);
void fg_vlog(enum fg_log_level level, const char *component, const char *fmt,
	     va_list ap);
/* A line about one peer and/or one Message-ID (the journal's fields). */
void fg_log_about(enum fg_log_level level, const char *component,
		  const struct fg_log_ctx *ctx, const char *fmt, ...) FG_PRINTF(4, 5);

#define FG_LOG_ERR(comp, ...) fg_log(FG_LOG_ERR, comp, __VA_ARGS__)
#define FG_LOG_WARN(comp, ...) fg_log(FG_LOG_WARN, comp, __VA_ARGS__)
#define FG_LOG_NOTICE(comp, ...) fg_log(FG_LOG_NOTICE, comp, __VA_ARGS__)
#define FG_LOG_INFO(comp, ...) fg_log(FG_LOG_INFO, comp, __VA_ARGS__)
#define FG_LOG_DEBUG(comp, ...) fg_log(FG_LOG_DEBUG, comp, __VA_ARGS__)

#endif /* FLOODGATE_LOG_H */
