/* SPDX-License-Identifier: MIT */
/*
 * tbl/nntp_codes.h — every response code the session engine sends.
 *
 * FG_NNTP_CODE(id, number, help): `id` becomes FG_NNTP_CODE_<id>, `number`
 * is the three-digit code and the label of the responses counter. The
 * exact text of each line is in dataplane/nntp/lines.h (one place) and in
 * docs/protocol.md.
 *
 * No include guard: included repeatedly with different FG_NNTP_CODE.
 */
FG_NNTP_CODE(C100, 100, "help text follows")
FG_NNTP_CODE(C101, 101, "capability list follows")
FG_NNTP_CODE(C200, 200, "greeting: service available")
FG_NNTP_CODE(C203, 203, "MODE STREAM: streaming permitted")
FG_NNTP_CODE(C205, 205, "QUIT: closing the connection")
FG_NNTP_CODE(C235, 235, "IHAVE: article transferred and safe")
FG_NNTP_CODE(C238, 238, "CHECK: send the article")
FG_NNTP_CODE(C239, 239, "TAKETHIS: article transferred and safe")
FG_NNTP_CODE(C281, 281, "AUTHINFO: authentication accepted")
FG_NNTP_CODE(C335, 335, "IHAVE: send the article")
FG_NNTP_CODE(C381, 381, "AUTHINFO USER: send the password")
FG_NNTP_CODE(C400, 400, "service temporarily unavailable; the connection closes")
FG_NNTP_CODE(C431, 431, "CHECK: try again later")
FG_NNTP_CODE(C435, 435, "IHAVE: article not wanted")
FG_NNTP_CODE(C436, 436, "IHAVE: try again later")
FG_NNTP_CODE(C437, 437, "IHAVE: article rejected, do not retry")
FG_NNTP_CODE(C438, 438, "CHECK: article not wanted")
FG_NNTP_CODE(C439, 439, "TAKETHIS: article rejected, do not retry")
FG_NNTP_CODE(C480, 480, "CHECK, TAKETHIS, IHAVE: authentication required (AUTHINFO first)")
FG_NNTP_CODE(C481, 481, "AUTHINFO PASS: authentication failed")
FG_NNTP_CODE(C482, 482, "AUTHINFO PASS before AUTHINFO USER")
FG_NNTP_CODE(C500, 500, "unknown command")
FG_NNTP_CODE(C501, 501, "syntax error in the command's arguments")
FG_NNTP_CODE(C502, 502, "not permitted: not a peer, MODE READER on a transit-only server, AUTHINFO not needed or done")
