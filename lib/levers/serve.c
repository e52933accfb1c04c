/* SPDX-License-Identifier: MIT */
/*
 * serve.c — the levers served on a control socket and published to the
 * engines, the same for the DPDK dataplane and floodgate-host (levers.h,
 * "Serving the levers", steps 1-5; docs/operations.md, "Levers").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/ctl.h"
#include "floodgate/levers.h"
#include "floodgate/log.h"

#define PAUSE_MAX_SECONDS (366ul * 86400)

int fg_levers_pub_load(struct fg_levers_pub *p, const char *comp, const char *data_dir)
{
	unsigned bad = 0;
	int rc;

	p->comp = comp;
	if (strlen(data_dir) >= sizeof(p->data_dir))
		return -ENAMETOOLONG;
	memcpy(p->data_dir, data_dir, strlen(data_dir) + 1);
	rc = fg_levers_load(data_dir, time(NULL), &p->l, &bad);
	if (rc < 0) {
		FG_LOG_ERR(comp, "cannot read %s/%s: %s", data_dir, FG_LEVERS_FILE, strerror(-rc));
		return rc;
	}
	if (bad)
		FG_LOG_WARN(comp, "%s/%s: %u lines that do not parse, skipped", data_dir,
			    FG_LEVERS_FILE, bad);
	if (p->l.throttle[0])
		FG_LOG_WARN(comp, "throttled: %s (from the levers journal)", p->l.throttle);
	for (unsigned i = 0; i < p->l.n_pauses; i++)
		FG_LOG_WARN(comp, "peer %s paused until %" PRId64 " (from the levers journal)",
			    p->l.pause[i].peer, p->l.pause[i].until);
	atomic_store(&p->gen, 2);	/* the engines apply it at their start */
	return 0;
}

static void publish(struct fg_levers_pub *p, const struct fg_levers *next)
{
	unsigned long g = atomic_load_explicit(&p->gen, memory_order_relaxed);

	atomic_store_explicit(&p->gen, g + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(&p->l, next, sizeof(*next));
	atomic_store_explicit(&p->gen, g + 2, memory_order_release);
}

void fg_levers_pickup(struct fg_levers_pub *p, unsigned long *seen, struct fg_nntp_engine *e)
{
	unsigned long g = atomic_load_explicit(&p->gen, memory_order_acquire);
	struct fg_levers *copy;

	if (g == *seen || (g & 1))
		return;
	copy = malloc(sizeof(*copy));	/* rare: an operator's change */
	if (!copy)
		return;			/* the next loop tries again */
	memcpy(copy, &p->l, sizeof(*copy));
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&p->gen, memory_order_relaxed) == g) {
		fg_levers_apply(copy, e);
		*seen = g;
	}
	free(copy);
}

void fg_levers_tick(struct fg_levers_pub *p, fg_time_t now)
{
	struct fg_levers *next;

	if (p->l.n_pauses == 0)
		return;
	for (unsigned i = 0; i < p->l.n_pauses; i++)
		if (p->l.pause[i].until <= now)
			FG_LOG_NOTICE(p->comp, "the pause of peer %s is over", p->l.pause[i].peer);
	next = malloc(sizeof(*next));
	if (!next)
		return;
	memcpy(next, &p->l, sizeof(*next));
	if (fg_levers_expire(next, now))
		publish(p, next);
	free(next);
}

/* The request's change applied to `next`; NULL, or the error code with
 * the body in f. `change` gets the journal line. */
static const char *change_of(const struct fg_levers_pub *p, const struct fg_config *cfg,
			     const struct fg_ctl_req *q, struct fg_levers *next, char *change,
			     size_t len, FILE *f)
{
	fg_time_t now = time(NULL);
	char reason[FG_NNTP_ENGINE_REASON_MAX + 2] = "";
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
		if (!p->l.throttle[0]) {
			fprintf(f, "not throttled\n");
			return "refused";
		}
		rc = fg_levers_throttle(next, NULL);
		snprintf(change, len, "go");
		break;
	case FG_CTL_PAUSE:
		if (q->argc > 1) {
			secs = strtoul(q->argv[1], &end, 10);
			if (*end || secs == 0 || secs > PAUSE_MAX_SECONDS) {
				fprintf(f, "pause: SECONDS is 1 to a year\n");
				return "bad-request";
			}
		}
		if (!fg_config_peer_by_name(cfg, q->argv[0])) {
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
static void log_change(const struct fg_levers_pub *p, const struct fg_ctl_req *q)
{
	const struct fg_levers *l = &p->l;

	switch (q->verb) {
	case FG_CTL_THROTTLE:
		FG_LOG_WARN(p->comp, "throttled: %s (journaled)", l->throttle);
		break;
	case FG_CTL_GO:
		FG_LOG_NOTICE(p->comp, "throttle ended (journaled)");
		break;
	case FG_CTL_PAUSE:
		FG_LOG_WARN(p->comp, "peer %s paused until %" PRId64 " (journaled)", q->argv[0],
			    fg_levers_paused_until(l, q->argv[0]));
		break;
	default:
		FG_LOG_NOTICE(p->comp, "peer %s resumed (journaled)", q->argv[0]);
		break;
	}
}

const char *fg_levers_serve(struct fg_levers_pub *p, const struct fg_config *cfg,
			    const struct fg_ctl_req *q, FILE *f)
{
	char change[FG_NNTP_ENGINE_REASON_MAX + FG_CONFIG_NAME_MAX + 32];
	struct fg_levers *next = malloc(sizeof(*next));
	const char *code;
	int rc;

	if (!next) {
		fprintf(f, "out of memory\n");
		return "failed";
	}
	memcpy(next, &p->l, sizeof(*next));
	code = change_of(p, cfg, q, next, change, sizeof(change), f);
	if (!code) {
		rc = fg_levers_journal(p->data_dir, time(NULL), change);
		if (rc < 0) {
			FG_LOG_ERR(p->comp, "%s: not applied, the levers journal refused it: %s",
				   change, strerror(-rc));
			fprintf(f, "not applied: %s/%s: %s\n", p->data_dir, FG_LEVERS_FILE,
				strerror(-rc));
			code = "failed";
		}
	}
	if (!code) {
		publish(p, next);
		log_change(p, q);
		if (q->flags & FG_CTL_F_JSON)
			fg_levers_json(&p->l, f, true);
		else
			fprintf(f, "%s: done, journaled\n", change);
	}
	free(next);
	return code;
}

fg_time_t fg_levers_paused_until(const struct fg_levers *l, const char *peer)
{
	int i = fg_nntp_pause_find(l->pause, l->n_pauses, peer);

	return i < 0 ? 0 : l->pause[i].until;
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

void fg_levers_json(const struct fg_levers *l, FILE *f, bool whole)
{
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

void fg_levers_text(const struct fg_levers *l, FILE *f, fg_time_t now)
{
	if (l->throttle[0])
		fprintf(f, "THROTTLED  %s (floodctl go ends it)\n", l->throttle);
	for (unsigned i = 0; i < l->n_pauses; i++)
		fprintf(f, "PAUSED     peer %s until %" PRId64 " (%" PRId64 " s more; floodctl resume)\n",
			l->pause[i].peer, l->pause[i].until, l->pause[i].until - now);
}
