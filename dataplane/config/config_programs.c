/* SPDX-License-Identifier: MIT */
/*
 * config_programs.c — what each program refuses at start in a
 * configuration that loaded: the checks that depend on the file alone, so
 * that `floodctl config --check --for PROGRAM` can say them before the
 * program runs, with the words the program logs (it calls the same
 * function). Refusals that depend on the host (hugepages, the port's
 * probe, the CPUs, floodctld's region) are named, not checked.
 *
 * floodgate, active mode: every [site] listen endpoint must be one the
 * port receives: a specific address must be one of [dataplane] address,
 * and a wildcard (0.0.0.0, ::) needs an address of its family there;
 * otherwise the dataplane would run and never see that endpoint's
 * connections. In either mode, a PCI port ([dataplane] port, or
 * floodgate's --port in its place) with --no-pci in eal-args: the EAL
 * would never probe it, and an eal-args -l LIST or -c MASK with fewer
 * lcores than the workers and the main lcore (without them, or with
 * --lcores, the lcores depend on the host: not checked). floodgate-host and floodctld refuse nothing
 * beyond loading.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config_int.h"

#define EAL_WORDS_MAX 64	/* eal-args words floodgate takes (its EAL_ARGV_MAX) */

static const char *const program_names[] = {
	[FG_PROGRAM_FLOODCTLD] = "floodctld",
	[FG_PROGRAM_FLOODGATE] = "floodgate",
	[FG_PROGRAM_FLOODGATE_HOST] = "floodgate-host",
};

int fg_config_program_parse(const char *name, enum fg_program *out)
{
	for (unsigned i = 0; i < FG_ARRAY_SIZE(program_names); i++) {
		if (!strcmp(name, program_names[i])) {
			*out = (enum fg_program)i;
			return 0;
		}
	}
	return -EINVAL;
}

static bool is_unspecified(const struct fg_endpoint *ep)
{
	static const uint8_t zero[16];

	return !memcmp(ep->addr, zero, ep->family == AF_INET ? 4 : 16);
}

static bool receives(const struct fg_prefix *a, const struct fg_endpoint *ep)
{
	return a->family == ep->family &&
	       (is_unspecified(ep) || !memcmp(a->addr, ep->addr, a->family == AF_INET ? 4 : 16));
}

/* The [dataplane] address (or VLAN address) a listen endpoint is received
 * on, if any. */
static bool listen_reachable(const struct fg_config *cfg, const struct fg_endpoint *ep)
{
	for (unsigned i = 0; i < cfg->n_dp_addr; i++)
		if (receives(&cfg->dp_addr[i], ep))
			return true;
	for (unsigned i = 0; i < cfg->n_dp_vlan; i++)
		if (cfg->dp_vlan[i].addr.family && receives(&cfg->dp_vlan[i].addr, ep))
			return true;
	return false;
}

bool fg_config_port_is_pci(const char *port)
{
	unsigned d, b, s, f;
	char tail;
	int n = 0;

	/* domain:bus:dev.fn or bus:dev.fn, then nothing or ",devargs" */
	if (sscanf(port, "%4x:%2x:%2x.%1u%n", &d, &b, &s, &f, &n) == 4 ||
	    sscanf(port, "%2x:%2x.%1u%n", &b, &s, &f, &n) == 3) {
		tail = port[n];
		return tail == '\0' || tail == ',';
	}
	return false;
}

/* eal-args has the word `word` (split as floodgate splits them). */
static bool eal_has_word(const struct fg_config *cfg, const char *word)
{
	char buf[sizeof(cfg->eal_args) + 64], *argv[EAL_WORDS_MAX];
	int k = fg_config_split_args(cfg->eal_args, buf, sizeof(buf), argv,
				     FG_ARRAY_SIZE(argv));

	for (int i = 0; i < k; i++)
		if (!strcmp(argv[i], word))
			return true;
	return false;
}

/* The lcores an EAL core list names ("0-3,5": 5), or -1 when it is not
 * one (the EAL will refuse it itself). */
static int list_count(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		n += (int)(b - a + 1);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return n;
}

/* The lcores eal-args gives by -l LIST or -c MASK; -1 when it gives them
 * otherwise (--lcores) or not at all (then they depend on the host). */
static int eal_lcores(const struct fg_config *cfg)
{
	char buf[sizeof(cfg->eal_args) + 64], *argv[EAL_WORDS_MAX];
	int k = fg_config_split_args(cfg->eal_args, buf, sizeof(buf), argv,
				     FG_ARRAY_SIZE(argv));

	for (int i = 0; i < k; i++) {
		const char *v = argv[i][2] ? argv[i] + 2 : (i + 1 < k ? argv[i + 1] : "");

		if (!strncmp(argv[i], "-l", 2))
			return list_count(v);
		if (!strncmp(argv[i], "-c", 2)) {
			char *end;
			unsigned long long m = strtoull(v, &end, 16);

			return end != v && !*end ? __builtin_popcountll(m) : -1;
		}
	}
	return -1;
}

/* floodgate in either mode: the port the EAL is to probe, and the lcores
 * eal-args gives (a main lcore and one per worker), as eal.c words them. */
static unsigned eal_refusals(const struct fg_config *cfg, char (*why)[FG_CONFIG_REFUSAL_MAX],
			      unsigned max)
{
	int lcores = eal_lcores(cfg);
	unsigned n = 0;

	if (fg_config_port_is_pci(cfg->port) && eal_has_word(cfg, "--no-pci")) {
		if (n < max)
			snprintf(why[n], FG_CONFIG_REFUSAL_MAX,
				 "[dataplane] port %.*s is a PCI device but eal-args has --no-pci",
				 FG_CONFIG_REFUSAL_MAX - 64, cfg->port);
		n++;
	}
	if (lcores >= 0 && (unsigned)lcores < cfg->workers + 1) {
		if (n < max)
			snprintf(why[n], FG_CONFIG_REFUSAL_MAX,
				 "%u workers need %u lcores; the EAL has %d (eal-args -l/--lcores)",
				 cfg->workers, cfg->workers + 1, lcores);
		n++;
	}
	return n;
}

unsigned fg_config_refusals(const struct fg_config *cfg, enum fg_program prog,
			    char (*why)[FG_CONFIG_REFUSAL_MAX], unsigned max)
{
	unsigned n;

	if (prog != FG_PROGRAM_FLOODGATE)
		return 0;
	n = eal_refusals(cfg, why, max);
	if (cfg->dp_mode != FG_DATAPLANE_ACTIVE)
		return n;
	for (unsigned i = 0; i < cfg->n_listen; i++) {
		const struct fg_endpoint *ep = &cfg->listen[i];
		char text[64];

		if (listen_reachable(cfg, ep))
			continue;
		if (n < max) {
			fg_endpoint_format(ep, text, sizeof(text));
			if (is_unspecified(ep))
				snprintf(why[n], FG_CONFIG_REFUSAL_MAX,
					 "[site] listen %s: [dataplane] address has no %s address, "
					 "so the port would never receive these connections", text,
					 ep->family == AF_INET ? "IPv4" : "IPv6");
			else
				snprintf(why[n], FG_CONFIG_REFUSAL_MAX,
					 "[site] listen %s is not one of [dataplane] address, so the "
					 "port would never receive its connections", text);
		}
		n++;
	}
	return n;
}

const char *fg_config_host_refusals(enum fg_program prog)
{
	switch (prog) {
	case FG_PROGRAM_FLOODGATE:
		return "floodctld's region at [history] shm-path (running, same build), the EAL "
		       "(hugepages, eal-args), enough lcores for the workers, the port's probe "
		       "and its queues and MTU, mbufs for the queues, IPv6 duplicate address "
		       "detection on the link";
	case FG_PROGRAM_FLOODGATE_HOST:
		return "floodctld's region at [history] shm-path, binding the [site] listen "
		       "addresses, the data directory";
	case FG_PROGRAM_FLOODCTLD:
		break;
	}
	return "the region's path ([history] shm-path, hugetlbfs), the data directory, "
	       "binding [stats] http and the control socket";
}
