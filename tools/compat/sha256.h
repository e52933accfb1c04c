/* SPDX-License-Identifier: MIT */
/*
 * sha256.h — SHA-256 of a buffer (FIPS 180-4), for the manifest of the
 * released golden files (golden.h).
 */
#ifndef FLOODGATE_TOOLS_SHA256_H
#define FLOODGATE_TOOLS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define FG_SHA256_LEN 32u

void fg_sha256(const void *data, size_t len, uint8_t out[FG_SHA256_LEN]);

#endif /* FLOODGATE_TOOLS_SHA256_H */
