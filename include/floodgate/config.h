/* SPDX-License-Identifier: MIT */
/*
 * config.h — floodgate.conf, parsed and validated into one struct.
 *
 * The file format is line based (docs/configuration.md is its reference):
 *
 *     # comment
 *     [site]
 *     path-identity   news.example.net
 *     [peer innfeed-a]
 *     address         192.0.2.10 2001:db8::10
 *     newsgroups      *,!junk,!control.*
 *
 * A line is `key value...` inside the last `[section]` or `[section name]`
 * header; values are words separated by blanks, "#" at the start of a word
 * begins a comment, and a word holding blanks, "#" or quotes is written in
 * double quotes (inside them \" and \\ are escapes, any other "\" is
 * literal). Durations take w/d/h/m/s (and ms/us) suffixes, a bare number
 * is seconds; sizes K/M/G/T (powers of 1024), a bare number is octets;
 * booleans on/off/yes/no/true/false. Every error names file:line and the
 * key; unknown sections and keys are errors; all errors are collected. An
 * embedded default configuration (fg_config_default_text) is what runs
 * when no file is given, so nothing is required to start.
 *
 * Ownership: fg_config_load*() returns a heap object the caller frees with
 * fg_config_free(). It is immutable after load; a reload builds a new one
 * and swaps the pointer (the dataplane does so between bursts).
 */
#ifndef FLOODGATE_CONFIG_H
#define FLOODGATE_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "floodgate/common.h"
#include "floodgate/date.h"
#include "floodgate/log.h"

#define FG_CONFIG_MAX_PATH_IDS 8
#define FG_CONFIG_MAX_LISTEN 8
#define FG_CONFIG_MAX_DP_ADDRS 8	/* [dataplane] address: IPv4 and IPv6 */
#define FG_CONFIG_MAX_PEERS 256
#define FG_CONFIG_MAX_PEER_ADDRS 16
#define FG_CONFIG_MAX_DOWNSTREAMS 8
#define FG_CONFIG_NAME_MAX 64
#define FG_CONFIG_PATH_MAX 256
#define FG_CONFIG_WILDMAT_MAX 1024
#define FG_CONFIG_MAX_REQUIRED_HEADERS 8
#define FG_CONFIG_MAX_DISTS 16
#define FG_CONFIG_MAX_VLANS 7		/* with `address`, the net module's 8 addresses */
#define FG_VLAN_ID_MAX 4094
#define FG_CONFIG_DIST_MAX 32		/* one distribution word, with its "!" */
#define FG_CONFIG_SECRET_MAX 128	/* a peer's AUTHINFO username or password, octets */
#define FG_CONFIG_CRED_FILE_MAX 4096	/* a credentials file, octets */

/* RFC 5537 3.3: never accept an article dated more than 24 h ahead. */
#define FG_FUTURE_MARGIN_MAX (24 * 3600)
/* History entries keep the article date as an offset from first-seen;
 * docs/history.md explains the limit this puts on the cutoff. */
#define FG_CUTOFF_MAX (45 * 86400)
#define FG_CUTOFF_WARN_BELOW (7 * 86400)

enum fg_expiry_mode {
	FG_EXPIRY_FIRST_SEEN = 0,	/* drop when first-seen < now - retention */
	FG_EXPIRY_ARTICLE_DATE = 1,	/* drop when article date < now - cutoff */
};

enum fg_full_policy {
	FG_FULL_DEFER = 0,		/* refuse new offers (431) */
	FG_FULL_EVICT_OLDEST = 1,	/* drop oldest first-seen entries */
};

/* [history] huge-pages: the order of enum fg_region_huge (region.h). */
enum fg_huge_pages {
	FG_HUGE_AUTO = 0,		/* hugetlbfs if mounted with room, else shm-path */
	FG_HUGE_OFF = 1,		/* shm-path, small pages */
	FG_HUGE_HUGETLBFS = 2,		/* hugetlbfs; else shm-path, said in one log line */
	FG_HUGE_TMPFS = 3,		/* shm-path on a tmpfs mounted huge=; else said */
};

enum fg_downstream_mode {
	FG_DOWNSTREAM_STREAM = 0,	/* MODE STREAM, TAKETHIS (CHECK optional) */
	FG_DOWNSTREAM_IHAVE = 1,	/* IHAVE, for servers that do not stream */
};

/* How an acknowledging downstream is fed on the DPDK dataplane
 * (docs/relay.md, "Two paths"): by each worker's own TCP through the port,
 * or by the relay thread's kernel sockets; auto: the port when the
 * downstream's address is on a subnet of [dataplane] address. */
enum fg_downstream_path {
	FG_DOWNSTREAM_PATH_AUTO = 0,
	FG_DOWNSTREAM_PATH_PORT = 1,
	FG_DOWNSTREAM_PATH_KERNEL = 2,
};

enum fg_backlog_full {
	FG_BACKLOG_DEFER = 0,		/* defer the peers: nothing is lost */
	FG_BACKLOG_DROP = 1,		/* drop the parked downstream's oldest */
};

/* Where frames that are not floodgate's go ([dataplane] exception-path). */
enum fg_exception_path {
	FG_EXCEPTION_NONE = 0,		/* counted and dropped */
	FG_EXCEPTION_TAP = 1,		/* to the box's kernel through a tap port */
};

enum fg_dataplane_mode {
	FG_DATAPLANE_ACTIVE = 0,	/* terminate TCP, answer, relay */
	FG_DATAPLANE_PASSIVE = 1,	/* reassemble a captured stream, count, send nothing */
	FG_DATAPLANE_SHADOW = 2,	/* passive, and compare with the server's answers */
};

/* An IPv4 or IPv6 prefix; a bare address is a /32 or /128. */
struct fg_prefix {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t len;
	uint8_t addr[16];		/* network byte order */
};

/* host:port; host is an address literal (no DNS in the dataplane). */
struct fg_endpoint {
	int family;
	uint8_t addr[16];
	uint16_t port;			/* host byte order */
};

/* [dataplane] vlan: an 802.1Q VLAN of the port, and the address floodgate
 * has on it; an entry without an address (family 0) puts `address` on it. */
struct fg_config_vlan {
	unsigned id;			/* 1..FG_VLAN_ID_MAX */
	struct fg_prefix addr;
};

/*
 * A peer's AUTHINFO USER/PASS credentials (RFC 4643 2.3), read from the
 * file its `credentials` key names when the configuration loads. Each is
 * kept zero-padded to FG_CONFIG_SECRET_MAX, so that a check compares the
 * whole buffer whatever the lengths (dataplane/nntp/auth.c). pass_len 0:
 * the peer does not authenticate. user_len 0 with a password: any username
 * (innd's incoming.conf checks the password alone).
 */
struct fg_config_cred {
	uint16_t user_len, pass_len;
	char user[FG_CONFIG_SECRET_MAX];
	char pass[FG_CONFIG_SECRET_MAX];
};

struct fg_config_peer {
	char name[FG_CONFIG_NAME_MAX];
	struct fg_prefix addr[FG_CONFIG_MAX_PEER_ADDRS];
	unsigned n_addr;
	/* RFC 3977 4 wildmat, as written (default "*"); see wildmat.h */
	char newsgroups[FG_CONFIG_WILDMAT_MAX];
	/* Held box-wide, across every engine thread (peerlim.h); 0 = unlimited */
	unsigned max_connections;	/* open sessions */
	unsigned max_connection_rate;	/* new connections a second */
	unsigned max_offer_rate;	/* CHECK/IHAVE/TAKETHIS a second */
	uint64_t max_byte_rate;		/* input octets a second */
	uint64_t max_article_size;	/* 0 = rules.max_article_size */
	char credentials[FG_CONFIG_PATH_MAX];	/* the credentials file; "" none */
	struct fg_config_cred cred;	/* read from it at load; never formatted */
	/* 238s (and 335s) a session holds open, not yet followed by their
	 * article nor lapsed; past it new offers are deferred. Default 1024 */
	unsigned max_outstanding_offers;
};

struct fg_config_downstream {
	char name[FG_CONFIG_NAME_MAX];
	struct fg_endpoint addr;
	unsigned connections;		/* default 1 */
	unsigned window;		/* TAKETHIS in flight per connection, default 64 */
	enum fg_downstream_mode mode;
	bool check_first;		/* CHECK before TAKETHIS; default off */
	/* End-to-end acknowledgement (docs/relay.md): its 239 makes an
	 * article safe, answered to the peer without the queue's disk;
	 * default off (the queue's promise) */
	bool acknowledges;
	enum fg_downstream_path path;	/* default auto */
	/* Its stable identity: names its cursor file and, in queue records,
	 * the downstreams an article goes to (feeds.h). Default: the section
	 * name; keep it when renaming a section. */
	char id[FG_CONFIG_NAME_MAX];
	uint64_t ident;			/* derived: fg_config_ident(id) */
	/* What it is fed (INN newsfeeds semantics, feeds.h): */
	char newsgroups[FG_CONFIG_WILDMAT_MAX];	/* wildmat with "!" and "@"; default "*" */
	char distributions[FG_CONFIG_MAX_DISTS][FG_CONFIG_DIST_MAX];	/* "!" negates */
	unsigned n_distributions;	/* 0: any */
	uint64_t max_article_size;	/* octets; 0 = no limit */
	uint64_t min_article_size;	/* octets; 0 = no limit */
	char exclude_path[FG_CONFIG_MAX_PATH_IDS][FG_CONFIG_NAME_MAX];	/* in Path: it has it */
	unsigned n_exclude_path;
	/* Backlog limits (qwriter.h, docs/relay.md): past one it is parked */
	uint64_t backlog_articles;	/* 0 = none */
	uint64_t backlog_bytes;		/* default queue-limit / 4; 0 = none */
	int64_t backlog_age;		/* seconds; 0 = none */
	uint64_t backlog_disk;		/* kept for it while parked; default queue-limit; 0 = no cap */
	enum fg_backlog_full backlog_full;	/* at backlog-disk; default defer */
};

struct fg_config {
	/* [site] */
	char server_name[FG_CONFIG_NAME_MAX];	/* greeting; default: hostname */
	char path_ids[FG_CONFIG_MAX_PATH_IDS][FG_CONFIG_NAME_MAX];
	unsigned n_path_ids;
	struct fg_endpoint listen[FG_CONFIG_MAX_LISTEN];
	unsigned n_listen;

	/* [rules] — seconds and octets */
	int64_t cutoff;			/* default 10 d (INN artcutoff) */
	int64_t future_margin;		/* default 24 h, never more */
	enum fg_date_syntax date_syntax;/* default inn: innd's accept/refuse set */
	enum fg_expiry_mode expiry;	/* default first-seen */
	int64_t retention;		/* default cutoff + 1 d */
	uint64_t max_article_size;	/* default 1,000,000 (INN maxartsize) */
	bool version_numbers;		/* parse $v=N, keep the side index; default on */
	bool honor_versions;		/* a newer $v=N makes older ones unwanted; default off */
	bool honor_supersedes;		/* Supersedes makes the named ID unwanted; default off */
	bool remember_rejects;		/* INN remembertrash; default on */
	bool refuse_cyber_cancels;	/* INN refusecybercancels: refuse <cancel.*> IDs; default off */
	char required_headers[FG_CONFIG_MAX_REQUIRED_HEADERS][32];
	unsigned n_required_headers;	/* default From Newsgroups Path Subject */

	/* [session] */
	int64_t offer_timeout;		/* 238 -> others get 431 this long; default 10 s */
	unsigned max_line;		/* command line octets incl. CRLF; default 512 */
	int64_t idle_timeout;		/* default 600 s */
	uint64_t max_pending_bytes;	/* per session, waiting for the sink; default 16 MiB */
	unsigned max_pending_commands;	/* per session; default 1024 */
	int64_t clock_skew_limit;	/* defer when the clock looks off by more; default 1 h */

	/* [history] */
	uint64_t history_capacity;	/* entries; default 4 M */
	unsigned history_shards;	/* power of two <= 256; 0 = auto (one per 16 M entries) */
	enum fg_huge_pages huge_pages;	/* default auto */
	enum fg_full_policy full_policy;/* default defer */
	unsigned alarm_load_pct;	/* near-full alarm at this load; default 90 */
	char shm_path[FG_CONFIG_PATH_MAX];	/* default /dev/shm/floodgate */

	/* [persistence] */
	char data_dir[FG_CONFIG_PATH_MAX];	/* default /var/lib/floodgate */
	int64_t journal_commit_ms;	/* group commit interval; default 1000 */
	int64_t snapshot_interval;	/* seconds; default 300 */
	unsigned snapshot_keep;		/* default 2 */
	int64_t snapshot_rate;		/* image bytes a second; 0 (default): unpaced */
	int64_t queue_commit_ms;	/* outbound queue group commit; default 10 */
	uint64_t queue_limit;		/* bytes on disk before deferring; default 8 GiB */
	int64_t queue_max_age;		/* seconds: oldest undelivered article before deferring; 0 = off */
	int64_t warmup;			/* seconds of downstream-assisted CHECK after a cold start; default = cutoff; 0 = off */
	int64_t ack_timeout_ms;		/* end-to-end acknowledgement: spill after this; default 250 */
	uint64_t held_limit;		/* article octets an engine thread holds; default 64 MiB */

	/* [downstream NAME] */
	struct fg_config_downstream downstream[FG_CONFIG_MAX_DOWNSTREAMS];
	unsigned n_downstream;

	/* [cluster] (docs/scale.md, "Several boxes"): off without seeds */
	char cluster_seeds[256];	/* host:port,host:port */
	char cluster_secret[128];	/* site-wide key of the cluster's key hash */
	char cluster_password[128];	/* AUTH; "" none */
	char cluster_box[FG_CONFIG_NAME_MAX];	/* this box's name; "": server-name */
	int64_t cluster_window_ms;	/* an outcome is kept this long; default 1 h */
	int64_t cluster_timeout_ms;	/* a claim's answer; default 50 ms */

	/* [peer NAME] */
	struct fg_config_peer peer[FG_CONFIG_MAX_PEERS];
	unsigned n_peer;

	/* [stats] */
	struct fg_endpoint http;	/* default 127.0.0.1:9119; port 0 = off */
	char control_socket[FG_CONFIG_PATH_MAX];	/* default /run/floodgate/control.sock */
	char verdict_log[FG_CONFIG_PATH_MAX];	/* empty = off */
	uint64_t verdict_log_rotate;	/* bytes per file; default 256 MiB */
	unsigned verdict_log_keep;	/* files; default 8 */
	int64_t report_interval;	/* seconds between report samples; default 60 */
	unsigned report_keep;		/* days of report samples kept; default 8 */

	/* [dataplane] */
	enum fg_dataplane_mode dp_mode;
	char eal_args[1024];		/* default --no-huge -m 512 --no-pci --no-shconf --no-telemetry */
	char port[FG_CONFIG_PATH_MAX];	/* a --vdev or PCI address; default net_tap0,iface=fg0 */
	unsigned workers;		/* worker lcores; default 1 */
	unsigned rx_queues;		/* per port; default = workers */
	unsigned mbufs;			/* mempool size; default 16383 */
	unsigned dp_mtu;		/* the port's MTU; 0: the port's own */
	bool dp_gro;			/* merge received TCP segments (GRO); default on */
	bool dp_tso;			/* the port segments large TCP frames (TSO); default on */
	unsigned tcp_connections;	/* connection blocks; default 4096 */
	struct fg_prefix dp_addr[FG_CONFIG_MAX_DP_ADDRS];	/* our addresses on the port, */
	unsigned n_dp_addr;		/* with their prefix lengths, IPv4 and IPv6 */
	uint8_t dp_mac[6];		/* zero = the port's own */
	unsigned idle_backoff_us;	/* max sleep of an idle worker; default 100; 0 = spin */
	struct fg_config_vlan dp_vlan[FG_CONFIG_MAX_VLANS];	/* default none */
	unsigned n_dp_vlan;
	enum fg_exception_path dp_exception;	/* default none */
	char dp_exception_iface[16];	/* the kernel side's name (IFNAMSIZ); default fgx0 */
	unsigned dp_exception_rate;	/* frames/s to the kernel, all workers; default 10000 */

	/* [log] */
	enum fg_log_target log_target;	/* default stderr */
	enum fg_log_timestamps log_timestamps;	/* default auto */
};

/* One problem found while loading: "file:line: key: message". */
struct fg_config_error {
	char text[512];		/* "FILE:LINE: KEY: MESSAGE" (no LINE: when 0) */
	unsigned line;		/* 0: not one line's */
	uint16_t key_off, key_len;	/* the key (or section) within text */
	uint16_t msg_off;	/* the message within text */
};

struct fg_config_errors {
	struct fg_config_error err[32];
	unsigned n;			/* errors kept (at most 32) */
	unsigned total;			/* errors found */
	struct fg_config_error warn[16];
	unsigned n_warn;
};

/* The embedded default configuration, as text (also `floodctl config --default`). */
extern const char fg_config_default_text[];

/*
 * Load and validate. `name` labels errors ("floodgate.conf", "<default>").
 * Returns the config, or NULL with every error found listed in *errs
 * (never just the first). Warnings do not fail the load: a cutoff under
 * 7 days, a peer prefix inside another peer's, no peers, no downstream.
 */
struct fg_config *fg_config_load_file(const char *path, struct fg_config_errors *errs);
struct fg_config *fg_config_load_text(const char *name, const char *text,
				       size_t len, struct fg_config_errors *errs);
struct fg_config *fg_config_load_default(struct fg_config_errors *errs);
void fg_config_free(struct fg_config *cfg);

/*
 * A credentials file (docs/configuration.md, "Peer credentials"): lines
 * `username WORD` (optional) and `password WORD` (required), each at most
 * once, words as in floodgate.conf (quoted when they hold blanks), of
 * 1..FG_CONFIG_SECRET_MAX octets, no control character; "#" comments.
 * fg_config_cred_parse: 0, or -EINVAL with the line (0: the file as a
 * whole) and why. No message ever quotes a word of the file: a password
 * written on a line of its own must not reach a log.
 * fg_config_cred_read: the same for FILE, which must be a regular file of
 * at most FG_CONFIG_CRED_FILE_MAX octets that neither its group nor others
 * may read, write or execute (its owner, the service's user, and root are
 * the only ones who can read it); -errno otherwise, with why.
 */
int fg_config_cred_parse(const char *text, size_t len, struct fg_config_cred *out,
			 unsigned *line, char *why, size_t whylen);
int fg_config_cred_read(const char *path, struct fg_config_cred *out, unsigned *line,
			char *why, size_t whylen);

/* The peer whose addresses contain `addr` (family AF_INET/AF_INET6,
 * network byte order; unmap IPv4-mapped IPv6 first): the longest matching
 * prefix wins (two peers never share a prefix); NULL if none. A linear
 * scan, meant for connection setup, not for every packet. */
const struct fg_config_peer *fg_config_find_peer(const struct fg_config *cfg,
						 int family, const void *addr);
const struct fg_config_peer *fg_config_peer_by_name(const struct fg_config *cfg,
						    const char *name);

/*
 * What one program refuses at start in a configuration that loads (config
 * loading refuses the rest): `floodctl config --check --for PROGRAM`
 * prints the same messages the program logs before it exits.
 */
enum fg_program { FG_PROGRAM_FLOODCTLD, FG_PROGRAM_FLOODGATE, FG_PROGRAM_FLOODGATE_HOST };

#define FG_CONFIG_REFUSAL_MAX 200

/* "floodctld", "floodgate", "floodgate-host": 0, or -EINVAL. */
int fg_config_program_parse(const char *name, enum fg_program *out);
/* The program's refusals of `cfg`, at most `max` messages; returns how
 * many there are (0: it starts, as far as the file goes). */
unsigned fg_config_refusals(const struct fg_config *cfg, enum fg_program prog,
			    char (*why)[FG_CONFIG_REFUSAL_MAX], unsigned max);
/* A PCI address ("0000:01:00.0", "01:00.0"), optionally ",devargs":
 * floodgate's port given to the EAL as -a, not --vdev. */
bool fg_config_port_is_pci(const char *port);
/* What the program may still refuse at start that depends on the host,
 * not the file (one line, for operators). */
const char *fg_config_host_refusals(enum fg_program prog);

/* A downstream's identifier in queue records: FNV-1a, 64 bits, of its id.
 * Two ids of one configuration never share one (the load refuses it). */
uint64_t fg_config_ident(const char *id);

/* Log every error (level err) and warning (level warn) of a load. */
void fg_config_errors_log(const struct fg_config_errors *errs);

/* Send the program's log lines where [log] says, as `ident` (log.h); 0 or
 * -errno, which it also logs (the lines then stay on stderr). */
int fg_config_log_open(const struct fg_config *cfg, const char *ident);

/* The i-th key the parser knows, with its section ("site", "peer", ...);
 * false past the last. The documentation test walks this list. */
bool fg_config_key_at(unsigned i, const char **section, const char **key);
/* The i-th key's default as file text; NULL when it is derived from other
 * keys or required (docs/configuration.md says which). */
const char *fg_config_key_default(unsigned i);

/*
 * Split cfg->eal_args (stored as words, quoted where needed) into argv:
 * the words are copied into buf; at most `max` pointers are stored.
 * Returns the number of words or -ENOSPC / -E2BIG / -EINVAL.
 */
int fg_config_split_args(const char *args, char *buf, size_t buflen, char **argv,
			 unsigned max);

/* Parsers shared with the CLI: 0 or -EINVAL (-ERANGE on overflow). The
 * syntax of each is in docs/configuration.md ("Value types"). */
int fg_parse_duration(const char *s, int64_t *seconds);
int fg_parse_duration_ms(const char *s, int64_t *ms);
int fg_parse_size(const char *s, uint64_t *bytes);
int fg_parse_bool(const char *s, bool *out);
int fg_parse_prefix(const char *s, struct fg_prefix *out);
/* default_port 0: the port is required. Port 0 is refused. */
int fg_parse_endpoint(const char *s, uint16_t default_port, struct fg_endpoint *out);
bool fg_prefix_contains(const struct fg_prefix *p, int family, const void *addr);
/* Same family and address (the prefix lengths aside). */
bool fg_prefix_same_addr(const struct fg_prefix *a, const struct fg_prefix *b);
/* True when bits past p->len are set ("192.0.2.10/24"). */
bool fg_prefix_host_bits(const struct fg_prefix *p);
/* "192.0.2.0/24" (a single address bare: "192.0.2.1"), "[2001:db8::1]:119":
 * 0, -ENOSPC or -EINVAL. */
int fg_prefix_format(const struct fg_prefix *p, char *buf, size_t len);
/* Room for any endpoint fg_endpoint_format writes: "[" 45 "]:65535" NUL. */
#define FG_ENDPOINT_STRLEN 54
int fg_endpoint_format(const struct fg_endpoint *ep, char *buf, size_t len);
/* ep as a socket address to bind or connect to, into *ss: its length. */
socklen_t fg_endpoint_sockaddr(const struct fg_endpoint *ep, struct sockaddr_storage *ss);

/*
 * Write the effective configuration back as text in canonical form: every
 * key of every section, defaults included, so that loading the text gives
 * the same struct. snprintf's contract: at most len octets are written,
 * always NUL-terminated when len > 0, and the return value is the length
 * of the whole text (so >= len means it was cut).
 */
size_t fg_config_format(const struct fg_config *cfg, char *buf, size_t len);

/*
 * Reload (config_reload.c), for a running dataplane: load FILE ("" the
 * embedded default) and list its errors, or its warnings, to `out`; NULL
 * when it has errors. fg_config_restart_keys names, as "needs a restart",
 * each key of `n` that differs from the running `o` and sizes what exists
 * (the port, lcores, pools, the history region, per-session buffers, the
 * queue, the cluster; the listen addresses, the port's addresses and the
 * downstreams unless `live` has their FG_RELOAD_LIVE_* bit), then says the
 * reload is refused; it returns how many (0: the file may be applied).
 * fg_config_changes lists the keys of b that a lacks as "applied".
 */
#define FG_RELOAD_LIVE_LISTEN 0x1u	/* [site] listen */
#define FG_RELOAD_LIVE_DP_ADDR 0x2u	/* [dataplane] address */
#define FG_RELOAD_LIVE_DOWNSTREAM 0x4u	/* [downstream] sections */
struct fg_config *fg_config_reload_load(const char *file, FILE *out);
unsigned fg_config_restart_keys(const struct fg_config *n, const struct fg_config *o,
				unsigned live, FILE *out);
void fg_config_changes(const struct fg_config *a, const struct fg_config *b, FILE *out);

#endif /* FLOODGATE_CONFIG_H */
