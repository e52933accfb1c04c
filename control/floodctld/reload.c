/* SPDX-License-Identifier: MIT */
/*
 * reload.c — `floodctl reload [FILE]` and SIGHUP: validate a new
 * configuration completely before anything changes; refuse a bad one
 * with every error listed, keeping the running one; apply what floodctld
 * owns (expiry, snapshots, journal commit, the stats endpoint, the
 * verdict log, the history's full-table policy and alarm, new peer
 * names) and say which changed keys only take effect at a restart.
 * The dataplane gets the file once floodctld has accepted it
 * (dataplane.c).
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
		    const char *const *rst, unsigned nr, const struct fg_config_errors *errs,
		    bool json, struct fg_sbuf *out)
{
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "file", path);
		fg_json_arr(&j, "applied");
		for (unsigned i = 0; i < na; i++)
			fg_json_str(&j, NULL, app[i]);
		fg_json_close(&j);
		fg_json_arr(&j, "needs_restart");
		for (unsigned i = 0; i < nr; i++)
			fg_json_str(&j, NULL, rst[i]);
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
	for (unsigned i = 0; i < nr; i++)
		fg_sbuf_printf(out, "  needs restart  %s\n", rst[i]);
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

int ctld_reload(struct ctld *d, const char *path, bool json, struct fg_sbuf *out)
{
	const char *app[16], *rst[8];
	unsigned na = 0, nr = 0;
	struct fg_config_errors errs;
	struct ctld_settings set;
	struct fg_config *cfg, *old;
	char file[PATH_MAX];

	pthread_mutex_lock(&d->lock);
	snprintf(file, sizeof(file), "%s", path ? path : d->config_path);
	pthread_mutex_unlock(&d->lock);
	memset(&errs, 0, sizeof(errs));
	cfg = file[0] ? fg_config_load_file(file, &errs) : fg_config_load_default(&errs);
	if (!file[0])
		snprintf(file, sizeof(file), "<default>");
	if (!cfg) {
		fg_config_errors_log(&errs);
		ctld_count(d, FG_CTR_CONFIG_RELOAD_FAILURES);
		FG_LOG_ERR(CTLD, "reload of %s refused (%u errors); running configuration kept", file,
			   errs.total);
		refused(file, &errs, json, out);
		return -EINVAL;
	}
	ctld_settings_from(&set, cfg);
	pthread_mutex_lock(&d->lock);
	old = d->cfg;
	applied_keys(&d->set, &set, app, &na);
	restart_keys(old, cfg, rst, &nr);
	d->http_rebind = memcmp(&d->set.http, &set.http, sizeof(set.http)) != 0;
	d->vlog_reopen = true;
	d->set = set;
	d->set.version_numbers = old->version_numbers;	/* the side index is sized at start */
	d->cfg = cfg;
	d->config_loaded = time(NULL);
	if (path && realpath(path, d->config_path) == NULL)
		snprintf(d->config_path, sizeof(d->config_path), "%s", path);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	fg_history_set_policy(fg_region_history(d->r), set.full_policy, set.alarm_load_pct);
	add_peer_names(d, cfg);
	ctld_count(d, FG_CTR_CONFIG_RELOADS);
	FG_LOG_NOTICE(CTLD, "reloaded %s: %u changes applied, %u need a restart", file, na, nr);
	applied(file, app, na, rst, nr, &errs, json, out);
	/* nothing holds the old config: every thread copies what it needs */
	fg_config_free(old);
	return 0;
}
