/* SPDX-License-Identifier: MIT */
/*
 * fuzz_foreign.c — a table of INN hashes (innhist.h, the foreign table)
 * from arbitrary bytes: written to a file and mapped, with and without
 * the contents' checksum. An input whose first octet is '!' is instead a
 * list of IDs (one a line): a table is built from them, and every ID must
 * then be found. Whatever the bytes, a
 * mapped table answers lookups without reading outside its mapping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/innhist.h"

static char path[64];

static void probe(const char *p)
{
	struct fg_foreign *f;
	const char *why;
	uint8_t h[16];
	int err;

	for (int crc = 0; crc < 2; crc++) {
		f = fg_foreign_open(p, crc, &err, &why);
		if (!f) {
			if (err != -EINVAL && err != -ENOENT)
				abort();
			continue;
		}
		for (int i = 0; i < 64; i++) {
			memset(h, i * 4, sizeof(h));
			(void)fg_foreign_has(f, h);
		}
		(void)fg_foreign_has_id(f, "<a@b>", 5, 0);
		fg_foreign_close(f);
	}
}

static void from_ids(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1, *end = (const char *)data + size;
	uint8_t (*h)[16] = malloc((size + 1) * 16);
	struct fg_foreign *f;
	const char *why;
	size_t n = 0, m;
	int err;

	for (const char *p = s; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (fg_inn_hash_msgid(p, len, h[n]))
			n++;
		p += len + (nl != NULL);
	}
	if (fg_foreign_write(path, h, n, 1, 2, &m) != 0)
		abort();
	f = fg_foreign_open(path, true, &err, &why);
	if (!f)
		abort();
	for (const char *p = s; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len <= FG_INN_ID_MAX && !fg_foreign_has_id(f, p, len, 1))
			abort();
		p += len + (nl != NULL);
	}
	fg_foreign_close(f);
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *fp;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz_foreign.%d.fgf", (int)getpid());
	if (size && data[0] == '!') {
		from_ids(data, size);
	} else {
		fp = fopen(path, "wb");
		if (!fp)
			abort();
		if (size && fwrite(data, 1, size, fp) != size)
			abort();
		fclose(fp);
		probe(path);
	}
	unlink(path);
	return 0;
}
