/* SPDX-License-Identifier: MIT */
/*
 * warmfile.c — where the warm-up period ends: <data-dir>/warmup.fgw, one
 * 64-octet checksummed slot (queue.h's slot layout, magic "FGWARMUP", the
 * end in Unix seconds as its position, its version at 48). Written to warmup.fgw.tmp, synced,
 * renamed, the directory synced: a crash leaves the old end or the new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/datadir.h"
#include "floodgate/log.h"
#include "floodgate/queue.h"
#include "floodgate/warmup.h"

static int path_of(const char *dir, const char *suffix, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/warmup.fgw%s", dir, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int fg_warmup_begin(const char *dir, fg_time_t until)
{
	struct fg_queue_slot s = { .seq = 1, .c = { (uint64_t)until, 0 }, .updated = time(NULL) };
	uint8_t buf[FG_QUEUE_SLOT];
	char path[PATH_MAX];
	int rc;

	if ((rc = path_of(dir, "", path, sizeof(path))) != 0)
		return rc;
	fg_queue_slot_encode(buf, FG_WARMUP_MAGIC, &s);
	return fg_datadir_replace(path, 0600, &(struct iovec){ buf, sizeof(buf) }, 1);
}

int fg_warmup_until(const char *dir, fg_time_t *until)
{
	uint8_t buf[FG_QUEUE_SLOT];
	struct fg_queue_slot s;
	char path[PATH_MAX];
	int fd, rc;

	if ((rc = path_of(dir, "", path, sizeof(path))) != 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	rc = fg_datadir_pread_all(fd, buf, sizeof(buf), 0);
	close(fd);
	if (rc == 0)
		rc = fg_queue_slot_decode(buf, FG_WARMUP_MAGIC, &s);
	if (rc == -EPROTONOSUPPORT) {
		FG_LOG_ERR("relay", "%s: %s (docs/compat.md)", path,
			   fg_datadir_version_why("warm-up file format", s.version, 0,
						  FG_QUEUE_SLOT_VERSION));
		return rc;
	}
	if (rc != 0)
		return -ENOENT;
	*until = (fg_time_t)s.c.pos;
	return 0;
}
