/* SPDX-License-Identifier: MIT */
/*
 * statusfield.c — a status file's field table (statusfield.h).
 */
#include <string.h>

#include "floodgate/statusfield.h"

bool fg_status_set(void *rec, const struct fg_status_field *t, unsigned n, const char *name,
		   size_t len, uint64_t v)
{
	for (unsigned k = 0; k < n; k++)
		if (strlen(t[k].name) == len && memcmp(t[k].name, name, len) == 0) {
			*(uint64_t *)(void *)((char *)rec + t[k].off) = v;
			return true;
		}
	return false;
}
