/* SPDX-License-Identifier: MIT */
/*
 * config_reload.c — what a running dataplane (floodgate or floodgate-host)
 * does with a new configuration file before it switches to it: load and
 * validate it completely (a file with any error changes nothing, every
 * error listed), carry the running values of the keys that size what
 * exists (config.h, "Reload"), and list the keys that changed by
 * comparing the canonical text of both (fg_config_format) line by line
 * (and a peer's credentials, which that text names by their file only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"

#define FMT_MAX (1u << 20)

void fg_config_carry(struct fg_config *n, const struct fg_config *o, FILE *out)
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
	CARRY(dp_gro, "dataplane gro");
	CARRY(dp_tso, "dataplane tso");
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
	CARRY(history_shards, "history shards");
	CARRY(huge_pages, "history huge-pages");
	CARRY(control_socket, "stats control-socket");
	/* the queue and the relay were opened with the first configuration */
	CARRY(data_dir, "persistence data-dir");
	CARRY(queue_commit_ms, "persistence queue-commit");
	CARRY(queue_limit, "persistence queue-limit");
	CARRY(queue_max_age, "persistence queue-max-age");
	CARRY(warmup, "persistence warmup");
	CARRY(ack_timeout_ms, "persistence ack-timeout");
	CARRY(held_limit, "persistence held-limit");
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

