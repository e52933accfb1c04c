/* SPDX-License-Identifier: MIT */
/*
 * eal.c — the argument list for rte_eal_init(), from the configuration.
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
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

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
