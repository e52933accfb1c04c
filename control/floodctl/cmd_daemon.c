/* SPDX-License-Identifier: MIT */
/*
 * cmd_daemon.c — the floodctl commands that ask floodctld: status, stats,
 * lookup, expire, snapshot, reload, and the dataplane's peers, drain and
 * shutdown, which floodctld forwards to it. Each sends one request over the
 * control socket (ctl.h) and prints the reply's body: text for people by
 * default, JSON with --json (the Prometheus text with stats --prom).
 *
 * The socket is -s PATH, else the control-socket of -c CONFIG, else that
 * of the embedded default configuration (/run/floodgate/control.sock).
 * Failures each have their own exit status and one line on stderr:
 *   3 floodctld is not running        4 permission denied
 *   5 a malformed reply               6 no reply in time (--timeout)
 * A request floodctld answers with an error (a refused reload, a bad
 * Message-ID) exits 1, as does a lookup of an ID not in history.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/config.h"
#include "floodgate/ctl.h"
#include "floodctl.h"

#define DEFAULT_TIMEOUT_S 10
#define LONG_TIMEOUT_S 1800	/* snapshot and expire of a big history */
#define REPORT_TIMEOUT_S 120	/* a report of many days of many peers */

#define COMMON_HELP \
	"  -s, --socket PATH  floodctld's control socket\n" \
	"  -c, --config FILE  take the control socket from this floodgate.conf\n" \
	"  --timeout SECONDS  give up waiting after this long\n" \
	"  --json             the reply as one JSON object\n"

struct call {
	const struct fg_ctl_command *cmd;
	struct fg_ctl_req req;
	char socket[FG_CONFIG_PATH_MAX];
	int timeout_s;
	int64_t for_s;		/* pause --for, report --since, seconds; 0: not given */
	char peer[FG_CTL_ARG_MAX];	/* stats --peer NAME; "": not given */
};

/* Options of floodctl's own, not request flags: pause --for DURATION,
 * report --since DURATION (as seconds) and stats --peer NAME, each sent
 * as a word after the positional ones. */
#define OWN_FOR 0x10000u
#define OWN_PEER 0x20000u
#define OWN_SINCE 0x40000u

/* The control socket named by -c FILE, or by the embedded default. */
int fg_ctl_socket_from_config(const struct fg_ctl_command *cmd, const char *file, char *out,
			      size_t len)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = file ? fg_config_load_file(file, &errs) : fg_config_load_default(&errs);
	if (!cfg)
		return fg_ctl_fail(cmd, "%s: %s", file ? file : "<default>",
				   errs.n ? errs.err[0].text : "cannot be loaded");
	snprintf(out, len, "%s", cfg->control_socket);
	fg_config_free(cfg);
	return 0;
}

/*
 * Parse the common options and the verb's own (--prom, --dry-run); the
 * positional words left go to req.argv. 0, or an exit status.
 */
static int parse(struct call *c, int argc, char **argv, unsigned own_flags)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "prom", no_argument, NULL, 'p' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "for", required_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 'S' },
		{ "html", no_argument, NULL, 'H' },
		{ "peer", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "s:c:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			snprintf(c->socket, sizeof(c->socket), "%s", optarg);
			break;
		case 'c':
			config = optarg;
			break;
		case 't':
			c->timeout_s = atoi(optarg);
			if (c->timeout_s <= 0)
				return fg_ctl_fail(c->cmd, "--timeout wants a positive number of seconds");
			break;
		case 'j':
			c->req.flags |= FG_CTL_F_JSON;
			break;
		case 'f':
			if (!(own_flags & OWN_FOR))
				goto usage;
			if (fg_parse_duration(optarg, &c->for_s) < 0 || c->for_s <= 0)
				return fg_ctl_fail(c->cmd, "--for wants a duration (90, 30m, 2h, 1d)");
			break;
		case 'S':
			if (!(own_flags & OWN_SINCE))
				goto usage;
			if (fg_parse_duration(optarg, &c->for_s) < 0 || c->for_s <= 0)
				return fg_ctl_fail(c->cmd, "--since wants a duration (3600, 90m, 24h, 7d)");
			break;
		case 'H':
			if (!(own_flags & FG_CTL_F_HTML))
				goto usage;
			c->req.flags |= FG_CTL_F_HTML;
			break;
		case 'P':
			if (!(own_flags & OWN_PEER) || !optarg[0] || strlen(optarg) >= sizeof(c->peer))
				goto usage;
			snprintf(c->peer, sizeof(c->peer), "%s", optarg);
			break;
		case 'p':
		case 'd':
			if (!(own_flags & (o == 'p' ? FG_CTL_F_PROM : FG_CTL_F_DRY_RUN)))
				goto usage;
			c->req.flags |= o == 'p' ? FG_CTL_F_PROM : FG_CTL_F_DRY_RUN;
			break;
		case 'h':
			fg_ctl_usage(c->cmd, stdout);
			exit(FG_CTL_EXIT_OK);
		default:
			goto usage;
		}
	}
	for (; optind < argc; optind++) {
		if (c->req.argc == FG_CTL_ARGS_MAX || strlen(argv[optind]) >= FG_CTL_ARG_MAX)
			goto usage;
		snprintf(c->req.argv[c->req.argc++], FG_CTL_ARG_MAX, "%s", argv[optind]);
	}
	if (!c->socket[0])
		return fg_ctl_socket_from_config(c->cmd, config, c->socket, sizeof(c->socket));
	return 0;
usage:
	fg_ctl_usage(c->cmd, stderr);
	return FG_CTL_EXIT_USAGE;
}

/* Map a failed call to its exit status, with one line on stderr. */
int fg_ctl_call_failed(const struct fg_ctl_command *cmd, const char *socket, int timeout_s,
		       int rc, const char *why)
{
	const char *name = cmd->name;

	switch (rc) {
	case -ENOENT:
	case -ECONNREFUSED:
		fprintf(stderr, "floodctl %s: floodctld is not running (nothing answers on %s)\n",
			name, socket);
		return FG_CTL_EXIT_DOWN;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "floodctl %s: permission denied on %s (root only)\n", name, socket);
		return FG_CTL_EXIT_DENIED;
	case -ETIMEDOUT:
		fprintf(stderr, "floodctl %s: no reply from %s within %d s\n", name, socket,
			timeout_s);
		return FG_CTL_EXIT_TIMEOUT;
	case -EPROTO:
		fprintf(stderr, "floodctl %s: malformed reply from %s: %s\n", name, socket,
			why ? why : "?");
		return FG_CTL_EXIT_PROTO;
	default:
		fprintf(stderr, "floodctl %s: %s: %s\n", name, socket, strerror(-rc));
		return FG_CTL_EXIT_USAGE;
	}
}

/* Send, print, map the outcome. */
static int run_call(struct call *c)
{
	struct fg_ctl_reply rep;
	const char *why;
	int rc = fg_ctl_call(c->socket, &c->req, c->timeout_s * 1000, &rep, &why);

	if (rc < 0)
		return fg_ctl_call_failed(c->cmd, c->socket, c->timeout_s, rc, why);
	/* "not-found" is an answer (a lookup miss), not a failure */
	fwrite(rep.body, 1, rep.body_len,
	       rep.ok || strcmp(rep.code, "not-found") == 0 ? stdout : stderr);
	if (!rep.ok)
		rc = strcmp(rep.code, "denied") == 0 ? FG_CTL_EXIT_DENIED : FG_CTL_EXIT_NO;
	fg_ctl_reply_free(&rep);
	return rc;
}

static int simple(const struct fg_ctl_command *cmd, enum fg_ctl_verb verb, unsigned own,
		  int timeout_s, unsigned min_args, unsigned max_args, int argc, char **argv)
{
	struct call c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.cmd = cmd;
	c.req.verb = verb;
	c.timeout_s = timeout_s;
	rc = parse(&c, argc, argv, own);
	if (rc)
		return rc;
	if (c.req.argc < min_args || c.req.argc > max_args || c.req.argc == FG_CTL_ARGS_MAX) {
		fg_ctl_usage(cmd, stderr);
		return FG_CTL_EXIT_USAGE;
	}
	if (c.for_s)
		snprintf(c.req.argv[c.req.argc++], FG_CTL_ARG_MAX, "%lld", (long long)c.for_s);
	else if (c.peer[0])
		snprintf(c.req.argv[c.req.argc++], FG_CTL_ARG_MAX, "%s", c.peer);
	/* a relative FILE means here, not floodctld's working directory */
	if (verb == FG_CTL_RELOAD && c.req.argc && c.req.argv[0][0] != '/') {
		char *abs = realpath(c.req.argv[0], NULL);

		if (!abs || strlen(abs) >= FG_CTL_ARG_MAX) {
			fprintf(stderr, "floodctl reload: %s: %s\n", c.req.argv[0],
				abs ? "path too long" : strerror(errno));
			free(abs);
			return FG_CTL_EXIT_USAGE;
		}
		snprintf(c.req.argv[0], FG_CTL_ARG_MAX, "%s", abs);
		free(abs);
	}
	return run_call(&c);
}

static int run_report(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_report, FG_CTL_REPORT, OWN_SINCE | FG_CTL_F_HTML,
		      REPORT_TIMEOUT_S, 0, 0, argc, argv);
}

static int run_status(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_status, FG_CTL_STATUS, 0, DEFAULT_TIMEOUT_S, 0, 0, argc, argv);
}

static int run_stats(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_stats, FG_CTL_STATS, FG_CTL_F_PROM | OWN_PEER, DEFAULT_TIMEOUT_S,
		      0, 0, argc, argv);
}

static int run_lookup(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_lookup, FG_CTL_LOOKUP, 0, DEFAULT_TIMEOUT_S, 1, 1, argc, argv);
}

static int run_forget(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_forget, FG_CTL_FORGET, 0, DEFAULT_TIMEOUT_S, 1, 1, argc, argv);
}

/* remember ID [accepted|rejected], or remember --file|--inn-news-log FILE:
 * floodctld reads FILE itself (bulk.c), given its absolute path. */
static int run_remember(int argc, char **argv)
{
	char *args[32], kind[16], *abs = NULL;
	int n = 0, rc;

	for (int i = 0; i < argc && n < 30; i++) {
		if ((strcmp(argv[i], "--file") == 0 || strcmp(argv[i], "--inn-news-log") == 0) &&
		    i + 1 < argc && !abs) {
			snprintf(kind, sizeof(kind), "%s", argv[i][2] == 'f' ? "ids" : "inn-news-log");
			abs = realpath(argv[++i], NULL);
			if (!abs || strlen(abs) >= FG_CTL_ARG_MAX) {
				fprintf(stderr, "floodctl remember: %s: %s\n", argv[i],
					abs ? "path too long" : strerror(errno));
				free(abs);
				return FG_CTL_EXIT_USAGE;
			}
			continue;
		}
		args[n++] = argv[i];
	}
	if (!abs)
		return simple(&fg_ctl_cmd_remember, FG_CTL_REMEMBER, 0, DEFAULT_TIMEOUT_S, 1, 2,
			      argc, argv);
	args[n++] = kind;
	args[n++] = abs;
	args[n] = NULL;
	rc = simple(&fg_ctl_cmd_remember, FG_CTL_REMEMBER_FILE, 0, LONG_TIMEOUT_S, 2, 2, n, args);
	free(abs);
	return rc;
}

static int run_throttle(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_throttle, FG_CTL_THROTTLE, 0, DEFAULT_TIMEOUT_S, 1,
		      FG_CTL_ARGS_MAX, argc, argv);
}

static int run_go(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_go, FG_CTL_GO, 0, DEFAULT_TIMEOUT_S, 0, 0, argc, argv);
}

static int run_pause(int argc, char **argv)
{
	/* PEER, and the --for seconds appended after it */
	return simple(&fg_ctl_cmd_pause, FG_CTL_PAUSE, OWN_FOR, DEFAULT_TIMEOUT_S, 1, 1, argc, argv);
}

static int run_resume(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_resume, FG_CTL_RESUME, 0, DEFAULT_TIMEOUT_S, 1, 1, argc, argv);
}

static int run_expire(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_expire, FG_CTL_EXPIRE, FG_CTL_F_DRY_RUN, LONG_TIMEOUT_S, 0, 0,
		      argc, argv);
}

static int run_snapshot(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_snapshot, FG_CTL_SNAPSHOT, 0, LONG_TIMEOUT_S, 0, 0, argc, argv);
}

static int run_reopen_logs(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_reopen_logs, FG_CTL_REOPEN_LOGS, 0, DEFAULT_TIMEOUT_S, 0, 0,
		      argc, argv);
}

static int run_reload(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_reload, FG_CTL_RELOAD, 0, DEFAULT_TIMEOUT_S, 0, 1, argc, argv);
}

static int run_peers(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_peers, FG_CTL_PEERS, 0, DEFAULT_TIMEOUT_S, 0, 0, argc, argv);
}

static int run_downstreams(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_downstreams, FG_CTL_DOWNSTREAMS, 0, DEFAULT_TIMEOUT_S, 0, 0, argc,
		      argv);
}

static int run_downstream(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_downstream, FG_CTL_DOWNSTREAM, 0, DEFAULT_TIMEOUT_S, 2, 2, argc,
		      argv);
}

static int run_drain(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_drain, FG_CTL_DRAIN, 0, DEFAULT_TIMEOUT_S, 0, 1, argc, argv);
}

static int run_shutdown(int argc, char **argv)
{
	return simple(&fg_ctl_cmd_shutdown, FG_CTL_SHUTDOWN, 0, DEFAULT_TIMEOUT_S, 0, 1, argc,
		      argv);
}

const struct fg_ctl_command fg_ctl_cmd_report = {
	.name = "report",
	.args = "[-s SOCKET|-c CONFIG] [--since DURATION] [--json|--html]",
	.summary = "the daily report: per peer and downstream, what the counters say of a window",
	.help = COMMON_HELP
	"  --since DURATION   the window: the last DURATION (default 24h)\n"
	"  --html             the report as one HTML page (no script)\n"
	"\nINN's innreport for floodgate. floodctld samples its counters every\n"
	"[stats] report-interval into <data-dir>/report (report-keep days); the\n"
	"report sums their differences over the window (a counter that went back\n"
	"was reset: its new value counts). Per peer: offers, articles accepted,\n"
	"refused (and by reason), article octets, and the injection and propagation\n"
	"delays as 50th/90th/99th percentiles (seconds, the log2 bucket's upper\n"
	"bound); per downstream: articles sent, delivered (accepted), refused, and\n"
	"its lag (last, max); totals; and the gaps where floodctld took no samples.\n",
	.run = run_report,
};

const struct fg_ctl_command fg_ctl_cmd_status = {
	.name = "status",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "floodctld's state: history, writers, journal, snapshots, expiry",
	.help = COMMON_HELP,
	.run = run_status,
};

const struct fg_ctl_command fg_ctl_cmd_stats = {
	.name = "stats",
	.args = "[-s SOCKET|-c CONFIG] [--json|--prom] [--peer NAME]",
	.summary = "every counter (per peer too), the delay histograms, history load",
	.help = COMMON_HELP
	"  --prom             the Prometheus text floodctld serves on /metrics\n"
	"  --peer NAME        one peer only: its counters, the delays of the articles\n"
	"                     it brought (arrival - Injection-Date, Injection-Date -\n"
	"                     Date) and the share of its offers it sent first\n"
	"\nExit 1 when no configured peer has that name.\n",
	.run = run_stats,
};

const struct fg_ctl_command fg_ctl_cmd_lookup = {
	.name = "lookup",
	.args = "[-s SOCKET|-c CONFIG] [--json] '<ID>'",
	.summary = "one Message-ID in history: state, dates, its newest $v=N version",
	.help = COMMON_HELP
	"\nShows the state, first-seen, the article date (to the minute) and, when the\n"
	"retained journal still holds the record, which header gave that date and a\n"
	"reject's reason. For a version-number ID, the newest known version, marked\n"
	"when it differs from the ID asked. Exit 1 when the ID is not in history.\n",
	.run = run_lookup,
};

const struct fg_ctl_command fg_ctl_cmd_forget = {
	.name = "forget",
	.args = "[-s SOCKET|-c CONFIG] [--json] '<ID>'",
	.summary = "drop a Message-ID from history (e.g. a wrongly remembered refusal); journaled",
	.help = COMMON_HELP
	"\nThe next offer of the ID is judged afresh. The change is journaled as a\n"
	"tombstone before the answer, so a restart keeps the ID forgotten, even when\n"
	"the outbound queue still holds its article (unless it came again after the\n"
	"forget). Exit 1 when the ID is not in history, or is in flight right now.\n"
	"With [cluster], the ID's key in the shared history is deleted too (the\n"
	"answer says deleted, absent or unreachable).\n",
	.run = run_forget,
};

const struct fg_ctl_command fg_ctl_cmd_remember = {
	.name = "remember",
	.args = "[-s SOCKET|-c CONFIG] [--json] '<ID>' [accepted|rejected] | "
		"--file FILE | --inn-news-log FILE",
	.summary = "put Message-IDs in history (one, or a file's); journaled",
	.help = COMMON_HELP
	"  --file FILE        every <ID> of FILE, one a line, each optionally followed\n"
	"                     by its time (Unix seconds), as accepted\n"
	"  --inn-news-log FILE  every article INN's news log says it accepted ('+'\n"
	"                     and 'j' lines), with the line's time\n"
	"\nAs INN's `ctlinnd addhist`: offers of the ID are then refused (438,\n"
	"duplicate). The first-seen and article date are now (for one ID) or the\n"
	"time the file gives. Exit 1 when the ID is already in history (forget it\n"
	"first). With a file, floodctld reads it (its user must be able to), skips\n"
	"IDs already in history and those older than cutoff + 1 day, counts the\n"
	"rest, and journals all of it before it answers.\n",
	.run = run_remember,
};

const struct fg_ctl_command fg_ctl_cmd_expire = {
	.name = "expire",
	.args = "[-s SOCKET|-c CONFIG] [--json] [--dry-run]",
	.summary = "run an expiry pass now, or count what one would remove",
	.help = COMMON_HELP
	"  --dry-run          count only; nothing is removed\n",
	.run = run_expire,
};

const struct fg_ctl_command fg_ctl_cmd_snapshot = {
	.name = "snapshot",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "write a snapshot of the history now and wait for it",
	.help = COMMON_HELP,
	.run = run_snapshot,
};

const struct fg_ctl_command fg_ctl_cmd_reload = {
	.name = "reload",
	.args = "[-s SOCKET|-c CONFIG] [--json] [FILE]",
	.summary = "validate and apply a configuration file (default: the one running)",
	.help = COMMON_HELP
	"\nA file with errors is refused, every error listed, and the running\n"
	"configuration kept (exit 1). The reply lists the changes applied and those\n"
	"that need a restart.\n",
	.run = run_reload,
};

const struct fg_ctl_command fg_ctl_cmd_reopen_logs = {
	.name = "reopen-logs",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "floodctld closes and reopens the verdict log file (after logrotate moved it)",
	.help = COMMON_HELP
	"\nThe reply comes once the file is open again. SIGHUP is not this: it reloads\n"
	"the configuration. The package's /etc/logrotate.d/floodgate runs it.\n",
	.run = run_reopen_logs,
};

const struct fg_ctl_command fg_ctl_cmd_peers = {
	.name = "peers",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "the dataplane's peers: sessions and counters, and every connection",
	.help = COMMON_HELP
	"\nPer configured peer: sessions open, CHECKs and their 238/431/438, TAKETHIS\n"
	"and their 239/439 since the dataplane started; then each connection: peer,\n"
	"remote address, worker lcore, state, age, octets in and out, octets held\n"
	"for the outbound queue and queued in TCP. floodctld asks the dataplane.\n",
	.run = run_peers,
};

const struct fg_ctl_command fg_ctl_cmd_downstreams = {
	.name = "downstreams",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "each downstream: state, lag, backlog on disk, articles sent and their answers",
	.help = COMMON_HELP
	"\nPer [downstream]: its state (feeding, connecting, paused, parked: past a\n"
	"backlog limit, parked-full: at its backlog cap, deferring the peers), its lag\n"
	"in articles, octets and seconds, the octets kept on disk only for it while\n"
	"parked, and since the dataplane started: articles sent, accepted, refused\n"
	"(439/437), already had (438/435), deferred (431/436), reconnects, passed over\n"
	"(its feed did not select them) and dropped (backlog-full drop). From the\n"
	"queue's files and what the dataplane wrote about a second ago\n"
	"(downstreams.status in the data directory).\n",
	.run = run_downstreams,
};

const struct fg_ctl_command fg_ctl_cmd_downstream = {
	.name = "downstream",
	.args = "[-s SOCKET|-c CONFIG] [--json] pause|resume NAME",
	.summary = "stop feeding one downstream (its backlog limits apply), or go on",
	.help = COMMON_HELP
	"\nWhile paused nothing new is sent to it: its lag grows, and past its backlog\n"
	"limit it is parked (the others and the peers are not held back for it).\n"
	"Not kept across a restart of the dataplane. floodctld asks the dataplane.\n",
	.run = run_downstream,
};

const struct fg_ctl_command fg_ctl_cmd_drain = {
	.name = "drain",
	.args = "[-s SOCKET|-c CONFIG] [--json] [off]",
	.summary = "the dataplane refuses new sessions (400), open ones finish; off: accept again",
	.help = COMMON_HELP,
	.run = run_drain,
};

const struct fg_ctl_command fg_ctl_cmd_throttle = {
	.name = "throttle",
	.args = "[-s SOCKET|-c CONFIG] [--json] REASON...",
	.summary = "innd's throttle: every session answered 400 REASON and closed, until go",
	.help = COMMON_HELP
	"\nEvery open session of the dataplane is answered \"400 REASON\" and closed;\n"
	"new connections are greeted so and closed (peers retry later). Journaled:\n"
	"a restarted dataplane is still throttled. `floodctl go` ends it.\n",
	.run = run_throttle,
};

const struct fg_ctl_command fg_ctl_cmd_go = {
	.name = "go",
	.args = "[-s SOCKET|-c CONFIG] [--json]",
	.summary = "end a throttle: sessions are greeted and served again",
	.help = COMMON_HELP,
	.run = run_go,
};

const struct fg_ctl_command fg_ctl_cmd_pause = {
	.name = "pause",
	.args = "[-s SOCKET|-c CONFIG] [--json] [--for DURATION] PEER",
	.summary = "defer every new offer of one peer (431/436/400) for DURATION (24h)",
	.help = COMMON_HELP
	"  --for DURATION     how long (90, 30m, 2h, 1d; default 24h): it ends by itself\n"
	"\nAs innd's paused channel, for one peer: its CHECKs of new IDs get 431, its\n"
	"IHAVEs 436, and a TAKETHIS is read and answered 400 with the session\n"
	"closed; known IDs are refused as ever. Journaled; logged as a warning while\n"
	"it lasts. `floodctl resume PEER` ends it before its time.\n",
	.run = run_pause,
};

const struct fg_ctl_command fg_ctl_cmd_resume = {
	.name = "resume",
	.args = "[-s SOCKET|-c CONFIG] [--json] PEER",
	.summary = "end a peer's pause",
	.help = COMMON_HELP,
	.run = run_resume,
};

const struct fg_ctl_command fg_ctl_cmd_shutdown = {
	.name = "shutdown",
	.args = "[-s SOCKET|-c CONFIG] [--json] [SECONDS]",
	.summary = "drain the dataplane, give open sessions SECONDS to end, then exit",
	.help = COMMON_HELP
	"\nNew connections are answered 400 at once; sessions still open when the\n"
	"grace (default: floodgate --shutdown-grace, 10 s) is over are answered 400\n"
	"and closed, articles in flight are finished, and floodgate exits 0. The\n"
	"reply comes at once; the shutdown goes on. floodctld keeps running.\n",
	.run = run_shutdown,
};
