/* SPDX-License-Identifier: MIT */
/*
 * ctl_fixture.h — what the control-plane unit suites share: a region in a
 * private /dev/shm file, a private data directory, a few Message-IDs.
 * Header-only (static functions), included by test_region.c,
 * test_journal.c, test_snapshot.c, test_metrics.c and test_journal_mt.c.
 */
#ifndef FLOODGATE_TESTS_CTL_FIXTURE_H
#define FLOODGATE_TESTS_CTL_FIXTURE_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/history.h"
#include "floodgate/region.h"

struct ctl_fixture {
	char shm[128];
	char dir[128];
	struct fg_region *r;
};

static FG_UNUSED void fx_params(struct fg_history_params *hp, uint64_t capacity)
{
	memset(hp, 0, sizeof(*hp));
	hp->capacity = capacity;
	hp->side_capacity = 64;
	hp->full_policy = FG_FULL_DEFER;
	hp->alarm_load_pct = 90;
	hp->now = time(NULL);
	ck_assert_int_eq(fg_history_seed_random(hp->seed), 0);
}

/* A published region owned by this process. */
static FG_UNUSED struct fg_region *fx_region(struct ctl_fixture *fx, uint64_t capacity,
					     unsigned writers, uint32_t jring)
{
	struct fg_region_params rp;
	struct fg_history_params hp;
	struct fg_history *h;
	char why[256];
	size_t len;
	void *mem;

	snprintf(fx->shm, sizeof(fx->shm), "/dev/shm/fg-ctl-unit-%d", (int)getpid());
	fx_params(&hp, capacity);
	memset(&rp, 0, sizeof(rp));
	rp.history_size = fg_history_region_size(hp.capacity, hp.side_capacity);
	rp.writers = writers;
	rp.journal_ring = jring;
	rp.vlog_ring = 16;
	memcpy(rp.seed, hp.seed, sizeof(rp.seed));
	fx->r = fg_region_create(fx->shm, &rp, why, sizeof(why));
	ck_assert_msg(fx->r != NULL, "%s", why);
	mem = fg_region_history_mem(fx->r, &len);
	h = fg_history_create(mem, len, &hp);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(fg_region_set_history(fx->r, h), 0);
	fg_region_publish(fx->r);
	return fx->r;
}

static FG_UNUSED const char *fx_dir(struct ctl_fixture *fx)
{
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/fg-ctl-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx->dir));
	return fx->dir;
}

static FG_UNUSED void fx_cleanup(struct ctl_fixture *fx)
{
	if (fx->r)
		fg_region_close(fx->r);
	fx->r = NULL;
	if (fx->shm[0])
		fg_region_unlink(fx->shm);
	if (fx->dir[0]) {
		DIR *d = opendir(fx->dir);
		struct dirent *e;
		char p[512];

		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", fx->dir, e->d_name);
			unlink(p);
		}
		if (d)
			closedir(d);
		rmdir(fx->dir);
	}
}

/* "<n@fixture.test>" into buf; returns the length. */
static FG_UNUSED size_t fx_id(char *buf, size_t len, const char *tag, uint64_t n)
{
	return (size_t)snprintf(buf, len, "<%s-%llu@fixture.test>", tag, (unsigned long long)n);
}

static FG_UNUSED void fx_key(const struct fg_region *r, const char *tag, uint64_t n,
			     struct fg_history_key *k)
{
	char id[128];
	size_t l = fx_id(id, sizeof(id), tag, n);

	fg_history_hash(fg_region_history(r), id, l, k);
}

#endif
