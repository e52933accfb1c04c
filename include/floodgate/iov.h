/* SPDX-License-Identifier: MIT */
/*
 * iov.h — one piece of in-order payload, in place in a received buffer.
 *
 * Every transport hands the session engine its bytes as a list of these
 * (the userspace TCP's received segments, the kernel-socket host's read
 * chunks, a test's byte-at-a-time slices). `base`/`len` are the bytes;
 * `handle` names the buffer they live in, so that whoever needs them
 * beyond the call (the engine on behalf of an outbound sink) can take a
 * reference on that buffer through its transport's hold/release. A NULL
 * handle means "not holdable": the bytes are valid only during the call.
 */
#ifndef FLOODGATE_IOV_H
#define FLOODGATE_IOV_H

#include <stdint.h>

struct fg_iov {
	const uint8_t *base;
	uint32_t len;
	void *handle;
};

#endif /* FLOODGATE_IOV_H */
