/* SPDX-License-Identifier: MIT */
/*
 * failpoint.c — the named kill points (failpoint.h): armed once at start
 * from $FG_FAILPOINT, then only counted and fired.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/failpoint.h"

bool fg_failpoint_on;

#define FP_NAME(name, what) name,
static const char *const fp_names[] = { FG_FAILPOINTS(FP_NAME) };
#undef FP_NAME

static char fp_armed[64];
static unsigned long fp_at;
static _Atomic unsigned long fp_passes;

int fg_failpoint_arm(const char *spec)
{
	const char *colon;
	size_t n;
	unsigned long at = 1;
	bool known = false;

	fg_failpoint_on = false;
	if (!spec || !*spec)
		return 0;
	colon = strchr(spec, ':');
	n = colon ? (size_t)(colon - spec) : strlen(spec);
	if (colon) {
		char *end;

		errno = 0;
		at = strtoul(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || at == 0)
			return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(fp_names) / sizeof(fp_names[0]); i++)
		known |= strlen(fp_names[i]) == n && memcmp(fp_names[i], spec, n) == 0;
	if (!known || n >= sizeof(fp_armed))
		return -EINVAL;
	memcpy(fp_armed, spec, n);
	fp_armed[n] = '\0';
	fp_at = at;
	atomic_store(&fp_passes, 0);
	fg_failpoint_on = true;
	return 0;
}

static void say(const char *a, const char *b, const char *c)
{
	/* write(2) only: the process may be anywhere, and is about to die */
	if (write(2, a, strlen(a)) < 0 || write(2, b, strlen(b)) < 0 ||
	    write(2, c, strlen(c)) < 0)
		return;
}

void fg_failpoint_hit(const char *name)
{
	if (strcmp(name, fp_armed) != 0 || atomic_fetch_add(&fp_passes, 1) + 1 != fp_at)
		return;
	say("failpoint ", name, " fired\n");
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

__attribute__((constructor)) static void fp_from_env(void)
{
	const char *spec = getenv("FG_FAILPOINT");

	if (spec && fg_failpoint_arm(spec) != 0) {
		say("FG_FAILPOINT=", spec, ": no such failpoint (NAME[:N], failpoint.h)\n");
		abort();
	}
}
