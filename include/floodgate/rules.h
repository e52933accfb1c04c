/* SPDX-License-Identifier: MIT */
/*
 * rules.h — the admission decision for one article (or one offer).
 *
 * Given a scanned header section (article.h), the command's argument, the
 * article's size, the time `now`, the peer and the configuration, the rules
 * return accepted or exactly one reason of tbl/reasons.h, and report what
 * they read on the way: which date header gave the article date, both
 * parsed dates, the Message-ID's version-number parts, the Supersedes
 * target. Nothing is allocated; the decision is a pure function of its
 * inputs and of the history's answers.
 *
 * The checks run in a fixed order, one step per row of enum fg_rules_step;
 * the first that fails decides. docs/rules.md lists the same steps, with
 * why they come in that order, and a test holds the two together. In
 * short: the Message-ID argument, then the history (a re-offer of a known
 * ID is a duplicate whatever its date, RFC 5537 3.3, and it is the common
 * case), then the header section's Message-ID, the dates, the mandatory
 * headers, the path, the date window, and last the peer's own policy.
 *
 * Date window, exact edges (RFC 5537 3.3 and 3.6), with d the article date:
 *   too-old         when d <  now - cutoff  (d == now - cutoff is accepted)
 *   too-far-future  when d >  now + margin  (d == now + margin is accepted)
 * The history must therefore keep the record of an article dated exactly
 * now - cutoff: expiry by article date drops d < now - cutoff only.
 *
 * History is asked through struct fg_rules_history, a narrow callback
 * interface that may be absent (floodctl explain without a daemon): the
 * history table, a test fake or a second-level store can stand behind it.
 */
#ifndef FLOODGATE_RULES_H
#define FLOODGATE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/article.h"
#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/date.h"
#include "floodgate/msgid.h"
#include "floodgate/stats.h"

/* What the history knows of one Message-ID, as far as the rules care. */
enum fg_rules_id_state {
	/* Not in history, or only in flight (offered to another session, or
	 * an article for it being made durable): arbitrating in-flight IDs
	 * (431, waiting for the outcome) is the session engine's job. */
	FG_RULES_ID_UNKNOWN = 0,
	FG_RULES_ID_KNOWN = 1,		/* accepted, or a remembered reject */
	FG_RULES_ID_SUPERSEDED = 2,	/* named by an honoured Supersedes */
};

struct fg_rules_history {
	/* State of the ID (`len` octets, exactly as offered). `key` is the
	 * caller's own key for it (fg_rules_input.arg_key) when the ID is the
	 * command's argument and the caller gave one, else NULL: the rules
	 * never look inside it. */
	enum fg_rules_id_state (*lookup)(void *ctx, const char *id, size_t len, const void *key);
	/* Newest version number known for a base identifier (struct
	 * fg_msgid_version.base); false when none is known. May be NULL. */
	bool (*newest_version)(void *ctx, const char *base, size_t len, uint64_t *version);
	void *ctx;
};

/* The checks, in the order they apply (docs/rules.md, "Order of checks"). */
enum fg_rules_step {
	FG_RULES_STEP_NONE = 0,		/* accepted: no step failed */
	FG_RULES_STEP_ARGUMENT,		/* bad-message-id: argument not wire form */
	FG_RULES_STEP_CYBER_CANCEL,	/* cyber-cancel: <cancel.*> with refuse-cyber-cancels */
	FG_RULES_STEP_HISTORY,		/* duplicate */
	FG_RULES_STEP_SUPERSEDED,	/* superseded */
	FG_RULES_STEP_HEADER_BOUNDS,	/* oversize: header section past the scanner's bounds */
	FG_RULES_STEP_MSGID_PRESENT,	/* missing-message-id */
	FG_RULES_STEP_MSGID_VALID,	/* bad-message-id: header not RFC 5536, or repeated */
	FG_RULES_STEP_MSGID_MATCH,	/* message-id-mismatch */
	FG_RULES_STEP_DATE_PRESENT,	/* missing-date */
	FG_RULES_STEP_DATES_PARSE,	/* bad-date */
	FG_RULES_STEP_REQUIRED,		/* missing-header */
	FG_RULES_STEP_PATH,		/* path-loop */
	FG_RULES_STEP_CUTOFF,		/* too-old */
	FG_RULES_STEP_FUTURE,		/* too-far-future */
	FG_RULES_STEP_SIZE,		/* oversize */
	FG_RULES_STEP_NEWSGROUPS,	/* unwanted-newsgroup */
	FG_RULES_STEP__COUNT
};

/* Short name ("history") and the one reason a step gives; for the docs
 * test and `floodctl explain`. NULL / FG_REASON_NONE out of range. */
const char *fg_rules_step_name(enum fg_rules_step s);
enum fg_reason fg_rules_step_reason(enum fg_rules_step s);

/* Compiled rules: the config with what the hot path needs precomputed.
 * Rebuilt with the config (a reload builds a new one). Fields private. */
struct fg_rules {
	const struct fg_config *cfg;
	const struct fg_rules_history *hist;
	struct {
		const char *name;
		uint8_t len;
		uint8_t hdr;	/* enum fg_hdr, FG_HDR_OTHER for other names */
	} req[FG_CONFIG_MAX_REQUIRED_HEADERS];
	unsigned n_req;
	uint8_t path_id_len[FG_CONFIG_MAX_PATH_IDS];
};

/* `cfg` and `hist` (may be NULL) must outlive `r`. 0, or -EINVAL for a
 * required header or path identity the config could not have produced
 * (empty or too long). */
int fg_rules_init(struct fg_rules *r, const struct fg_config *cfg,
		  const struct fg_rules_history *hist);

struct fg_rules_input {
	const struct fg_article *art;	/* a finished scan (COMPLETE or ERROR) */
	const char *arg;		/* the command's Message-ID argument; NULL: none */
	size_t arg_len;
	const void *arg_key;		/* the caller's key for arg (hist->lookup); may be NULL */
	uint64_t size;			/* article octets, fg_article_wire_size() */
	fg_time_t now;
	const struct fg_config_peer *peer;	/* NULL: no peer policy */
	bool explain;			/* fill the whole verdict even after a reject */
};

enum fg_rules_date_used {
	FG_RULES_DATE_NONE = 0,		/* no usable article date */
	FG_RULES_DATE_INJECTION = 1,	/* Injection-Date (RFC 5537 3.3) */
	FG_RULES_DATE_DATE = 2,		/* Date, as no Injection-Date is present */
};

/* One date header as the rules read it. */
struct fg_rules_date {
	struct fg_article_value text;	/* the first occurrence */
	unsigned count;			/* occurrences */
	bool parsed;			/* a parse was attempted */
	enum fg_date_error err;		/* of the first occurrence; FG_DATE_OK when it parsed */
	fg_time_t t;			/* when parsed and err == FG_DATE_OK */
	/* date-syntax inn: how it was read (offsets index `text`); all zero
	 * with rfc5322. Only a trusted reading feeds the clock guard. */
	struct fg_date_reading reading;
};

struct fg_rules_verdict {
	enum fg_reason reason;		/* FG_REASON_NONE: accepted */
	enum fg_rules_step step;	/* the step that decided; NONE when accepted */
	const char *detail;		/* static: what failed, for humans */
	const char *why;		/* static short error name ("bad-zone"), or NULL */
	struct fg_article_value what;	/* the offending item (header name, path element), or NULL */

	/* the dates */
	enum fg_rules_date_used date_used;
	fg_time_t article_date;		/* when date_used != NONE */
	struct fg_rules_date date, injection_date;

	/* the header's Message-ID and what it says */
	struct fg_article_value msgid;	/* first Message-ID field, or NULL */
	enum fg_msgid_form msgid_form;
	enum fg_msgid_error msgid_error;
	bool version_ok;		/* `version` filled (header form, version-numbers on) */
	struct fg_msgid_version version;
	struct fg_article_value supersedes;	/* first Supersedes field, or NULL */
	bool supersedes_valid;		/* exactly one, and a header-form ID */
	/* The article carried the ID it was offered under (its Message-ID
	 * equals the argument, or there was no argument and it has one valid
	 * Message-ID): only then may a reject be remembered. */
	bool carried_id;
};

/*
 * Decide one article. Returns v->reason. `stats` (may be NULL) gets
 * RULES_ACCEPTED or RULES_REJECTED plus rejected[reason], and the counter
 * of the date header used.
 */
enum fg_reason fg_rules_decide(const struct fg_rules *r, const struct fg_rules_input *in,
			       struct fg_rules_verdict *v, struct fg_stats *stats);

/* Count a decided verdict into `stats` as fg_rules_decide does with stats:
 * for a caller that decides twice and counts the verdict it acts on. */
void fg_rules_count(const struct fg_rules_verdict *v, struct fg_stats *stats);

/*
 * Decide an offer (CHECK, IHAVE, or TAKETHIS before its article): the
 * steps that need no article (argument, history, superseded). Returns
 * FG_REASON_NONE when the article is wanted. `v` may be NULL. `stats`
 * gets RULES_OFFERS_WANTED or RULES_OFFERS_REFUSED plus rejected[reason].
 */
enum fg_reason fg_rules_offer(const struct fg_rules *r, const char *arg, size_t arg_len,
			      const void *arg_key, struct fg_rules_verdict *v,
			      struct fg_stats *stats);

/*
 * Whether the session engine should remember this reject in history, so
 * that re-offers are refused at CHECK (INN's remembertrash): only with
 * remember-rejects on, only when the article carried the ID (else anyone
 * could block an ID by sending junk under it), and only for reasons that
 * are facts of the article itself, the same in every copy from every
 * peer: missing-date, bad-date, missing-header, too-old. Not for reasons
 * that depend on the peer or the route (unwanted-newsgroup, oversize,
 * path-loop), nor for too-far-future (time cures it).
 */
bool fg_rules_remember(const struct fg_rules *r, const struct fg_rules_verdict *v);

/* An ID that starts with "<cancel." (refuse-cyber-cancels). */
bool fg_rules_is_cyber_cancel(const char *id, size_t len);

#endif /* FLOODGATE_RULES_H */
