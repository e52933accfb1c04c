/* SPDX-License-Identifier: MIT */
/*
 * cstatus.c — the cluster's status file (cstatus.h has its format):
 * written by the dataplane's cluster side, read by floodctld. One field
 * table drives the writer, the parser and every output built on them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/cstatus.h"
#include "floodgate/datadir.h"

#define CS_FILE_MAX 4096u	/* a dozen short lines */

const struct fg_status_field fg_cs_fields[] = {
#define FG_CS_ROW(f, k, h) FG_STATUS_ROW(struct fg_cluster_status, f, k, h)
	FG_CS_FIELDS(FG_CS_ROW)
#undef FG_CS_ROW
};
const unsigned fg_cs_n_fields = FG_ARRAY_SIZE(fg_cs_fields);

int fg_cs_status_write(const char *dir, fg_time_t now, const struct fg_cluster_status *s)
{
	char buf[CS_FILE_MAX];
	size_t off;

	off = (size_t)snprintf(buf, sizeof(buf), "%s %d %lld\n", FG_CS_STATUS_MAGIC,
			       FG_CS_STATUS_VERSION, (long long)now);
	for (unsigned k = 0; k < fg_cs_n_fields && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s %llu\n",
					fg_cs_fields[k].name,
					(unsigned long long)fg_cs_value(s, &fg_cs_fields[k]));
	if (off >= sizeof(buf))
		return -ENOSPC;
	return fg_datadir_put_info(dir, FG_CS_STATUS_FILE, buf, off);
}

/* A decimal of [p, end) without sign or blanks: true and *v. */
static bool decimal(const char *p, const char *end, unsigned long long *v)
{
	if (p == end || end - p > 20)
		return false;
	*v = 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' ||
		    __builtin_mul_overflow(*v, 10, v) || __builtin_add_overflow(*v, *p - '0', v))
			return false;
	}
	return true;
}

/* "<field> <value>" of [p, end): the field it names is set (an unknown one
 * is ignored, a line of another shape too). */
static void line(const char *p, const char *end, struct fg_cluster_status *s)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	unsigned long long v;

	if (!sp || sp == p || !decimal(sp + 1, end, &v))
		return;
	fg_status_set(s, fg_cs_fields, fg_cs_n_fields, p, (size_t)(sp - p), v);
}

int fg_cs_status_parse(const char *text, size_t len, struct fg_cluster_status *s,
		       fg_time_t *written)
{
	static const char head[] = FG_CS_STATUS_MAGIC " 1 ";
	const char *end = text + len, *nl = memchr(text, '\n', len), *p;
	unsigned long long t;

	memset(s, 0, sizeof(*s));
	if (!nl || len < sizeof(head) - 1 || memcmp(text, head, sizeof(head) - 1) != 0 ||
	    !decimal(text + sizeof(head) - 1, nl, &t) || t > INT64_MAX)
		return -EINVAL;
	*written = (fg_time_t)t;
	for (p = nl + 1; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;		/* a line without its end: cut short */
		line(p, nl, s);
	}
	return 0;
}

int fg_cs_status_read(const char *dir, struct fg_cluster_status *s, fg_time_t *written)
{
	char buf[CS_FILE_MAX];
	long got = fg_datadir_get_info(dir, FG_CS_STATUS_FILE, buf, sizeof(buf));

	return got < 0 ? (int)got : fg_cs_status_parse(buf, (size_t)got, s, written);
}
