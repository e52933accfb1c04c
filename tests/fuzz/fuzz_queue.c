/* SPDX-License-Identifier: MIT */
/*
 * fuzz_queue.c — libFuzzer target for the outbound queue's readers: the
 * segment scan (what the writer's recovery, floodctld's restore and the
 * status reader run on files a crash or a disk may have damaged), the
 * cursor/head slot picker, and the writer's recovery itself.
 *
 * Input: a segment image (version 1 or 2). If the low bit of its header's first reserved
 * octet (offset 48) is set, every checksum in a copy is recomputed first (segment header, then each record as far as
 * its lengths allow), so the fuzzer can explore the structure behind the
 * checksums rather than only fail them. Then:
 *  - the scan must hand out records inside the image, at increasing
 *    positions, with checked IDs, and end inside the image (at its end
 *    when not torn);
 *  - the image is written as the only segment of a scratch directory and
 *    the queue is opened on it: recovery must count the same sound
 *    records, and leave a file that scans clean to the same end; damage
 *    never keeps it from opening (a bad header is set aside), while a
 *    sound header of a format version this build does not read makes it
 *    refuse, the file untouched (docs/compat.md);
 *  - restore re-inserts the records' IDs into a small history table.
 * A violation aborts, so the fuzzer reports it as a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/crc32c.h"
#include "floodgate/log.h"
#include "floodgate/qwriter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[64];

/* The recovery's syncs prove nothing here and cost most of the time: this
 * binary's own fsync and fdatasync (the queue code links against these). */
int fsync(int fd)
{
	(void)fd;
	return 0;
}

int fdatasync(int fd)
{
	(void)fd;
	return 0;
}
static uint8_t hmem[1 << 16] __attribute__((aligned(64)));

static void quiet(enum fg_log_level level, const char *component, const char *msg, void *arg)
{
	(void)level;
	(void)component;
	(void)msg;
	(void)arg;
}

/* Leave nothing behind in /tmp (each input's files are removed after it). */
static void cleanup(void)
{
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	strcpy(dir, "/tmp/fgq-fuzz-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	fg_log_set_sink(quiet, NULL);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Recompute the checksums a well-behaved writer would have written. */
static void reseal(uint8_t *b, size_t len)
{
	size_t off = FG_QUEUE_SEG_HEADER;

	if (len < FG_QUEUE_SEG_HEADER)
		return;
	put32(b + 60, fg_crc32c(0, b, 60));
	while (off + FG_QUEUE_REC_HEADER <= len) {
		uint16_t il;
		uint32_t al, crc, magic, hl;
		uint64_t size;

		memcpy(&magic, b + off, 4);
		memcpy(&al, b + off + 24, 4);
		memcpy(&il, b + off + 28, 2);
		/* a version-1 record has no route; a version-2 one says its length */
		hl = magic == FG_QUEUE_REC_MAGIC_V1 ? FG_QUEUE_REC_HEADER_V1 :
		     FG_QUEUE_REC_HEADER + 8u * (b[off + 32] <= FG_FEEDS_MAX ? b[off + 32] : 0u);
		size = fg_queue_rec_size(hl, il, al);
		if (size > len - off)
			return;
		crc = fg_crc32c(0, b + off + 8, hl - 8);
		crc = fg_crc32c(crc, b + off + hl, (size_t)il + al);
		put32(b + off + 4, crc);
		off += size;
	}
}

struct walk {
	const uint8_t *buf;
	size_t size;
	uint64_t base, next_pos, n;
};

static int check(void *arg, const struct fg_queue_rec *r, uint64_t pos)
{
	struct walk *w = arg;
	const uint8_t *end = w->buf + w->size;

	if (pos != w->next_pos || r->id_len < FG_QUEUE_ID_MIN || r->id_len > FG_QUEUE_ID_MAX ||
	    (const uint8_t *)r->id < w->buf || r->art + r->art_len > end ||
	    r->id[0] != '<' || r->id[r->id_len - 1] != '>' || r->size % 8)
		abort();
	w->next_pos = pos + r->size;
	w->n++;
	return 0;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

/* The file holds exactly these octets. */
static bool same_file(const char *path, const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 && b ? read(fd, b, size + 1) : -1;
	bool same = n == (ssize_t)size && (size == 0 || memcmp(b, data, size) == 0);

	if (fd >= 0)
		close(fd);
	free(b);
	return same;
}

static void empty_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		abort();
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && unlinkat(dirfd(d), e->d_name, 0) != 0)
			abort();
	closedir(d);
}

/* Restore from what recovery left: at most one insert per sound record. */
static void replay(uint64_t records)
{
	struct fg_history_params hp = { .capacity = 1000, .alarm_load_pct = 90,
					.now = 1700000000 };
	struct fg_history *h = fg_history_create(hmem, sizeof(hmem), &hp);
	int64_t n;

	if (!h)
		abort();
	n = fg_queue_replay(dir, h, 0, 1700000000);
	if (n < 0 || (uint64_t)n > records)
		abort();
	fg_history_detach(h);
}

/* Recovery on the image as the only segment: the same sound records. */
static void recover(const uint8_t *data, size_t size, const struct fg_queue_scan *sc, int rc)
{
	struct fg_queue_params p = { .dir = dir };
	struct fg_queue_open_info info;
	struct fg_queue *q;
	char path[256];
	int err;

	fg_queue_segment_path(dir, 0, path, sizeof(path));
	write_file(path, data, size);
	q = fg_queue_open(&p, &info, &err);
	if (rc == -EPROTONOSUPPORT) {
		/* a sound header of a version this build does not read is not
		 * damage: the queue does not open, and the file is left as it
		 * was (docs/compat.md, rule 2) */
		if (q || err != -EPROTONOSUPPORT || !same_file(path, data, size))
			abort();
		empty_dir();
		return;
	}
	/* any damage: the queue opens (a torn tail cut, a bad header set aside) */
	if (!q)
		abort();
	if (rc == 0 && (info.records != sc->records || info.torn_cut != (sc->torn ? 1u : 0u) ||
			info.end.recno != sc->next_recno))
		abort();
	if (rc != 0 && (info.segments != 0 || info.set_aside != (size ? 1u : 0u)))
		abort();
	fg_queue_close(q);
	replay(rc == 0 ? sc->records : 0);
	empty_dir();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	struct fg_queue_scan sc;
	struct fg_queue_slot slot;
	struct walk w = { 0 };
	int rc;

	if (!b)
		abort();
	memcpy(b, data, size);
	if (size > 48 && (b[48] & 1))
		reseal(b, size);
	w.buf = b;
	w.size = size;
	if (size >= FG_QUEUE_SEG_HEADER)
		memcpy(&w.next_pos, b + 24, 8);
	rc = fg_queue_seg_scan(b, size, check, &w, &sc);
	if (rc == 0 && (w.n != sc.records || sc.end > size || (sc.torn && !sc.why) ||
			(!sc.torn && sc.end != size)))
		abort();
	fg_queue_slots_pick(b, size, FG_QUEUE_CURSOR_MAGIC, &slot);
	fg_queue_slots_pick(b, size, FG_QUEUE_HEAD_MAGIC, &slot);
	if (size <= (1u << 20))
		recover(b, size, &sc, rc);
	free(b);
	return 0;
}
