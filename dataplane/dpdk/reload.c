/* SPDX-License-Identifier: MIT */
/*
 * reload.c — a new configuration for a running dataplane.
 *
 * All or nothing: the file is loaded and validated completely first (a
 * file with any error changes nothing and every error is listed). Keys
 * that size what exists — the port, the lcores, the pools, the port's IPv6
 * addresses (their duplicate address detection runs at start), the VLANs,
 * the history region, the per-session buffers, the queue and the
 * downstreams — cannot change under a running process: one that differs
 * refuses the whole reload, named with "needs a restart". The listen
 * endpoints and the port's IPv4 addresses are TCP's and fg_net's tables:
 * each worker replaces them at the switch (a removed address stays ours
 * for DP_ADDR_LEAVE_NS), and the sessions on a removed one drain
 * (fg_tcpsess_retire_unlistened).
 * Everything else (rules, peers, limits, timeouts, the idle back-off)
 * applies to every session at once, open ones included: each worker
 * switches between two bursts (mailbox.c), a removed peer's sessions drain
 * and close (fg_nntp_session_retire), and the old configuration is freed
 * once all have switched.
 *
 * The reply lists the changed keys (dataplane/config/config_reload.c,
 * shared with floodgate-host).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "floodgate/log.h"

/* What floodgate would refuse at start in cfg (a listen endpoint its port
 * never receives, ...), said in `out`: refused at a reload too. --port
 * stands for [dataplane] port, as at start. */
static unsigned refusals(const struct dp *dp, const struct fg_config *cfg, FILE *out)
{
	char why[8][FG_CONFIG_REFUSAL_MAX];
	struct fg_config *copy = NULL;
	unsigned n;

	if (dp->o.port) {
		if (!(copy = malloc(sizeof(*copy))))
			return 1;
		*copy = *cfg;
		snprintf(copy->port, sizeof(copy->port), "%s", dp->o.port);
	}
	n = fg_config_refusals(copy ? copy : cfg, FG_PROGRAM_FLOODGATE, why, FG_ARRAY_SIZE(why));
	free(copy);
	for (unsigned i = 0; i < FG_MIN(n, (unsigned)FG_ARRAY_SIZE(why)); i++)
		fprintf(out, "  refused        %s\n", why[i]);
	if (n)
		fprintf(out, "refused: floodgate would not start with this file; nothing applied, "
			"the running configuration is kept\n");
	return n;
}

/* The IPv6 addresses of the port are not applied live (their duplicate
 * address detection and neighbour state are set up at start): 1 and said
 * when they differ. */
static unsigned ipv6_changed(const struct fg_config *n, const struct fg_config *o, FILE *out)
{
	struct fg_net_config a = { 0 }, b = { 0 };

	dp_net_addrs(n, &a);
	dp_net_addrs(o, &b);
	if (a.n_ipv6 == b.n_ipv6 && !memcmp(a.ipv6, b.ipv6, a.n_ipv6 * sizeof(a.ipv6[0])))
		return 0;
	fprintf(out, "  refused        [dataplane] address (IPv6) needs a restart\n");
	return 1;
}

int dp_reload(struct dp *dp, const char *path, FILE *out)
{
	const char *file = path ? path : dp->config_path;
	struct fg_config *cfg = fg_config_reload_load(file, out), *old = dp->cfg;
	/* an active dataplane's listen endpoints and IPv4 addresses are TCP's
	 * and fg_net's tables, replaced by each worker at the switch
	 * (mailbox.c); passive and shadow mode follow them from the start */
	unsigned live = old->dp_mode == FG_DATAPLANE_ACTIVE ?
			FG_RELOAD_LIVE_LISTEN | FG_RELOAD_LIVE_DP_ADDR : 0;
	int rc;

	if (!cfg) {
		dp->reload_failures++;
		return -EINVAL;
	}
	fprintf(out, "%s: loaded\n", file[0] ? file : "<default>");
	if (fg_config_restart_keys(cfg, old, live, out) + ipv6_changed(cfg, old, out) != 0 ||
	    refusals(dp, cfg, out) != 0) {
		fg_config_free(cfg);
		dp->reload_failures++;
		return -EINVAL;
	}
	fg_config_changes(old, cfg, out);
	/* the new peers' slots in the box's limits, before any worker has
	 * the configuration (peerlim.h) */
	if (dp->lim && fg_peerlim_add(dp->lim, cfg) != 0) {
		fprintf(out, "more than %u peer names since the start: restart to take more\n",
			FG_PEERLIM_SLOTS);
		FG_LOG_ERR(DP, "reload of %s: the peers' limits have no room for its new peers",
			   file);
		fg_config_free(cfg);
		dp->reload_failures++;
		return -ENOSPC;
	}
	for (unsigned i = 0; i < dp->n_workers; i++) {
		struct fg_nntp_counters *ps = calloc(cfg->n_peer + 1, sizeof(*ps));

		if (!ps) {
			for (unsigned k = 0; k < i; k++)
				free(atomic_load(&dp->w[k].mbox.peer_stats));
			fg_config_free(cfg);
			return -ENOMEM;
		}
		atomic_store(&dp->w[i].mbox.cfg, cfg);
		atomic_store(&dp->w[i].mbox.peer_stats, ps);
	}
	rc = dp_post(dp, DP_REQ_CONFIG, 5000);
	if (rc != 0) {
		/* a worker may still hold either configuration: free neither */
		FG_LOG_ERR(DP, "reload of %s: a worker could not switch (%s); configurations kept",
			   file, strerror(-rc));
		fprintf(out, "workers did not all switch: %s\n", strerror(-rc));
		dp->reload_failures++;
		return rc;
	}
	/* every worker has passed a quiescent point holding cfg */
	for (unsigned i = 0; i < dp->n_workers; i++)
		free(atomic_load(&dp->w[i].mbox.peer_stats));
	dp->cfg = cfg;
	if (old != dp->ob_cfg)		/* the relay's: kept until exit */
		fg_config_free(old);
	if (path && !realpath(path, dp->config_path))
		snprintf(dp->config_path, sizeof(dp->config_path), "%s", path);
	dp->reloads++;
	fprintf(out, "%u workers switched\n", dp->n_workers);
	FG_LOG_NOTICE(DP, "reloaded %s on %u workers", file[0] ? file : "<default>",
		      dp->n_workers);
	return 0;
}
