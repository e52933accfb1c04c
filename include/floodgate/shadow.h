/* SPDX-License-Identifier: MIT */
/*
 * shadow.h — shadow mode: passive mode (passive.h) that also follows the
 * captured server's half of every flow and compares each of floodgate's
 * decisions with the answer the site's own server gave to the same offer.
 *
 * Two inputs per flow, keyed by the client's endpoint (address, port):
 *
 *   fg_shadow_ours     floodgate's decision: the engine's verdict record
 *                      (session.h), which names the connection's remote,
 *                      the command, the code and the reason
 *   fg_shadow_theirs   a segment of the server's half as captured: its
 *                      SYN anchors the stream, its text is reassembled in
 *                      sequence order and cut into answer lines
 *
 * Pairing: a streaming answer (RFC 4644 2.4.1, 2.5.1) names its
 * Message-ID, so 238/431/438 pair with floodgate's CHECK decision for the
 * same ID on the same flow and 239/439 with its TAKETHIS decision, in
 * whichever order the two arrive; IHAVE's answers (RFC 3977 6.3.2) name
 * none and pair by order, 335/435/436 with the offer, 235/436/437 with
 * the transfer after a 335.
 *
 * Classes (a pair):
 *   agree         the same kind of answer: both take (238 239 335 235),
 *                 both refuse (438 439 435 437), or both defer (431 436)
 *   refused_took  floodgate refuses what the server took, by floodgate's
 *                 reason: the headline figure, which must be 0
 *   took_refused  floodgate takes what the server refused
 *   timing        one side defers (431, 436, 400) and the other does not:
 *                 the answers differ only in when
 * A TAKETHIS whose CHECK on the flow floodgate already refused where the
 * server took it is the same refusal again: counted as a follow-up, not
 * classed twice (after a timing difference the article is classed: it
 * is decided afresh).
 *
 * Not compared (counted, never classed): a server half whose SYN was not
 * seen (no stream to cut into lines), the answers after a hole in it
 * (a sequence gap: a mirror lost a segment) until the next line start,
 * IHAVE answers of a flow after such a hole or after its stages parted
 * (one side 335, the other not: the client then sends an article the
 * other never asked for), a client half with a hole (passive mode ends its
 * session: its later offers get no decision), and whatever is unpaired
 * when a flow ends.
 *
 * Samples: the first FG_SHADOW_SAMPLES Message-IDs of each class that
 * differs, with both codes and floodgate's reason.
 *
 * One instance per passive worker; not thread-safe. Reports of several
 * workers add up (fg_shadow_report_add).
 */
#ifndef FLOODGATE_SHADOW_H
#define FLOODGATE_SHADOW_H

#include <stdbool.h>
#include <stdint.h>

#include "floodgate/config.h"
#include "floodgate/shadowrep.h"
#include "floodgate/session.h"
#include "floodgate/stats.h"

struct fg_shadow;

/* max_flows: flows followed at once (more are counted not compared). */
struct fg_shadow *fg_shadow_create(unsigned max_flows, struct fg_stats *stats);
void fg_shadow_destroy(struct fg_shadow *sh);

/* One of floodgate's decisions (the verdict hook's record); records of
 * commands other than CHECK, TAKETHIS and IHAVE, and without a remote,
 * are ignored. */
void fg_shadow_ours(struct fg_shadow *sh, const struct fg_verdict_rec *r);

/* TCP flags of a server segment, as on the wire. */
#define FG_SHADOW_FIN 0x01
#define FG_SHADOW_SYN 0x02
#define FG_SHADOW_RST 0x04

/* One segment of a server's half, sent to `client` (family, address,
 * port), with its sequence number, flags and text. */
void fg_shadow_theirs(struct fg_shadow *sh, const struct fg_endpoint *client, uint32_t seq,
		      uint8_t flags, const uint8_t *data, uint32_t len);

/* End every flow: what is unpaired is counted not compared. */
void fg_shadow_end_all(struct fg_shadow *sh);

/* This instance's figures (a copy). */
void fg_shadow_report(const struct fg_shadow *sh, struct fg_shadow_report *out);
#endif /* FLOODGATE_SHADOW_H */
