/* SPDX-License-Identifier: MIT */
/*
 * log.h — the one log facility. Library and dataplane code never printf
 * and never exit: they log with a level and return an error; only main()
 * decides to stop.
 *
 * The default sink writes "LEVEL component: message" lines to stderr.
 * A program may install its own sink (floodctld writes to its log file,
 * tests capture lines to assert on a clean log).
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

typedef void fg_log_sink_fn(enum fg_log_level level, const char *component,
			    const char *msg, void *arg);

/* Messages above this level are dropped before formatting. */
void fg_log_set_level(enum fg_log_level level);
enum fg_log_level fg_log_get_level(void);
/* Install a sink; NULL restores the stderr sink. */
void fg_log_set_sink(fg_log_sink_fn *fn, void *arg);
/* "err", "warn", "notice", "info", "debug" -> level; -EINVAL otherwise. */
int fg_log_level_parse(const char *name);
const char *fg_log_level_name(enum fg_log_level level);

void fg_log(enum fg_log_level level, const char *component, const char *fmt, ...)
	FG_PRINTF(3, 4);
void fg_vlog(enum fg_log_level level, const char *component, const char *fmt,
	     va_list ap);

#define FG_LOG_ERR(comp, ...) fg_log(FG_LOG_ERR, comp, __VA_ARGS__)
#define FG_LOG_WARN(comp, ...) fg_log(FG_LOG_WARN, comp, __VA_ARGS__)
#define FG_LOG_NOTICE(comp, ...) fg_log(FG_LOG_NOTICE, comp, __VA_ARGS__)
#define FG_LOG_INFO(comp, ...) fg_log(FG_LOG_INFO, comp, __VA_ARGS__)
#define FG_LOG_DEBUG(comp, ...) fg_log(FG_LOG_DEBUG, comp, __VA_ARGS__)

#endif /* FLOODGATE_LOG_H */
