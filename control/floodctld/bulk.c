/* SPDX-License-Identifier: MIT */
/*
 * bulk.c — floodctl remember --file FILE | --inn-news-log FILE: many IDs
 * put in history at once, each with its own time, journaled
 * (docs/floodctl.md "remember"; docs/operations.md "Switching a site
 * from INN").
 *
 *   remember-file ids PATH           one <id> a line, optionally a Unix time
 *   remember-file inn-news-log PATH  INN's news log: '+' and 'j' lines
 *                                    (accepted); '-' (cant store article
 *                                    among them), 'c' and '?' are not taken
 *
 * 1. floodctld reads PATH itself (floodctl sent its absolute path): the
 *    service's user must be able to read it.
 * 2. Each ID taken is checked (RFC 3977 3.6), its time is its first-seen
 *    and its article date (a time ahead of now + 1 day, or none, is now);
 *    an ID older than cutoff + 1 day is skipped (the rules refuse its
 *    article by date; an entry would expire at once), one already in
 *    history is left as it is.
 * 3. insert_final ACCEPTED, then a journal record; records go to the
 *    journal in blocks of FG_JBLOCK_MAX (one block of floodctld's own
 *    each), committed every COMMIT_EVERY records and at the end, before
 *    the answer: what was answered is durable. As `remember`, the table
 *    changes first and the journal follows (levers.c says why a snapshot
 *    in between stays right).
 * A full table stops the run (the count so far is answered, all of it
 * journaled). Counted in control_remembered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/innhist.h"
#include "floodgate/log.h"
#include "floodgate/msgid.h"
#include "floodctld.h"

#define COMMIT_EVERY (1u << 20)
#define SHOW_BAD 3
#define DAY 86400

struct bulk {
	struct ctld *d;
	struct fg_history *h;
	fg_time_t now, oldest;
	struct fg_jrec recs[FG_JBLOCK_MAX];
	unsigned n_recs;
	uint64_t since_commit;
	uint64_t lines, taken, already, too_old, not_accepted, cant_store, bad, busy;
	int err;		/* the first journal error */
	bool full;
	char bad_text[SHOW_BAD][160];
};

static int flush_block(struct bulk *b, bool commit)
{
	int rc = 0;

	pthread_mutex_lock(&b->d->jlock);
	if (b->n_recs)
		rc = fg_journal_add(b->d->j, b->recs, b->n_recs);
	if (rc == 0 && commit)
		rc = fg_journal_commit(b->d->j, b->d->r);
	pthread_mutex_unlock(&b->d->jlock);
	b->n_recs = 0;
	if (rc < 0 && !b->err)
		b->err = rc;
	return rc;
}

static void bad_line(struct bulk *b, const char *why)
{
	if (b->bad < SHOW_BAD)
		snprintf(b->bad_text[b->bad], sizeof(b->bad_text[0]), "line %llu: %s",
			 (unsigned long long)b->lines, why);
	b->bad++;
}

static void take(struct bulk *b, const struct fg_idtime *t)
{
	struct fg_history_key k;
	fg_time_t when = t->when && t->when <= b->now + DAY ? t->when : b->now;
	int rc = -EAGAIN;

	if (!fg_msgid_valid_wire(t->id, t->id_len)) {
		bad_line(b, "not a Message-ID (RFC 3977 3.6)");
		return;
	}
	if (when < b->oldest) {
		b->too_old++;
		return;
	}
	fg_history_hash(b->h, t->id, t->id_len, &k);
	for (unsigned i = 0; i < 8 && rc == -EAGAIN; i++)
		rc = fg_history_insert_final(b->h, &k, FG_HISTORY_ACCEPTED, when, when, b->now, NULL);
	if (rc == -EEXIST) {
		b->already++;
		return;
	}
	if (rc == -ENOSPC) {
		b->full = true;
		return;
	}
	if (rc < 0) {
		b->busy++;	/* in flight in a session this instant: its transfer decides */
		return;
	}
	rc = fg_jrec_make(&b->recs[b->n_recs++], &k, FG_HISTORY_ACCEPTED, when, when, 0,
			  FG_REASON_NONE);
	FG_ASSERT(rc == 0);
	b->taken++;
	if (b->n_recs == FG_JBLOCK_MAX) {
		b->since_commit += FG_JBLOCK_MAX;
		flush_block(b, b->since_commit >= COMMIT_EVERY);
		if (b->since_commit >= COMMIT_EVERY)
			b->since_commit = 0;
	}
}

static void one_line(struct bulk *b, bool newslog, const char *s, size_t len)
{
	enum fg_newslog_code code;
	struct fg_idtime t;
	const char *why;
	int rc;

	b->lines++;
	rc = newslog ? fg_newslog_parse(s, len, b->now, &t, &code, &why)
		     : fg_idfile_parse(s, len, &t, &why);
	if (rc < 0) {
		bad_line(b, why);
		return;
	}
	if (rc == 0) {
		if (newslog && code != FG_NEWSLOG_ACCEPTED && code != FG_NEWSLOG_JUNKED) {
			b->not_accepted++;
			if (memmem(s, len, "cant store", 10) || memmem(s, len, "can't store", 11))
				b->cant_store++;
		}
		return;
	}
	take(b, &t);
}

/* secs: wall clock; cpu: this thread's CPU time (the rate is per CPU
 * second, as the benchmarks count on a shared machine) */
static void reply(const struct bulk *b, const char *path, bool json, double secs, double cpu,
		  struct fg_sbuf *out)
{
	double rate = cpu > 0 ? (double)b->lines / cpu : 0;

	if (json) {
		struct fg_json j;

		fg_json_begin(&j, out);
		fg_json_str(&j, "file", path);
		fg_json_u64(&j, "lines", b->lines);
		fg_json_u64(&j, "remembered", b->taken);
		fg_json_u64(&j, "already", b->already);
		fg_json_u64(&j, "older_than_cutoff", b->too_old);
		fg_json_u64(&j, "not_accepted", b->not_accepted);
		fg_json_u64(&j, "cant_store", b->cant_store);
		fg_json_u64(&j, "malformed", b->bad);
		fg_json_u64(&j, "in_flight", b->busy);
		fg_json_bool(&j, "table_full", b->full);
		fg_json_bool(&j, "journaled", b->err == 0);
		fg_json_f64(&j, "seconds", secs);
		fg_json_f64(&j, "cpu_seconds", cpu);
		fg_json_f64(&j, "lines_per_second", rate);
		fg_json_end(&j);
		fg_sbuf_puts(out, "\n");
		return;
	}
	fg_sbuf_printf(out, "remembered %llu IDs from %s as accepted; journaled\n"
		       "  %llu lines in %.3f s (%.3f s of CPU: %.2f M/s): %llu already in history, %llu older than "
		       "the cutoff + 1 day, %llu not accepted articles (%llu of them cant store), "
		       "%llu malformed, %llu in flight\n",
		       (unsigned long long)b->taken, path, (unsigned long long)b->lines, secs,
		       cpu, rate / 1e6, (unsigned long long)b->already, (unsigned long long)b->too_old,
		       (unsigned long long)b->not_accepted, (unsigned long long)b->cant_store,
		       (unsigned long long)b->bad, (unsigned long long)b->busy);
	for (uint64_t i = 0; i < b->bad && i < SHOW_BAD; i++)
		fg_sbuf_printf(out, "  %s\n", b->bad_text[i]);
	if (b->full)
		fg_sbuf_puts(out, "  stopped: the history table is full\n");
}

const char *ctld_remember_file(struct ctld *d, const char *kind, const char *path, bool json,
			       struct fg_sbuf *out)
{
	bool newslog = strcmp(kind, "inn-news-log") == 0;
	struct timespec t0, t1, c0, c1;
	struct bulk *b;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	const char *code = NULL;

	if (!newslog && strcmp(kind, "ids") != 0) {
		fg_sbuf_puts(out, json ? "{\"error\":\"remember-file ids|inn-news-log PATH\","
				  "\"details\":[]}\n" : "remember-file ids|inn-news-log PATH\n");
		return "bad-request";
	}
	f = fopen(path, "r");
	if (!f) {
		fg_sbuf_printf(out, json ? "{\"error\":\"%s: cannot be read by floodctld\","
			       "\"details\":[]}\n" : "%s: cannot be read by floodctld\n",
			       strerror(errno));
		return "failed";
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		fclose(f);
		return "failed";
	}
	b->d = d;
	b->h = fg_region_history(d->r);
	b->now = time(NULL);
	pthread_mutex_lock(&d->lock);
	b->oldest = b->now - d->cfg->cutoff - DAY;
	pthread_mutex_unlock(&d->lock);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	while (!b->full && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			len--;
		one_line(b, newslog, line, (size_t)len);
	}
	free(line);
	fclose(f);
	flush_block(b, true);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	__atomic_fetch_add(&d->st->ctr[FG_CTR_CTL_REMEMBERED], b->taken, __ATOMIC_RELAXED);
	if (b->err) {
		FG_LOG_ERR(CTLD, "remembered %llu IDs from %s but the journal failed: %s",
			   (unsigned long long)b->taken, path, strerror(-b->err));
		code = "failed";
	} else {
		FG_LOG_NOTICE(CTLD, "remembered %llu IDs from %s (%llu lines): journaled",
			      (unsigned long long)b->taken, path, (unsigned long long)b->lines);
	}
	reply(b, path, json, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	      (double)(c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9, out);
	free(b);
	return code;
}
