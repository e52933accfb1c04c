/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cstatus.c — the cluster's status file (cstatus.h) from arbitrary
 * bytes: floodctld reads what a dataplane (of any build) left in the data
 * directory. Beyond "no crash, no overread": a parse that succeeds, written
 * back and parsed again, gives the same fields and time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/cstatus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, FG_CS_STATUS_FILE);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_cluster_status s, back;
	fg_time_t t, t2;

	if (fg_cs_status_parse((const char *)data, size, &s, &t) != 0)
		return 0;
	if (!dir[0]) {
		strcpy(dir, "/tmp/fgcs-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	if (fg_cs_status_write(dir, t, &s) != 0 || fg_cs_status_read(dir, &back, &t2) != 0 ||
	    t2 != t || memcmp(&s, &back, sizeof(s)) != 0)
		abort();
	return 0;
}
