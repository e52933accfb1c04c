/* SPDX-License-Identifier: MIT */
/*
 * tbl/counters.h — every counter floodgate keeps, defined once.
 *
 * FG_COUNTER(id, name, help): `id` becomes FG_CTR_<id>; `name` is the
 * exported metric's stem (exported as floodgate_<name>_total), `help` its
 * HELP text. Counters are per-lcore (or per-thread) plain uint64 increments,
 * summed by the reader (VPP vlib/counter.h, Linux snmp.h): no atomics.
 *
 * Reject reasons are a table of their own (tbl/reasons.h); commands by verb
 * and responses by code are tables in the session engine. Each component
 * keeps its counters in its own section below, so additions do not collide.
 *
 * No include guard: included repeatedly with different FG_COUNTER.
 */

/* ---- rules (admission decisions) ---- */
FG_COUNTER(RULES_ACCEPTED, "rules_accepted", "articles the rules accepted")
FG_COUNTER(RULES_REJECTED, "rules_rejected", "articles the rules rejected (by reason in floodgate_rejected_total)")
FG_COUNTER(RULES_DATE_FROM_INJECTION, "rules_date_from_injection_date", "decisions that used Injection-Date as the article date")
FG_COUNTER(RULES_DATE_FROM_DATE, "rules_date_from_date", "decisions that used Date as the article date (no Injection-Date)")
FG_COUNTER(RULES_OFFERS_WANTED, "rules_offers_wanted", "offers (CHECK, IHAVE) the rules found wanted before the article")
FG_COUNTER(RULES_OFFERS_REFUSED, "rules_offers_refused", "offers the rules refused before the article (by reason in floodgate_rejected_total)")

/* ---- history ---- */

/* ---- nntp session engine ---- */
FG_COUNTER(NNTP_SESSIONS_OPENED, "nntp_sessions_opened", "sessions greeted with 200")
FG_COUNTER(NNTP_SESSIONS_CLOSED, "nntp_sessions_closed", "sessions ended (every cause)")
FG_COUNTER(NNTP_SESSIONS_NOT_PEER, "nntp_sessions_not_peer", "connections answered 502 and closed: not a configured peer")
FG_COUNTER(NNTP_SESSIONS_TOO_MANY, "nntp_sessions_too_many", "connections answered 400 and closed: the peer's max-connections reached")
FG_COUNTER(NNTP_BYTES_IN, "nntp_bytes_in", "octets consumed from peers")
FG_COUNTER(NNTP_BYTES_OUT, "nntp_bytes_out", "response octets handed to the transport")
FG_COUNTER(NNTP_ARTICLES, "nntp_articles", "complete articles read (TAKETHIS and IHAVE)")
FG_COUNTER(NNTP_ARTICLE_BYTES, "nntp_article_bytes", "octets of complete articles, wire form without the terminator")
FG_COUNTER(NNTP_ARTICLES_ACCEPTED, "nntp_articles_accepted", "articles made safe by the sink and answered 239/235")
FG_COUNTER(NNTP_ARTICLES_REFUSED, "nntp_articles_refused", "articles answered 439/437")
FG_COUNTER(NNTP_ARTICLES_FAILED, "nntp_articles_failed", "articles the sink could not make safe (400 and close, or 436)")
FG_COUNTER(NNTP_DRAINED_KNOWN, "nntp_drained_known", "TAKETHIS articles drained without the sink: the ID was already final or invalid at the command")
FG_COUNTER(NNTP_DRAINED_OVERSIZE, "nntp_drained_oversize", "articles drained past max-article-size without buffering")
FG_COUNTER(NNTP_LINE_TOO_LONG, "nntp_line_too_long", "command lines longer than max-line (501)")
FG_COUNTER(NNTP_BAD_CHAR, "nntp_bad_char", "command lines holding NUL or a stray CR (501)")
FG_COUNTER(NNTP_BARE_LF, "nntp_bare_lf", "command lines ended by a bare LF (accepted)")
FG_COUNTER(NNTP_EOF_PARTIAL_LINE, "nntp_eof_partial_line", "connections that ended inside a command line (no final CRLF)")
FG_COUNTER(NNTP_EOF_MID_ARTICLE, "nntp_eof_mid_article", "connections that ended or dropped inside an article")
FG_COUNTER(NNTP_STALL_RESPONSES, "nntp_stall_responses", "reading stopped: responses waiting at max-pending-commands or the response buffer full")
FG_COUNTER(NNTP_STALL_BYTES, "nntp_stall_bytes", "reading stopped: article bytes waiting for the sink at max-pending-bytes")
FG_COUNTER(NNTP_STALL_SINK, "nntp_stall_sink", "reading stopped before an article: the sink is full")
FG_COUNTER(NNTP_STALL_JOURNAL, "nntp_stall_journal", "reading stopped before an article: the journal ring is full")
FG_COUNTER(NNTP_STALL_XFERS, "nntp_stall_xfers", "reading stopped before an article: no transfer slot free")
FG_COUNTER(NNTP_WAIT_ACCEPTING, "nntp_wait_accepting", "complete articles that waited for another transfer of their ID")
FG_COUNTER(NNTP_HISTORY_FULL, "nntp_history_full", "history inserts refused because the table is full (defer policy)")
FG_COUNTER(NNTP_DEFER_INFLIGHT, "nntp_defer_inflight", "431/436: the ID is offered to, or being accepted from, another transfer")
FG_COUNTER(NNTP_DEFER_CLOCK, "nntp_defer_clock", "431/436/400: deferred because the local clock looks wrong")
FG_COUNTER(NNTP_DEFER_JOURNAL, "nntp_defer_journal", "431/436: deferred because the journal ring is full")
FG_COUNTER(NNTP_DEFER_SINK, "nntp_defer_sink", "431/436: deferred because the sink is full")
FG_COUNTER(NNTP_CLOCK_SUSPECT_ENTERED, "nntp_clock_suspect_entered", "times the clock view turned suspect (entered - cleared = alarm on)")
FG_COUNTER(NNTP_CLOCK_SUSPECT_CLEARED, "nntp_clock_suspect_cleared", "times the clock view turned sane again")
FG_COUNTER(NNTP_REJECTS_REMEMBERED, "nntp_rejects_remembered", "rejected articles remembered in history as rejected")
FG_COUNTER(NNTP_SUPERSEDES_HONORED, "nntp_supersedes_honored", "Message-IDs marked superseded by an accepted Supersedes")
FG_COUNTER(NNTP_VERSIONS_NOTED, "nntp_versions_noted", "$v=N versions recorded in the history side index")
FG_COUNTER(NNTP_OFFERS_RELEASED, "nntp_offers_released", "238 offers withdrawn (session closed, or its article refused unremembered)")
FG_COUNTER(NNTP_OFFERS_UNTRACKED, "nntp_offers_untracked", "238 offers the session stopped tracking (list full); they lapse at their deadline")
FG_COUNTER(NNTP_JOURNAL_RECORDS, "nntp_journal_records", "final history transitions appended to the journal")
FG_COUNTER(NNTP_JOURNAL_RETRIES, "nntp_journal_retries", "journal appends refused (ring full) and kept for a retry")
FG_COUNTER(NNTP_VERDICTS_LOGGED, "nntp_verdicts_logged", "verdict-log lines handed to the log ring")
FG_COUNTER(NNTP_VERDICTS_DROPPED, "nntp_verdicts_dropped", "verdict-log lines dropped (ring full)")
FG_COUNTER(NNTP_IDLE_TIMEOUTS, "nntp_idle_timeouts", "sessions closed after idle-timeout without input")
FG_COUNTER(NNTP_SINK_HOLDS, "nntp_sink_holds", "received segments held for the sink instead of copied")

/* ---- tcp / net ---- */

/* ---- control plane: journal, snapshots, expiry ---- */
FG_COUNTER(JOURNAL_RING_FULL, "journal_ring_full", "journal records a writer could not place because its ring was full (it deferred the article)")
FG_COUNTER(JOURNAL_RECORDS, "journal_records", "history records appended to the journal")
FG_COUNTER(JOURNAL_BLOCKS, "journal_blocks", "checksummed blocks appended to the journal")
FG_COUNTER(JOURNAL_BYTES, "journal_bytes", "octets appended to journal segments")
FG_COUNTER(JOURNAL_COMMITS, "journal_commits", "group commits (fdatasync of the journal)")
FG_COUNTER(JOURNAL_SEGMENTS, "journal_segments", "journal segment files started")
FG_COUNTER(JOURNAL_ERRORS, "journal_errors", "journal write or sync failures (retried; records stay in the rings)")
FG_COUNTER(SEGMENTS_PRUNED, "journal_segments_pruned", "journal segments deleted because a kept snapshot covers them")
FG_COUNTER(SNAPSHOTS, "snapshots", "snapshots written")
FG_COUNTER(SNAPSHOT_FAILURES, "snapshot_failures", "snapshot writes that failed")
FG_COUNTER(SNAPSHOTS_PRUNED, "snapshots_pruned", "old snapshots deleted (snapshot-keep)")
FG_COUNTER(EXPIRY_PASSES, "expiry_passes", "completed expiry sweeps of the whole history")
FG_COUNTER(VLOG_LINES, "verdict_log_lines", "verdict-log lines written to files")
FG_COUNTER(VLOG_DROPPED, "verdict_log_dropped", "verdict-log lines dropped (ring full, or writer gone first)")
FG_COUNTER(VLOG_ROTATIONS, "verdict_log_rotations", "verdict-log file rotations")
FG_COUNTER(WRITERS_REAPED, "writers_reaped", "writer slots freed by floodctld after their writer died or left")
FG_COUNTER(CTL_REQUESTS, "control_requests", "requests on the control socket")
FG_COUNTER(CTL_ERRORS, "control_errors", "control requests answered with an error")
FG_COUNTER(HTTP_REQUESTS, "http_requests", "requests to the stats HTTP endpoint")
FG_COUNTER(CONFIG_RELOADS, "config_reloads", "configuration reloads applied")
FG_COUNTER(CONFIG_RELOAD_FAILURES, "config_reload_failures", "configuration reloads refused (the running configuration was kept)")

/* ---- relay and outbound queue ---- */

/* ---- dataplane (DPDK ports, lcores) ---- */
