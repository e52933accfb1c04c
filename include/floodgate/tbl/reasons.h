/* SPDX-License-Identifier: MIT */
/*
 * tbl/reasons.h — the reject reasons, defined once.
 *
 * FG_REASON(id, name, help): `id` becomes FG_REASON_<id>, `name` is the
 * spelling used everywhere an operator sees it (counters' reason label,
 * verdict log, `floodctl explain`, docs/rules.md), `help` one line of why.
 * Every reject path bumps exactly one reason. The order in which the rules
 * apply is enum fg_rules_step (rules.h) and docs/rules.md, not this table's:
 * duplicate and superseded, for one, are checked before the article.
 *
 * No include guard: included repeatedly with different FG_REASON.
 */
FG_REASON(MISSING_MESSAGE_ID, "missing-message-id", "the article has no Message-ID header (RFC 5536 3.1.3)")
FG_REASON(BAD_MESSAGE_ID, "bad-message-id", "the Message-ID (command argument or header) is not valid, or the header appears twice (RFC 5536 3.1.3, RFC 3977 3.6)")
FG_REASON(MESSAGE_ID_MISMATCH, "message-id-mismatch", "the article's Message-ID header differs from the command's argument")
FG_REASON(MISSING_DATE, "missing-date", "the article has no Date header (mandatory even with Injection-Date)")
FG_REASON(BAD_DATE, "bad-date", "Date, or a present Injection-Date, does not parse or appears twice")
FG_REASON(MISSING_HEADER, "missing-header", "a mandatory header (From, Newsgroups, Path, Subject by default) is missing, empty or repeated")
FG_REASON(PATH_LOOP, "path-loop", "this site's path identity is already in Path (RFC 5537 3.2)")
FG_REASON(TOO_OLD, "too-old", "the article date is before now minus the cutoff (RFC 5537 3.3)")
FG_REASON(TOO_FAR_FUTURE, "too-far-future", "the article date is after now plus the future margin (at most 24 h)")
FG_REASON(OVERSIZE, "oversize", "the article is larger than max-article-size, or its header section is past the scanner's bounds")
FG_REASON(UNWANTED_NEWSGROUP, "unwanted-newsgroup", "no newsgroup of the article matches the peer's newsgroup patterns")
FG_REASON(DUPLICATE, "duplicate", "the Message-ID is already in history")
FG_REASON(SUPERSEDED, "superseded", "a newer version or a Supersedes of this Message-ID was honoured")
FG_REASON(CYBER_CANCEL, "cyber-cancel", "the Message-ID starts with <cancel. and refuse-cyber-cancels is on (INN's refusecybercancels)")
FG_REASON(DOWNSTREAM_REFUSED, "downstream-refused", "the acknowledging downstream server refused the article (439; end-to-end acknowledgement, docs/relay.md)")
