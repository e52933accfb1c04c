/* SPDX-License-Identifier: MIT */
/*
 * grow.c — a heap buffer's capacity, doubled until it holds what is asked
 * (common.h). Doubling keeps appending n octets O(n) in all.
 */
#include <stdlib.h>

#include "floodgate/common.h"

void *fg_grow(void *buf, size_t *cap, size_t want, size_t first)
{
	size_t n = *cap ? *cap : FG_MAX(first, (size_t)1);
	void *nb;

	if (buf && want <= *cap)
		return buf;
	while (n < want) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	nb = realloc(buf, n);
	if (nb)
		*cap = n;
	return nb;
}
