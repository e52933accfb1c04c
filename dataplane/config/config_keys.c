/* SPDX-License-Identifier: MIT */
/*
 * config_keys.c — the key table of floodgate.conf and, per value type, how
 * a key is set from the words of its line and written back as text.
 *
 * One row per key. The order of rows is the order of `fg_config_format`'s
 * output and of docs/configuration.md's tables. A row's `def` is the
 * default written as it would be in a file; rows with no `def` are derived
 * from other keys once the file is read (config.c: apply_defaults).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "floodgate/wildmat.h"
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
static const char *const dpmode_names[] = { "active", "passive", NULL };
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
	{ SEC_PERSISTENCE, T_DURATION, 0, "queue-commit", GF(queue_commit_ms),
	  .unit = NS_MS, .min = 0, .max = 60000, .def = "10ms" },
	{ SEC_PERSISTENCE, T_SIZE, 0, "queue-limit", GF(queue_limit), .min = 1 << 20,
	  .max = INT64_MAX, .def = "8G" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "queue-max-age", GF(queue_max_age), .unit = NS_S,
	  .min = 0, .max = INT64_MAX, .def = "0" },
	{ SEC_PERSISTENCE, T_DURATION, 0, "warmup", GF(warmup), .unit = NS_S,
	  .min = 0, .max = INT64_MAX },

	/* [stats] */
	{ SEC_STATS, T_ENDPOINT, F_OFF, "http", GF(http), .def = "127.0.0.1:9119" },
	{ SEC_STATS, T_PATH, 0, "control-socket", GF(control_socket),
	  .def = "/run/floodgate/control.sock" },
	{ SEC_STATS, T_PATH, F_OFF, "verdict-log", GF(verdict_log), .def = "off" },
	{ SEC_STATS, T_SIZE, 0, "verdict-log-rotate", GF(verdict_log_rotate),
	  .min = 1 << 20, .max = INT64_MAX, .def = "256M" },
	{ SEC_STATS, T_UINT, 0, "verdict-log-keep", GF(verdict_log_keep), .min = 1,
	  .max = 1000, .def = "8" },

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
	{ SEC_PEER, T_UINT, 0, "max-offer-rate", PF(max_offer_rate), .min = 0,
	  .max = 100000000, .def = "0" },
	{ SEC_PEER, T_SIZE, 0, "max-byte-rate", PF(max_byte_rate), .min = 0,
	  .max = INT64_C(1) << 40, .def = "0" },
	{ SEC_PEER, T_SIZE, 0, "max-article-size", PF(max_article_size), .min = 0,
	  .max = INT64_MAX, .def = "0" },

	/* [downstream NAME] */
	{ SEC_DOWNSTREAM, T_ENDPOINT, 0, "address", DF(addr), .port = 119 },
	{ SEC_DOWNSTREAM, T_UINT, 0, "connections", DF(connections), .min = 1,
	  .max = 64, .def = "1" },
	{ SEC_DOWNSTREAM, T_UINT, 0, "window", DF(window), .min = 1, .max = 65535,
	  .def = "64" },
	{ SEC_DOWNSTREAM, T_ENUM, 0, "mode", DF(mode), .names = dsmode_names,
	  .def = "stream" },
	{ SEC_DOWNSTREAM, T_BOOL, 0, "check-first", DF(check_first), .def = "off" },
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

/* ---------------------------------------------------------------- text */

void cfg_text_printf(struct cfg_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL,
		      t->len < t->size ? t->size - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

static bool word_needs_quotes(const char *w)
{
	if (*w == '\0' || *w == '#')
		return true;
	for (; *w; w++)
		if (*w == ' ' || *w == '\t' || *w == '"')
			return true;
	return false;
}

void cfg_text_word(struct cfg_text *t, const char *w)
{
	if (!word_needs_quotes(w)) {
		cfg_text_printf(t, "%s", w);
		return;
	}
	cfg_text_printf(t, "\"");
	for (; *w; w++)
		cfg_text_printf(t, *w == '"' || *w == '\\' ? "\\%c" : "%c", *w);
	cfg_text_printf(t, "\"");
}

/* ---------------------------------------------------------------- set */

static int fail(char *why, size_t len, int rc, const char *fmt, ...) FG_PRINTF(4, 5);
static int fail(char *why, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return rc;
}

static void store_int(void *field, size_t size, int64_t v)
{
	if (size == sizeof(int64_t)) {
		memcpy(field, &v, sizeof(v));
	} else {
		unsigned u = (unsigned)v;

		FG_ASSERT(size == sizeof(unsigned));
		memcpy(field, &u, sizeof(u));
	}
}

static int64_t load_int(const void *field, size_t size)
{
	int64_t v;
	unsigned u;

	if (size == sizeof(int64_t)) {
		memcpy(&v, field, sizeof(v));
		return v;
	}
	memcpy(&u, field, sizeof(u));
	return u;
}

/* Describe k's range in k's own syntax, for error messages. */
static void range_text(const struct cfg_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	if (k->type == T_DURATION) {
		cfg_fmt_duration(lo, sizeof(lo), k->min, k->unit);
		cfg_fmt_duration(hi, sizeof(hi), k->max, k->unit);
	} else if (k->type == T_SIZE) {
		cfg_fmt_size(lo, sizeof(lo), (uint64_t)k->min);
		cfg_fmt_size(hi, sizeof(hi), (uint64_t)k->max);
	} else {
		snprintf(lo, sizeof(lo), "%lld", (long long)k->min);
		snprintf(hi, sizeof(hi), "%lld", (long long)k->max);
	}
	if (k->max == INT64_MAX)
		snprintf(buf, len, "at least %s", lo);
	else
		snprintf(buf, len, "between %s and %s", lo, hi);
}

static int set_number(const struct cfg_key *k, void *field, const char *w, char *why,
		      size_t whylen)
{
	static const char *const what[] = {
		[T_DURATION] = "a duration (90, 10d, 1d12h, 250ms)",
		[T_SIZE] = "a size (1000000, 512K, 16M, 8G)",
		[T_UINT] = "a whole number",
		[T_PERCENT] = "a percentage (90 or 90%)",
	};
	char range[80], num[32];
	int64_t v = 0;
	uint64_t u = 0;
	int rc;

	if (k->type == T_PERCENT) {
		size_t l = strlen(w);

		/* "90%" reads as "90" */
		if (l > 1 && l < sizeof(num) && w[l - 1] == '%') {
			memcpy(num, w, l - 1);
			num[l - 1] = '\0';
			w = num;
		}
	}
	if (k->type == T_DURATION)
		rc = cfg_parse_duration_unit(w, k->unit, &v);
	else if (k->type == T_SIZE)
		rc = fg_parse_size(w, &u);
	else
		rc = cfg_parse_uint(w, UINT32_MAX, &u);
	if (rc == 0 && k->type != T_DURATION) {
		if (u > INT64_MAX)
			rc = -ERANGE;
		v = (int64_t)u;
	}
	if (rc == -EINVAL)
		return fail(why, whylen, rc, "\"%s\" is not %s", w, what[k->type]);
	range_text(k, range, sizeof(range));
	if (rc < 0 || v < k->min || v > k->max)
		return fail(why, whylen, -ERANGE, "%s is out of range: must be %s", w, range);
	if (k->type == T_SIZE)
		memcpy(field, &u, sizeof(u));
	else
		store_int(field, k->size, v);
	return 0;
}

static int set_enum(const struct cfg_key *k, void *field, const char *w, char *why,
		    size_t whylen)
{
	char list[96] = "";

	for (int i = 0; k->names[i]; i++) {
		if (strcmp(w, k->names[i]) == 0) {
			memcpy(field, &i, sizeof(i));
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? ", " : "", k->names[i]);
	}
	return fail(why, whylen, -EINVAL, "\"%s\" is not one of: %s", w, list);
}

static bool printable_word(const char *w)
{
	for (const unsigned char *u = (const unsigned char *)w; *u; u++)
		if (*u <= 0x20 || *u >= 0x7f)
			return false;
	return *w != '\0';
}

static int set_string(const struct cfg_key *k, char *field, const char *w, char *why,
		      size_t whylen)
{
	if ((k->flags & F_OFF) && strcmp(w, "off") == 0) {
		field[0] = '\0';
		return 0;
	}
	if (strlen(w) >= k->size)
		return fail(why, whylen, -ENOSPC, "too long (at most %zu octets)", k->size - 1);
	if (k->type == T_PATH) {
		if (w[0] != '/')
			return fail(why, whylen, -EINVAL, "\"%s\" is not an absolute path", w);
		for (const unsigned char *u = (const unsigned char *)w; *u; u++)
			if (*u < 0x20 || *u == 0x7f)
				return fail(why, whylen, -EINVAL, "control character in path");
	} else if (!printable_word(w)) {
		return fail(why, whylen, -EINVAL, "must be printable ASCII without blanks");
	}
	memset(field, 0, k->size);
	memcpy(field, w, strlen(w));
	return 0;
}

static int set_endpoint(const struct cfg_key *k, void *field, const char *w, char *why,
			size_t whylen)
{
	struct fg_endpoint ep;

	if ((k->flags & F_OFF) && strcmp(w, "off") == 0) {
		memset(field, 0, sizeof(ep));
		return 0;
	}
	if (fg_parse_endpoint(w, k->port, &ep) < 0)
		return fail(why, whylen, -EINVAL, "\"%s\" is not an address:port%s", w,
			    k->port ? " (IPv6 as [addr]:port; port 1-65535)" :
				      " (the port is required; IPv6 as [addr]:port)");
	memcpy(field, &ep, sizeof(ep));
	return 0;
}

static int set_prefix(void *field, const char *w, bool network, char *why, size_t whylen)
{
	struct fg_prefix p;
	char fixed[64];

	if (fg_parse_prefix(w, &p) < 0)
		return fail(why, whylen, -EINVAL,
			    "\"%s\" is not an IPv4 or IPv6 address or prefix", w);
	if (network && fg_prefix_host_bits(&p)) {
		/* "192.0.2.10/24" names a host, not a network: a typo, most likely */
		struct fg_prefix net = p;

		for (unsigned bit = p.len; bit < 128; bit++)
			net.addr[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
		fg_prefix_format(&net, fixed, sizeof(fixed));
		return fail(why, whylen, -EINVAL, "%s has host bits set (did you mean %s?)",
			    w, fixed);
	}
	if (!network && !fg_prefix_host_bits(&p) && p.len < (p.family == AF_INET ? 31 : 127))
		return fail(why, whylen, -EINVAL, "%s is a network; give our address on it "
			    "(10.99.0.1/24, 2001:db8::1/64)", w);
	memcpy(field, &p, sizeof(p));
	return 0;
}

static int set_mac(void *field, const char *w, char *why, size_t whylen)
{
	uint8_t mac[6];

	if (strcmp(w, "auto") == 0) {
		memset(field, 0, 6);
		return 0;
	}
	if (cfg_parse_mac(w, mac) < 0)
		return fail(why, whylen, -EINVAL, "\"%s\" is not a MAC address "
			    "(02:00:00:00:00:01) or auto", w);
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return fail(why, whylen, -EINVAL, "%s is not a unicast address", w);
	memcpy(field, mac, 6);
	return 0;
}

/* A letter or digit, then letters, digits or octets of `more`. */
static bool alnum_word(const char *s, const char *more)
{
	if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9'))
		return false;
	for (s++; *s; s++)
		if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
		    !strchr(more, *s))
			return false;
	return true;
}

/* RFC 5536 3.1.5: path-identity = (ALPHA / DIGIT) *(ALPHA / DIGIT / "-" / "." / ":" / "_") */
static bool valid_path_identity(const char *s)
{
	return alnum_word(s, "-.:_");
}

/* RFC 5322 3.6.8: field-name = 1*ftext, printable US-ASCII except ":" */
static bool valid_field_name(const char *s)
{
	return printable_word(s) && !strchr(s, ':');
}

/* How many items a list key holds; each is k->size / list_max(k) octets. */
static unsigned list_max(const struct cfg_key *k)
{
	switch (k->type) {
	case T_PATH_IDS:
		return FG_CONFIG_MAX_PATH_IDS;
	case T_LISTEN:
		return FG_CONFIG_MAX_LISTEN;
	case T_PEER_ADDRS:
		return FG_CONFIG_MAX_PEER_ADDRS;
	case T_ADDRS:
		return FG_CONFIG_MAX_DP_ADDRS;
	case T_DISTS:
		return FG_CONFIG_MAX_DISTS;
	default:
		FG_ASSERT(k->type == T_HEADERS);
		return FG_CONFIG_MAX_REQUIRED_HEADERS;
	}
}

/* RFC 5536 3.2.4: dist-name = ALPHA / DIGIT *( ALPHA / DIGIT / "+" / "-" / "_" ),
 * here with an optional "!" before it (newsfeeds(5): not to be sent). */
static bool valid_distribution(const char *s)
{
	return alnum_word(s + (*s == '!'), "+-_");
}

/* One distribution word (of a line that may also separate them by ","). */
static int set_dist(const char *w, size_t len, char *item, size_t elem, char *why,
		    size_t whylen)
{
	char d[FG_CONFIG_DIST_MAX];

	if (len == 0)
		return fail(why, whylen, -EINVAL, "an empty distribution");
	if (len >= elem)
		return fail(why, whylen, -EINVAL, "\"%.*s\" is too long (at most %zu octets)",
			    (int)len, w, elem - 1);
	memcpy(d, w, len);
	d[len] = '\0';
	if (!valid_distribution(d))
		return fail(why, whylen, -EINVAL, "\"%s\" is not a distribution (RFC 5536 "
			    "3.2.4, \"!\" before it to exclude it)", d);
	memset(item, 0, elem);
	memcpy(item, d, len);
	return 0;
}

/* Append the words of a line to a list key, each checked for its type. */
static int set_list(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	unsigned *cnt = (unsigned *)((char *)base + k->cnt);
	char *field = (char *)base + k->off;
	unsigned max = list_max(k);
	size_t elem = k->size / max;
	int rc;

	FG_ASSERT(elem * max == k->size);
	for (unsigned i = 0; i < n; i++) {
		char *item = field + (size_t)*cnt * elem;

		if (*cnt == max)
			return fail(why, whylen, -E2BIG, "too many values (at most %u)", max);
		if (k->type == T_DISTS) {
			const char *p = w[i], *comma;

			/* "local, nyc" is two words: a "," may end or begin one */
			for (bool first = true;; first = false) {
				size_t len;

				comma = strchr(p, ',');
				len = comma ? (size_t)(comma - p) : strlen(p);
				if (len == 0 && (first || !comma)) {
					if (!comma)
						break;
					p = comma + 1;
					continue;
				}
				if (*cnt == max)
					return fail(why, whylen, -E2BIG, "too many values "
						    "(at most %u)", max);
				rc = set_dist(p, len, field + (size_t)*cnt * elem, elem, why,
					      whylen);
				if (rc < 0)
					return rc;
				(*cnt)++;
				if (!comma)
					break;
				p = comma + 1;
			}
			continue;
		} else if (k->type == T_PATH_IDS) {
			if (strlen(w[i]) >= elem || !valid_path_identity(w[i]))
				return fail(why, whylen, -EINVAL, "\"%s\" is not a path "
					    "identity (RFC 5536 3.1.5; at most %zu octets)",
					    w[i], elem - 1);
			memset(item, 0, elem);
			memcpy(item, w[i], strlen(w[i]));
		} else if (k->type == T_HEADERS) {
			if (strlen(w[i]) >= elem || !valid_field_name(w[i]))
				return fail(why, whylen, -EINVAL, "\"%s\" is not a header "
					    "field name (at most %zu octets)", w[i], elem - 1);
			for (unsigned j = 0; j < *cnt; j++)
				if (strcasecmp(field + j * elem, w[i]) == 0)
					return fail(why, whylen, -EINVAL, "%s listed twice", w[i]);
			memset(item, 0, elem);
			memcpy(item, w[i], strlen(w[i]));
		} else {
			rc = k->type == T_LISTEN ? set_endpoint(k, item, w[i], why, whylen) :
			     set_prefix(item, w[i], k->type != T_ADDRS, why, whylen);
			if (rc < 0)
				return rc;
			for (unsigned j = 0; k->type == T_ADDRS && j < *cnt; j++)
				if (fg_prefix_same_addr((const struct fg_prefix *)field + j,
							(const struct fg_prefix *)item))
					return fail(why, whylen, -EINVAL, "%s listed twice", w[i]);
		}
		(*cnt)++;
	}
	return 0;
}

/* newsgroups: the words of a line joined by ",", appended to earlier lines */
static int set_wildmat(const struct cfg_key *k, char *field, char *const *w, unsigned n,
		       char *why, size_t whylen)
{
	char part[FG_CONFIG_WILDMAT_MAX];
	size_t len = 0, off;
	const char *what;

	for (unsigned i = 0; i < n; i++) {
		size_t l = strlen(w[i]);
		bool comma = i > 0 && part[len - 1] != ',' && w[i][0] != ',';

		if (len + comma + l >= sizeof(part))
			goto too_long;
		if (comma)
			part[len++] = ',';
		memcpy(part + len, w[i], l);
		len += l;
	}
	part[len] = '\0';
	if (fg_wildmat_check(part, &off, &what) < 0)
		return fail(why, whylen, -EINVAL, "\"%s\": %s (at offset %zu)", part, what, off);
	off = strlen(field);
	if (off + (off > 0) + len >= k->size)
		goto too_long;
	if (off > 0)
		field[off++] = ',';
	memcpy(field + off, part, len + 1);
	return 0;
too_long:
	return fail(why, whylen, -ENOSPC, "pattern too long (at most %zu octets in all)",
		    k->size - 1);
}

static int set_args(const struct cfg_key *k, char *field, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	struct cfg_text t = { .buf = field, .size = k->size };

	for (unsigned i = 0; i < n; i++) {
		if (i)
			cfg_text_printf(&t, " ");
		cfg_text_word(&t, w[i]);
	}
	if (t.len >= k->size) {
		field[0] = '\0';
		return fail(why, whylen, -ENOSPC, "too long (at most %zu octets)", k->size - 1);
	}
	return 0;
}

static bool is_list(enum cfg_type t)
{
	return t == T_PATH_IDS || t == T_LISTEN || t == T_PEER_ADDRS || t == T_ADDRS ||
	       t == T_HEADERS || t == T_WILDMAT || t == T_ARGS || t == T_DISTS || t == T_VLAN;
}

/* "vlan ID [ADDRESS/LEN]" (IEEE 802.1Q: IDs 1 to 4094; 0 and 4095 are
 * reserved): one VLAN a line, each ID once, at most one without an
 * address (the VLAN `address` is on). "none" empties the list. */
static int set_vlan(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		    char *why, size_t whylen)
{
	unsigned *cnt = (unsigned *)((char *)base + k->cnt);
	struct fg_config_vlan *v = (struct fg_config_vlan *)((char *)base + k->off), nv;
	char *end;
	unsigned long id;
	int rc;

	if (n == 1 && strcmp(w[0], "none") == 0) {
		*cnt = 0;
		memset(v, 0, k->size);
		return 0;
	}
	if (n > 2)
		return fail(why, whylen, -EINVAL, "expects a VLAN ID and at most one address");
	id = strtoul(w[0], &end, 10);
	if (*end || end == w[0] || w[0][0] == '-' || id < 1 || id > FG_VLAN_ID_MAX)
		return fail(why, whylen, -EINVAL, "\"%s\" is not a VLAN ID (1 to %u)", w[0],
			    FG_VLAN_ID_MAX);
	memset(&nv, 0, sizeof(nv));
	nv.id = (unsigned)id;
	if (n == 2 && (rc = set_prefix(&nv.addr, w[1], false, why, whylen)) < 0)
		return rc;
	for (unsigned i = 0; i < *cnt; i++) {
		if (v[i].id == nv.id)
			return fail(why, whylen, -EINVAL, "VLAN %u is listed twice", nv.id);
		if (n == 1 && v[i].addr.family == 0)
			return fail(why, whylen, -EINVAL, "`address` is on VLAN %u already",
				    v[i].id);
	}
	if (*cnt == FG_CONFIG_MAX_VLANS)
		return fail(why, whylen, -E2BIG, "too many VLANs (at most %u)",
			    FG_CONFIG_MAX_VLANS);
	v[(*cnt)++] = nv;
	return 0;
}

static void format_vlan(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	const struct fg_config_vlan *v = (const void *)((const char *)base + k->off);
	unsigned cnt;
	char buf[64];

	memcpy(&cnt, (const char *)base + k->cnt, sizeof(cnt));
	if (cnt == 0)
		cfg_text_printf(t, " none");
	for (unsigned i = 0; i < cnt; i++) {
		if (i)
			cfg_text_printf(t, "\n%-20s", k->name);
		cfg_text_printf(t, " %u", v[i].id);
		if (v[i].addr.family) {
			fg_prefix_format(&v[i].addr, buf, sizeof(buf));
			cfg_text_printf(t, " %s", buf);
		}
	}
}

int cfg_key_set(const struct cfg_key *k, void *base, char *const *w, unsigned n,
		char *why, size_t whylen)
{
	char *field = (char *)base + k->off;

	if (n == 0)
		return fail(why, whylen, -EINVAL, "missing value");
	if (n > 1 && !is_list(k->type))
		return fail(why, whylen, -EINVAL, "expects one value, got %u "
			    "(quote a value that holds blanks)", n);
	switch ((enum cfg_type)k->type) {
	case T_NAME:
	case T_PATH:
	case T_DEVICE:
		return set_string(k, field, w[0], why, whylen);
	case T_DURATION:
	case T_SIZE:
	case T_UINT:
	case T_PERCENT:
		return set_number(k, field, w[0], why, whylen);
	case T_BOOL:
		if (fg_parse_bool(w[0], (bool *)field) < 0)
			return fail(why, whylen, -EINVAL, "\"%s\" is not on/off, yes/no "
				    "or true/false", w[0]);
		return 0;
	case T_ENUM:
		return set_enum(k, field, w[0], why, whylen);
	case T_ENDPOINT:
		return set_endpoint(k, field, w[0], why, whylen);
	case T_MAC:
		return set_mac(field, w[0], why, whylen);
	case T_HEADERS:
		*(unsigned *)((char *)base + k->cnt) = 0;
		memset(field, 0, k->size);
		if (n == 1 && strcmp(w[0], "none") == 0)
			return 0;
		return set_list(k, base, w, n, why, whylen);
	case T_PATH_IDS:
	case T_LISTEN:
	case T_PEER_ADDRS:
	case T_ADDRS:
	case T_DISTS:
		if ((k->flags & F_NONE) && n == 1 && strcmp(w[0], "none") == 0) {
			*(unsigned *)((char *)base + k->cnt) = 0;
			memset(field, 0, k->size);
			return 0;
		}
		return set_list(k, base, w, n, why, whylen);
	case T_VLAN:
		return set_vlan(k, base, w, n, why, whylen);
	case T_WILDMAT:
		return set_wildmat(k, field, w, n, why, whylen);
	case T_ARGS:
		return set_args(k, field, w, n, why, whylen);
	}
	return fail(why, whylen, -EINVAL, "internal: unknown key type");
}

/* ---------------------------------------------------------------- format */

static void format_list(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	unsigned cnt;
	const char *field = (const char *)base + k->off;
	size_t elem = k->size / list_max(k);
	char buf[64];

	memcpy(&cnt, (const char *)base + k->cnt, sizeof(cnt));
	if (cnt == 0 && (k->type == T_HEADERS || (k->flags & F_NONE)))
		cfg_text_printf(t, " none");
	for (unsigned i = 0; i < cnt; i++) {
		if (k->type == T_LISTEN)
			fg_endpoint_format((const struct fg_endpoint *)field + i, buf, sizeof(buf));
		else if (k->type == T_PEER_ADDRS || k->type == T_ADDRS)
			fg_prefix_format((const struct fg_prefix *)field + i, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%s", field + i * elem);
		cfg_text_printf(t, " %s", buf);
	}
}

void cfg_key_format(struct cfg_text *t, const struct cfg_key *k, const void *base)
{
	const char *field = (const char *)base + k->off;
	char buf[80];
	int e;

	cfg_text_printf(t, "%-20s", k->name);
	switch ((enum cfg_type)k->type) {
	case T_NAME:
	case T_DEVICE:
	case T_PATH:
	case T_WILDMAT:
		cfg_text_printf(t, " ");
		if ((k->flags & F_OFF) && field[0] == '\0')
			cfg_text_printf(t, "off");
		else
			cfg_text_word(t, field);
		break;
	case T_ARGS:
		cfg_text_printf(t, " %s", field);	/* stored already quoted */
		break;
	case T_DURATION:
		cfg_fmt_duration(buf, sizeof(buf), load_int(field, k->size), k->unit);
		cfg_text_printf(t, " %s", buf);
		break;
	case T_SIZE: {
		uint64_t v;

		memcpy(&v, field, sizeof(v));
		cfg_fmt_size(buf, sizeof(buf), v);
		cfg_text_printf(t, " %s", buf);
		break;
	}
	case T_UINT:
	case T_PERCENT:
		cfg_text_printf(t, " %lld%s", (long long)load_int(field, k->size),
				k->type == T_PERCENT ? "%" : "");
		break;
	case T_BOOL:
		cfg_text_printf(t, " %s", *(const bool *)field ? "on" : "off");
		break;
	case T_ENUM:
		memcpy(&e, field, sizeof(e));
		cfg_text_printf(t, " %s", k->names[e]);
		break;
	case T_ENDPOINT:
		if (((const struct fg_endpoint *)field)->port == 0)
			snprintf(buf, sizeof(buf), "off");
		else
			fg_endpoint_format((const struct fg_endpoint *)field, buf, sizeof(buf));
		cfg_text_printf(t, " %s", buf);
		break;
	case T_MAC: {
		const uint8_t *m = (const uint8_t *)field;

		if (!(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
			cfg_text_printf(t, " auto");
		else
			cfg_text_printf(t, " %02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1],
					m[2], m[3], m[4], m[5]);
		break;
	}
	case T_PATH_IDS:
	case T_LISTEN:
	case T_PEER_ADDRS:
	case T_ADDRS:
	case T_HEADERS:
	case T_DISTS:
		format_list(t, k, base);
		break;
	case T_VLAN:
		format_vlan(t, k, base);
		break;
	}
	cfg_text_printf(t, "\n");
}
