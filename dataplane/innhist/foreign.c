/* SPDX-License-Identifier: MIT */
/*
 * foreign.c — the table of INN's Message-ID hashes (innhist.h has the file
 * layout). Built here (fg_foreign_build: the image, no file I/O), written
 * once by `floodctl import-inn-history` through lib/datadir's durable
 * replace (fg_foreign_write), mapped read-only by every engine, consulted
 * only when floodgate's own history misses.
 *
 * Why a sorted array with a direct index: INN's keys are MD5s, uniform,
 * so the top k bits of a hash name its place to within a few entries. k
 * is chosen so that 2^k is about n/4: a lookup reads one index line and
 * one or two lines of hashes — two cache misses, no pointer chasing —
 * and the table costs 16 octets an ID plus 1 for the index. The file is
 * never changed in place: a new import writes a new file and renames it
 * over the old one; an engine maps the new one at its next check.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floodgate/crc32c.h"
#include "floodgate/innhist.h"

struct fg_foreign {
	uint8_t *map;
	size_t map_len;
	const uint8_t (*h)[FG_MD5_LEN];
	const uint32_t *index;	/* 2^k + 1 */
	uint64_t n;
	unsigned k;
	fg_time_t imported, until;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The top k bits of a hash (big-endian: memcmp order is numeric order). */
static inline uint32_t top(const uint8_t *h, unsigned k)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v = v << 8 | h[i];
	return k ? (uint32_t)(v >> (64 - k)) : 0;
}

static unsigned bits_for(uint64_t n)
{
	unsigned k = 0;

	while (k < 32 && (4ull << k) < n)
		k++;
	return k;
}

static int cmp16(const void *a, const void *b)
{
	return memcmp(a, b, FG_MD5_LEN);
}

int fg_foreign_build(uint8_t (*hashes)[FG_MD5_LEN], size_t n, fg_time_t imported,
		     fg_time_t until, uint8_t hdr[FG_FOREIGN_HEADER], uint32_t **index_out,
		     size_t *nidx_out, size_t *m_out)
{
	uint32_t *index, crc;
	size_t m = 0, nidx;
	unsigned k;

	if (n > FG_FOREIGN_MAX)
		return -E2BIG;
	qsort(hashes, n, FG_MD5_LEN, cmp16);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || memcmp(hashes[m - 1], hashes[i], FG_MD5_LEN) != 0)
			memmove(hashes[m++], hashes[i], FG_MD5_LEN);
	k = bits_for(m);
	nidx = ((size_t)1 << k) + 1;
	index = malloc(nidx * sizeof(*index));
	if (!index)
		return -ENOMEM;
	for (size_t b = 0, i = 0; b < nidx; b++) {
		while (i < m && top(hashes[i], k) < b)
			i++;
		put32((uint8_t *)&index[b], (uint32_t)i);
	}
	crc = fg_crc32c(0, hashes, m * FG_MD5_LEN);
	crc = fg_crc32c(crc, index, nidx * sizeof(*index));
	memset(hdr, 0, FG_FOREIGN_HEADER);
	memcpy(hdr, FG_FOREIGN_MAGIC, 8);
	put32(hdr + 8, FG_FOREIGN_VERSION);
	put32(hdr + 12, k);
	put64(hdr + 16, m);
	put64(hdr + 24, (uint64_t)imported);
	put64(hdr + 32, (uint64_t)until);
	put32(hdr + 40, crc);
	put32(hdr + 44, fg_crc32c(0, hdr, 44));
	*index_out = index;
	*nidx_out = nidx;
	*m_out = m;
	return 0;
}

#define REFUSE(msg) do { *why = (msg); rc = -EINVAL; goto out_unmap; } while (0)

struct fg_foreign *fg_foreign_open(const char *path, bool check_crc, int *err, const char **why)
{
	struct fg_foreign *f = NULL;
	uint8_t *map = MAP_FAILED;
	struct stat st;
	uint64_t n, need;
	unsigned k;
	int fd, rc = 0;

	*why = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno == ENOENT ? -ENOENT : -errno;
		*why = "cannot be opened";
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		*why = "cannot be read";
		goto out_close;
	}
	if ((uint64_t)st.st_size < FG_FOREIGN_HEADER) {
		rc = -EINVAL;
		*why = "shorter than its header";
		goto out_close;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		*why = "cannot be mapped";
		goto out_close;
	}
	if (memcmp(map, FG_FOREIGN_MAGIC, 8) != 0)
		REFUSE("not a table of INN hashes (magic)");
	if (get32(map + 44) != fg_crc32c(0, map, 44))
		REFUSE("its header is damaged (checksum)");
	if (get32(map + 8) != FG_FOREIGN_VERSION)
		REFUSE("another version of the format");
	k = get32(map + 12);
	n = get64(map + 16);
	if (k > 32 || n > FG_FOREIGN_MAX)
		REFUSE("sizes out of range");
	need = FG_FOREIGN_HEADER + n * FG_MD5_LEN + (((uint64_t)1 << k) + 1) * 4;
	if (need != (uint64_t)st.st_size)
		REFUSE("its length does not match its header");
	if (check_crc && get32(map + 40) != fg_crc32c(0, map + FG_FOREIGN_HEADER,
						      (size_t)st.st_size - FG_FOREIGN_HEADER))
		REFUSE("its contents are damaged (checksum)");
	f = calloc(1, sizeof(*f));
	if (!f) {
		rc = -ENOMEM;
		goto out_unmap;
	}
	f->map = map;
	f->map_len = (size_t)st.st_size;
	f->h = (const uint8_t (*)[FG_MD5_LEN])(map + FG_FOREIGN_HEADER);
	f->index = (const uint32_t *)(map + FG_FOREIGN_HEADER + n * FG_MD5_LEN);
	f->n = n;
	f->k = k;
	f->imported = (fg_time_t)get64(map + 24);
	f->until = (fg_time_t)get64(map + 32);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->mtime = st.st_mtim;
	close(fd);
	return f;
out_unmap:
	munmap(map, (size_t)st.st_size);
out_close:
	close(fd);
	*err = rc;
	return NULL;
}

void fg_foreign_close(struct fg_foreign *f)
{
	if (!f)
		return;
	munmap(f->map, f->map_len);
	free(f);
}

bool fg_foreign_has(const struct fg_foreign *f, const uint8_t hash[FG_MD5_LEN])
{
	uint32_t b = top(hash, f->k);
	uint64_t lo = get32((const uint8_t *)&f->index[b]);
	uint64_t hi = get32((const uint8_t *)&f->index[b + 1]);

	/* clamped: a damaged index answers wrongly, never reads outside */
	if (hi > f->n)
		hi = f->n;
	if (lo > hi)
		lo = hi;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int c = memcmp(f->h[mid], hash, FG_MD5_LEN);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool fg_foreign_has_id(const struct fg_foreign *f, const char *id, size_t len, fg_time_t now)
{
	uint8_t h[FG_MD5_LEN];

	if (!f || now >= f->until || !fg_inn_hash_msgid(id, len, h))
		return false;
	return fg_foreign_has(f, h);
}

uint64_t fg_foreign_count(const struct fg_foreign *f)
{
	return f->n;
}

fg_time_t fg_foreign_imported(const struct fg_foreign *f)
{
	return f->imported;
}

fg_time_t fg_foreign_until(const struct fg_foreign *f)
{
	return f->until;
}

bool fg_foreign_same_file(const struct fg_foreign *f, const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino &&
	       st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec == f->mtime.tv_nsec;
}
