/* SPDX-License-Identifier: MIT */
/* rediskit.c — see rediskit.h. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "floodgate/common.h"
#include "rediskit.h"

#define POLL_US 20000

int fg_test_netns_enter(void)
{
	if (unshare(CLONE_NEWNET) != 0)
		return -errno;
	return system("ip link set lo up") == 0 ? 0 : -EIO;
}

static uint64_t ms_now(void)
{
	return fg_mono_ns() / 1000000u;
}

int fg_test_redis_cli(const struct fg_test_redis *r, unsigned i, const char *args, char *out,
		      size_t outlen)
{
	char cmd[512], line[256] = "";
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "redis-cli -h 127.0.0.1 -p %d %s 2>&1", r->port[i], args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	while (fgetc(p) != EOF)
		;
	rc = pclose(p);
	line[strcspn(line, "\r\n")] = '\0';
	if (out)
		snprintf(out, outlen, "%s", line);
	return rc == 0 ? 0 : -1;
}

/* Does a line of `what` (e.g. "cluster info") on node i hold `needle`? */
static bool node_says(const struct fg_test_redis *r, unsigned i, const char *what,
		      const char *needle)
{
	char cmd[256], line[256];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "redis-cli -h 127.0.0.1 -p %d %s 2>/dev/null", r->port[i], what);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, needle))
			found = true;
	pclose(p);
	return found;
}

int fg_test_redis_wait_ok(const struct fg_test_redis *r, unsigned timeout_ms)
{
	uint64_t end = ms_now() + timeout_ms;
	char known[64];

	snprintf(known, sizeof(known), "cluster_known_nodes:%u", r->n);
	for (;;) {
		bool ok = true;

		for (unsigned i = 0; ok && i < r->n; i++)
			if (r->pid[i] > 0)
				ok = node_says(r, i, "cluster info", "cluster_state:ok") &&
				     node_says(r, i, "cluster info", known) &&
				     /* a replica has finished its sync: a failover before
				      * that may promote a replica without the master's data */
				     (!node_says(r, i, "info replication", "role:slave") ||
				      (node_says(r, i, "info replication", "master_link_status:up") &&
				       node_says(r, i, "info replication",
						 "master_sync_in_progress:0")));
		if (ok)
			return 0;
		if (ms_now() > end) {
			fprintf(stderr, "rediskit: cluster not ok after %u ms\n", timeout_ms);
			return -ETIMEDOUT;
		}
		usleep(POLL_US);
	}
}

/* How long a node may miss pings before the others mark it failed and
 * its replica takes over: long enough that a loaded test machine does not
 * fail over a live master behind a test's back (1 s did, once, racing a
 * manual failover), short enough that a killed master is replaced soon. */
#define NODE_TIMEOUT_MS "3000"

static int start_node(struct fg_test_redis *r, unsigned i)
{
	char port[16], conf[300], log[300];
	pid_t pid;

	snprintf(port, sizeof(port), "%d", r->port[i]);
	snprintf(conf, sizeof(conf), "nodes-%d.conf", r->port[i]);
	snprintf(log, sizeof(log), "%s/redis-%d.log", r->dir, r->port[i]);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1",
		       "--cluster-enabled", "yes", "--cluster-config-file", conf, "--dir", r->dir,
		       "--cluster-node-timeout", NODE_TIMEOUT_MS, "--save", "", "--appendonly", "no",
		       /* a replica's first sync at once, not after Redis's 5 s wait */
		       "--repl-diskless-sync-delay", "0",
		       "--protected-mode", "no", "--logfile", log, (char *)NULL);
		_exit(127);
	}
	r->pid[i] = pid;
	return 0;
}

static int wait_ping(const struct fg_test_redis *r, unsigned i, unsigned timeout_ms)
{
	uint64_t end = ms_now() + timeout_ms;
	char out[64];

	while (ms_now() < end) {
		if (fg_test_redis_cli(r, i, "ping", out, sizeof(out)) == 0 &&
		    strcmp(out, "PONG") == 0)
			return 0;
		usleep(POLL_US);
	}
	fprintf(stderr, "rediskit: node %d does not answer PING\n", r->port[i]);
	return -ETIMEDOUT;
}

int fg_test_redis_cluster_start(struct fg_test_redis *r, unsigned masters, unsigned replicas,
				int base_port)
{
	char cmd[1024];
	size_t off;
	int rc;

	memset(r, 0, sizeof(*r));
	r->n = masters * (1 + replicas);
	if (r->n > FG_TEST_REDIS_MAX || masters < 3)
		return -EINVAL;
	snprintf(r->dir, sizeof(r->dir), "/tmp/fg-redis.%d.XXXXXX", (int)getpid());
	if (!mkdtemp(r->dir))
		return -errno;
	for (unsigned i = 0; i < r->n; i++) {
		r->port[i] = base_port + (int)i;
		rc = start_node(r, i);
		if (rc)
			goto out_stop;
	}
	for (unsigned i = 0; i < r->n; i++)
		if ((rc = wait_ping(r, i, 20000)) != 0)
			goto out_stop;
	off = (size_t)snprintf(cmd, sizeof(cmd), "redis-cli --cluster create");
	for (unsigned i = 0; i < r->n; i++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " 127.0.0.1:%d", r->port[i]);
	snprintf(cmd + off, sizeof(cmd) - off,
		 " --cluster-replicas %u --cluster-yes > %s/create.log 2>&1", replicas, r->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "rediskit: %s failed (see %s/create.log)\n", cmd, r->dir);
		rc = -EIO;
		goto out_stop;
	}
	rc = fg_test_redis_wait_ok(r, 30000);
	if (rc)
		goto out_stop;
	return 0;

out_stop:
	fg_test_redis_stop(r);
	return rc;
}

/* Whether `cluster nodes`' "myself" line of node i lists `slot`
 * (fields 9 on: "lo-hi" ranges or single slots). */
static bool serves_slot(const struct fg_test_redis *r, unsigned i, unsigned slot)
{
	char cmd[256], line[1024];
	bool mine = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "redis-cli -h 127.0.0.1 -p %d cluster nodes 2>/dev/null | grep myself",
		 r->port[i]);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		char *tok, *save = NULL;
		unsigned k = 0, lo, hi;

		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save), k++) {
			if (k < 8)
				continue;
			if (sscanf(tok, "%u-%u", &lo, &hi) == 2)
				mine |= slot >= lo && slot <= hi;
			else if (sscanf(tok, "%u", &lo) == 1)
				mine |= lo == slot;
		}
	}
	pclose(p);
	return mine;
}

int fg_test_redis_master_of(const struct fg_test_redis *r, unsigned slot)
{
	char out[128];

	for (unsigned i = 0; i < r->n; i++)
		if (r->pid[i] > 0 && fg_test_redis_cli(r, i, "role", out, sizeof(out)) == 0 &&
		    strcmp(out, "master") == 0 && serves_slot(r, i, slot))
			return (int)i;
	return -1;
}

void fg_test_redis_stop(struct fg_test_redis *r)
{
	char cmd[300];

	for (unsigned i = 0; i < r->n; i++) {
		if (r->pid[i] <= 0)
			continue;
		kill(r->pid[i], SIGCONT);
		kill(r->pid[i], SIGKILL);
		waitpid(r->pid[i], NULL, 0);
		r->pid[i] = 0;
	}
	if (r->dir[0] && getenv("FG_KEEP_TMP")) {
		fprintf(stderr, "rediskit: kept %s (FG_KEEP_TMP)\n", r->dir);
		r->dir[0] = '\0';
	}
	if (r->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "rediskit: could not remove %s\n", r->dir);
		r->dir[0] = '\0';
	}
}
