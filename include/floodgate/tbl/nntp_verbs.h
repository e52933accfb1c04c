/* SPDX-License-Identifier: MIT */
/*
 * tbl/nntp_verbs.h — the commands the session engine knows, defined once.
 *
 * FG_NNTP_VERB(id, name, help): `id` becomes FG_NNTP_VERB_<id>, `name` is
 * the command as written on the wire (matched case-insensitively, RFC 3977
 * 3.1) and the label of the commands counter, `help` one line. UNKNOWN
 * counts every line that names no command of this table (RFC 3977 reader
 * commands included: a transit-only server does not implement them).
 *
 * No include guard: included repeatedly with different FG_NNTP_VERB.
 */
FG_NNTP_VERB(AUTHINFO, "authinfo", "RFC 4643 2.3: AUTHINFO USER name / PASS password")
FG_NNTP_VERB(CAPABILITIES, "capabilities", "RFC 3977 5.2: list what this server does")
FG_NNTP_VERB(CHECK, "check", "RFC 4644 2.4: is this Message-ID wanted?")
FG_NNTP_VERB(HELP, "help", "RFC 3977 7.2: a short list of the commands")
FG_NNTP_VERB(IHAVE, "ihave", "RFC 3977 6.3.2: offer an article, lock-step")
FG_NNTP_VERB(MODE, "mode", "RFC 4644 2.3 MODE STREAM; RFC 3977 5.3 MODE READER")
FG_NNTP_VERB(QUIT, "quit", "RFC 3977 5.4: end the session")
FG_NNTP_VERB(TAKETHIS, "takethis", "RFC 4644 2.5: here is an article, unasked")
FG_NNTP_VERB(UNKNOWN, "unknown", "a command this server does not implement (500)")
