/* SPDX-License-Identifier: MIT */
/*
 * config_reload.c — what a running dataplane (floodgate or floodgate-host)
 * does with a new configuration file before it switches to it. A reload is
 * all or nothing, in two steps:
 *
 *   1. Load and validate the file completely (a file with any error
 *      changes nothing, every error listed).
 *   2. Compare the keys that size what exists with the running values
 *      (fg_config_restart_keys): each that differs is named with "needs a
 *      restart" and the whole reload is refused. Which keys those are
 *      depends on the dataplane: listen addresses, the port's addresses and
 *      the downstreams are applied live by the dataplanes that say so
 *      (FG_RELOAD_LIVE_*).
 *
 * Only then does the dataplane apply the file; the keys that changed are
 * listed by comparing the canonical text of both (fg_config_format) line
 * by line (and a peer's credentials, which that text names by their file
 * only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"

#define FMT_MAX (1u << 20)

unsigned fg_config_restart_keys(const struct fg_config *n, const struct fg_config *o,
				unsigned live, FILE *out)
{
	unsigned count = 0;

#define RESTART(field, key) \
	do { \
		if (memcmp(&n->field, &o->field, sizeof(n->field)) != 0) { \
			fprintf(out, "  refused        %s needs a restart\n", key); \
			count++; \
		} \
	} while (0)
	/* a list: its entries in use, unless the dataplane applies it live */
#define RESTART_LIST(bit, arr, cnt, key) \
	do { \
		if (!(live & (bit)) && \
		    (n->cnt != o->cnt || \
		     memcmp(n->arr, o->arr, n->cnt * sizeof(n->arr[0])) != 0)) { \
			fprintf(out, "  refused        %s needs a restart\n", key); \
			count++; \
		} \
	} while (0)
	RESTART(dp_mode, "[dataplane] mode");
	RESTART(eal_args, "[dataplane] eal-args");
	RESTART(port, "[dataplane] port");
	RESTART(workers, "[dataplane] workers");
	RESTART(rx_queues, "[dataplane] rx-queues");
	RESTART(mbufs, "[dataplane] mbufs");
	RESTART(dp_mtu, "[dataplane] mtu");
	RESTART(dp_gro, "[dataplane] gro");
	RESTART(dp_tso, "[dataplane] tso");
	RESTART(tcp_connections, "[dataplane] tcp-connections");
	RESTART_LIST(FG_RELOAD_LIVE_DP_ADDR, dp_addr, n_dp_addr, "[dataplane] address");
	RESTART(dp_mac, "[dataplane] mac");
	RESTART_LIST(0, dp_vlan, n_dp_vlan, "[dataplane] vlan");
	RESTART(dp_exception, "[dataplane] exception-path");
	RESTART(dp_exception_iface, "[dataplane] exception-iface");
	RESTART(dp_exception_rate, "[dataplane] exception-rate");
	RESTART_LIST(FG_RELOAD_LIVE_LISTEN, listen, n_listen, "[site] listen");
	/* open sessions' buffers are sized by these */
	RESTART(max_line, "[session] max-line");
	RESTART(max_pending_commands, "[session] max-pending-commands");
	RESTART(shm_path, "[history] shm-path");
	RESTART(history_capacity, "[history] capacity");
	RESTART(history_shards, "[history] shards");
	RESTART(huge_pages, "[history] huge-pages");
	RESTART(control_socket, "[stats] control-socket");
	/* the queue and its writer were opened with the first configuration */
	RESTART(data_dir, "[persistence] data-dir");
	RESTART(queue_commit_ms, "[persistence] queue-commit");
	RESTART(queue_limit, "[persistence] queue-limit");
	RESTART(queue_max_age, "[persistence] queue-max-age");
	RESTART(ack_timeout_ms, "[persistence] ack-timeout");
	RESTART(held_limit, "[persistence] held-limit");
	/* warmup is not here: it is read once, at a cold start (and follows
	 * the cutoff by default, which a reload changes) */
	/* No dataplane sets FG_RELOAD_LIVE_DOWNSTREAM yet: the relay builds
	 * its consumers, windows and connections at start. The one that does
	 * must still refuse here a downstream reached through the DPDK port
	 * by the workers' own relay (its TCP connections live on the
	 * workers), by naming it "needs a restart" as this does. */
	RESTART_LIST(FG_RELOAD_LIVE_DOWNSTREAM, downstream, n_downstream, "[downstream]");
	/* the cluster thread was started with the first configuration */
	RESTART(cluster_seeds, "[cluster] seeds");
	RESTART(cluster_secret, "[cluster] secret");
	RESTART(cluster_password, "[cluster] password");
	RESTART(cluster_box, "[cluster] box");
	RESTART(cluster_window_ms, "[cluster] window");
	RESTART(cluster_timeout_ms, "[cluster] timeout");
#undef RESTART_LIST
#undef RESTART
	if (count)
		fprintf(out, "refused: %u key%s need%s a restart; nothing applied, the running "
			"configuration is kept\n", count, count == 1 ? "" : "s",
			count == 1 ? "s" : "");
	return count;
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

void fg_config_changes(const struct fg_config *a, const struct fg_config *b, FILE *out)
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
	/* a credentials file changed under the same name: its words are
	 * never formatted, so the text alone does not show it */
	for (unsigned i = 0; i < b->n_peer; i++) {
		const struct fg_config_peer *pb = &b->peer[i];
		const struct fg_config_peer *pa = fg_config_peer_by_name(a, pb->name);

		if (pa && strcmp(pa->credentials, pb->credentials) == 0 &&
		    memcmp(&pa->cred, &pb->cred, sizeof(pa->cred)) != 0) {
			fprintf(out, "  applied        [peer %s] credentials (the file's content)\n",
				pb->name);
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

struct fg_config *fg_config_reload_load(const char *file, FILE *out)
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

