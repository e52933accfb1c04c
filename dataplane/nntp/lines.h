/* SPDX-License-Identifier: MIT */
/*
 * lines.h — every response line the session engine sends, in one place.
 *
 * docs/protocol.md quotes these lines and test_session.c asserts each of
 * them on the wire (spelled out independently there, so a change here
 * that the documentation does not follow fails a test).
 *
 * Lines that answer CHECK and TAKETHIS are "<code> <argument>" with the
 * client's own argument echoed (RFC 4644 2.4, 2.5: innfeed matches its
 * answers on it) and nothing after it: FG_L_ECHO_* give the code part.
 * Everything else is fixed text, except the greeting (server name) and
 * 437 (the reason's name).
 */
#ifndef FLOODGATE_NNTP_LINES_H
#define FLOODGATE_NNTP_LINES_H

#define FG_NNTP_IMPLEMENTATION "floodgate 0.1"

/* RFC 3977 5.1: the greeting names the server; RFC-NOTES: transit only. */
#define FG_L_GREETING_FMT "200 %s floodgate transit-only NNTP service ready (feeds only, no reading or posting)\r\n"
#define FG_L_NOT_PEER "502 Not a configured peer of this transit-only server\r\n"
#define FG_L_TOO_MANY "400 Too many connections from this peer, try again later\r\n"
#define FG_L_TOO_FAST "400 Connecting too often from this peer, try again later\r\n"

/* RFC 3977 5.2, RFC 4644 2.2 */
#define FG_L_CAPABILITIES \
	"101 Capability list:\r\n" \
	"VERSION 2\r\n" \
	"IHAVE\r\n" \
	"STREAMING\r\n" \
	"IMPLEMENTATION " FG_NNTP_IMPLEMENTATION "\r\n" \
	".\r\n"

/* RFC 4643 2.1: a peer that must authenticate is offered AUTHINFO USER,
 * and the commands it may use only after it (as innd lists them) */
#define FG_L_CAPABILITIES_AUTH \
	"101 Capability list:\r\n" \
	"VERSION 2\r\n" \
	"AUTHINFO USER\r\n" \
	"IMPLEMENTATION " FG_NNTP_IMPLEMENTATION "\r\n" \
	".\r\n"

/* RFC 3977 7.2 */
#define FG_L_HELP \
	"100 Help text follows\r\n" \
	"  AUTHINFO USER name|PASS password\r\n" \
	"  CAPABILITIES\r\n" \
	"  CHECK message-id\r\n" \
	"  HELP\r\n" \
	"  IHAVE message-id\r\n" \
	"  MODE STREAM\r\n" \
	"  QUIT\r\n" \
	"  TAKETHIS message-id\r\n" \
	".\r\n"

#define FG_L_STREAMING "203 Streaming permitted\r\n"
#define FG_L_NO_READER "502 Transit-only server, no reading\r\n"
#define FG_L_BYE "205 Bye\r\n"
#define FG_L_UNKNOWN "500 Unknown command\r\n"
#define FG_L_SYNTAX "501 Syntax error\r\n"
#define FG_L_LINE_TOO_LONG "501 Line too long\r\n"
#define FG_L_BAD_CHAR "501 Invalid character in command line\r\n"

/* RFC 3977 6.3.2 IHAVE */
#define FG_L_SEND_IT "335 Send it; end with <CR-LF>.<CR-LF>\r\n"
#define FG_L_IHAVE_OK "235 Article transferred OK\r\n"
#define FG_L_NOT_WANTED "435 Article not wanted\r\n"
#define FG_L_LATER "436 Try again later\r\n"
#define FG_L_FAILED_LATER "436 Transfer failed, try again later\r\n"
#define FG_L_REJECTED_FMT "437 Rejected: %s\r\n"

/* RFC 4643 2.3 AUTHINFO USER/PASS; 480 as innd words it */
#define FG_L_AUTH_PASS "381 Password required\r\n"
#define FG_L_AUTH_OK "281 Authentication accepted\r\n"
#define FG_L_AUTH_FAILED "481 Authentication failed\r\n"
#define FG_L_AUTH_FAILED_CLOSE "481 Authentication failed, closing connection\r\n"
#define FG_L_AUTH_SEQUENCE "482 Authentication commands issued out of sequence\r\n"
#define FG_L_AUTH_DONE "502 Already authenticated\r\n"
#define FG_L_AUTH_NOT_NEEDED "502 No authentication needed for this peer\r\n"
#define FG_L_AUTH_REQUIRED "480 Authentication required for command\r\n"

/* RFC 4644 2.5.2: the article could not be made safe; the peer retries. */
#define FG_L_SINK_FAILED "400 Article could not be stored, try again later\r\n"
#define FG_L_IDLE "400 Idle timeout, closing connection\r\n"
#define FG_L_SHUTDOWN "400 Server shutting down, try again later\r\n"
#define FG_L_PEER_GONE "400 No longer a configured peer, closing\r\n"
#define FG_L_ADDR_GONE "400 This address is no longer served, try another\r\n"
#define FG_L_PAUSED "400 Feed paused by the operator, try again later\r\n"

/* "<code> " before the echoed argument */
#define FG_L_ECHO_238 "238 "
#define FG_L_ECHO_431 "431 "
#define FG_L_ECHO_438 "438 "
#define FG_L_ECHO_239 "239 "
#define FG_L_ECHO_439 "439 "

/* Room a deferred line may need: the longest fixed line above. */
#define FG_L_FIXED_MAX 96

#endif /* FLOODGATE_NNTP_LINES_H */
