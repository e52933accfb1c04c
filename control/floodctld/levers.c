/* SPDX-License-Identifier: MIT */
/*
 * levers.c — the operator's history levers, modelled on ctlinnd:
 *
 *   forget ID                     drop an ID from history (a wrongly
 *                                 remembered refusal, say): INN has no
 *                                 such lever short of editing history
 *   remember ID [accepted|rejected]
 *                                 put an ID in history (ctlinnd addhist)
 *
 * Each change is made in the shared history first, then journaled — one
 * record in a block of floodctld's own (FG_JBLOCK_SLOT_CTLD), committed
 * before the answer — then counted and logged. A `forget` writes a
 * tombstone: replay removes the ID again after the outbound queue's
 * records are re-inserted, unless the article came again after the forget
 * (journal.h). Changing history before journaling keeps a concurrent
 * snapshot right: a snapshot covers the journal up to a position taken
 * before it copies the table, so a change whose record lies past that
 * position is replayed, and one before it is in the copy.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "floodgate/cluster.h"
#include "floodgate/log.h"
#include "floodgate/msgid.h"
#include "floodctld.h"

/* a forget waits this long for the cluster's DEL, at most */
#define CLUSTER_DEL_BOUND_MS 2000u

/* One record, durable before the answer: 0 or -errno. */
static int journal_now(struct ctld *d, const struct fg_jrec *rec)
{
	int rc;

	pthread_mutex_lock(&d->jlock);
	rc = fg_journal_add(d->j, rec, 1);
	if (rc == 0)
		rc = fg_journal_commit(d->j, d->r);
	pthread_mutex_unlock(&d->jlock);
	return rc;
}

static void error_line(struct fg_sbuf *out, bool json, const char *msg)
{
	if (!json) {
		fg_sbuf_printf(out, "%s\n", msg);
		return;
	}
	fg_sbuf_puts(out, "{\"error\":");
	fg_sbuf_json_str(out, msg, strlen(msg));
	fg_sbuf_puts(out, ",\"details\":[]}\n");
}

/* The ID as a history key, or NULL (the reply head's code) with out filled. */
static const char *key_of(struct ctld *d, const char *id, bool json, struct fg_history_key *k,
			  struct fg_sbuf *out)
{
	if (!fg_msgid_valid_wire(id, strlen(id))) {
		error_line(out, json, "not a Message-ID (RFC 3977 3.6)");
		return "bad-request";
	}
	fg_history_hash(fg_region_history(d->r), id, strlen(id), k);
	return NULL;
}

static void entry_json(struct fg_json *j, const char *id, const char *verb,
		       const struct fg_history_entry *e)
{
	fg_json_str(j, "id", id);
	fg_json_str(j, verb, fg_history_state_name(e->state));
	fg_json_time(j, "first_seen", e->first_seen);
	fg_json_time(j, "article_date", e->article_date);
}

/*
 * [cluster]: the ID's key in the shared second-level history goes too
 * (docs/scale.md, "Several boxes"), or a box would still answer 438 from
 * another's outcome for the window. Returns what to tell the operator:
 * "deleted", "absent", "unreachable", or NULL without a cluster.
 */
static const char *cluster_forget(struct ctld *d, const char *id)
{
	char seeds[sizeof(d->cfg->cluster_seeds)], secret[sizeof(d->cfg->cluster_secret)];
	char password[sizeof(d->cfg->cluster_password)], key[FG_CLUSTER_KEY_LEN + 1];
	struct fg_cluster_params p = { 0 };
	int rc;

	pthread_mutex_lock(&d->lock);
	snprintf(seeds, sizeof(seeds), "%s", d->cfg->cluster_seeds);
	snprintf(secret, sizeof(secret), "%s", d->cfg->cluster_secret);
	snprintf(password, sizeof(password), "%s", d->cfg->cluster_password);
	p.timeout_ms = (unsigned)FG_MAX(d->cfg->cluster_timeout_ms, 100);
	pthread_mutex_unlock(&d->lock);
	if (!seeds[0])
		return NULL;
	fg_cluster_key(secret, id, strlen(id), key);
	p.seeds = seeds;
	p.password = password;
	rc = fg_cluster_del(&p, key, CLUSTER_DEL_BOUND_MS);
	if (rc < 0) {
		FG_LOG_WARN(CTLD, "forget %s: the cluster did not answer its DEL (%s): other boxes "
			    "keep its outcome for the window", id, strerror(-rc));
		return "unreachable";
	}
	return rc ? "deleted" : "absent";
}

const char *ctld_forget(struct ctld *d, const char *id, bool json, struct fg_sbuf *out)
{
	struct fg_history_entry was;
	struct fg_history_key k;
	struct fg_jrec rec;
	fg_time_t now = time(NULL);
	const char *code = key_of(d, id, json, &k, out), *cl;
	int rc;

	if (code)
		return code;
	rc = fg_history_forget(fg_region_history(d->r), &k, now, &was);
	if (rc == -ENOENT) {
		/* another box's outcome may still be in the cluster */
		cl = cluster_forget(d, id);
		if (cl && strcmp(cl, "deleted") == 0) {
			FG_LOG_NOTICE(CTLD, "forgot %s: not in history; its cluster key deleted", id);
			error_line(out, json, "not in history; its cluster key deleted");
			return NULL;
		}
		error_line(out, json, "not in history: nothing to forget");
		return "not-found";
	}
	if (rc == -EBUSY) {
		error_line(out, json, "in flight (offered to a session, or an article for it being "
			   "made safe): its transfer decides; try again");
		return "refused";
	}
	fg_jrec_make_forget(&rec, &k, now);
	rc = journal_now(d, &rec);
	ctld_count(d, FG_CTR_CTL_FORGOTTEN);
	if (rc < 0) {
		FG_LOG_ERR(CTLD, "forgot %s (was %s) but its tombstone is not durable: %s; a restart "
			   "may bring it back", id, fg_history_state_name(was.state), strerror(-rc));
		error_line(out, json, "forgotten, but the journal could not make the tombstone "
			   "durable: a restart may bring the ID back (see the log)");
		return "failed";
	}
	cl = cluster_forget(d, id);
	FG_LOG_NOTICE(CTLD, "forgot %s (was %s, first seen %lld): journaled%s%s", id,
		      fg_history_state_name(was.state), (long long)was.first_seen,
		      cl ? "; cluster key " : "", cl ? cl : "");
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		entry_json(&j, id, "was", &was);
		fg_json_bool(&j, "journaled", true);
		if (cl)
			fg_json_str(&j, "cluster_key", cl);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else {
		fg_sbuf_printf(out, "forgot %s: it was %s, first seen ", id,
			       fg_history_state_name(was.state));
		fg_sbuf_time(out, was.first_seen);
		fg_sbuf_puts(out, "; journaled (a tombstone: a restart keeps it forgotten)");
		if (cl)
			fg_sbuf_printf(out, "; cluster key %s", cl);
		fg_sbuf_puts(out, "\n");
	}
	return NULL;
}

const char *ctld_remember(struct ctld *d, const char *id, const char *as, bool json,
			  struct fg_sbuf *out)
{
	enum fg_history_state st = FG_HISTORY_ACCEPTED;
	struct fg_history_entry e;
	struct fg_history_key k;
	struct fg_jrec rec;
	fg_time_t now = time(NULL);
	const char *code;
	int rc;

	if (as && strcmp(as, "rejected") == 0) {
		st = FG_HISTORY_REJECTED;
	} else if (as && strcmp(as, "accepted") != 0) {
		error_line(out, json, "remember as accepted or rejected");
		return "bad-request";
	}
	code = key_of(d, id, json, &k, out);
	if (code)
		return code;
	rc = fg_history_insert_final(fg_region_history(d->r), &k, st, now, now, now, &e);
	if (rc == -EEXIST) {
		char msg[96];

		snprintf(msg, sizeof(msg), "already in history (%s): forget it first",
			 fg_history_state_name(e.state));
		error_line(out, json, msg);
		return "refused";
	}
	if (rc < 0) {
		error_line(out, json, rc == -ENOSPC ? "the history table is full" :
			   "in flight, or the table is busy: try again");
		return rc == -ENOSPC ? "failed" : "refused";
	}
	rc = fg_jrec_make(&rec, &k, st, now, now, 0, FG_REASON_NONE);
	FG_ASSERT(rc == 0);	/* a final state, no date offset */
	rc = journal_now(d, &rec);
	ctld_count(d, FG_CTR_CTL_REMEMBERED);
	if (rc < 0) {
		FG_LOG_ERR(CTLD, "remembered %s as %s but its record is not durable: %s", id,
			   fg_history_state_name(st), strerror(-rc));
		error_line(out, json, "remembered, but the journal could not make it durable "
			   "(see the log)");
		return "failed";
	}
	FG_LOG_NOTICE(CTLD, "remembered %s as %s: journaled", id, fg_history_state_name(st));
	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "id", id);
		fg_json_str(&j, "state", fg_history_state_name(st));
		fg_json_time(&j, "first_seen", now);
		fg_json_bool(&j, "journaled", true);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
	} else {
		fg_sbuf_printf(out, "remembered %s as %s; journaled\n", id, fg_history_state_name(st));
	}
	return NULL;
}
