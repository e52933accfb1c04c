/* SPDX-License-Identifier: MIT */
/*
 * ctl.c — floodgate-host's control socket and its operator levers.
 *
 * As floodgate does (dataplane/dpdk/ctl.c), floodgate-host with
 * --floodctld listens on dataplane.sock in the directory of floodctld's
 * control socket (or --ctl-socket PATH), where floodctld forwards what
 * only the dataplane answers. One thread of its own serves it:
 *
 *   ping                  "pong"
 *   throttle REASON / go  innd's throttle: every session 400 REASON, closed
 *   pause PEER [SECONDS] / resume PEER
 *                         a peer's new offers deferred
 *   reload [FILE]         load FILE (default: the file started with) and
 *                         switch every worker to it between two rounds, as
 *                         SIGHUP does (below)
 *
 * The levers are served as on the DPDK dataplane (levers.h, "Serving the
 * levers"): this thread owns them, journals each change in
 * <data-dir>/levers.journal, publishes it, wakes the workers, which apply
 * it to their engines at their next round, and answers once they have. The
 * journal is replayed at start whether or not the socket is on, so a
 * restarted host comes back throttled or paused as it was.
 *
 * Reload (this socket's `reload`, or SIGHUP to the process), all or
 * nothing:
 *
 *   1. The file is loaded and validated completely.
 *   2. A key that sizes what exists and differs (config.h, "Reload": the
 *      history, the queue, the downstreams, per-session buffers) refuses
 *      the whole reload, named with "needs a restart".
 *   3. Each new listen address is bound once, and let go, here: one that
 *      cannot be refuses the reload.
 *   4. Each worker switches at its next round, open sessions included
 *      (fg_slotlink_switch), listens on the new addresses and drains the
 *      sessions of a removed peer or a removed address (worker.c).
 *
 * The configuration the outbound side was opened with is kept until exit;
 * the others are freed once every worker has left them. One lock orders
 * reloads, lever changes and the counters' dump.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/ctl.h"
#include "floodgate/log.h"
#include "host.h"

#define SERVE_WAIT_MS 200		/* the stop flag and the pauses' ends are seen this often */
#define SWITCH_WAIT_MS 5000		/* a reload or a lever waits this long for every worker */

/* The answer says "done" once every worker's engine has the change. */
static void wait_applied(struct host_ctl *c)
{
	unsigned long g = atomic_load_explicit(&c->levers.gen, memory_order_acquire);
	struct timespec step = { 0, 1000000 };

	for (unsigned i = 0; i < c->nw; i++) {
		host_worker_wake(&c->ws[i]);
		for (unsigned left = SWITCH_WAIT_MS;
		     __atomic_load_n(&c->ws[i].levers_seen, __ATOMIC_ACQUIRE) != g && left; left--)
			nanosleep(&step, NULL);
	}
}

static const char *run(void *arg, const struct fg_ctl_req *q, FILE *f)
{
	struct host_ctl *c = arg;
	const char *code;

	switch (q->verb) {
	case FG_CTL_PING:
		fprintf(f, q->flags & FG_CTL_F_JSON ? "{\"pong\":true}\n" : "pong\n");
		return NULL;
	case FG_CTL_THROTTLE:
	case FG_CTL_GO:
	case FG_CTL_PAUSE:
	case FG_CTL_RESUME:
		pthread_mutex_lock(&c->lock);
		code = fg_levers_serve(&c->levers, c->cfg, q, f);
		pthread_mutex_unlock(&c->lock);
		if (!code)
			wait_applied(c);
		return code;
	case FG_CTL_RELOAD:
		return fg_ctl_reload_serve(host_reload, c, q, f);
	default:
		fprintf(f, "%s is not served by floodgate-host\n", fg_ctl_verb_name(q->verb));
		return "bad-request";
	}
}

static void *serve(void *arg)
{
	struct host_ctl *c = arg;
	fg_time_t last = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		fg_time_t now = time(NULL);

		fg_ctl_serve_one(c->fd, SERVE_WAIT_MS, run, c);
		if (now != last) {
			fg_levers_tick(&c->levers, now);
			last = now;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ reload */

/* Hand cfg to every worker and wait until each has switched (or the
 * bound passes): 0, or -errno with what to say in `out`. */
static int switch_workers(struct host_ctl *c, const struct fg_config *cfg, FILE *out)
{
	struct timespec step = { 0, 1000000 };
	unsigned left = SWITCH_WAIT_MS;

	for (unsigned i = 0; i < c->nw; i++) {
		c->ws[i].next_peers = calloc(cfg->n_peer + 1, sizeof(*c->ws[i].next_peers));
		if (!c->ws[i].next_peers) {
			while (i--)
				free(c->ws[i].next_peers);
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < c->nw; i++) {
		atomic_store_explicit(&c->ws[i].next_cfg, cfg, memory_order_release);
		host_worker_wake(&c->ws[i]);
	}
	/* a worker switches at its next round: microseconds, or one
	 * wake-up of an idle epoll; the bound is for a wedged one */
	for (unsigned i = 0; i < c->nw; i++) {
		while (atomic_load_explicit(&c->ws[i].next_cfg, memory_order_acquire) && left) {
			nanosleep(&step, NULL);
			left--;
		}
		if (atomic_load_explicit(&c->ws[i].next_cfg, memory_order_acquire)) {
			fprintf(out, "worker %u did not switch within %u ms\n", i, SWITCH_WAIT_MS);
			return -ETIMEDOUT;
		}
		if (c->ws[i].switch_rc != 0) {
			fprintf(out, "worker %u refused the configuration: %s\n", i,
				strerror(-c->ws[i].switch_rc));
			return c->ws[i].switch_rc;
		}
	}
	for (unsigned i = 0; i < c->nw; i++) {
		free(c->ws[i].next_peers);	/* the old arrays */
		c->ws[i].next_peers = NULL;
	}
	return 0;
}

/* Step 3: every listen address of cfg that no worker listens on yet can
 * be bound (and is let go at once); 0 or -errno, said in `out`. */
static int probe_listen(struct host_ctl *c, const struct fg_config *cfg, FILE *out)
{
	const struct host_worker *w = &c->ws[0];

	if (c->listen_fixed)
		return 0;
	for (unsigned i = 0; i < cfg->n_listen; i++) {
		bool have = false;
		char name[64];
		int fd;

		for (unsigned j = 0; j < w->n_lfd && !have; j++)
			have = host_endpoint_eq(&w->lep[j], &cfg->listen[i]);
		if (have)
			continue;
		fd = host_listen_on(&cfg->listen[i]);
		if (fd < 0) {
			fg_endpoint_format(&cfg->listen[i], name, sizeof(name));
			fprintf(out, "  refused        [site] listen %s: %s; nothing applied, the "
				"running configuration is kept\n", name, strerror(-fd));
			return fd;
		}
		close(fd);
	}
	return 0;
}

static int reload_locked(struct host_ctl *c, const char *file, FILE *out)
{
	const char *path = file ? file : c->config_path;
	struct fg_config *cfg = fg_config_reload_load(path, out);
	struct fg_config *old = c->cfg;
	int rc;

	if (!cfg)
		return -EINVAL;
	fprintf(out, "%s: loaded\n", path[0] ? path : "<default>");
	if (fg_config_restart_keys(cfg, old, FG_RELOAD_LIVE_LISTEN, out) != 0 ||
	    probe_listen(c, cfg, out) != 0) {
		fg_config_free(cfg);
		return -EINVAL;
	}
	fg_config_changes(old, cfg, out);
	/* the new peers' slots in the box's limits, before any worker has
	 * the configuration (peerlim.h) */
	rc = c->lim ? fg_peerlim_add(c->lim, cfg) : 0;
	if (rc != 0) {
		fprintf(out, "more than %u peer names since the start: restart to take more\n",
			FG_PEERLIM_SLOTS);
		fg_config_free(cfg);
		return rc;
	}
	rc = switch_workers(c, cfg, out);
	if (rc == -ENOMEM)
		fg_config_free(cfg);	/* no worker was handed it */
	if (rc != 0) {
		/* otherwise a worker may hold either: free neither */
		FG_LOG_ERR(HOST_COMP, "reload of %s: %s; the running configuration is kept",
			   path[0] ? path : "<default>", strerror(-rc));
		return rc == -EINVAL ? -EIO : rc;	/* -EINVAL: the file's own errors */
	}
	c->cfg = cfg;
	if (old != c->first)
		fg_config_free(old);
	if (file && !realpath(file, c->config_path))
		snprintf(c->config_path, sizeof(c->config_path), "%s", file);
	fprintf(out, "%u workers switched\n", c->nw);
	FG_LOG_NOTICE(HOST_COMP, "reloaded %s on %u workers", path[0] ? path : "<default>", c->nw);
	return 0;
}

int host_reload(void *arg, const char *file, FILE *report)
{
	struct host_ctl *c = arg;
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = reload_locked(c, file, report);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* ------------------------------------------------------------ start, stop */

int host_ctl_open(struct host_ctl *c, const struct host_opts *o, struct fg_config *cfg,
		  struct host_worker *ws, unsigned nw)
{
	char dir[FG_CONFIG_PATH_MAX];
	int rc;

	c->fd = -1;
	c->cfg = cfg;
	c->first = cfg;
	pthread_mutex_init(&c->lock, NULL);
	c->opened = true;
	if (o->config && !realpath(o->config, c->config_path))
		snprintf(c->config_path, sizeof(c->config_path), "%s", o->config);
	c->ws = ws;
	c->nw = nw;
	c->listen_fixed = o->n_listen != 0;
	rc = fg_levers_pub_load(&c->levers, HOST_COMP, cfg->data_dir);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < nw; i++)
		ws[i].levers = &c->levers;
	if (o->ctl_socket) {
		snprintf(c->path, sizeof(c->path), "%s", o->ctl_socket);
	} else if (o->floodctld) {
		snprintf(dir, sizeof(dir), "%s", cfg->control_socket);
		snprintf(c->path, sizeof(c->path), "%s/dataplane.sock", dirname(dir));
	} else {
		return 0;	/* no floodctld to forward to: no socket */
	}
	return fg_ctl_listen(c->path, HOST_COMP, &c->fd);
}

int host_ctl_start(struct host_ctl *c)
{
	int rc = pthread_create(&c->th, NULL, serve, c);

	c->running = rc == 0;
	return -rc;
}

void host_ctl_close(struct host_ctl *c)
{
	if (c->running) {
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
		pthread_join(c->th, NULL);
		c->running = false;
	}
	fg_ctl_unlisten(&c->fd, c->path);
	if (c->opened)
		pthread_mutex_destroy(&c->lock);
	c->opened = false;
}
