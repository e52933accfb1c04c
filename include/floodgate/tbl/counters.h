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

/* ---- relay and outbound queue ---- */

/* ---- dataplane (DPDK ports, lcores) ---- */
