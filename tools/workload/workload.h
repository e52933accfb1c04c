/* SPDX-License-Identifier: MIT */
/*
 * workload.h — feedgen's workload model: which articles exist, what each
 * looks like on the wire, which peer offers which article in what order,
 * and what a correct server must answer (docs/feedgen.md).
 *
 * Everything about article i is a pure function of (seed, i): its class,
 * dates, Message-ID, size and body slice are derived from a keyed hash, so
 * the live client, the pcap writer and the tests see the same workload
 * without storing it. Only the per-peer offer orders are materialised
 * (4 bytes per offer).
 *
 * Classes (what RFC 5537 3.3 and the site's rules make of the article):
 *   WANTED    valid, dated inside [now - cutoff, now + margin]: exactly one
 *             offer across all peers must get 239 (RFC 5537 3: accept once)
 *   OLD       article date (Injection-Date, else Date) older than the cutoff
 *   FUTURE    article date more than the future margin ahead (RFC 5537 3.3)
 *   PATHLOOP  the server's path identity already in Path (only generated
 *             when the server's identity is given)
 *   BADID     Message-ID valid as an RFC 3977 argument but not RFC 5536 3.1.3
 * Every class but WANTED must never get 239.
 *
 * Orthogonal traits: with or without Injection-Date; "offline" articles
 * whose Date is older than the cutoff but whose Injection-Date is recent
 * (seed 002: they are WANTED, the date that counts is Injection-Date);
 * version-number IDs ($v=N, seed 000) that carry Supersedes of an earlier
 * article (servers are assumed not to honour either: floodgate's default,
 * and INN with docancels none).
 *
 * Offers: article i goes to dups distinct peers (all when dups >= peers),
 * starting at peer i mod peers. Each peer offers its articles in ascending
 * order, shuffled within blocks of `spread` offers, so the dups offers of
 * one article arrive within about `spread` offers of each other.
 *
 * Offer multiplicity, as flood-fill makes it: instead of one dups for all,
 * a distribution "K:W,K:W,..." (fg_wl_params_set_dups) gives article i
 * K_i peers, K drawn with weight W from the article's own hash (salt
 * SALT_DUPS: the other derived values do not move). Every peer offering
 * it sends it at nearly the same time (the spread above), so exactly one
 * TAKETHIS may get 239 and the other K_i - 1 get 439 (or 438 to CHECK).
 */
#ifndef FLOODGATE_WORKLOAD_H
#define FLOODGATE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"

#define FG_WL_MAX_PEERS 256
#define FG_WL_MAX_GROUPS 16
#define FG_WL_NAME_MAX 64
#define FG_WL_ID_MAX 250		/* RFC 5536 3.1.3 */
#define FG_WL_HDR_MAX 1024		/* formatted headers of one article */
#define FG_WL_MAX_SIZE 4160000u	/* largest article: the full feed's (size feed); the 4 MiB pools serve it */
#define FG_WL_BINARY_MIN (64u << 10)	/* fixed sizes from here use the binary pool */
#define FG_WL_DUPS_MAX 8		/* entries of a multiplicity distribution */

enum fg_wl_class {
	FG_WL_WANTED = 0,
	FG_WL_OLD,
	FG_WL_FUTURE,
	FG_WL_PATHLOOP,
	FG_WL_BADID,
	FG_WL__CLASSES
};

enum fg_wl_size_mode {
	FG_WL_SIZE_FIXED = 0,	/* every article about `size` octets */
	FG_WL_SIZE_MIX = 1,	/* text posts 800..8000 octets, a share of ~700 KB binary parts */
	FG_WL_SIZE_FEED = 2,	/* a full feed's mix, from published figures (model.c) */
};

/* Size feed: the share of binary articles among all, so that text carries
 * FG_WL_FEED_TEXT_BYTES of the octets; and a binary article's size at
 * quantile u (0..1). Both from the figures in model.c. */
#define FG_WL_FEED_TEXT_BYTES 0.0035
double fg_wl_feed_binary_share(void);
uint32_t fg_wl_feed_binary_size(double u);
uint32_t fg_wl_feed_text_size(double u);

struct fg_wl_params {
	uint64_t seed;
	uint32_t articles;	/* unique articles */
	unsigned peers;		/* simulated peers */
	unsigned dups;		/* offers per article across peers (default 10); with a
				 * distribution, its largest K */
	/* the multiplicity distribution: K_i = dups_k[j] with weight
	 * dups_w[j] (summing to 1); n_dups 0 = every article dups */
	unsigned dups_k[FG_WL_DUPS_MAX];
	double dups_w[FG_WL_DUPS_MAX];
	unsigned n_dups;
	unsigned spread;	/* offers of one article within about this many offers */
	enum fg_wl_size_mode size_mode;
	uint32_t size;		/* fixed mode: article octets (headers included) */
	uint32_t binary_size;	/* mix mode: binary part octets (default 700 KB) */
	double p_binary;	/* mix mode: share of binary parts */
	double p_old, p_future, p_pathloop, p_badid;	/* class shares */
	double p_no_injdate;	/* share without Injection-Date */
	double p_offline;	/* share (of those with one) whose Date is older than the cutoff */
	double p_version;	/* share carrying a $v=N ID and Supersedes */
	double p_near_future;	/* share of WANTED dated ahead, inside the margin */
	fg_time_t now;		/* the reference clock of every date */
	int64_t cutoff;		/* seconds; the server's cutoff (INN artcutoff) */
	int64_t future_margin;	/* seconds, <= 24 h (RFC 5537 3.3) */
	char path_identity[FG_WL_NAME_MAX];	/* the server's; empty = no PATHLOOP */
	char id_prefix[FG_WL_NAME_MAX];		/* left part of every ID; default "fg<seed>" */
	char groups[FG_WL_MAX_GROUPS][FG_WL_NAME_MAX];
	unsigned n_groups;	/* the last group takes binaries when there are >= 2 */
};

/* One article, as derived from (seed, i). */
struct fg_wl_article {
	uint32_t index;
	enum fg_wl_class cls;
	bool has_injdate;
	bool offline;		/* Date older than the cutoff, Injection-Date recent */
	bool is_version;
	bool binary;
	fg_time_t date;		/* Date header */
	fg_time_t injection_date;	/* valid when has_injdate */
	fg_time_t article_date;	/* the one RFC 5537 checks: Injection-Date else Date */
	unsigned group;
	uint32_t body_off, body_len;	/* wire-form body slice of the pool */
	size_t msgid_len;
	char msgid[FG_WL_ID_MAX + 1];
	size_t supersedes_len;	/* 0 unless is_version */
	char supersedes[FG_WL_ID_MAX + 1];
};

struct fg_wl;

/* Defaults (docs/feedgen.md); `now` is left 0: set it, or fg_wl_create uses time(). */
void fg_wl_params_default(struct fg_wl_params *p);
/* "text,binaries" -> groups; 0 or -EINVAL. */
int fg_wl_params_set_groups(struct fg_wl_params *p, const char *list);

/* "K" (every article offered by K peers) or "K:W,K:W,..." (K peers with
 * weight W; weights are relative, any positive numbers, normalised here;
 * K from 1 to FG_WL_MAX_PEERS, at most FG_WL_DUPS_MAX entries, each K
 * once). 0, or -EINVAL leaving p as it was. */
int fg_wl_params_set_dups(struct fg_wl_params *p, const char *spec);
/* The same distribution written back as "K:W,..." (W to 4 decimals), or
 * "K" for a fixed multiplicity; the length, as snprintf. */
int fg_wl_dups_format(const struct fg_wl_params *p, char *buf, size_t len);

/* Builds pools and offer orders. NULL (and a logged reason) on bad params. */
struct fg_wl *fg_wl_create(const struct fg_wl_params *p);
void fg_wl_free(struct fg_wl *wl);
const struct fg_wl_params *fg_wl_params(const struct fg_wl *wl);

void fg_wl_article(const struct fg_wl *wl, uint32_t i, struct fg_wl_article *a);
/* The class alone, cheaply (no formatting). */
enum fg_wl_class fg_wl_class_of(const struct fg_wl *wl, uint32_t i);
uint64_t fg_wl_class_count(const struct fg_wl *wl, enum fg_wl_class c);
const char *fg_wl_class_name(enum fg_wl_class c);

/* Peer p's offers, article indices in offer order. */
const uint32_t *fg_wl_peer_offers(const struct fg_wl *wl, unsigned p, uint64_t *n);
uint64_t fg_wl_total_offers(const struct fg_wl *wl);
/* How many peers offer article i (K_i: its multiplicity, at most peers). */
unsigned fg_wl_dups_of(const struct fg_wl *wl, uint32_t i);

/* The article as peer `peer` sends it: headers (Path starts with the
 * peer's name), blank line, dot-stuffed body, ".\r\n" (RFC 3977 3.1.1).
 * fg_wl_wire_head writes the headers and blank line into buf (at least
 * FG_WL_HDR_MAX) and returns their length; the body (already stuffed) and
 * the terminator follow from fg_wl_wire_body. */
size_t fg_wl_wire_head(const struct fg_wl *wl, const struct fg_wl_article *a,
		       unsigned peer, char *buf, size_t len);
const char *fg_wl_wire_body(const struct fg_wl *wl, const struct fg_wl_article *a);
/* Octets of the whole wire form for peer p (head + body + ".\r\n"). */
size_t fg_wl_wire_len(const struct fg_wl *wl, const struct fg_wl_article *a, unsigned peer);

/* RFC 5322 3.3 date-time in "+0000" form; returns the length written. */
size_t fg_wl_format_date(fg_time_t t, char *buf, size_t len);
/* Undo dot-stuffing of a wire body ending in ".\r\n": returns the
 * unstuffed length written to out (at most len), or -EINVAL if the
 * terminator is missing or a line does not end in CRLF. */
long fg_wl_unstuff(const char *wire, size_t len, char *out);

/* splitmix64 of (seed, i, salt): the hash every derived value comes from. */
uint64_t fg_wl_hash(uint64_t seed, uint64_t i, uint64_t salt);

#endif /* FLOODGATE_WORKLOAD_H */
