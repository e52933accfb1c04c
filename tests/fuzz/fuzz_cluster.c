/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cluster.c — what a Redis Cluster node says, from arbitrary bytes
 * (lib/cluster: the cluster client trusts no server): the first byte
 * chooses the parser, the rest is its input.
 *
 *   even  a CLUSTER SLOTS reply in RESP (fg_cluster_parse_slots): every
 *         range it gives is lo <= hi < 16384, a port 1..65535, a host of
 *         printable length inside its buffer, at most `max` of them;
 *         and the guard before hiredis (respguard.h) on the same octets:
 *         its verdict does not depend on how the octets are cut into
 *         reads, and what it passes hiredis reads without an error, as
 *         exactly the replies it counted
 *   odd   a MOVED / ASK error line (fg_cluster_parse_redirect): a slot
 *         under 16384, a port 1..65535, a host of the line's own octets
 */
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "floodgate/cluster.h"
#include "floodgate/respguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RANGES 16

static void slots(const uint8_t *data, size_t size)
{
	struct fg_cluster_range r[MAX_RANGES];
	int n = fg_cluster_parse_slots(data, size, "asked.example", r, MAX_RANGES);

	if (n > MAX_RANGES)
		abort();
	for (int i = 0; i < n; i++)
		if (r[i].lo > r[i].hi || r[i].hi >= FG_CLUSTER_SLOTS || r[i].port <= 0 ||
		    r[i].port > 65535 || !r[i].host[0] || strlen(r[i].host) >= sizeof(r[i].host))
			abort();
}

static void guard(const uint8_t *data, size_t size)
{
	struct fg_resp_guard whole, cut;
	size_t at = size / 2;
	uint64_t n = 0;
	redisReader *rd;
	void *reply;
	int rc, rc2;

	fg_resp_guard_init(&whole);
	rc = fg_resp_guard_scan(&whole, data, size);
	fg_resp_guard_init(&cut);
	rc2 = fg_resp_guard_scan(&cut, data, at);
	if (rc2 == 0)
		rc2 = fg_resp_guard_scan(&cut, data + at, size - at);
	if (rc != rc2 || (rc == 0 && cut.replies != whole.replies) || (rc && !whole.why))
		abort();
	if (rc != 0)
		return;
	rd = redisReaderCreate();
	if (!rd || redisReaderFeed(rd, (const char *)data, size) != REDIS_OK)
		abort();
	for (;;) {
		reply = NULL;
		if (redisReaderGetReply(rd, &reply) != REDIS_OK)
			abort();	/* the guard passed what hiredis refuses */
		if (!reply)
			break;
		freeReplyObject(reply);
		n++;
	}
	if (n != whole.replies)
		abort();
	redisReaderFree(rd);
}

static void redirect(const uint8_t *data, size_t size)
{
	char host[64];
	unsigned slot;
	bool ask;
	int port;

	if (fg_cluster_parse_redirect((const char *)data, size, &slot, host, sizeof(host), &port,
				      &ask) != 0)
		return;
	if (slot >= FG_CLUSTER_SLOTS || port <= 0 || port > 65535 || !host[0] ||
	    !memmem(data, size, host, strlen(host)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		redirect(data + 1, size - 1);
	else {
		slots(data + 1, size - 1);
		guard(data + 1, size - 1);
	}
	return 0;
}
