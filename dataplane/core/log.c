/* SPDX-License-Identifier: MIT */
/*
 * log.c — level filter and pluggable sink. Formatting happens into a
 * stack buffer; a message longer than it is cut, never allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/log.h"

#define FG_LOG_LINE_MAX 1024

static const char *const level_names[] = {
	[FG_LOG_ERR] = "err",
	[FG_LOG_WARN] = "warn",
	[FG_LOG_NOTICE] = "notice",
	[FG_LOG_INFO] = "info",
	[FG_LOG_DEBUG] = "debug",
};

static enum fg_log_level cur_level = FG_LOG_NOTICE;
static fg_log_sink_fn *cur_sink;
static void *cur_sink_arg;

void fg_log_set_level(enum fg_log_level level)
{
	cur_level = level;
}

enum fg_log_level fg_log_get_level(void)
{
	return cur_level;
}

void fg_log_set_sink(fg_log_sink_fn *fn, void *arg)
{
	cur_sink = fn;
	cur_sink_arg = arg;
}

int fg_log_level_parse(const char *name)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(level_names); i++)
		if (strcmp(name, level_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

const char *fg_log_level_name(enum fg_log_level level)
{
	if ((size_t)level < FG_ARRAY_SIZE(level_names))
		return level_names[level];
	return "?";
}

void fg_vlog(enum fg_log_level level, const char *component, const char *fmt,
	     va_list ap)
{
	char msg[FG_LOG_LINE_MAX];

	if (level > cur_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cur_sink) {
		cur_sink(level, component, msg, cur_sink_arg);
		return;
	}
	fprintf(stderr, "%s %s: %s\n", fg_log_level_name(level),
		component ? component : "-", msg);
}

void fg_log(enum fg_log_level level, const char *component, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fg_vlog(level, component, fmt, ap);
	va_end(ap);
}

void fg_panic(const char *file, int line, const char *what)
{
	fg_log(FG_LOG_ERR, "panic", "%s:%d: assertion failed: %s", file, line, what);
	fflush(stderr);
	abort();
}
