/* SPDX-License-Identifier: MIT */
/*
 * reload.c — a new configuration for a running dataplane.
 *
 * The file is loaded and validated completely first (a file with any
 * error changes nothing and every error is listed). Keys that size what
 * exists — the port, the lcores, the pools, the listen addresses, the
 * history region, the per-session buffers — cannot change under a running
 * process: their running values are carried into the new configuration
 * and named in the reply as "needs restart". Everything else (rules,
 * peers, timeouts, the idle back-off) applies to every session at once,
 * open ones included: each worker switches between two bursts (mailbox.c)
 * and the old configuration is freed once all have switched.
 *
 * The reply lists the changed keys, found by comparing the canonical text
 * of both configurations (fg_config_format) line by line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "floodgate/log.h"

#define FMT_MAX (1u << 20)

/* Carry what cannot change; name each carried key that differed. */
static void carry(struct fg_config *n, const struct fg_config *o, FILE *out)
{
#define CARRY(field, key) \
	do { \
		if (memcmp(&n->field, &o->field, sizeof(n->field)) != 0) \
			fprintf(out, "  needs restart  %s\n", key); \
		memcpy(&n->field, &o->field, sizeof(n->field)); \
	} while (0)
	CARRY(dp_mode, "dataplane mode");
	CARRY(eal_args, "dataplane eal-args");
	CARRY(port, "dataplane port");
	CARRY(workers, "dataplane workers");
	CARRY(rx_queues, "dataplane rx-queues");
	CARRY(mbufs, "dataplane mbufs");
	CARRY(dp_mtu, "dataplane mtu");
	CARRY(tcp_connections, "dataplane tcp-connections");
	CARRY(dp_addr, "dataplane address");
	CARRY(n_dp_addr, "dataplane address");
	CARRY(dp_mac, "dataplane mac");
	CARRY(dp_vlan, "dataplane vlan");
	CARRY(n_dp_vlan, "dataplane vlan");
	CARRY(dp_exception, "dataplane exception-path");
	CARRY(dp_exception_iface, "dataplane exception-iface");
	CARRY(dp_exception_rate, "dataplane exception-rate");
	CARRY(listen, "site listen");
	CARRY(n_listen, "site listen");
	CARRY(max_line, "session max-line");
	CARRY(max_pending_commands, "session max-pending-commands");
	CARRY(shm_path, "history shm-path");
	CARRY(history_capacity, "history capacity");
	CARRY(control_socket, "stats control-socket");
	/* the queue and the relay were opened with the first configuration */
	CARRY(data_dir, "persistence data-dir");
	CARRY(queue_commit_ms, "persistence queue-commit");
	CARRY(queue_limit, "persistence queue-limit");
	CARRY(queue_max_age, "persistence queue-max-age");
	CARRY(warmup, "persistence warmup");
	CARRY(downstream, "downstream");
	CARRY(n_downstream, "downstream");
	/* the cluster thread was started with the first configuration */
	CARRY(cluster_seeds, "cluster seeds");
	CARRY(cluster_secret, "cluster secret");
	CARRY(cluster_password, "cluster password");
	CARRY(cluster_box, "cluster box");
	CARRY(cluster_window_ms, "cluster window");
	CARRY(cluster_timeout_ms, "cluster timeout");
#undef CARRY
}

/* Split canonical text into "section key value" entries (in place). */
static unsigned entries(char *text, char **out, unsigned max, char (*sec)[FG_CONFIG_NAME_MAX + 16])
{
	const char *section = "";
	char *save = NULL;
	unsigned n = 0;

	for (char *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '[')
			section = l;
		else if (l[0] != '#' && l[0]) {
			snprintf(sec[n], sizeof(sec[n]), "%s", section);
			out[n++] = l;
		}
	}
	return n;
}

/* The entries of b's canonical text that a's lacks. */
static void changed_keys(const struct fg_config *a, const struct fg_config *b, FILE *out)
{
	enum { MAX = 8192 };
	char *ta = malloc(FMT_MAX), *tb = malloc(FMT_MAX), **la = calloc(MAX, sizeof(char *)),
	     **lb = calloc(MAX, sizeof(char *));
	char (*sa)[FG_CONFIG_NAME_MAX + 16] = calloc(MAX, sizeof(*sa));
	char (*sb)[FG_CONFIG_NAME_MAX + 16] = calloc(MAX, sizeof(*sb));
	unsigned na, nb, changed = 0;

	if (!ta || !tb || !la || !lb || !sa || !sb)
		goto out_free;
	fg_config_format(a, ta, FMT_MAX);
	fg_config_format(b, tb, FMT_MAX);
	na = entries(ta, la, MAX, sa);
	nb = entries(tb, lb, MAX, sb);
	for (unsigned i = 0; i < nb; i++) {
		unsigned k = 0;

		while (k < na && (strcmp(la[k], lb[i]) || strcmp(sa[k], sb[i])))
			k++;
		if (k == na) {
			fprintf(out, "  applied        %s %s\n", sb[i], lb[i]);
			changed++;
		}
	}
	if (!changed)
		fprintf(out, "  (no key changed)\n");
out_free:
	free(ta);
	free(tb);
	free(la);
	free(lb);
	free(sa);
	free(sb);
}

static struct fg_config *load(const char *file, FILE *out)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = file[0] ? fg_config_load_file(file, &errs) : fg_config_load_default(&errs);
	if (!cfg) {
		fprintf(out, "%s: refused, %u error%s; the running configuration is kept\n",
			file[0] ? file : "<default>", errs.total, errs.total == 1 ? "" : "s");
		for (unsigned i = 0; i < errs.n; i++)
			fprintf(out, "  %s\n", errs.err[i].text);
		fg_config_errors_log(&errs);
		return NULL;
	}
	for (unsigned i = 0; i < errs.n_warn; i++)
		fprintf(out, "  warning        %s\n", errs.warn[i].text);
	return cfg;
}

int dp_reload(struct dp *dp, const char *path, FILE *out)
{
	const char *file = path ? path : dp->config_path;
	struct fg_config *cfg = load(file, out), *old = dp->cfg;
	int rc;

	if (!cfg) {
		dp->reload_failures++;
		return -EINVAL;
	}
	fprintf(out, "%s: loaded\n", file[0] ? file : "<default>");
	carry(cfg, old, out);
	changed_keys(old, cfg, out);
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
