/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h — CRC-32C (Castagnoli), as iSCSI and ext4 use it: journal
 * blocks, snapshot headers. Incremental: pass the previous return value as
 * `crc` (0 to start). Uses SSE4.2's crc32 instruction, three lanes at a
 * time on buffers of 720 octets or more (dataplane/core/crc32c.c).
 */
#ifndef FLOODGATE_CRC32C_H
#define FLOODGATE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t fg_crc32c(uint32_t crc, const void *data, size_t len);

#endif /* FLOODGATE_CRC32C_H */
