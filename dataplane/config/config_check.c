/* SPDX-License-Identifier: MIT */
/*
 * config_check.c — the checks that span keys and sections, pass 4 of
 * loading floodgate.conf (config.c has the passes). Each key was checked
 * alone when its line was read (its type and range, config_keys.c); these
 * check keys against each other, once every default is applied:
 *   - dates: future-margin within RFC 5537 3.6's 24 hours, the cutoff
 *     within what a history entry can record (and a warning under 7
 *     days), retention at least cutoff + 24h when expiring by first-seen
 *     (RFC 5537 3.3);
 *   - [site] and the sections of one box: listen endpoints listed once,
 *     honor-versions with version-numbers, rx-queues >= workers, history
 *     shards a power of two, a control socket path that fits, and the
 *     VLANs against the addresses (IPv4 only, each address on one VLAN);
 *   - [peer]: every peer has an address, and no address maps to two
 *     peers (an overlap of prefixes is legal but warned about);
 *   - [downstream]: an address each and not shared, ids well-formed and
 *     distinct (they name the queue's routes), sizes and modes that make
 *     sense together;
 *   - [cluster]: seeds need the site's secret and read as host:port.
 * A check that involves a key whose own line was refused is skipped: the
 * real error is listed already, and a second one about a default would
 * mislead. Every problem names the line of the key it is about, or of the
 * section's header.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "config_int.h"

static void fmt_dur(char *buf, size_t len, int64_t seconds)
{
	cfg_fmt_duration(buf, len, seconds, INT64_C(1000000000));
}

/* The RFC 5537 date rules and the history's own limit on the cutoff. */
static void check_dates(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;
	char a[32], b[32];

	fmt_dur(a, sizeof(a), cfg->future_margin);
	if (!cfg_refused(ps, SEC_RULES, 0, "future-margin") &&
	    cfg->future_margin > FG_FUTURE_MARGIN_MAX)
		cfg_error_at(ps, cfg_line_of(ps, SEC_RULES, 0, "future-margin"), "future-margin",
			     "%s is more than 24h: RFC 5537 3.6 rejects articles dated more "
			     "than 24 hours ahead; only a smaller margin is allowed", a);
	if (cfg_refused(ps, SEC_RULES, 0, "cutoff"))
		return;
	fmt_dur(a, sizeof(a), cfg->cutoff);
	if (cfg->cutoff > FG_CUTOFF_MAX) {
		fmt_dur(b, sizeof(b), FG_CUTOFF_MAX);
		cfg_error_at(ps, cfg_line_of(ps, SEC_RULES, 0, "cutoff"), "cutoff",
			     "%s is more than %s: history entries keep the article date as "
			     "an offset from first-seen, which reaches back %s at most "
			     "(docs/history.md)", a, b, b);
		return;
	}
	if (cfg->cutoff < FG_CUTOFF_WARN_BELOW)
		cfg_warn_at(ps, cfg_line_of(ps, SEC_RULES, 0, "cutoff"), "cutoff",
			    "%s is under 7 days: articles still propagating will be rejected "
			    "as too old (RFC 5537 3.3)", a);
	/* RFC 5537 3.3: "the history retention interval MUST be at least 24
	 * hours longer than the cutoff interval" when expiring by first-seen. */
	if (cfg->expiry == FG_EXPIRY_FIRST_SEEN && !cfg_refused(ps, SEC_RULES, 0, "retention") &&
	    !cfg_refused(ps, SEC_RULES, 0, "expiry") &&
	    cfg->retention < cfg->cutoff + CFG_DAY) {
		fmt_dur(b, sizeof(b), cfg->retention);
		cfg_error_at(ps, cfg_line_of(ps, SEC_RULES, 0, "retention"), "retention",
			     "%s is less than cutoff %s + 24h: RFC 5537 3.3 requires first-seen "
			     "expiry to keep history at least 24 hours longer than the cutoff",
			     b, a);
	}
}

/* [dataplane] vlan against `address`: an address on one VLAN only, and
 * IPv6 untagged (the IPv6 handler does not tag; docs/dataplane.md). */
static void check_vlans(struct parse *ps)
{
	const struct fg_config *cfg = ps->cfg;
	unsigned line = cfg_line_of(ps, SEC_DATAPLANE, 0, "vlan");
	unsigned n_v4 = 0;
	bool has_v6 = false;

	for (unsigned j = 0; j < cfg->n_dp_addr; j++) {
		has_v6 |= cfg->dp_addr[j].family == AF_INET6;
		n_v4 += cfg->dp_addr[j].family == AF_INET;
	}
	for (unsigned i = 0; i < cfg->n_dp_vlan; i++)
		n_v4 += cfg->dp_vlan[i].addr.family == AF_INET;
	if (n_v4 > FG_CONFIG_MAX_DP_ADDRS)
		cfg_error_at(ps, line, "vlan", "%u IPv4 addresses in `address` and `vlan` together: "
			     "a port has at most %u", n_v4, FG_CONFIG_MAX_DP_ADDRS);
	for (unsigned i = 0; i < cfg->n_dp_vlan; i++) {
		const struct fg_config_vlan *v = &cfg->dp_vlan[i];

		if (!v->addr.family && has_v6)
			cfg_error_at(ps, line, "vlan", "VLAN %u: `vlan %u` alone would put `address` "
				     "on the VLAN, and IPv6 addresses are untagged in this version "
				     "(give the IPv4 address: `vlan %u ADDRESS/LEN`)", v->id, v->id, v->id);
		if (v->addr.family == AF_INET6)
			cfg_error_at(ps, line, "vlan", "VLAN %u: IPv6 addresses are untagged in this "
				     "version", v->id);
		for (unsigned j = 0; j < cfg->n_dp_addr; j++)
			if (v->addr.family == cfg->dp_addr[j].family &&
			    memcmp(v->addr.addr, cfg->dp_addr[j].addr, 16) == 0)
				cfg_error_at(ps, line, "vlan", "VLAN %u: the address is in `address` "
					     "already (`vlan %u` alone puts `address` on the VLAN)",
					     v->id, v->id);
	}
}

static void check_site(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;
	unsigned line = cfg_line_of(ps, SEC_SITE, 0, "listen");

	for (unsigned i = 0; i < cfg->n_listen; i++)
		for (unsigned j = 0; j < i; j++)
			if (memcmp(&cfg->listen[i], &cfg->listen[j], sizeof(cfg->listen[i])) == 0)
				cfg_error_at(ps, line, "listen", "an address is listed twice");
	if (cfg->honor_versions && !cfg->version_numbers)
		cfg_error_at(ps, cfg_line_of(ps, SEC_RULES, 0, "honor-versions"), "honor-versions",
			     "needs version-numbers on (the side index finds the newer version)");
	if (!cfg_refused(ps, SEC_DATAPLANE, 0, "rx-queues") && cfg->rx_queues < cfg->workers)
		cfg_error_at(ps, cfg_line_of(ps, SEC_DATAPLANE, 0, "rx-queues"), "rx-queues",
			     "%u is fewer than workers %u: every worker polls a queue of its own",
			     cfg->rx_queues, cfg->workers);
	check_vlans(ps);
	if (cfg->history_shards & (cfg->history_shards - 1))
		cfg_error_at(ps, cfg_line_of(ps, SEC_HISTORY, 0, "shards"), "shards",
			     "%u is not a power of two (or 0 for one shard per 16M entries)",
			     cfg->history_shards);
	if (strlen(cfg->control_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		cfg_error_at(ps, cfg_line_of(ps, SEC_STATS, 0, "control-socket"), "control-socket",
			     "too long for a unix socket (at most %zu octets)",
			     sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
}

/* [cluster]: the boxes of a site must hash IDs alike, so a secret is
 * required; a seed list must be host:port words. */
static void check_cluster(struct parse *ps)
{
	const struct fg_config *cfg = ps->cfg;
	unsigned line = cfg_line_of(ps, SEC_CLUSTER, 0, "seeds");

	if (!cfg->cluster_seeds[0])
		return;
	if (!cfg->cluster_secret[0])
		cfg_error_at(ps, line, "seeds", "needs [cluster] secret (the same on every box of "
			     "the site: it keys the hash of the IDs in the cluster)");
	for (const char *p = cfg->cluster_seeds; *p;) {
		size_t n = strcspn(p, ",");
		const char *colon = memchr(p, ':', n);

		if (!colon || colon == p || colon + 1 == p + n ||
		    strspn(colon + 1, "0123456789") != (size_t)(p + n - colon - 1)) {
			cfg_error_at(ps, line, "seeds", "\"%.*s\" is not host:port (seeds are "
				     "host:port,host:port)", (int)n, p);
			break;
		}
		p += n + (p[n] == ',');
	}
}

/* Does address j of peer pj clash with address i of peer pi (j before i)? */
static void check_addr_pair(struct parse *ps, unsigned pi, unsigned i, unsigned pj,
			    unsigned j)
{
	const struct fg_prefix *a = &ps->cfg->peer[pi].addr[i], *b = &ps->cfg->peer[pj].addr[j];
	const struct fg_prefix *inner = a->len >= b->len ? a : b, *outer = inner == a ? b : a;
	unsigned ia = inner == a ? pi : pj;
	unsigned line = ps->addr_line[pi][i];
	char ta[64], tb[64];

	if (!fg_prefix_contains(outer, inner->family, inner->addr))
		return;
	fg_prefix_format(a, ta, sizeof(ta));
	fg_prefix_format(b, tb, sizeof(tb));
	if (a->len == b->len && pi == pj)
		cfg_error_at(ps, line, "address", "%s is listed twice (line %u)", ta,
			     ps->addr_line[pj][j]);
	else if (a->len == b->len)
		cfg_error_at(ps, line, "address", "%s is also peer %s's (line %u): a connection "
			     "must map to one peer", ta, ps->cfg->peer[pj].name, ps->addr_line[pj][j]);
	else if (pi != pj)
		/* legal, and decided by longest prefix; said because it is often a slip */
		cfg_warn_at(ps, line, "address", "%s overlaps peer %s's %s (line %u): connections "
			    "from %s belong to peer %s (the most specific prefix wins)", ta,
			    ps->cfg->peer[pj].name, tb, ps->addr_line[pj][j],
			    inner == a ? ta : tb, ps->cfg->peer[ia].name);
}

static void check_peers(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;

	for (unsigned p = 0; p < cfg->n_peer; p++) {
		if (cfg->peer[p].n_addr == 0 && !cfg_refused(ps, SEC_PEER, p, "address"))
			cfg_error_at(ps, ps->hdr_line[SLOT_PEER(p)], "address",
				     "peer %s has no address", cfg->peer[p].name);
		for (unsigned i = 0; i < cfg->peer[p].n_addr; i++)
			for (unsigned q = 0; q <= p; q++)
				for (unsigned j = 0; j < (q == p ? i : cfg->peer[q].n_addr); j++)
					check_addr_pair(ps, p, i, q, j);
	}
	if (cfg->n_peer == 0)
		cfg_warn_at(ps, 0, "peer", "no [peer] sections: every connection will be refused");
}

static void check_downstreams(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;

	for (unsigned d = 0; d < cfg->n_downstream; d++) {
		struct fg_config_downstream *ds = &cfg->downstream[d];

		if (ds->addr.port == 0 && !cfg_refused(ps, SEC_DOWNSTREAM, d, "address"))
			cfg_error_at(ps, ps->hdr_line[SLOT_DS(d)], "address",
				     "downstream %s has no address", ds->name);
		for (unsigned e = 0; e < d && ds->addr.port; e++)
			if (memcmp(&ds->addr, &cfg->downstream[e].addr, sizeof(ds->addr)) == 0)
				cfg_error_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "address"), "address",
					     "same server as downstream %s", cfg->downstream[e].name);
		if (!cfg_valid_name(ds->id))
			cfg_error_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "id"), "id",
				     "an id is 1-%d letters, digits, \"-\", \"_\" or \".\"",
				     FG_CONFIG_NAME_MAX - 1);
		for (unsigned e = 0; e < d; e++)
			if (strcmp(ds->id, cfg->downstream[e].id) == 0 ||
			    ds->ident == cfg->downstream[e].ident)
				cfg_error_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "id"), "id",
					     "downstream %s has the id \"%s\" of downstream %s "
					     "(ids name the queue's routes: each its own)", ds->name,
					     ds->id, cfg->downstream[e].name);
		if (ds->backlog_bytes && cfg->queue_limit && ds->backlog_bytes >= cfg->queue_limit &&
		    cfg->n_downstream > 1)
			cfg_warn_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "backlog-bytes"), "backlog-bytes",
				    "downstream %s: not under queue-limit: the shared queue defers the "
				    "peers before this downstream is ever parked", ds->name);
		if (ds->max_article_size && ds->min_article_size > ds->max_article_size)
			cfg_error_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "min-article-size"),
				     "min-article-size", "above max-article-size: downstream %s "
				     "would be fed nothing", ds->name);
		if (ds->mode == FG_DOWNSTREAM_IHAVE && ds->check_first)
			cfg_warn_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "check-first"), "check-first",
				    "ignored with mode ihave (IHAVE always asks first)");
		if (ds->mode == FG_DOWNSTREAM_IHAVE && ds->acknowledges)
			cfg_warn_at(ps, cfg_line_of(ps, SEC_DOWNSTREAM, d, "acknowledges"),
				    "acknowledges", "downstream %s: mode ihave streams nothing: its "
				    "articles take the queue's path (written and synced first)",
				    ds->name);
	}
	if (cfg->n_downstream == 0 && cfg->dp_mode == FG_DATAPLANE_ACTIVE)
		cfg_warn_at(ps, 0, "downstream", "no [downstream] sections: accepted articles "
			    "are queued but relayed nowhere, and warm-up lookups are off");
}

void cfg_check(struct parse *ps)
{
	check_dates(ps);
	check_site(ps);
	check_peers(ps);
	check_downstreams(ps);
	check_cluster(ps);
}
