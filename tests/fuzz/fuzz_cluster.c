/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cluster.c — what a Redis Cluster node says, from arbitrary bytes
 * (lib/cluster: the cluster client trusts no server): the first byte
 * chooses the parser, the rest is its input.
 *
 *   even  a CLUSTER SLOTS reply in RESP (fg_cluster_parse_slots): every
 *         range it gives is lo <= hi < 16384, a port 1..65535, a host of
 *         printable length inside its buffer, at most `max` of them
 *   odd   a MOVED / ASK error line (fg_cluster_parse_redirect): a slot
 *         under 16384, a port 1..65535, a host of the line's own octets
 */
#include <stdlib.h>
#include <string.h>

#include "floodgate/cluster.h"

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
	else
		slots(data + 1, size - 1);
	return 0;
}
