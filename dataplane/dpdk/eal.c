/* SPDX-License-Identifier: MIT */
/*
 * eal.c — the EAL: the argument list for rte_eal_init(), from the
 * configuration, and the EAL's stop.
 *
 *   floodgate <[dataplane] eal-args...> <port> [exception tap] [--lcores=...]
 *
 * The port is a PCI address ("0000:01:00.0", "01:00.0", optionally with
 * ",devargs") given as `-a PORT`, or any other device string given as
 * `--vdev=PORT` (net_tap, net_af_packet, net_pcap, ...): nothing here
 * knows one PMD from another. A PCI port with --no-pci in eal-args is a
 * contradiction, refused before (fg_config_refusals). With `exception-path tap` a second port,
 * `--vdev=net_tap_exc,iface=<exception-iface>`, is the exception path's.
 *
 * Lcores: when eal-args names none (-l, -c, --lcores), one main lcore
 * and `workers` worker lcores are laid over the CPUs this process may run
 * on, each free to float over all of them ("--lcores=(0-N)@(cpus)") —
 * what a test box or a laptop needs. A production box pins them in
 * eal-args instead (docs/dataplane.md).
 *
 * Stopping the EAL (dp_eal_stop), once the ports are closed. DPDK's
 * interrupt thread rebuilds its epoll set from every registered interrupt
 * source each time one is removed, reading each source's handle. DPDK
 * 22.11's net_memif never removes a server port's listening socket, and
 * that source's handle lives in DPDK's memory. rte_eal_cleanup() removes
 * the alarm source (so asks for a rebuild) and then unmaps DPDK's memory:
 * an interrupt thread that wakes late reads the stale handle from unmapped
 * memory, and floodgate dies of SIGSEGV at the very end of a clean stop
 * (88_nic_lacp, once in a loop of full runs; 71_dp_memif_exit every time, with the
 * thread held back by tests/preload/intr_late.so). Nothing at exit needs
 * the interrupt thread any more, so it is parked first:
 *  1. an eventfd of ours, readable from the start, is registered as an
 *     interrupt source with a handle in ordinary memory
 *     (RTE_INTR_INSTANCE_F_PRIVATE);
 *  2. the interrupt thread, which runs callbacks one at a time, calls
 *     intr_park() for it; intr_park() raises `intr_parked` and never
 *     returns, so the thread rebuilds nothing again and the process's
 *     exit ends it;
 *  3. the main thread waits for `intr_parked`, at most
 *     DP_INTR_PARK_WAIT_MS (a thread that never comes is logged, and the
 *     stop goes on as it did before), then calls rte_eal_cleanup().
 * Why nothing waits for the parked thread: alarms went with the ports, and
 * an unregister waits only for a source whose callback is running — ours,
 * which nobody unregisters. The eventfd and its handle are never freed:
 * the process is ending.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* rte_intr_instance_alloc() and its setters are "experimental" in DPDK
 * 22.11, and an opaque handle has no other constructor */
#define ALLOW_EXPERIMENTAL_API
#include <rte_eal.h>
#include <rte_interrupts.h>

#include "dp.h"
#include "floodgate/log.h"

static bool has_word(char **argv, unsigned n, const char *const *words)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; words[k]; k++) {
			size_t l = strlen(words[k]);

			/* a short option may carry its value glued ("-l0-3") */
			if (strncmp(argv[i], words[k], l) == 0 &&
			    (argv[i][l] == '\0' || argv[i][l] == '=' || l == 2))
				return true;
		}
	return false;
}

/* "(0-N)@(cpu,cpu-cpu,...)" over the CPUs of our affinity mask. */
static int lcores_arg(unsigned workers, char *out, size_t len)
{
	cpu_set_t set;
	size_t off;
	int first = -1, prev = -2, n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	n = snprintf(out, len, "--lcores=(0-%u)@(", workers);
	off = (size_t)n;
	for (int c = 0; c <= CPU_SETSIZE; c++) {
		bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);

		if (in && first < 0)
			first = c;
		if (!in && first >= 0) {
			n = prev > first ? snprintf(out + off, len - off, "%s%d-%d",
						    out[off - 1] == '(' ? "" : ",", first, prev)
					 : snprintf(out + off, len - off, "%s%d",
						    out[off - 1] == '(' ? "" : ",", first);
			if (n < 0 || (size_t)n >= len - off)
				return -ENOSPC;
			off += (size_t)n;
			first = -1;
		}
		if (in)
			prev = c;
	}
	if (off + 2 > len)
		return -ENOSPC;
	out[off++] = ')';
	out[off] = '\0';
	return 0;
}

static int push(char **argv, unsigned *n, unsigned max, char *s)
{
	if (*n >= max)
		return -E2BIG;
	argv[(*n)++] = s;
	return 0;
}

int dp_eal_args(const struct fg_config *cfg, const char *port, char *buf, size_t buflen,
		char **argv, unsigned max)
{
	static const char *const lcore_opts[] = { "-l", "-c", "--lcores", NULL };
	unsigned n = 0;
	size_t used;
	int k, rc;

	if (buflen < 16 || max < 4)
		return -ENOSPC;
	snprintf(buf, buflen, "floodgate");
	argv[n++] = buf;
	used = strlen(buf) + 1;
	k = fg_config_split_args(cfg->eal_args, buf + used, buflen - used, argv + n, max - n - 4);
	if (k < 0)
		return k;
	n += (unsigned)k;
	/* the words were copied into buf: find where they end */
	if (k > 0)
		used = (size_t)(argv[n - 1] - buf) + strlen(argv[n - 1]) + 1;
	rc = snprintf(buf + used, buflen - used, "%s%s", fg_config_port_is_pci(port) ? "-a" : "--vdev=",
		      fg_config_port_is_pci(port) ? "" : port);
	if (rc < 0 || (size_t)rc >= buflen - used)
		return -ENOSPC;
	if ((rc = push(argv, &n, max, buf + used)) != 0)
		return rc;
	used += strlen(buf + used) + 1;
	if (fg_config_port_is_pci(port)) {
		if ((size_t)snprintf(buf + used, buflen - used, "%s", port) >= buflen - used)
			return -ENOSPC;
		if ((rc = push(argv, &n, max, buf + used)) != 0)
			return rc;
		used += strlen(buf + used) + 1;
	}
	if (cfg->dp_exception == FG_EXCEPTION_TAP && cfg->dp_mode == FG_DATAPLANE_ACTIVE) {
		rc = snprintf(buf + used, buflen - used, "--vdev=%s,iface=%s", DP_EXC_PORT,
			      cfg->dp_exception_iface);
		if (rc < 0 || (size_t)rc >= buflen - used)
			return -ENOSPC;
		if ((rc = push(argv, &n, max, buf + used)) != 0)
			return rc;
		used += strlen(buf + used) + 1;
	}
	if (!has_word(argv + 1, n - 1, lcore_opts)) {
		rc = lcores_arg(cfg->workers, buf + used, buflen - used);
		if (rc != 0)
			return rc;
		if ((rc = push(argv, &n, max, buf + used)) != 0)
			return rc;
	}
	if (n >= max)
		return -E2BIG;
	argv[n] = NULL;
	return (int)n;
}

/* ------------------------------------------------------------ the stop */

/* how long the main thread waits for the interrupt thread to park: it
 * serves one callback at a time, and none blocks for long */
#define DP_INTR_PARK_WAIT_MS 2000
#define DP_INTR_PARK_POLL_NS 1000000L

static atomic_bool intr_parked;
/* never freed, never read: kept reachable (volatile, so that the store
 * stays) for LeakSanitizer, whose leak check runs at exit */
static struct rte_intr_handle *volatile intr_park_handle;

static void intr_park(void *arg)
{
	(void)arg;
	atomic_store_explicit(&intr_parked, true, memory_order_release);
	for (;;)
		pause();
}

/* Steps 1-2: the source; false if DPDK would not take it. */
static bool intr_park_ask(void)
{
	struct rte_intr_handle *h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	int fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);

	if (h && fd >= 0 && rte_intr_fd_set(h, fd) == 0 &&
	    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0 &&
	    rte_intr_callback_register(h, intr_park, NULL) == 0) {
		intr_park_handle = h;
		return true;
	}
	if (fd >= 0)
		close(fd);
	rte_intr_instance_free(h);
	return false;
}

void dp_eal_stop(void)
{
	const struct timespec step = { 0, DP_INTR_PARK_POLL_NS };
	bool asked = intr_park_ask();

	/* step 3 */
	for (unsigned waited = 0; asked && !atomic_load_explicit(&intr_parked, memory_order_acquire) &&
	     waited < DP_INTR_PARK_WAIT_MS; waited++)
		nanosleep(&step, NULL);
	if (!asked)
		FG_LOG_WARN(DP, "stopping the EAL: its interrupt thread could not be asked to "
			    "park; stopping anyway");
	else if (!atomic_load_explicit(&intr_parked, memory_order_acquire))
		FG_LOG_WARN(DP, "stopping the EAL: its interrupt thread did not park within "
			    "%d ms; stopping anyway", DP_INTR_PARK_WAIT_MS);
	rte_eal_cleanup();
}
