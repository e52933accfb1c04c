/* SPDX-License-Identifier: MIT */
/*
 * levers.c — the operator's throttle and per-peer pause on the DPDK
 * dataplane (docs/operations.md, "Levers"; the engine's side is
 * dataplane/nntp/levers.c, the state and its journal floodgate/levers.h).
 *
 *   1. The main lcore owns the state. A request on the control socket
 *      (throttle REASON, go, pause PEER [SECONDS], resume PEER) changes a
 *      copy, journals the change in <data-dir>/levers.journal (fsynced),
 *      and only then publishes the copy and answers: a change the journal
 *      could not keep is refused, and nothing changes.
 *   2. Publication is a sequence lock: the generation is odd while the
 *      main lcore copies the state in, even after.
 *   3. Each worker, once a loop, compares the generation with the one it
 *      applied; when it moved and is even, it copies the state, checks the
 *      generation again, and applies the copy to its engine.
 *   4. Once a second the main lcore drops the pauses that are over, logs
 *      it and publishes (the engines stop honouring them at their time by
 *      themselves; this keeps `status` and the logs true).
 *   5. At start the journal is replayed before the workers run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp.h"
#include "floodgate/log.h"

int dp_levers_load(struct dp *dp)
{
	unsigned bad = 0;
	int rc;

	if (dp->passive)
		return 0;
	rc = fg_levers_load(dp->cfg->data_dir, time(NULL), &dp->levers, &bad);
	if (rc < 0) {
		FG_LOG_ERR(DP, "cannot read %s/%s: %s", dp->cfg->data_dir, FG_LEVERS_FILE,
			   strerror(-rc));
		return rc;
	}
	if (bad)
		FG_LOG_WARN(DP, "%s/%s: %u lines that do not parse, skipped", dp->cfg->data_dir,
			    FG_LEVERS_FILE, bad);
	if (dp->levers.throttle[0])
		FG_LOG_WARN(DP, "throttled: %s (from the levers journal)", dp->levers.throttle);
	for (unsigned i = 0; i < dp->levers.n_pauses; i++)
		FG_LOG_WARN(DP, "peer %s paused until %" PRId64 " (from the levers journal)",
			    dp->levers.pause[i].peer, dp->levers.pause[i].until);
	atomic_store(&dp->levers_gen, 2);	/* the workers apply it at their start */
	return 0;
}

static void publish(struct dp *dp, const struct fg_levers *next)
{
	unsigned long g = atomic_load_explicit(&dp->levers_gen, memory_order_relaxed);

	atomic_store_explicit(&dp->levers_gen, g + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(&dp->levers, next, sizeof(*next));
	atomic_store_explicit(&dp->levers_gen, g + 2, memory_order_release);
}

void dp_levers_worker(struct dp_worker *w)
{
	struct dp *dp = w->dp;
	unsigned long g = atomic_load_explicit(&dp->levers_gen, memory_order_acquire);
	struct fg_levers *copy;

	if (g == w->levers_seen || (g & 1))
		return;
	copy = malloc(sizeof(*copy));	/* rare: an operator's change */
	if (!copy)
		return;			/* the next loop tries again */
	memcpy(copy, &dp->levers, sizeof(*copy));
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&dp->levers_gen, memory_order_relaxed) == g) {
		fg_levers_apply(copy, w->e);
		w->levers_seen = g;
	}
	free(copy);
}

void dp_levers_tick(struct dp *dp, fg_time_t now)
{
	struct fg_levers *next;
	unsigned before = dp->levers.n_pauses;

	if (before == 0)
		return;
	for (unsigned i = 0; i < before; i++)
		if (dp->levers.pause[i].until <= now)
			FG_LOG_NOTICE(DP, "the pause of peer %s is over", dp->levers.pause[i].peer);
	next = malloc(sizeof(*next));
	if (!next)
		return;
	memcpy(next, &dp->levers, sizeof(*next));
	if (fg_levers_expire(next, now))
		publish(dp, next);
	free(next);
}

static bool peer_known(const struct dp *dp, const char *name)
{
	return fg_config_peer_by_name(dp->cfg, name) != NULL;
}

/* The request's change applied to `next`; NULL, or the error code with
 * the body in f. `change` gets the journal line. */
static const char *change_of(struct dp *dp, const struct fg_ctl_req *q, struct fg_levers *next,
			     char *change, size_t len, FILE *f)
{
	fg_time_t now = time(NULL);
	char reason[FG_ENGINE_REASON_MAX + 2] = "";
	unsigned long secs = FG_LEVERS_PAUSE_DEFAULT;
	char *end;
	int rc = 0;

	switch (q->verb) {
	case FG_CTL_THROTTLE:
		for (unsigned i = 0; i < q->argc; i++)
			snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason), "%s%s",
				 i ? " " : "", q->argv[i]);
		rc = fg_levers_throttle(next, reason);
		snprintf(change, len, "throttle %s", reason);
		break;
	case FG_CTL_GO:
		if (!dp->levers.throttle[0]) {
			fprintf(f, "not throttled\n");
			return "refused";
		}
		rc = fg_levers_throttle(next, NULL);
		snprintf(change, len, "go");
		break;
	case FG_CTL_PAUSE:
		if (q->argc > 1) {
			secs = strtoul(q->argv[1], &end, 10);
			if (*end || secs == 0 || secs > 366ul * 86400) {
				fprintf(f, "pause: SECONDS is 1 to a year\n");
				return "bad-request";
			}
		}
		if (!peer_known(dp, q->argv[0])) {
			fprintf(f, "pause: no peer %s in the configuration\n", q->argv[0]);
			return "bad-request";
		}
		rc = fg_levers_pause(next, q->argv[0], now + (fg_time_t)secs);
		snprintf(change, len, "pause %.63s %" PRId64, q->argv[0], now + (fg_time_t)secs);
		break;
	default:	/* FG_CTL_RESUME */
		rc = strlen(q->argv[0]) < FG_CONFIG_NAME_MAX ? fg_levers_pause(next, q->argv[0], 0)
							     : -ENOENT;
		if (rc == -ENOENT) {
			fprintf(f, "resume: peer %s is not paused\n", q->argv[0]);
			return "refused";
		}
		snprintf(change, len, "resume %.63s", q->argv[0]);
		break;
	}
	if (rc < 0) {
		fprintf(f, "%s: %s\n", fg_ctl_verb_name(q->verb),
			rc == -EINVAL ? "a reason is one printable line of at most 200 octets"
				      : strerror(-rc));
		return "bad-request";
	}
	return NULL;
}

/* A throttle or a pause is an alarm while it lasts: a warning. */
static void log_change(const struct dp *dp, const struct fg_ctl_req *q)
{
	const struct fg_levers *l = &dp->levers;

	switch (q->verb) {
	case FG_CTL_THROTTLE:
		FG_LOG_WARN(DP, "throttled: %s (journaled)", l->throttle);
		break;
	case FG_CTL_GO:
		FG_LOG_NOTICE(DP, "throttle ended (journaled)");
		break;
	case FG_CTL_PAUSE:
		for (unsigned i = 0; i < l->n_pauses; i++)
			if (strcmp(l->pause[i].peer, q->argv[0]) == 0)
				FG_LOG_WARN(DP, "peer %s paused until %" PRId64 " (journaled)",
					    l->pause[i].peer, l->pause[i].until);
		break;
	default:
		FG_LOG_NOTICE(DP, "peer %s resumed (journaled)", q->argv[0]);
		break;
	}
}

const char *dp_levers_ctl(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	char change[FG_ENGINE_REASON_MAX + FG_CONFIG_NAME_MAX + 32];
	bool json = q->flags & FG_CTL_F_JSON;
	struct fg_levers *next;
	const char *code;
	int rc;

	if (dp->passive) {
		fprintf(f, "passive mode answers no peer: no levers\n");
		return "refused";
	}
	next = malloc(sizeof(*next));
	if (!next) {
		fprintf(f, "out of memory\n");
		return "failed";
	}
	memcpy(next, &dp->levers, sizeof(*next));
	code = change_of(dp, q, next, change, sizeof(change), f);
	if (!code) {
		rc = fg_levers_journal(dp->cfg->data_dir, time(NULL), change);
		if (rc < 0) {
			FG_LOG_ERR(DP, "%s: not applied, the levers journal refused it: %s", change,
				   strerror(-rc));
			fprintf(f, "not applied: %s/%s: %s\n", dp->cfg->data_dir, FG_LEVERS_FILE,
				strerror(-rc));
			code = "failed";
		}
	}
	if (!code) {
		publish(dp, next);
		log_change(dp, q);
		if (json)
			dp_levers_json(dp, f, true);
		else
			fprintf(f, "%s: done, journaled\n", change);
	}
	free(next);
	return code;
}

/* A printable ASCII string as a JSON string. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void dp_levers_json(const struct dp *dp, FILE *f, bool whole)
{
	const struct fg_levers *l = &dp->levers;

	fputs(whole ? "{\"throttled\":" : ",\"throttled\":", f);
	if (l->throttle[0])
		json_str(f, l->throttle);
	else
		fputs("null", f);
	fputs(",\"paused\":[", f);
	for (unsigned i = 0; i < l->n_pauses; i++) {
		fputs(i ? ",{\"peer\":" : "{\"peer\":", f);
		json_str(f, l->pause[i].peer);
		fprintf(f, ",\"until\":%" PRId64 "}", l->pause[i].until);
	}
	fputs(whole ? "]}\n" : "]", f);
}

void dp_levers_text(const struct dp *dp, FILE *f)
{
	const struct fg_levers *l = &dp->levers;

	if (l->throttle[0])
		fprintf(f, "THROTTLED  %s (floodctl go ends it)\n", l->throttle);
	for (unsigned i = 0; i < l->n_pauses; i++)
		fprintf(f, "PAUSED     peer %s until %" PRId64 " (%" PRId64 " s more; floodctl resume)\n",
			l->pause[i].peer, l->pause[i].until, l->pause[i].until - time(NULL));
}
