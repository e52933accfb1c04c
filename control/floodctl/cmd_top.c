/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c — `floodctl top`: the filter's figures, live.
 *
 * Every --interval seconds it asks floodctld two things:
 *   - STATS --prom: the Prometheus text of /metrics (counters summed over
 *     the writers, rejects by reason, history load, the outbound queue and
 *     each downstream's lag, read from the queue's files);
 *   - PEERS --json, which floodctld forwards to the dataplane: the offers
 *     (CHECK, TAKETHIS, IHAVE) and their answers, which only the dataplane
 *     counts per verb and per code.
 * It shows offers and offers/s, the answers, articles accepted (made safe
 * in the queue: the 239s) and relayed downstream, refusals by reason, the
 * queue (the downstreams' lag: articles not yet acknowledged, the age of
 * the oldest; the articles in its files), the history's size and, with --total, a
 * progress line. Without a dataplane (floodgate-host, or floodgate
 * stopped) the offers are "-" and the rest still shows.
 *
 * On a terminal it redraws one block in place; otherwise (a pipe, a log)
 * it prints one line per sample. Exit 0 after --count samples or on
 * SIGINT/SIGTERM; when floodctld stops answering, the exit status of any
 * command that asks it (3 not running ... 6 timeout).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/config.h"
#include "floodgate/ctl.h"
#include "floodgate/stats.h"
#include "floodctl.h"

#define TOP_TIMEOUT_S 5
#define BAR_WIDTH 30

struct top_sample {
	double t;			/* CLOCK_MONOTONIC seconds */
	bool have_peers;		/* the dataplane answered PEERS */
	uint64_t sessions, check, takethis, ihave;
	uint64_t c238, c431, c438, c239, c439;
	uint64_t accepted;		/* nntp_articles_accepted: 239/235 given */
	uint64_t relayed;		/* relay_accepted: a downstream's 239/235 */
	uint64_t reason[FG_REASON__COUNT];
	uint64_t hist_entries, hist_capacity;
	bool have_queue;
	uint64_t q_records, lag_records;
	double q_oldest_s;
};

struct top_opts {
	char socket[FG_CONFIG_PATH_MAX];
	double interval;
	uint64_t count;			/* samples; 0 = until a signal */
	uint64_t total;			/* offers expected, for the progress line */
	bool lines;			/* one line per sample even on a terminal */
	bool json;			/* one JSON object per sample, a line each */
};

static volatile sig_atomic_t top_stop;

static void on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Offers: CHECKs, IHAVEs, and TAKETHIS sent without a CHECK (RFC 4644 2.5:
 * a peer may skip the CHECK). The TAKETHIS that follows a 238 carries the
 * article of an offer already counted, so it is not another one.
 */
static uint64_t offers_of(const struct top_sample *s)
{
	uint64_t tt = s->takethis > s->c238 ? s->takethis - s->c238 : 0;

	return s->check + s->ihave + tt;
}

/* ---------------------------------------------------------------- parsing */

/* `name{labels} value` lines; comments skipped. */
static void prom_line(struct top_sample *s, const char *name, size_t nlen, double v)
{
	static const char reason_pfx[] = "floodgate_rejected_total{reason=\"";
	static const char lag_pfx[] = "floodgate_relay_lag_records{";
	uint64_t u = v > 0 ? (uint64_t)v : 0;

#define IS(lit) (nlen == sizeof(lit) - 1 && memcmp(name, lit, nlen) == 0)
	if (IS("floodgate_nntp_articles_accepted_total"))
		s->accepted = u;
	else if (IS("floodgate_relay_accepted_total"))
		s->relayed = u;
	else if (IS("floodgate_history_entries"))
		s->hist_entries = u;
	else if (IS("floodgate_history_capacity"))
		s->hist_capacity = u;
	else if (IS("floodgate_queue_records")) {
		s->q_records = u;
		s->have_queue = true;
	} else if (IS("floodgate_queue_oldest_age_seconds"))
		s->q_oldest_s = v == v ? v : 0;	/* NaN: none */
	else if (nlen > sizeof(lag_pfx) - 1 && memcmp(name, lag_pfx, sizeof(lag_pfx) - 1) == 0)
		s->lag_records += u;
	else if (nlen > sizeof(reason_pfx) + 1 &&
		 memcmp(name, reason_pfx, sizeof(reason_pfx) - 1) == 0) {
		char r[64];
		size_t rl = nlen - (sizeof(reason_pfx) - 1) - 2;	/* less `"}` */
		int id;

		if (rl >= sizeof(r))
			return;
		memcpy(r, name + sizeof(reason_pfx) - 1, rl);
		r[rl] = '\0';
		id = fg_reason_parse(r);
		if (id > 0 && id < FG_REASON__COUNT)
			s->reason[id] = u;
	}
#undef IS
}

static void parse_prom(struct top_sample *s, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n'), *sp;
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		sp = memrchr(p, ' ', len);
		if (p[0] != '#' && sp && sp > p)
			prom_line(s, p, (size_t)(sp - p), strtod(sp + 1, NULL));
		p += len + (eol ? 1 : 0);
	}
}

/* The sum over every peer object of one numeric member `"key":N`. */
static uint64_t json_sum(const char *from, const char *to, const char *key)
{
	char pat[32];
	size_t pl = (size_t)snprintf(pat, sizeof(pat), "\"%s\":", key);
	uint64_t sum = 0;

	for (const char *p = from; p && p < to; p += pl) {
		p = memmem(p, (size_t)(to - p), pat, pl);
		if (!p)
			break;
		sum += strtoull(p + pl, NULL, 10);
	}
	return sum;
}

/*
 * The peers reply: {"peers":[{...},...],"connections":[...]}. Only the
 * peers array is read; a name cannot fake a member, because a name is
 * followed by a comma, never by a colon.
 */
static bool parse_peers(struct top_sample *s, const char *body)
{
	const char *from = strstr(body, "\"peers\":["), *to;

	if (!from)
		return false;
	to = strstr(from, "],\"connections\"");
	if (!to)
		return false;
	s->sessions = json_sum(from, to, "sessions");
	s->check = json_sum(from, to, "check");
	s->takethis = json_sum(from, to, "takethis");
	s->ihave = json_sum(from, to, "ihave");
	s->c238 = json_sum(from, to, "238");
	s->c431 = json_sum(from, to, "431");
	s->c438 = json_sum(from, to, "438");
	s->c239 = json_sum(from, to, "239") + json_sum(from, to, "235");
	s->c439 = json_sum(from, to, "439") + json_sum(from, to, "437");
	return true;
}

/* One sample: 0, or the exit status of a failed call to floodctld. */
static int sample(const struct top_opts *o, struct top_sample *s)
{
	struct fg_ctl_req req = { .verb = FG_CTL_STATS, .flags = FG_CTL_F_PROM };
	struct fg_ctl_reply rep;
	const char *why = NULL;
	int rc;

	memset(s, 0, sizeof(*s));
	s->t = mono_now();
	rc = fg_ctl_call(o->socket, &req, TOP_TIMEOUT_S * 1000, &rep, &why);
	if (rc < 0)
		return fg_ctl_call_failed(&fg_ctl_cmd_top, o->socket, TOP_TIMEOUT_S, rc, why);
	if (rep.ok)
		parse_prom(s, rep.body);
	fg_ctl_reply_free(&rep);
	/* the dataplane's part is optional: floodgate may not be running */
	req.verb = FG_CTL_PEERS;
	req.flags = FG_CTL_F_JSON;
	rc = fg_ctl_call(o->socket, &req, TOP_TIMEOUT_S * 1000, &rep, &why);
	if (rc < 0)
		return fg_ctl_call_failed(&fg_ctl_cmd_top, o->socket, TOP_TIMEOUT_S, rc, why);
	s->have_peers = rep.ok && parse_peers(s, rep.body);
	fg_ctl_reply_free(&rep);
	return 0;
}

/* ---------------------------------------------------------------- output */

static double rate_of(const struct top_sample *prev, const struct top_sample *s)
{
	double dt = s->t - prev->t;

	if (!prev->have_peers || !s->have_peers || dt <= 0 || offers_of(s) < offers_of(prev))
		return 0;
	return (double)(offers_of(s) - offers_of(prev)) / dt;
}

static uint64_t refused_of(const struct top_sample *s)
{
	uint64_t n = 0;

	for (unsigned i = 1; i < FG_REASON__COUNT; i++)
		n += s->reason[i];
	return n;
}

/* "reason N, reason N" of the non-zero reasons */
static void put_reasons(FILE *f, const struct top_sample *s, const char *sep)
{
	bool first = true;

	for (unsigned i = 1; i < FG_REASON__COUNT; i++) {
		if (!s->reason[i])
			continue;
		fprintf(f, "%s%s %" PRIu64, first ? "" : sep, fg_reason_name(i), s->reason[i]);
		first = false;
	}
	if (first)
		fputs("none", f);
}

/*
 * Progress: the offers that moved the feed on. An offer answered 431 is
 * made again later (RFC 4644 2.4: "try again later"), so each 431 stands
 * for one offer more than the feed holds.
 */
static void put_progress(FILE *f, const struct top_opts *o, const struct top_sample *s,
			 double rate)
{
	uint64_t done = offers_of(s) > s->c431 ? offers_of(s) - s->c431 : 0;
	double frac = (double)done / (double)o->total;
	char bar[BAR_WIDTH + 1];
	unsigned fill;

	if (frac > 1)
		frac = 1;
	fill = (unsigned)(frac * BAR_WIDTH);
	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	fprintf(f, "progress   [%s] %5.1f %%  %" PRIu64 " of %" PRIu64 " offers", bar,
		100 * frac, done, o->total);
	if (rate > 0 && done < o->total)
		fprintf(f, ", about %.0f s to go", (double)(o->total - done) / rate);
	fputc('\n', f);
}

/* The block for a terminal; returns the lines it printed. */
static unsigned put_block(FILE *f, const struct top_opts *o, const struct top_sample *s,
			  double rate, double elapsed)
{
	unsigned lines = 7;
	time_t now = time(NULL);
	char when[16];

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	fprintf(f, "floodgate  %s  up %.0f s  (%s, every %.3g s; Ctrl-C quits)\n", when, elapsed,
		o->socket, o->interval);
	if (s->have_peers)
		fprintf(f, "offers     %-10" PRIu64 " %8.0f/s   check %" PRIu64 "  takethis %" PRIu64
			   "  ihave %" PRIu64 "  sessions %" PRIu64 "\n"
			   "answers    238 %" PRIu64 "  431 %" PRIu64 "  438 %" PRIu64 "  239 %" PRIu64
			   "  439 %" PRIu64 "\n",
			offers_of(s), rate, s->check, s->takethis, s->ihave, s->sessions, s->c238,
			s->c431, s->c438, s->c239, s->c439);
	else
		fputs("offers     -          (no dataplane answers)\nanswers    -\n", f);
	fprintf(f, "accepted   %-10" PRIu64 " safe in the queue; relayed downstream %" PRIu64 "\n",
		s->accepted, s->relayed);
	fprintf(f, "refused    %-10" PRIu64 " ", refused_of(s));
	put_reasons(f, s, ", ");
	fputc('\n', f);
	if (s->have_queue)
		fprintf(f, "queue      %-10" PRIu64 " undelivered (downstream lag), oldest %.1f s; %"
			   PRIu64 " articles in its files\n", s->lag_records, s->q_oldest_s,
			s->q_records);
	else
		fputs("queue      -          (no outbound queue yet)\n", f);
	fprintf(f, "history    %-10" PRIu64 " entries of %" PRIu64 " (%.1f %%)\n", s->hist_entries,
		s->hist_capacity,
		s->hist_capacity ? 100.0 * (double)s->hist_entries / (double)s->hist_capacity : 0.0);
	if (o->total) {
		put_progress(f, o, s, rate);
		lines++;
	}
	return lines;
}

/* One line per sample, for logs and scripts. */
static void put_line(FILE *f, const struct top_opts *o, const struct top_sample *s, double rate,
		     double elapsed)
{
	fprintf(f, "[%6.1f s] ", elapsed);
	if (s->have_peers)
		fprintf(f, "offers %" PRIu64 " (%.0f/s)  ", offers_of(s), rate);
	else
		fputs("offers -  ", f);
	fprintf(f, "accepted %" PRIu64 "  refused %" PRIu64 " (", s->accepted, refused_of(s));
	put_reasons(f, s, ", ");
	fputs(")  ", f);
	if (s->have_queue)
		fprintf(f, "queue lag %" PRIu64 " (oldest %.1f s)  ", s->lag_records, s->q_oldest_s);
	fprintf(f, "relayed %" PRIu64 "  history %" PRIu64, s->relayed, s->hist_entries);
	if (o->total && s->have_peers) {
		uint64_t done = offers_of(s) > s->c431 ? offers_of(s) - s->c431 : 0;

		fprintf(f, "  %.1f %%", done >= o->total ? 100.0 :
			100.0 * (double)done / (double)o->total);
	}
	fputc('\n', f);
}

/* One sample as one JSON object on one line: what the text shows, in
 * numbers; `offers` and the answers null without a dataplane. */
static void put_json(FILE *f, const struct top_sample *s, double rate, double elapsed)
{
	struct fg_ctl_json doc;
	struct fg_json *j;

	j = fg_ctl_json_begin(&doc, f);
	fg_json_i64(j, "elapsed_ms", (int64_t)(elapsed * 1000));
	fg_json_bool(j, "dataplane", s->have_peers);
	if (s->have_peers) {
		fg_json_u64(j, "offers", offers_of(s));
		fg_json_i64(j, "offers_per_second", (int64_t)(rate + 0.5));
		fg_json_u64(j, "sessions", s->sessions);
		fg_json_obj(j, "answers");
		fg_json_u64(j, "238", s->c238);
		fg_json_u64(j, "431", s->c431);
		fg_json_u64(j, "438", s->c438);
		fg_json_u64(j, "239", s->c239);
		fg_json_u64(j, "439", s->c439);
		fg_json_close(j);
	} else {
		fg_json_null(j, "offers");
		fg_json_null(j, "answers");
	}
	fg_json_u64(j, "accepted", s->accepted);
	fg_json_u64(j, "relayed", s->relayed);
	fg_json_u64(j, "refused", refused_of(s));
	fg_json_obj(j, "refused_by_reason");
	for (unsigned r = FG_REASON_NONE + 1; r < FG_REASON__COUNT; r++)
		if (s->reason[r])
			fg_json_u64(j, fg_reason_name(r), s->reason[r]);
	fg_json_close(j);
	if (s->have_queue) {
		fg_json_obj(j, "queue");
		fg_json_u64(j, "records", s->q_records);
		fg_json_u64(j, "lag_records", s->lag_records);
		fg_json_i64(j, "oldest_ms", (int64_t)(s->q_oldest_s * 1000));
		fg_json_close(j);
	} else {
		fg_json_null(j, "queue");
	}
	fg_json_obj(j, "history");
	fg_json_u64(j, "entries", s->hist_entries);
	fg_json_u64(j, "capacity", s->hist_capacity);
	fg_json_close(j);
	fg_ctl_json_end(&doc);
}

/* ---------------------------------------------------------------- the loop */

static void nap(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	/* a signal ends the nap early (no SA_RESTART), which is the point */
	nanosleep(&ts, NULL);
}

struct top_screen {
	bool tty;
	unsigned drawn;			/* lines of the block on screen */
	double t0;
};

static void draw(struct top_screen *scr, const struct top_opts *o, const struct top_sample *s,
		 double rate)
{
	if (o->json) {
		put_json(stdout, s, rate, s->t - scr->t0);
	} else if (scr->tty) {
		if (scr->drawn)
			printf("\033[%uA\033[J", scr->drawn);
		scr->drawn = put_block(stdout, o, s, rate, s->t - scr->t0);
	} else {
		put_line(stdout, o, s, rate, s->t - scr->t0);
	}
	fflush(stdout);
}

static int top_loop(const struct top_opts *o)
{
	struct top_screen scr = { .tty = !o->lines && !o->json && isatty(STDOUT_FILENO),
				  .t0 = mono_now() };
	struct top_sample prev, s;
	uint64_t n = 1;
	int rc = sample(o, &prev);

	if (rc == 0)
		draw(&scr, o, &prev, 0);
	while (rc == 0 && !top_stop && (!o->count || n++ < o->count)) {
		nap(o->interval);
		if (top_stop)
			break;
		rc = sample(o, &s);
		if (rc == 0) {
			draw(&scr, o, &s, rate_of(&prev, &s));
			prev = s;
		}
	}
	return rc;
}

static int parse_top(struct top_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "total", required_argument, NULL, 't' },
		{ "lines", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	char *end;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:c:i:n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			snprintf(o->socket, sizeof(o->socket), "%s", optarg);
			break;
		case 'c':
			config = optarg;
			break;
		case 'i':
			o->interval = strtod(optarg, &end);
			if (*end || !(o->interval >= 0.1 && o->interval <= 3600))
				return fg_ctl_fail(&fg_ctl_cmd_top, "--interval wants 0.1 to 3600 s");
			break;
		case 'n':
		case 't':
			errno = 0;
			*(opt == 'n' ? &o->count : &o->total) = strtoull(optarg, &end, 10);
			if (*end || errno || optarg[0] == '-')
				return fg_ctl_fail(&fg_ctl_cmd_top, "--%s wants a number",
						   opt == 'n' ? "count" : "total");
			break;
		case 'l':
			o->lines = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			fg_ctl_usage(&fg_ctl_cmd_top, stdout);
			exit(FG_CTL_EXIT_OK);
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	if (!o->socket[0])
		return fg_ctl_socket_from_config(&fg_ctl_cmd_top, config, o->socket,
						 sizeof(o->socket));
	return 0;
usage:
	fg_ctl_usage(&fg_ctl_cmd_top, stderr);
	return FG_CTL_EXIT_USAGE;
}

static int run_top(int argc, char **argv)
{
	struct top_opts o = { .interval = 1.0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int rc = parse_top(&o, argc, argv);

	if (rc)
		return rc;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return top_loop(&o);
}

const struct fg_ctl_command fg_ctl_cmd_top = {
	.name = "top",
	.args = "[-s SOCKET|-c CONFIG] [--interval S] [--count N] [--total OFFERS] [--lines|--json]",
	.summary = "live figures: offers/s, answers, accepted, refused by reason, queue, history",
	.help = "  -s, --socket PATH  floodctld's control socket\n"
		"  -c, --config FILE  take the control socket from this floodgate.conf\n"
		"  --interval S       seconds between samples (1; 0.1 to 3600)\n"
		"  --count N          stop after N samples (default: until Ctrl-C)\n"
		"  --total OFFERS     offers the feed holds: adds a progress line (offers\n"
		"                     answered 431 are made again and do not count)\n"
		"  --lines            one line per sample even on a terminal\n"
		"  --json             one JSON object per sample, a line each\n"
		"\nOn a terminal one block is redrawn in place; otherwise one line per\n"
		"sample. Offers and answers come from the dataplane (floodctld asks it,\n"
		"as for `floodctl peers`): \"-\" when no dataplane runs.\n",
	.run = run_top,
};
