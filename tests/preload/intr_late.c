/* SPDX-License-Identifier: MIT */
/*
 * intr_late.c — an LD_PRELOAD shim that holds DPDK's interrupt thread back,
 * so that a race against it at exit happens every time instead of once in
 * hundreds of runs.
 *
 * DPDK's interrupt thread ("eal-intr-thread") rebuilds its epoll set from
 * every registered interrupt source each time one is added or removed, and
 * the rebuild starts with epoll_create(). This shim delays every such call
 * made on that thread, and holds the process at exit (a destructor, run
 * after main has returned), so that a rebuild asked for during
 * rte_eal_cleanup() runs after DPDK's memory is unmapped and before the
 * process is gone: the window in which a stale source crashes the thread
 * (dataplane/dpdk/eal.c, "Stopping the EAL").
 *
 * ENVIRONMENT
 *   FG_INTR_LATE_MS   the delay of each rebuild, in ms (default 50)
 *   FG_INTR_HOLD_MS   how long the process is held at exit, in ms
 *                     (default 300)
 * To stderr: "intr_late: rebuild held N ms" for each delayed rebuild, and
 * "intr_late: exit held N ms" / "intr_late: exit released" around the hold
 * (the second line proves the process lived through the window).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>

#define INTR_THREAD_PREFIX "eal-intr"	/* rte_ctrl_thread_create's name */
#define DEFAULT_LATE_MS 50
#define DEFAULT_HOLD_MS 300

static unsigned env_ms(const char *name, unsigned dflt)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int epoll_create(int size)
{
	static int (*real)(int);
	char name[16] = "";

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "epoll_create");
	if (prctl(PR_GET_NAME, name) == 0 &&
	    strncmp(name, INTR_THREAD_PREFIX, strlen(INTR_THREAD_PREFIX)) == 0) {
		unsigned ms = env_ms("FG_INTR_LATE_MS", DEFAULT_LATE_MS);

		fprintf(stderr, "intr_late: rebuild held %u ms\n", ms);
		sleep_ms(ms);
	}
	return real(size);
}

__attribute__((destructor)) static void hold_exit(void)
{
	unsigned ms = env_ms("FG_INTR_HOLD_MS", DEFAULT_HOLD_MS);

	fprintf(stderr, "intr_late: exit held %u ms\n", ms);
	sleep_ms(ms);
	fprintf(stderr, "intr_late: exit released\n");
}
