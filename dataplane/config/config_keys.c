/* SPDX-License-Identifier: MIT */
/*
 * config_keys.c — the key table of floodgate.conf: one row per key, its
 * section, type, field, range and default; config_types.c has, per value
 * type, how a key is set from the words of its line and written back.
 *
 * One row per key. The order of rows is the order of `fg_config_format`'s
 * output and of docs/configuration.md's tables. A row's `def` is the
 * default written as it would be in a file; rows with no `def` are derived
 * from other keys once the file is read (config.c: apply_derived_defaults).
 */
#include <string.h>

#include "config_int.h"

#define NS_S INT64_C(1000000000)
#define NS_MS INT64_C(1000000)
#define NS_US INT64_C(1000)

#define GF(f) .off = offsetof(struct fg_config, f), \
	.size = sizeof(((struct fg_config *)0)->f)
#define PF(f) .off = offsetof(struct fg_config_peer, f), \
	.size = sizeof(((struct fg_config_peer *)0)->f)
#define DF(f) .off = offsetof(struct fg_config_downstream, f), \
	.size = sizeof(((struct fg_config_downstream *)0)->f)

const char *const cfg_section_names[SEC__COUNT] = {
	[SEC_SITE] = "site",
	[SEC_RULES] = "rules",
	[SEC_SESSION] = "session",
	[SEC_HISTORY] = "history",
	[SEC_PERSISTENCE] = "persistence",
	[SEC_STATS] = "stats",
	[SEC_DATAPLANE] = "dataplane",
	[SEC_LOG] = "log",
	[SEC_CLUSTER] = "cluster",
	[SEC_PEER] = "peer",
	[SEC_DOWNSTREAM] = "downstream",
};

static const char *const expiry_names[] = { "first-seen", "article-date", NULL };
static const char *const full_names[] = { "defer", "evict-oldest", NULL };
static const char *const huge_names[] = { "auto", "off", "hugetlbfs", "tmpfs", NULL };
static const char *const dsmode_names[] = { "stream", "ihave", NULL };
static const char *const dspath_names[] = { "auto", "port", "kernel", NULL };
static const char *const dpmode_names[] = { "active", "passive", "shadow", NULL };
static const char *const exception_names[] = { "none", "tap", NULL };
static const char *const full_action_names[] = { "defer", "drop", NULL };
static const char *const date_syntax_names[] = { "inn", "rfc5322", NULL };
static const char *const logto_names[] = { "stderr", "journal", "syslog", NULL };
static const char *const logtime_names[] = { "auto", "on", "off", NULL };

/* Enums are stored through an int. */
_Static_assert(sizeof(enum fg_expiry_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_full_policy) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_huge_pages) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_downstream_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_dataplane_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_backlog_full) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_date_syntax) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_log_target) == sizeof(int), "enum size");
_Static_assert(sizeof(enum fg_log_timestamps) == sizeof(int), "enum size");

const struct cfg_key cfg_keys[] = {
	/* [site] */
	{ SEC_SITE, T_NAME, 0, "server-name", GF(server_name) },
	{ SEC_SITE, T_PATH_IDS, F_REPEAT, "path-identity", GF(path_ids),
	  .cnt = offsetof(struct fg_config, n_path_ids) },
	{ SEC_SITE, T_LISTEN, F_REPEAT, "listen", GF(listen),
	  .cnt = offsetof(struct fg_config, n_listen), .port = 119, .def = "0.0.0.0:119" },

	/* [rules] */
	{ SEC_RULES, T_DURATION, 0, "cutoff", GF(cutoff), .unit = NS_S,
	  .min = 1, .max = INT64_MAX, .def = "10d" },
	{ SEC_RULES, T_DURATION, 0, "future-margin", GF(future_margin), .unit = NS_S,
	  .min = 0, .max = INT64_MAX, .def = "24h" },
	{ SEC_RULES, T_ENUM, 0, "date-syntax", GF(date_syntax), .names = date_syntax_names,
	  .def = "inn" },
	{ SEC_RULES, T_ENUM, 0, "expiry", GF(expiry), .names = expiry_names,
	  .def = "first-seen" },
	{ SEC_RULES, T_DURATION, 0, "retention", GF(retention), .unit = NS_S,
	  .min = 1, .max = INT64_MAX },
	{ SEC_RULES, T_SIZE, 0, "max-article-size", GF(max_article_size),
	  .min = 1, .max = INT64_MAX, .def = "1000000" },
	{ SEC_RULES, T_BOOL, 0, "version-numbers", GF(version_numbers), .def = "on" },
	{ SEC_RULES, T_BOOL, 0, "honor-versions", GF(honor_versions), .def = "off" },
	{ SEC_RULES, T_BOOL, 0, "honor-supersedes", GF(honor_supersedes), .def = "off" },
	{ SEC_RULES, T_BOOL, 0, "remember-rejects", GF(remember_rejects), .def = "on" },
	{ SEC_RULES, T_BOOL, 0, "refuse-cyber-cancels", GF(refuse_cyber_cancels), .def = "off" },
	{ SEC_RULES, T_HEADERS, 0, "required-headers", GF(required_headers),
	  .cnt = offsetof(struct fg_config, n_required_headers),
	  .def = "From Newsgroups Path Subject" },

	/* [session] */
	{ SEC_SESSION, T_DURATION, 0, "offer-timeout", GF(offer_timeout), .unit = NS_S,
	  .min = 1, .max = 3600, .def = "10s" },
	{ SEC_SESSION, T_UINT, 0, "max-line", GF(max_line), .min = 512, .max = 65536,
	  .def = "512" },
	{ SEC_SESSION, T_DURATION, 0, "idle-timeout", GF(idle_timeout), .unit = NS_S,
	  .min = 1, .max = INT64_MAX, .def = "10m" },
	{ SEC_SESSION, T_SIZE, 0, "max-pending-bytes", GF(max_pending_bytes),
	  .min = 65536, .max = INT64_MAX, .def = "16M" },
	{ SEC_SESSION, T_UINT, 0, "max-pending-commands", GF(max_pending_commands),
	  .min = 1, .max = 1 << 20, .def = "1024" },
	{ SEC_SESSION, T_DURATION, 0, "clock-skew-limit", GF(clock_skew_limit),
	  .unit = NS_S, .min = 0, .max = INT64_MAX, .def = "1h" },

	/* [history] */
	{ SEC_HISTORY, T_SIZE, 0, "capacity", GF(history_capacity),
	  .min = 1, .max = INT64_C(1) << 40, .def = "4M" },
	{ SEC_HISTORY, T_UINT, 0, "shards", GF(history_shards), .min = 0,
	  .max = 256 /* FG_HISTORY_SHARDS_MAX */, .def = "0" },
	{ SEC_HISTORY, T_ENUM, 0, "full-policy", GF(full_policy), .names = full_names,
	  .def = "defer" },
	{ SEC_HISTORY, T_PERCENT, 0, "alarm-load", GF(alarm_load_pct), .min = 1,
	  .max = 100, .def = "90%" },
	{ SEC_HISTORY, T_PATH, 0, "shm-path", GF(shm_path), .def = "/dev/shm/floodgate" },
	{ SEC_HISTORY, T_ENUM, 0, "huge-pages", GF(huge_pages), .names = huge_names,
	  .def = "auto" },

	/* [persistence] */
	{ SEC_PERSISTENCE, T_PATH, 0, "data-dir", GF(data_dir), .def = "/var/lib/floodgate" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "journal-commit", GF(journal_commit_ms),
	  .unit = NS_MS, .min = 1, .max = 60000, .def = "1s" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "snapshot-interval", GF(snapshot_interval),
	  .unit = NS_S, .min = 1, .max = INT64_MAX, .def = "5m" },
	{ SEC_PERSISTENCE, T_UINT, 0, "snapshot-keep", GF(snapshot_keep), .min = 1,
	  .max = 100, .def = "2" },
	{ SEC_PERSISTENCE, T_SIZE, 0, "snapshot-rate", GF(snapshot_rate), .min = 0,
	  .max = INT64_MAX, .def = "0" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "queue-commit", GF(queue_commit_ms),
	  .unit = NS_MS, .min = 0, .max = 60000, .def = "10ms" },
	{ SEC_PERSISTENCE, T_SIZE, 0, "queue-limit", GF(queue_limit), .min = 1 << 20,
	  .max = INT64_MAX, .def = "8G" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "queue-max-age", GF(queue_max_age), .unit = NS_S,
	  .min = 0, .max = INT64_MAX, .def = "0" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "warmup", GF(warmup), .unit = NS_S,
	  .min = 0, .max = INT64_MAX },
	{ SEC_PERSISTENCE, T_DURATION, 0, "ack-timeout", GF(ack_timeout_ms), .unit = NS_MS,
	  .min = 1, .max = 60000, .def = "250ms" },
	{ SEC_PERSISTENCE, T_SIZE, 0, "held-limit", GF(held_limit), .min = 1 << 20,
	  .max = INT64_MAX, .def = "64M" },

	/* [stats] */
	{ SEC_STATS, T_ENDPOINT, F_OFF, "http", GF(http), .def = "127.0.0.1:9119" },
	{ SEC_STATS, T_PATH, 0, "control-socket", GF(control_socket),
	  .def = "/run/floodgate/control.sock" },
	{ SEC_STATS, T_PATH, F_OFF, "verdict-log", GF(verdict_log), .def = "off" },
	{ SEC_STATS, T_SIZE, 0, "verdict-log-rotate", GF(verdict_log_rotate),
	  .min = 1 << 20, .max = INT64_MAX, .def = "256M" },
	{ SEC_STATS, T_UINT, 0, "verdict-log-keep", GF(verdict_log_keep), .min = 1,
	  .max = 1000, .def = "8" },
	{ SEC_STATS, T_DURATION, 0, "report-interval", GF(report_interval), .unit = NS_S,
	  .min = 1, .max = 3600, .def = "60s" },
	{ SEC_STATS, T_UINT, 0, "report-keep", GF(report_keep), .min = 1, .max = 400,
	  .def = "8" },

	/* [dataplane] */
	{ SEC_DATAPLANE, T_ENUM, 0, "mode", GF(dp_mode), .names = dpmode_names,
	  .def = "active" },
	{ SEC_DATAPLANE, T_ARGS, 0, "eal-args", GF(eal_args),
	  .def = "--no-huge -m 512 --no-pci --no-shconf --no-telemetry" },
	{ SEC_DATAPLANE, T_DEVICE, 0, "port", GF(port), .def = "net_tap0,iface=fg0" },
	{ SEC_DATAPLANE, T_UINT, 0, "workers", GF(workers), .min = 1, .max = 127,
	  .def = "1" },
	{ SEC_DATAPLANE, T_UINT, 0, "rx-queues", GF(rx_queues), .min = 1, .max = 1024 },
	{ SEC_DATAPLANE, T_UINT, 0, "mbufs", GF(mbufs), .min = 1023, .max = 1 << 24,
	  .def = "16383" },
	{ SEC_DATAPLANE, T_UINT, 0, "mtu", GF(dp_mtu), .min = 0, .max = 9000, .def = "0" },
	{ SEC_DATAPLANE, T_BOOL, 0, "gro", GF(dp_gro), .def = "on" },
	{ SEC_DATAPLANE, T_BOOL, 0, "tso", GF(dp_tso), .def = "on" },
	{ SEC_DATAPLANE, T_UINT, 0, "tcp-connections", GF(tcp_connections), .min = 1,
	  .max = 1 << 24, .def = "4096" },
	{ SEC_DATAPLANE, T_ADDRS, F_REPEAT, "address", GF(dp_addr),
	  .cnt = offsetof(struct fg_config, n_dp_addr), .def = "10.99.0.1/24" },
	{ SEC_DATAPLANE, T_MAC, 0, "mac", GF(dp_mac), .def = "auto" },
	{ SEC_DATAPLANE, T_DURATION, 0, "idle-backoff", GF(idle_backoff_us),
	  .unit = NS_US, .min = 0, .max = 1000000, .def = "100us" },
	{ SEC_DATAPLANE, T_VLAN, F_REPEAT | F_NONE, "vlan", GF(dp_vlan),
	  .cnt = offsetof(struct fg_config, n_dp_vlan), .def = "none" },
	{ SEC_DATAPLANE, T_ENUM, 0, "exception-path", GF(dp_exception),
	  .names = exception_names, .def = "none" },
	{ SEC_DATAPLANE, T_NAME, 0, "exception-iface", GF(dp_exception_iface), .def = "fgx0" },
	{ SEC_DATAPLANE, T_UINT, 0, "exception-rate", GF(dp_exception_rate), .min = 1,
	  .max = 10000000, .def = "10000" },

	/* [log] */
	{ SEC_LOG, T_ENUM, 0, "target", GF(log_target), .names = logto_names,
	  .def = "stderr" },
	{ SEC_LOG, T_ENUM, 0, "timestamps", GF(log_timestamps), .names = logtime_names,
	  .def = "auto" },

	/* [cluster] */
	{ SEC_CLUSTER, T_NAME, F_OFF, "seeds", GF(cluster_seeds), .def = "off" },
	{ SEC_CLUSTER, T_NAME, F_OFF, "secret", GF(cluster_secret), .def = "off" },
	{ SEC_CLUSTER, T_NAME, F_OFF, "password", GF(cluster_password), .def = "off" },
	{ SEC_CLUSTER, T_NAME, F_OFF, "box", GF(cluster_box), .def = "off" },
	{ SEC_CLUSTER, T_DURATION, 0, "window", GF(cluster_window_ms), .unit = NS_MS,
	  .min = 1000, .max = INT64_C(7) * 86400 * 1000, .def = "1h" },
	{ SEC_CLUSTER, T_DURATION, 0, "timeout", GF(cluster_timeout_ms), .unit = NS_MS,
	  .min = 1, .max = 10000, .def = "50ms" },

	/* [peer NAME] */
	{ SEC_PEER, T_PEER_ADDRS, F_REPEAT, "address", PF(addr),
	  .cnt = offsetof(struct fg_config_peer, n_addr) },
	{ SEC_PEER, T_WILDMAT, F_REPEAT, "newsgroups", PF(newsgroups), .def = "*" },
	{ SEC_PEER, T_UINT, 0, "max-connections", PF(max_connections), .min = 0,
	  .max = 1 << 16, .def = "0" },
	{ SEC_PEER, T_UINT, 0, "max-connection-rate", PF(max_connection_rate), .min = 0,
	  .max = 1000000, .def = "0" },
	{ SEC_PEER, T_UINT, 0, "max-offer-rate", PF(max_offer_rate), .min = 0,
	  .max = 100000000, .def = "0" },
	{ SEC_PEER, T_SIZE, 0, "max-byte-rate", PF(max_byte_rate), .min = 0,
	  .max = INT64_C(1) << 40, .def = "0" },
	{ SEC_PEER, T_SIZE, 0, "max-article-size", PF(max_article_size), .min = 0,
	  .max = INT64_MAX, .def = "0" },
	{ SEC_PEER, T_PATH, F_OFF, "credentials", PF(credentials), .def = "off" },
	{ SEC_PEER, T_UINT, 0, "max-outstanding-offers", PF(max_outstanding_offers),
	  .min = 1, .max = 1 << 24, .def = "1024" },

	/* [downstream NAME] */
	{ SEC_DOWNSTREAM, T_ENDPOINT, 0, "address", DF(addr), .port = 119 },
	{ SEC_DOWNSTREAM, T_UINT, 0, "connections", DF(connections), .min = 1,
	  .max = 64, .def = "1" },
	{ SEC_DOWNSTREAM, T_UINT, 0, "window", DF(window), .min = 1, .max = 65535,
	  .def = "64" },
	{ SEC_DOWNSTREAM, T_ENUM, 0, "mode", DF(mode), .names = dsmode_names,
	  .def = "stream" },
	{ SEC_DOWNSTREAM, T_BOOL, 0, "check-first", DF(check_first), .def = "off" },
	{ SEC_DOWNSTREAM, T_BOOL, 0, "acknowledges", DF(acknowledges), .def = "off" },
	{ SEC_DOWNSTREAM, T_ENUM, 0, "path", DF(path), .names = dspath_names, .def = "auto" },
	{ SEC_DOWNSTREAM, T_NAME, 0, "id", DF(id) },
	{ SEC_DOWNSTREAM, T_WILDMAT, F_REPEAT, "newsgroups", DF(newsgroups), .def = "*" },
	{ SEC_DOWNSTREAM, T_DISTS, F_REPEAT | F_NONE, "distributions", DF(distributions),
	  .cnt = offsetof(struct fg_config_downstream, n_distributions), .def = "none" },
	{ SEC_DOWNSTREAM, T_SIZE, 0, "max-article-size", DF(max_article_size), .min = 0,
	  .max = INT64_MAX, .def = "0" },
	{ SEC_DOWNSTREAM, T_SIZE, 0, "min-article-size", DF(min_article_size), .min = 0,
	  .max = INT64_MAX, .def = "0" },
	{ SEC_DOWNSTREAM, T_PATH_IDS, F_REPEAT | F_NONE, "exclude-path", DF(exclude_path),
	  .cnt = offsetof(struct fg_config_downstream, n_exclude_path), .def = "none" },
	{ SEC_DOWNSTREAM, T_SIZE, 0, "backlog-articles", DF(backlog_articles), .min = 0,
	  .max = INT64_MAX, .def = "0" },
	{ SEC_DOWNSTREAM, T_SIZE, 0, "backlog-bytes", DF(backlog_bytes), .min = 0,
	  .max = INT64_MAX },
	{ SEC_DOWNSTREAM, T_DURATION, 0, "backlog-age", DF(backlog_age), .unit = NS_S,
	  .min = 0, .max = INT64_MAX, .def = "0" },
	{ SEC_DOWNSTREAM, T_SIZE, 0, "backlog-disk", DF(backlog_disk), .min = 0,
	  .max = INT64_MAX },
	{ SEC_DOWNSTREAM, T_ENUM, 0, "backlog-full", DF(backlog_full), .names = full_action_names,
	  .def = "defer" },
};

const unsigned cfg_n_keys = FG_ARRAY_SIZE(cfg_keys);

int cfg_key_find(enum cfg_section sec, const char *name)
{
	for (unsigned i = 0; i < cfg_n_keys; i++)
		if (cfg_keys[i].section == sec && strcmp(cfg_keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

bool fg_config_key_at(unsigned i, const char **section, const char **key)
{
	if (i >= cfg_n_keys)
		return false;
	*section = cfg_section_names[cfg_keys[i].section];
	*key = cfg_keys[i].name;
	return true;
}

const char *fg_config_key_default(unsigned i)
{
	return i < cfg_n_keys ? cfg_keys[i].def : NULL;
}

void *cfg_key_base(struct fg_config *cfg, enum cfg_section sec, unsigned idx)
{
	if (sec == SEC_PEER)
		return &cfg->peer[idx];
	if (sec == SEC_DOWNSTREAM)
		return &cfg->downstream[idx];
	return cfg;
}
