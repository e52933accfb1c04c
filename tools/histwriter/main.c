/* SPDX-License-Identifier: MIT */
/*
 * histwriter — a stand-in writer for the control plane's tests: attaches
 * to floodctld's region, claims a writer slot and inserts Message-IDs the
 * way the engine does (reserve journal room, take the ID, finish it,
 * journal the final state), at a given rate, printing each one; or checks
 * that a list of IDs is in history.
 *
 *   histwriter [-c CONFIG | --shm PATH] [write options]
 *   histwriter [-c CONFIG | --shm PATH] --check [--prefix P] < numbers
 *
 * write prints, on stdout, line-buffered:
 *   id N SEQ        ID number N was journaled as this claim's record SEQ
 *   dup N           ID N was already in history (nothing journaled)
 *   committed K     floodctld has made the first K records durable
 *   done N          the run ended after N inserts
 * so a test can SIGKILL it (or floodctld) at any point and know which IDs
 * were committed. IDs are "<PREFIX-N@histwriter.test>"; with
 * --version-of BASE they are version-number IDs (seed 000)
 * "<BASE$v=N$rN@histwriter.test>", each noted in the version side index.
 *
 * --check reads decimal N, one per line, and prints "missing N" for each
 * ID not in history (any final state counts), then "checked C missing M";
 * exit 1 if any is missing. --check-state also wants the state the write
 * options give N (--state; mixed: every third, N % 3 == 0, rejected) and
 * prints "wrong N STATE" for another, then "checked C missing M wrong W".
 * --quiet leaves out the "id" and "dup" lines (a fill of many millions).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/config.h"
#include "floodgate/journal.h"
#include "floodgate/log.h"
#include "floodgate/region.h"
#include "floodgate/vlog.h"

struct opts {
	const char *shm;
	const char *prefix;
	uint64_t start, count;
	double rate;
	const char *state;		/* accepted, rejected, mixed */
	enum fg_reason reason;
	int64_t first_seen_age, date_age, injection_delay;
	const char *peer;
	const char *version_of;
	bool vlog, check, check_state, quiet, wait_commit;
};

static atomic_bool stop;

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

static const char usage_text[] =
	"usage: histwriter [-c CONFIG | --shm PATH] [--prefix P] [--start N] [--count N]\n"
	"                  [--rate PER_SECOND] [--state accepted|rejected|mixed] [--reason NAME]\n"
	"                  [--first-seen-age SECONDS] [--date-age SECONDS]\n"
	"                  [--injection-delay SECONDS] [--peer NAME] [--vlog] [--wait-commit]\n"
	"                  [--version-of BASE]\n"
	"                  [--quiet]\n"
	"       histwriter [-c CONFIG | --shm PATH] --check [--check-state [--state S]]\n"
	"                  [--prefix P] < numbers\n";

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' }, { "shm", required_argument, NULL, 'S' },
		{ "prefix", required_argument, NULL, 'p' }, { "start", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' }, { "rate", required_argument, NULL, 'r' },
		{ "state", required_argument, NULL, 't' }, { "reason", required_argument, NULL, 'R' },
		{ "first-seen-age", required_argument, NULL, 'f' },
		{ "date-age", required_argument, NULL, 'd' },
		{ "injection-delay", required_argument, NULL, 'i' },
		{ "peer", required_argument, NULL, 'P' }, { "vlog", no_argument, NULL, 'v' },
		{ "check", no_argument, NULL, 'C' }, { "wait-commit", no_argument, NULL, 'w' },
		{ "version-of", required_argument, NULL, 'V' },
		{ "check-state", no_argument, NULL, 'K' }, { "quiet", no_argument, NULL, 'Q' },
		{ NULL, 0, NULL, 0 },
	};
	static char shm[FG_CONFIG_PATH_MAX];
	struct fg_config_errors errs;
	struct fg_config *cfg;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->prefix = "hw";
	o->state = "accepted";
	o->reason = FG_REASON_TOO_OLD;
	while ((c = getopt_long(argc, argv, "c:", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			memset(&errs, 0, sizeof(errs));
			cfg = fg_config_load_file(optarg, &errs);
			if (!cfg)
				return -EINVAL;
			snprintf(shm, sizeof(shm), "%s", cfg->shm_path);
			fg_config_free(cfg);
			o->shm = shm;
			break;
		case 'S': o->shm = optarg; break;
		case 'p': o->prefix = optarg; break;
		case 's': o->start = strtoull(optarg, NULL, 10); break;
		case 'n': o->count = strtoull(optarg, NULL, 10); break;
		case 'r': o->rate = strtod(optarg, NULL); break;
		case 't': o->state = optarg; break;
		case 'R':
			r = fg_reason_parse(optarg);
			if (r < 0)
				return -EINVAL;
			o->reason = (enum fg_reason)r;
			break;
		case 'f': o->first_seen_age = strtoll(optarg, NULL, 10); break;
		case 'd': o->date_age = strtoll(optarg, NULL, 10); break;
		case 'i': o->injection_delay = strtoll(optarg, NULL, 10); break;
		case 'P': o->peer = optarg; break;
		case 'v': o->vlog = true; break;
		case 'C': o->check = true; break;
		case 'K': o->check = o->check_state = true; break;
		case 'Q': o->quiet = true; break;
		case 'w': o->wait_commit = true; break;
		case 'V': o->version_of = optarg; break;
		default: return -EINVAL;
		}
	}
	if (!o->shm || optind != argc || (strcmp(o->state, "accepted") && strcmp(o->state, "rejected") &&
					  strcmp(o->state, "mixed")))
		return -EINVAL;
	return 0;
}

static size_t make_id(char *buf, size_t len, const struct opts *o, uint64_t n)
{
	if (o->version_of)
		return (size_t)snprintf(buf, len, "<%s$v=%llu$r%llu@histwriter.test>", o->version_of,
					(unsigned long long)n, (unsigned long long)n);
	return (size_t)snprintf(buf, len, "<%s-%llu@histwriter.test>", o->prefix,
				(unsigned long long)n);
}

/* seed 000: record version n of BASE as the newest known, if it is. */
static void note_version(struct fg_history *h, const struct opts *o, uint64_t n, const char *id,
			 size_t idl, fg_time_t now)
{
	char base[300];
	int bl = snprintf(base, sizeof(base), "<%s@histwriter.test>", o->version_of);

	fg_history_version_note(h, base, (size_t)bl, n, id, idl, now);
}

/* The final state the write options give ID number n. */
static enum fg_history_state state_of(const struct opts *o, uint64_t n)
{
	if (!strcmp(o->state, "rejected") || (!strcmp(o->state, "mixed") && n % 3 == 0))
		return FG_HISTORY_REJECTED;
	return FG_HISTORY_ACCEPTED;
}

static int check(struct fg_region *r, const struct opts *o)
{
	struct fg_history *h = fg_region_history(r);
	unsigned long long n, checked = 0, missing = 0, wrong = 0;
	fg_time_t now = time(NULL);

	while (scanf("%llu", &n) == 1) {
		struct fg_history_key k;
		char id[300];
		enum fg_history_state st;

		fg_history_hash(h, id, make_id(id, sizeof(id), o, n), &k);
		st = fg_history_lookup(h, &k, now, NULL);
		checked++;
		if (st < FG_HISTORY_ACCEPTED) {
			printf("missing %llu %s\n", n, fg_history_state_name(st));
			missing++;
		} else if (o->check_state && st != state_of(o, n)) {
			printf("wrong %llu %s\n", n, fg_history_state_name(st));
			wrong++;
		}
	}
	if (o->check_state)
		printf("checked %llu missing %llu wrong %llu\n", checked, missing, wrong);
	else
		printf("checked %llu missing %llu\n", checked, missing);
	return missing || wrong ? 1 : 0;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	if (ns > 0)
		nanosleep(&ts, NULL);
}

/* Count what the engine would: the decision, by peer, and the delays. */
static void count(struct fg_region_writer *w, int peer, enum fg_history_state st,
		  const struct opts *o, enum fg_reason reason)
{
	struct fg_region_wstats *ws = fg_region_writer_stats(w);
	enum fg_counter c = st == FG_HISTORY_ACCEPTED ? FG_CTR_RULES_ACCEPTED : FG_CTR_RULES_REJECTED;

	fg_stats_inc(&ws->total, c);
	if (peer >= 0)
		fg_stats_inc(&ws->peer[peer], c);
	if (st == FG_HISTORY_REJECTED) {
		ws->total.rejected[reason]++;
		if (peer >= 0)
			ws->peer[peer].rejected[reason]++;
	}
	fg_hist_add(&ws->injection_delay, o->injection_delay);
	fg_hist_add(&ws->propagation_delay, o->date_age - o->first_seen_age);
}

/* One ID through reserve, begin_accept, finish, append. 1 inserted, 0 dup. */
static int insert_one(struct fg_region_writer *w, const struct opts *o, uint64_t n, int peer,
		      uint64_t *seq)
{
	struct fg_history *h = fg_region_history(fg_region_writer_region(w));
	fg_time_t now = time(NULL), fs = now - o->first_seen_age, date = now - o->date_age;
	enum fg_history_state st = state_of(o, n);
	enum fg_reason reason = st == FG_HISTORY_REJECTED ? o->reason : FG_REASON_NONE;
	struct fg_history_entry found;
	struct fg_history_ref ref;
	struct fg_history_key k;
	char id[300];
	size_t idl = make_id(id, sizeof(id), o, n);
	int rc;

	fg_history_hash(h, id, idl, &k);
	/* no journal room: defer (the engine answers 431 / stops reading) */
	while (fg_journal_reserve(w) == -ENOSPC && !atomic_load(&stop))
		sleep_ns(1000000);
	if (atomic_load(&stop))
		return -EINTR;
	while ((rc = fg_history_begin_accept(h, &k, now, 1, &ref, &found)) == -EAGAIN)
		sleep_ns(100000);
	if (rc < 0) {
		fg_journal_unreserve(w);
		return rc == -EEXIST ? 0 : rc;
	}
	rc = fg_history_finish(h, &ref, st, date, fs, now);
	if (rc == 0)
		rc = fg_journal_append(w, &k, st, date, fs, FG_JREC_F_DATE_INJECTION, reason);
	if (rc < 0)
		return rc;
	*seq = fg_region_ring_pushed(w, FG_RING_JOURNAL) - 1;
	if (o->version_of)
		note_version(h, o, n, id, idl, now);
	count(w, peer, st, o, reason);
	if (o->vlog)
		fg_vlog_emit(w, (int64_t)now * 1000000000, FG_VLOG_TAKETHIS, peer, NULL, id, idl,
			     st == FG_HISTORY_ACCEPTED ? FG_VLOG_ACCEPT : FG_VLOG_REJECT, reason,
			     date, date - o->injection_delay, date, fs);
	return 1;
}

static void report_commit(struct fg_region_writer *w, uint64_t *last)
{
	uint64_t c = fg_region_writer_committed(w);

	if (c != *last) {
		printf("committed %llu\n", (unsigned long long)c);
		*last = c;
	}
}

static int write_ids(struct fg_region *r, const struct opts *o)
{
	struct fg_region_writer *w;
	int64_t period = o->rate > 0 ? (int64_t)(1e9 / o->rate) : 0;
	uint64_t done = 0, committed = UINT64_MAX, seq = 0;
	struct timespec t0;
	int peer = o->peer ? fg_region_peer_index(r, o->peer) : -1;
	int err, rc = 0;

	w = fg_region_claim(r, "histwriter", &err);
	if (!w) {
		fprintf(stderr, "histwriter: no writer slot: %s\n", strerror(-err));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t n = o->start; !atomic_load(&stop) && (!o->count || done < o->count); n++) {
		rc = insert_one(w, o, n, peer, &seq);
		if (rc < 0)
			break;
		if (!o->quiet)
			printf(rc == 1 ? "id %llu %llu\n" : "dup %llu\n", (unsigned long long)n,
			       (unsigned long long)seq);
		done++;
		fg_region_writer_heartbeat(w);
		report_commit(w, &committed);
		if (period) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			sleep_ns((int64_t)done * period - ((now.tv_sec - t0.tv_sec) * 1000000000ll +
							   (now.tv_nsec - t0.tv_nsec)));
		}
	}
	while (o->wait_commit && !atomic_load(&stop) &&
	       fg_region_writer_committed(w) < fg_region_ring_pushed(w, FG_RING_JOURNAL))
		sleep_ns(10000000);
	report_commit(w, &committed);
	printf("done %llu\n", (unsigned long long)done);
	fg_region_release(w);
	return rc < 0 && rc != -EINTR ? 2 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct fg_region *r;
	struct opts o;
	char why[512];
	int rc;

	if (parse(argc, argv, &o) < 0) {
		fputs(usage_text, stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	r = fg_region_attach(o.shm, why, sizeof(why));
	if (!r) {
		fprintf(stderr, "histwriter: %s\n", why);
		return 2;
	}
	rc = o.check ? check(r, &o) : write_ids(r, &o);
	fg_region_close(r);
	return rc;
}
