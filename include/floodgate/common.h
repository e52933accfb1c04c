/* SPDX-License-Identifier: MIT */
/*
 * common.h — the few macros every floodgate module uses.
 *
 * Two tiers of assertion, as in HAProxy's BUG_ON/BUG_ON_HOT:
 *   FG_ASSERT(c)      always compiled: invariants that cost nothing.
 *   FG_ASSERT_HOT(c)  compiled only with FG_DEBUG (debug and sanitizer
 *                     builds): checks on the per-packet / per-byte path.
 * A failed assertion logs file:line and the expression, then aborts: a
 * broken invariant in a filter that guards history must not limp on.
 */
#ifndef FLOODGATE_COMMON_H
#define FLOODGATE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifndef FG_DEBUG
#define FG_DEBUG 0
#endif

#define FG_CACHE_LINE 64
#define FG_CACHE_ALIGNED __attribute__((aligned(FG_CACHE_LINE)))
#define FG_UNUSED __attribute__((unused))
#define FG_NORETURN __attribute__((noreturn))
#define FG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define FG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FG_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FG_STRINGIFY_(x) #x
#define FG_STRINGIFY(x) FG_STRINGIFY_(x)

FG_NORETURN void fg_panic(const char *file, int line, const char *what);

/* A heap buffer of *cap octets (buf NULL and *cap 0 at first) grown to hold
 * at least `want`: its capacity doubles, from `first` when it has none.
 * The buffer to use from now on (*cap updated), or NULL when out of memory
 * (buf and *cap as they were). Text buffers, articles, output queues. */
void *fg_grow(void *buf, size_t *cap, size_t want, size_t first);

#define FG_ASSERT(c) \
	do { \
		if (__builtin_expect(!(c), 0)) \
			fg_panic(__FILE__, __LINE__, #c); \
	} while (0)

#if FG_DEBUG
#define FG_ASSERT_HOT(c) FG_ASSERT(c)
#else
#define FG_ASSERT_HOT(c) ((void)0)
#endif

/* Seconds since the Unix epoch, UTC. Article dates, first-seen times and
 * every date decision use this type; timers use monotonic nanoseconds. */
typedef int64_t fg_time_t;

/* Monotonic nanoseconds: the one clock of every timer, deadline and
 * interval, in every process. */
static inline uint64_t fg_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* FLOODGATE_COMMON_H */
