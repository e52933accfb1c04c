/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ctl.c — libFuzzer target for what the control plane parses from
 * other processes: a control request line (from any local client), a
 * reply head (floodctl reading floodctld, or whatever answers on its
 * socket), and a verdict-log record (from a writer's ring, formatted by
 * floodctld). A parsed request must format back to a line that parses to
 * the same request; a formatted verdict-log line must be one line.
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/ctl.h"
#include "floodgate/sbuf.h"
#include "floodgate/vlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void request(const uint8_t *data, size_t size)
{
	struct fg_ctl_req q, back;
	char line[FG_CTL_LINE_MAX + 64];
	const char *why;
	int n;

	if (fg_ctl_parse_request((const char *)data, size, &q, &why) < 0)
		return;
	n = fg_ctl_format_request(&q, line, sizeof(line));
	if (n < 0)
		return;		/* canonical form longer than the input: fine */
	if (fg_ctl_parse_request(line, (size_t)n, &back, &why) < 0 || back.verb != q.verb ||
	    back.flags != q.flags || back.argc != q.argc)
		abort();
	for (unsigned i = 0; i < q.argc; i++)
		if (strcmp(back.argv[i], q.argv[i]) != 0)
			abort();
}

static void reply_head(const uint8_t *data, size_t size)
{
	char code[32];
	const char *why;
	size_t len;
	bool ok;

	if (fg_ctl_parse_reply_head((const char *)data, size, &ok, code, &len, &why) == 0 &&
	    (len > FG_CTL_BODY_MAX || strlen(code) >= sizeof(code)))
		abort();
}

static void vlog_line(const uint8_t *data, size_t size)
{
	struct fg_vrec rec;
	struct fg_sbuf b;

	memset(&rec, 0, sizeof(rec));
	memcpy(&rec, data, size < sizeof(rec) ? size : sizeof(rec));
	fg_sbuf_init(&b);
	fg_vlog_format(&b, &rec, size & 1 ? "peer" : NULL);
	if (b.failed || b.len == 0 || memchr(b.p, '\n', b.len) != b.p + b.len - 1)
		abort();
	fg_sbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	request(data, size);
	reply_head(data, size);
	vlog_line(data, size);
	return 0;
}
