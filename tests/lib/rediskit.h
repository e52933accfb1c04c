/* SPDX-License-Identifier: MIT */
/*
 * rediskit.h — a real Redis Cluster for the unit tests, on loopback ports
 * inside a network namespace of the test's own (so parallel runs never
 * collide on a port): redis-server --cluster-enabled yes per node,
 * redis-cli --cluster create, then a wait until every node's
 * `cluster info` says cluster_state:ok and every node knows every other.
 */
#ifndef FLOODGATE_TESTS_REDISKIT_H
#define FLOODGATE_TESTS_REDISKIT_H

#include <stdbool.h>
#include <sys/types.h>

#define FG_TEST_REDIS_MAX 12

struct fg_test_redis {
	unsigned n;			/* nodes: masters * (1 + replicas) */
	int port[FG_TEST_REDIS_MAX];
	pid_t pid[FG_TEST_REDIS_MAX];
	char dir[256];
};

/* Enter a fresh network namespace with loopback up: 0 or -errno. */
int fg_test_netns_enter(void);
/* Start and form the cluster: 0, or -errno (what failed is printed). */
int fg_test_redis_cluster_start(struct fg_test_redis *r, unsigned masters, unsigned replicas,
				int base_port);
/* Wait (bounded by timeout_ms) until every live node says cluster_state:ok. */
int fg_test_redis_wait_ok(const struct fg_test_redis *r, unsigned timeout_ms);
/* Run redis-cli against node i with `args`; its first output line into
 * out (may be NULL). 0 or -1. */
int fg_test_redis_cli(const struct fg_test_redis *r, unsigned i, const char *args, char *out,
		      size_t outlen);
/* The node index serving as master of `slot` now, or -1. */
int fg_test_redis_master_of(const struct fg_test_redis *r, unsigned slot);
void fg_test_redis_stop(struct fg_test_redis *r);

#endif
