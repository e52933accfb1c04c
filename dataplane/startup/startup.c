/* SPDX-License-Identifier: MIT */
/*
 * startup.c — the start-up steps floodgate and floodgate-host share (see
 * startup.h for the order and what stays with each program).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "floodgate/log.h"
#include "floodgate/startup.h"

/* ------------------------------------------------------------ 1. options */

int fg_startup_parse_sink(const char *arg, enum fg_wiring_sink *sink)
{
	static const struct {
		const char *name;
		enum fg_wiring_sink kind;
	} names[] = {
		{ "queue", FG_WIRING_SINK_QUEUE },
		{ "memory", FG_WIRING_SINK_MEMORY },
		{ "null", FG_WIRING_SINK_NULL },
	};

	for (unsigned i = 0; arg && i < FG_ARRAY_SIZE(names); i++)
		if (strcmp(arg, names[i].name) == 0) {
			*sink = names[i].kind;
			return 0;
		}
	return -EINVAL;
}

int fg_startup_parse_log_level(const char *arg, int *level)
{
	int lvl = arg ? fg_log_level_parse(arg) : -1;

	if (lvl < 0)
		return -EINVAL;
	*level = lvl;
	return 0;
}

/* ------------------------------------------------------------ 2. configuration */

struct fg_config *fg_startup_config_load(const char *path, const char *ident)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = path ? fg_config_load_file(path, &errs) : fg_config_load_default(&errs);
	if (cfg)
		fg_config_log_open(cfg, ident);
	fg_config_errors_log(&errs);
	return cfg;
}

enum fg_wiring_sink fg_startup_default_sink(const struct fg_config *cfg, bool may_relay)
{
	return cfg->n_downstream && may_relay ? FG_WIRING_SINK_QUEUE : FG_WIRING_SINK_MEMORY;
}

/* ------------------------------------------------------------ 3. signals */

void fg_startup_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
}

/* ------------------------------------------------------------ 4. the history */

void fg_startup_table_params(struct fg_history_params *hp, const struct fg_config *cfg,
			     uint64_t capacity, uint64_t side_capacity)
{
	memset(hp, 0, sizeof(*hp));
	hp->capacity = capacity;
	hp->side_capacity = side_capacity;
	hp->full_policy = cfg->full_policy;
	hp->alarm_load_pct = cfg->alarm_load_pct;
	hp->now = time(NULL);
}

int fg_startup_table_open(struct fg_startup_table *t, struct fg_history_params *hp)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->len = fg_history_region_size(hp->capacity, hp->side_capacity);
	if (!t->len || fg_history_seed_random(hp->seed) != 0)
		return -EINVAL;
	t->mem = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->mem == MAP_FAILED) {
		rc = -errno;
		memset(t, 0, sizeof(*t));
		return rc;
	}
	t->h = fg_history_create(t->mem, t->len, hp);
	if (t->h)
		return 0;
	munmap(t->mem, t->len);
	memset(t, 0, sizeof(*t));
	return -EINVAL;
}

void fg_startup_table_close(struct fg_startup_table *t)
{
	if (t->h)
		fg_history_detach(t->h);
	if (t->mem)
		munmap(t->mem, t->len);
	memset(t, 0, sizeof(*t));
}

/* ------------------------------------------------------------ 5. the cluster client */

int fg_startup_cluster_open(struct fg_startup_cluster *c, const struct fg_startup_cluster_params *p)
{
	struct fg_claimer_params cp = { .cfg = p->cfg, .max_links = p->max_links };
	int err = 0;

	memset(c, 0, sizeof(*c));
	if (!p->cfg->cluster_seeds[0])
		return 0;
	c->claimer = fg_claimer_create(&cp);
	if (!c->claimer) {
		FG_LOG_ERR(p->log_comp, "[cluster]: cannot start the cluster client");
		return -EINVAL;
	}
	if (!p->region)
		return 0;
	c->slot = fg_region_claim(p->region, p->slot_name, &err);
	if (c->slot)
		return 0;
	FG_LOG_ERR(p->log_comp, "cluster thread: no writer slot in %s: %s", p->region_what,
		   strerror(-err));
	return err ? err : -EBUSY;
}

void fg_startup_cluster_publish(struct fg_startup_cluster *c, const char *data_dir,
				uint64_t now_ns, const char *log_comp)
{
	fg_time_t now = time(NULL);
	int rc;

	if (!c->claimer || now_ns - c->published_ns < FG_STARTUP_CLUSTER_PUBLISH_NS)
		return;
	c->published_ns = now_ns;
	if (c->slot)
		fg_claimer_publish(c->claimer, c->slot);
	/* the cluster's health for floodctld, once a second */
	if (now == c->status_written)
		return;
	rc = fg_claimer_write_status(c->claimer, data_dir);
	if (rc != 0)
		FG_LOG_DEBUG(log_comp, "%s/%s: %s", data_dir, FG_CS_STATUS_FILE, strerror(-rc));
	c->status_written = now;
}

void fg_startup_cluster_close(struct fg_startup_cluster *c)
{
	if (c->slot) {
		fg_claimer_publish(c->claimer, c->slot);
		fg_region_release(c->slot);
	}
	fg_claimer_destroy(c->claimer);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------ 6. files written whole */

int fg_startup_write_file(const char *path, const char *what, const char *log_comp,
			  void (*write)(FILE *f, const void *arg), const void *arg)
{
	char tmp[4096];
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		rc = -errno;
		FG_LOG_ERR(log_comp, "%s %s: %s", what, tmp, strerror(-rc));
		return rc;
	}
	write(f, arg);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		rc = -errno;
		FG_LOG_ERR(log_comp, "%s %s: %s", what, path, strerror(-rc));
		return rc ? rc : -EIO;
	}
	return 0;
}
