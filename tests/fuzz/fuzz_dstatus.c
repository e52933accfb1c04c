/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dstatus.c — the downstreams' status file (dstatus.h) from arbitrary
 * bytes: floodctld reads what a dataplane (of any build) left in the data
 * directory. Beyond "no crash, no overread": a parse that succeeds gives
 * at most `max` entries whose names are the configuration's shape, and
 * writing them back and parsing that gives the same entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/dstatus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool shaped(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
		    !strchr("-_.", *s))
			return false;
	return true;
}

static char dir[64];

/* Leave nothing behind in /tmp. */
static void cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, FG_DS_STATUS_FILE);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fg_ds_status s[FG_CONFIG_MAX_DOWNSTREAMS], back[FG_CONFIG_MAX_DOWNSTREAMS];
	fg_time_t t, t2;
	unsigned n, n2;

	if (fg_ds_status_parse((const char *)data, size, s, FG_CONFIG_MAX_DOWNSTREAMS, &n, &t) != 0)
		return 0;
	if (n > FG_CONFIG_MAX_DOWNSTREAMS)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (!shaped(s[i].name) || !shaped(s[i].id))
			abort();
	if (!dir[0]) {
		strcpy(dir, "/tmp/fgds-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	if (fg_ds_status_write(dir, t, s, n) != 0 ||
	    fg_ds_status_read(dir, back, FG_CONFIG_MAX_DOWNSTREAMS, &n2, &t2) != 0 || n2 != n ||
	    t2 != t || memcmp(back, s, n * sizeof(s[0])) != 0)
		abort();
	return 0;
}
