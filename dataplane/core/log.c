/* SPDX-License-Identifier: MIT */
/*
 * log.c — level filter, pluggable sink, and the three targets of log.h.
 *
 * Formatting happens into stack buffers; a message longer than them is
 * cut, never allocated. The journal and syslog targets send with sendto()
 * on one unconnected datagram socket, so a journald or syslogd restart
 * needs no reconnect and threads share the socket without a lock. The
 * target is set once at start (fg_log_open) before threads exist; lines
 * only read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"

#define FG_LOG_LINE_MAX 1024
#define FG_LOG_DGRAM_MAX 2048
#define FG_LOG_IDENT_MAX 32
#define SYSLOG_FACILITY_DAEMON 3

static const char *const level_names[] = {
	[FG_LOG_ERR] = "err",
	[FG_LOG_WARN] = "warn",
	[FG_LOG_NOTICE] = "notice",
	[FG_LOG_INFO] = "info",
	[FG_LOG_DEBUG] = "debug",
};

/* syslog(3) severities of our levels: LOG_ERR .. LOG_DEBUG */
static const int level_priority[] = {
	[FG_LOG_ERR] = 3,
	[FG_LOG_WARN] = 4,
	[FG_LOG_NOTICE] = 5,
	[FG_LOG_INFO] = 6,
	[FG_LOG_DEBUG] = 7,
};

enum stderr_prefix {
	PREFIX_NONE,		/* "LEVEL component: message" */
	PREFIX_TIME,		/* ISO 8601 UTC time first */
	PREFIX_PRIORITY,	/* "<N>" first: stderr is the journal */
};

static enum fg_log_level cur_level = FG_LOG_NOTICE;
static fg_log_sink_fn *cur_sink;
static void *cur_sink_arg;

static struct {
	enum fg_log_target target;
	enum stderr_prefix prefix;
	int fd;				/* journal or syslog socket; -1 */
	struct sockaddr_un sa;
	char ident[FG_LOG_IDENT_MAX];
} out = { .fd = -1 };

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

/* systemd sets $JOURNAL_STREAM to "DEV:INODE" of the stream it connected
 * to stderr; a match means our stderr still is that stream. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* systemd runs us (as a service, $INVOCATION_ID; or with stderr on the
 * journal, $JOURNAL_STREAM): whatever keeps our stderr keeps the time. */
static bool under_systemd(void)
{
	return getenv("INVOCATION_ID") || getenv("JOURNAL_STREAM");
}

static enum stderr_prefix choose_prefix(enum fg_log_timestamps ts)
{
	if (stderr_is_journal())
		return PREFIX_PRIORITY;
	if (ts == FG_LOG_TIME_ON || (ts == FG_LOG_TIME_AUTO && !under_systemd()))
		return PREFIX_TIME;
	return PREFIX_NONE;
}

void fg_log_close(void)
{
	if (out.fd >= 0)
		close(out.fd);
	out.fd = -1;
	out.target = FG_LOG_TO_STDERR;
	out.prefix = PREFIX_NONE;
}

int fg_log_open(enum fg_log_target target, enum fg_log_timestamps ts, const char *ident,
		const char *socket_path)
{
	const char *path = socket_path;
	int fd;

	fg_log_close();
	snprintf(out.ident, sizeof(out.ident), "%s", ident ? ident : "floodgate");
	out.prefix = choose_prefix(ts);
	if (target == FG_LOG_TO_STDERR)
		return 0;
	if (!path)
		path = target == FG_LOG_TO_JOURNAL ? FG_LOG_JOURNAL_SOCKET : FG_LOG_SYSLOG_SOCKET;
	if (strlen(path) >= sizeof(out.sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&out.sa, 0, sizeof(out.sa));
	out.sa.sun_family = AF_UNIX;
	strcpy(out.sa.sun_path, path);
	out.fd = fd;
	out.target = target;
	return 0;
}

/* ---------------------------------------------------------------- stderr */

static void iso8601_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ts.tv_nsec / 1000000));
}

static void to_stderr(enum fg_log_level level, const char *component, const char *msg)
{
	char pre[80] = "";

	if (out.prefix == PREFIX_TIME)
		iso8601_now(pre, sizeof(pre));
	else if (out.prefix == PREFIX_PRIORITY)
		snprintf(pre, sizeof(pre), "<%d>", level_priority[level]);
	fprintf(stderr, "%s%s %s: %s\n", pre, fg_log_level_name(level), component, msg);
}

/* ---------------------------------------------------------------- journal */

/* Every field fits: MESSAGE is at most FG_LOG_LINE_MAX + 64, a Message-ID
 * 250 octets, a peer name 63, the rest a few dozen. */
struct dgram {
	char buf[FG_LOG_DGRAM_MAX];
	size_t len;
};

static void put(struct dgram *d, const void *p, size_t n)
{
	if (d->len + n > sizeof(d->buf))
		return;
	memcpy(d->buf + d->len, p, n);
	d->len += n;
}

/* NAME=value\n, or NAME\n<64-bit LE length>value\n when the value holds a
 * newline (the native protocol's two forms). */
static void field(struct dgram *d, const char *name, const char *value)
{
	size_t n = strlen(value);

	put(d, name, strlen(name));
	if (!memchr(value, '\n', n)) {
		put(d, "=", 1);
	} else {
		uint8_t le[8];

		for (int i = 0; i < 8; i++)
			le[i] = (uint8_t)((uint64_t)n >> (8 * i));
		put(d, "\n", 1);
		put(d, le, sizeof(le));
	}
	put(d, value, n);
	put(d, "\n", 1);
}

static void journal_dgram(struct dgram *d, enum fg_log_level level, const char *component,
			  const struct fg_log_ctx *ctx, const char *msg)
{
	char text[FG_LOG_LINE_MAX + 64], prio[4];

	snprintf(prio, sizeof(prio), "%d", level_priority[level]);
	snprintf(text, sizeof(text), "%s: %s", component, msg);
	field(d, "PRIORITY", prio);
	field(d, "SYSLOG_IDENTIFIER", out.ident);
	field(d, "FG_COMPONENT", component);
	if (ctx && ctx->peer)
		field(d, "FG_PEER", ctx->peer);
	if (ctx && ctx->msgid)
		field(d, "FG_MSGID", ctx->msgid);
	field(d, "MESSAGE", text);
}

/* ---------------------------------------------------------------- syslog */

static void syslog_dgram(struct dgram *d, enum fg_log_level level, const char *component,
			 const char *msg)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;
	int n;

	localtime_r(&now, &tm);
	n = snprintf(d->buf, sizeof(d->buf), "<%d>%s %2d %02d:%02d:%02d %s[%d]: %s: %s",
		     SYSLOG_FACILITY_DAEMON * 8 + level_priority[level], mon[tm.tm_mon],
		     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, out.ident, (int)getpid(),
		     component, msg);
	d->len = n < 0 ? 0 : FG_MIN((size_t)n, sizeof(d->buf) - 1);
}

static void emit(enum fg_log_level level, const char *component, const struct fg_log_ctx *ctx,
		 const char *msg)
{
	struct dgram d = { .len = 0 };

	if (!component)
		component = "-";
	if (cur_sink) {
		cur_sink(level, component, msg, cur_sink_arg);
		return;
	}
	if (out.target == FG_LOG_TO_STDERR || out.fd < 0) {
		to_stderr(level, component, msg);
		return;
	}
	if (out.target == FG_LOG_TO_JOURNAL)
		journal_dgram(&d, level, component, ctx, msg);
	else
		syslog_dgram(&d, level, component, msg);
	if (sendto(out.fd, d.buf, d.len, MSG_NOSIGNAL, (const struct sockaddr *)&out.sa,
		   sizeof(out.sa)) < 0)
		to_stderr(level, component, msg);
}

void fg_vlog(enum fg_log_level level, const char *component, const char *fmt, va_list ap)
{
	char msg[FG_LOG_LINE_MAX];

	if (level > cur_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	emit(level, component, NULL, msg);
}

void fg_log(enum fg_log_level level, const char *component, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fg_vlog(level, component, fmt, ap);
	va_end(ap);
}

void fg_log_about(enum fg_log_level level, const char *component,
		  const struct fg_log_ctx *ctx, const char *fmt, ...)
{
	char msg[FG_LOG_LINE_MAX];
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, component, ctx, msg);
}

void fg_panic(const char *file, int line, const char *what)
{
	fg_log(FG_LOG_ERR, "panic", "%s:%d: assertion failed: %s", file, line, what);
	fflush(stderr);
	abort();
}
