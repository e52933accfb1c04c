/* SPDX-License-Identifier: MIT */
/*
 * reload.c — `floodctl reload [FILE]` and SIGHUP: validate a new
 * configuration completely before anything changes. All or nothing:
 *
 *   1. Load and validate: a bad file is refused with every error listed.
 *   2. A changed key floodctld cannot apply running (the region, the data
 *      directory, the control socket, ...) refuses the file, each named
 *      with "needs a restart".
 *   3. The dataplane is handed the file (dataplane.c) and checks its own
 *      keys the same way; its refusal refuses the reload here too.
 *   4. Only then is floodctld's part applied (expiry, snapshots, journal
 *      commit, the stats endpoint, the verdict log, the history's
 *      full-table policy and alarm, new peer names). Nothing can fail
 *      there: it only sets values.
 *
 * The running configuration is kept whole by any refusal.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "floodctld.h"

/* Keys whose change needs a restart of floodctld (the region, the data
 * directory, the control socket) — named so that the reply says so. */
static void restart_keys(const struct fg_config *a, const struct fg_config *b,
			 const char **keys, unsigned *n)
{
	if (a->history_capacity != b->history_capacity)
		keys[(*n)++] = "history capacity";
	if (a->history_shards != b->history_shards || a->huge_pages != b->huge_pages)
		keys[(*n)++] = "history shards, huge-pages";
	if (strcmp(a->shm_path, b->shm_path))
		keys[(*n)++] = "history shm-path";
	if (strcmp(a->data_dir, b->data_dir))
		keys[(*n)++] = "persistence data-dir";
	if (strcmp(a->control_socket, b->control_socket))
		keys[(*n)++] = "stats control-socket";
	if (a->version_numbers != b->version_numbers)
		keys[(*n)++] = "rules version-numbers (side index size)";
	if (a->log_target != b->log_target || a->log_timestamps != b->log_timestamps)
		keys[(*n)++] = "log target, timestamps";
}

/* Keys floodctld applies now, compared on the settings it copies. */
static void applied_keys(const struct ctld_settings *a, const struct ctld_settings *b,
			 const char **keys, unsigned *n)
{
	if (a->journal_commit_ms != b->journal_commit_ms)
		keys[(*n)++] = "persistence journal-commit";
	if (a->snapshot_interval != b->snapshot_interval)
		keys[(*n)++] = "persistence snapshot-interval";
	if (a->snapshot_keep != b->snapshot_keep)
		keys[(*n)++] = "persistence snapshot-keep";
	if (a->snapshot_rate != b->snapshot_rate)
		keys[(*n)++] = "persistence snapshot-rate";
	if (a->expiry != b->expiry)
		keys[(*n)++] = "rules expiry";
	if (a->cutoff != b->cutoff)
		keys[(*n)++] = "rules cutoff";
	if (a->retention != b->retention)
		keys[(*n)++] = "rules retention";
	if (a->full_policy != b->full_policy)
		keys[(*n)++] = "history full-policy";
	if (a->alarm_load_pct != b->alarm_load_pct)
		keys[(*n)++] = "history alarm-load";
	if (memcmp(&a->http, &b->http, sizeof(a->http)))
		keys[(*n)++] = "stats http";
	if (strcmp(a->verdict_log, b->verdict_log))
		keys[(*n)++] = "stats verdict-log";
	if (a->verdict_log_rotate != b->verdict_log_rotate ||
	    a->verdict_log_keep != b->verdict_log_keep)
		keys[(*n)++] = "stats verdict-log-rotate/keep";
	if (a->report_interval != b->report_interval || a->report_keep != b->report_keep)
		keys[(*n)++] = "stats report-interval/keep";
}

static void refused(const char *path, const struct fg_config_errors *errs, bool json,
		    struct fg_sbuf *out)
{
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "error", "configuration refused; the running configuration is kept");
		fg_json_str(&j, "file", path);
		fg_json_u64(&j, "errors", errs->total);
		fg_json_arr(&j, "details");
		for (unsigned i = 0; i < errs->n; i++)
			fg_json_str(&j, NULL, errs->err[i].text);
		fg_json_close(&j);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
		return;
	}
	fg_sbuf_printf(out, "%s: refused, %u error%s; the running configuration is kept\n", path,
		       errs->total, errs->total == 1 ? "" : "s");
	for (unsigned i = 0; i < errs->n; i++)
		fg_sbuf_printf(out, "  %s\n", errs->err[i].text);
	if (errs->total > errs->n)
		fg_sbuf_printf(out, "  (and %u more)\n", errs->total - errs->n);
}

static void applied(const char *path, const char *const *app, unsigned na,
		    const struct fg_config_errors *errs, bool json, struct fg_sbuf *out)
{
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "file", path);
		fg_json_arr(&j, "applied");
		for (unsigned i = 0; i < na; i++)
			fg_json_str(&j, NULL, app[i]);
		fg_json_close(&j);
		fg_json_arr(&j, "warnings");
		for (unsigned i = 0; i < errs->n_warn; i++)
			fg_json_str(&j, NULL, errs->warn[i].text);
		fg_json_close(&j);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
		return;
	}
	fg_sbuf_printf(out, "%s: loaded; %u change%s applied\n", path, na, na == 1 ? "" : "s");
	for (unsigned i = 0; i < na; i++)
		fg_sbuf_printf(out, "  applied        %s\n", app[i]);
	for (unsigned i = 0; i < errs->n_warn; i++)
		fg_sbuf_printf(out, "  warning        %s\n", errs->warn[i].text);
}

static void add_peer_names(struct ctld *d, const struct fg_config *cfg)
{
	const char *names[FG_CONFIG_MAX_PEERS];

	for (unsigned i = 0; i < cfg->n_peer; i++)
		names[i] = cfg->peer[i].name;
	fg_region_add_peers(d->r, names, cfg->n_peer);
}

struct fg_config *ctld_reload_check(struct ctld *d, const char *path, bool json,
				   struct fg_sbuf *out, char *file, size_t len)
{
	const char *rst[8];
	unsigned nr = 0;
	struct fg_config_errors errs;
	struct fg_config *cfg;

	pthread_mutex_lock(&d->lock);
	snprintf(file, len, "%s", path ? path : d->config_path);
	pthread_mutex_unlock(&d->lock);
	memset(&errs, 0, sizeof(errs));
	cfg = file[0] ? fg_config_load_file(file, &errs) : fg_config_load_default(&errs);
	if (cfg) {
		pthread_mutex_lock(&d->lock);
		restart_keys(d->cfg, cfg, rst, &nr);
		pthread_mutex_unlock(&d->lock);
		for (unsigned i = 0; i < nr; i++)
			snprintf(errs.err[i].text, sizeof(errs.err[i].text), "%s needs a restart",
				 rst[i]);
		errs.n = errs.total = nr;
	}
	if (cfg && nr == 0) {
		/* the dataplane is handed the file by its full name */
		if (path && !realpath(path, file))
			snprintf(file, len, "%s", path);
		/* the new peers' names go in the region before the dataplane
		 * switches (its counters are found by name there); a refusal
		 * by the dataplane leaves them, unused, as the region keeps
		 * every name it was given */
		add_peer_names(d, cfg);
		return cfg;
	}
	fg_config_free(cfg);
	if (!file[0])
		snprintf(file, len, "<default>");
	fg_config_errors_log(&errs);
	ctld_count(d, FG_CTR_CONFIG_RELOAD_FAILURES);
	FG_LOG_ERR(CTLD, "reload of %s refused (%u errors); running configuration kept", file,
		   errs.total);
	refused(file, &errs, json, out);
	return NULL;
}

void ctld_reload_refused(struct ctld *d, const char *file)
{
	ctld_count(d, FG_CTR_CONFIG_RELOAD_FAILURES);
	FG_LOG_ERR(CTLD, "reload of %s refused by the dataplane; running configuration kept",
		   file[0] ? file : "<default>");
}

void ctld_reload_apply(struct ctld *d, struct fg_config *cfg, const char *path, bool json,
		       struct fg_sbuf *out)
{
	const char *app[16];
	unsigned na = 0;
	struct fg_config_errors errs;
	struct ctld_settings set;
	struct fg_config *old;
	const char *file = path[0] ? path : "<default>";

	memset(&errs, 0, sizeof(errs));
	ctld_settings_from(&set, cfg);
	pthread_mutex_lock(&d->lock);
	old = d->cfg;
	applied_keys(&d->set, &set, app, &na);
	d->http_rebind = memcmp(&d->set.http, &set.http, sizeof(set.http)) != 0;
	d->vlog_reopen = true;
	d->set = set;
	d->cfg = cfg;
	d->config_loaded = time(NULL);
	snprintf(d->config_path, sizeof(d->config_path), "%s", path);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	fg_history_set_policy(fg_region_history(d->r), set.full_policy, set.alarm_load_pct);
	ctld_count(d, FG_CTR_CONFIG_RELOADS);
	FG_LOG_NOTICE(CTLD, "reloaded %s: %u changes applied", file, na);
	applied(file, app, na, &errs, json, out);
	/* nothing holds the old config: every thread copies what it needs */
	fg_config_free(old);
}
