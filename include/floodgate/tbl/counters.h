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
