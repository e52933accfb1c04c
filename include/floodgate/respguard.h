/* SPDX-License-Identifier: MIT */
/*
 * respguard.h — what a Redis node may make the cluster client allocate.
 * lib/cluster/respguard.c; used by lib/cluster/cluster.c, docs/scale.md
 * "Several boxes".
 *
 * hiredis 0.14's reader allocates what a reply declares, unchecked: an
 * array header "*354600922" makes it calloc 2.8 GB at once (it takes up
 * to INT_MAX elements), a bulk header makes it buffer whatever follows
 * until the declared length is there, and a reply nests arrays up to
 * depth 8 and grows as long as octets come. Nothing a node (or anything
 * on the path to it) sends may make floodgate allocate without bound, so
 * every octet passes this guard BEFORE the reader sees it:
 *
 *   1. The octets are scanned as RESP2 (the only RESP hiredis 0.14
 *      reads), across reads: a type byte ('+' '-' ':' '$' '*'), its line
 *      up to CRLF, a bulk string's octets and CRLF.
 *   2. Numbers are read as hiredis 0.14.1 reads them (its string2ll): an
 *      integer within a long long, "0" or digits without a leading zero,
 *      "-1" the only negative header. What the guard passes, hiredis
 *      reads without an error, as the same replies (fuzz_cluster checks
 *      it on every input).
 *   3. Bounds, each a refusal of the whole reply (-EMSGSIZE):
 *        FG_RESP_MAX_ELEMENTS  elements one array declares
 *        FG_RESP_MAX_BULK      octets one bulk string declares
 *        FG_RESP_MAX_LINE      octets of a line (status, error)
 *        FG_RESP_MAX_VALUES    values in one reply, nested ones included
 *        FG_RESP_MAX_REPLY     octets of one reply
 *        FG_RESP_MAX_DEPTH     arrays open at once (hiredis's own limit)
 *      Anything else that is not RESP2 as hiredis reads it is -EPROTO.
 *   4. A refusal sticks: the caller feeds nothing of the scanned octets,
 *      closes the connection and counts it (cluster.h, replies_refused);
 *      a new connection starts a new guard.
 *
 * So one reply costs the reader at most ~FG_RESP_MAX_REPLY octets of
 * strings plus FG_RESP_MAX_VALUES reply objects (tens of MB), and the
 * arrays declared but not yet filled at most FG_RESP_MAX_DEPTH *
 * FG_RESP_MAX_ELEMENTS pointers. The largest legitimate reply, CLUSTER
 * SLOTS, has one element a slot range (at most 16384) of a few values
 * a node: far inside every bound.
 */
#ifndef FLOODGATE_RESPGUARD_H
#define FLOODGATE_RESPGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_RESP_MAX_ELEMENTS 16384u	/* CLUSTER SLOTS: one a slot range at most */
#define FG_RESP_MAX_BULK (1u << 20)
#define FG_RESP_MAX_LINE (64u << 10)	/* Redis's own inline limit */
#define FG_RESP_MAX_VALUES (1u << 19)
#define FG_RESP_MAX_REPLY (16u << 20)
#define FG_RESP_MAX_DEPTH 8u

struct fg_resp_guard {
	uint8_t state;			/* respguard.c's enum */
	uint8_t type;			/* of the value whose line is read */
	bool cr;			/* the line's last octet was a CR */
	bool neg;			/* the header's number began with '-' */
	uint32_t depth;			/* arrays open */
	uint32_t left[FG_RESP_MAX_DEPTH];	/* elements each still waits for */
	uint64_t num;			/* the header's number so far */
	uint64_t line;			/* octets of the line so far */
	uint64_t skip;			/* bulk octets still to pass */
	uint64_t values, bytes;		/* of the reply under way */
	uint64_t replies;		/* complete replies scanned */
	int err;			/* 0, or the refusal that sticks */
	const char *why;		/* the refusal, for the log */
};

void fg_resp_guard_init(struct fg_resp_guard *g);

/* Scan the next len octets of the stream: 0 (the reader may have them),
 * -EMSGSIZE (a bound passed) or -EPROTO (not RESP2), with g->why. */
int fg_resp_guard_scan(struct fg_resp_guard *g, const void *buf, size_t len);

#endif /* FLOODGATE_RESPGUARD_H */
