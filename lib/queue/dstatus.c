/* SPDX-License-Identifier: MIT */
/*
 * dstatus.c — the downstreams' status file (dstatus.h has its format):
 * written by the dataplane, read by floodctld. One field table drives the
 * writer, the parser and every output built on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/dstatus.h"

#define DS_FILE_MAX (64u << 10)	/* FG_CONFIG_MAX_DOWNSTREAMS lines of < 1 KiB */

const struct fg_status_field fg_ds_fields[] = {
#define FG_DS_ROW(f, k, src, col, w, h) FG_STATUS_COL(struct fg_ds_status, f, k, h, col, w)
	FG_DS_FIELDS(FG_DS_ROW)
#undef FG_DS_ROW
};
const unsigned fg_ds_n_fields = FG_ARRAY_SIZE(fg_ds_fields);

/* ------------------------------------------------------------ write */

int fg_ds_status_write(const char *dir, fg_time_t now, const struct fg_ds_status *s,
		       unsigned n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -errno;
	fprintf(f, "%s %d %lld\n", FG_DS_STATUS_MAGIC, FG_DS_STATUS_VERSION, (long long)now);
	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "%s %s", s[i].name, s[i].id);
		for (unsigned k = 0; k < fg_ds_n_fields; k++)
			fprintf(f, " %s=%llu", fg_ds_fields[k].name,
				(unsigned long long)fg_ds_value(&s[i], &fg_ds_fields[k]));
		fputc('\n', f);
	}
	rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc == 0)
		rc = fg_datadir_put_info(dir, FG_DS_STATUS_FILE, text, len);
	free(text);
	return rc;
}

/* ------------------------------------------------------------ parse */

/* The next blank-separated word of [*p, end) into out (NUL-terminated,
 * at most cap - 1 octets); false at the end, for a longer word, and for
 * one holding a NUL octet (as a C string it would read as another word:
 * "\0\0x" as a name would be "" and written back as nothing). */
static bool word(const char **p, const char *end, char *out, size_t cap)
{
	const char *s = *p, *e;

	while (s < end && *s == ' ')
		s++;
	e = s;
	while (e < end && *e != ' ')
		e++;
	*p = e;
	if (e == s || (size_t)(e - s) >= cap || memchr(s, '\0', (size_t)(e - s)))
		return false;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = '\0';
	return true;
}

/* A name as the configuration allows it. */
static bool name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
		    !strchr("-_.", *s))
			return false;
	return true;
}

/* "key=digits" into the field it names (unknown keys are ignored); false
 * when it is not of that shape. */
static bool pair(const char *w, struct fg_ds_status *s)
{
	const char *eq = strchr(w, '=');
	unsigned long long v;
	char *end;

	if (!eq || eq == w || eq[1] < '0' || eq[1] > '9')
		return false;
	errno = 0;
	v = strtoull(eq + 1, &end, 10);
	if (*end || errno)
		return false;
	fg_status_set(s, fg_ds_fields, fg_ds_n_fields, w, (size_t)(eq - w), v);
	return true;
}

/* One downstream line [p, end): true and *s when it is of the shape. */
static bool line(const char *p, const char *end, struct fg_ds_status *s)
{
	char w[96];

	memset(s, 0, sizeof(*s));
	if (!word(&p, end, s->name, sizeof(s->name)) || !name_ok(s->name) ||
	    !word(&p, end, s->id, sizeof(s->id)) || !name_ok(s->id))
		return false;
	for (;;) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			return true;
		if (!word(&p, end, w, sizeof(w)) || !pair(w, s))
			return false;
	}
}

int fg_ds_status_parse(const char *text, size_t len, struct fg_ds_status *s, unsigned max,
		       unsigned *n, fg_time_t *written)
{
	const char *p = text, *end = text + len, *nl;
	char magic[32], ver[16], when[32];
	long long t;
	char *e;

	*n = 0;
	nl = memchr(p, '\n', len);
	if (!nl || !word(&p, nl, magic, sizeof(magic)) || strcmp(magic, FG_DS_STATUS_MAGIC) != 0 ||
	    !word(&p, nl, ver, sizeof(ver)) || strcmp(ver, "1") != 0 ||
	    !word(&p, nl, when, sizeof(when)))
		return -EINVAL;
	errno = 0;
	t = strtoll(when, &e, 10);
	if (*e || errno)
		return -EINVAL;
	*written = (fg_time_t)t;
	for (p = nl + 1; p < end && *n < max; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;		/* a line without its end: cut short */
		if (line(p, nl, &s[*n]))
			(*n)++;
	}
	return 0;
}

int fg_ds_status_read(const char *dir, struct fg_ds_status *s, unsigned max, unsigned *n,
		      fg_time_t *written)
{
	char *buf = malloc(DS_FILE_MAX);
	long got;
	int rc;

	*n = 0;
	if (!buf)
		return -ENOMEM;
	got = fg_datadir_get_info(dir, FG_DS_STATUS_FILE, buf, DS_FILE_MAX);
	rc = got < 0 ? (int)got : fg_ds_status_parse(buf, (size_t)got, s, max, n, written);
	free(buf);
	return rc;
}
