/* SPDX-License-Identifier: MIT */
/*
 * ctl.c — the dataplane's control socket, served by the main lcore.
 *
 * floodctld's protocol, served by lib/ctl/server.c (one request line per
 * connection, root or our own user only). The socket is created 0600 in
 * the directory of the control socket ([stats] control-socket), named
 * dataplane.sock, unless --ctl-socket says otherwise: floodctld forwards
 * `floodctl peers | drain | shutdown` there, and a reload once it has
 * validated the file (control/floodctld/dataplane.c).
 *
 * Verbs (the rest of ctl.h's are floodctld's):
 *   ping                  "pong"
 *   status                mode, port, workers, sessions, drain state
 *   stats                 every counter, as --stats-file writes them
 *   peers                 per-peer sessions and counters, and every connection
 *   drain [off]           refuse new sessions (answered 400), or stop refusing
 *   shutdown [SECONDS]    drain, give open sessions that long to end (default:
 *                         --shutdown-grace), answer 400 to the rest, exit
 *   reload [FILE]         load FILE (default: the file started with), switch
 *                         every worker to it between two bursts
 *   throttle REASON / go  innd's throttle: every session 400 REASON, closed
 *   pause PEER [SECONDS] / resume PEER
 *                         a peer's new offers deferred (levers.c)
 * One request is served at a time, between the main loop's other duties.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "floodgate/ctl.h"
#include "floodgate/log.h"

int dp_ctl_listen(struct dp *dp)
{
	return fg_ctl_listen(dp->ctl_path, DP, &dp->ctl_fd);
}

void dp_ctl_close(struct dp *dp)
{
	fg_ctl_unlisten(&dp->ctl_fd, dp->ctl_path);
}

static int parse_seconds(const char *s, unsigned *ms)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v > 3600)
		return -EINVAL;
	*ms = (unsigned)v * 1000u;
	return 0;
}

static int reload_dp(void *arg, const char *file, FILE *report)
{
	return dp_reload(arg, file, report);
}

/* downstream pause|resume NAME (relay.h, fg_relay_pause) */
static const char *do_downstream(struct dp *dp, const struct fg_ctl_req *q, FILE *f)
{
	bool json = q->flags & FG_CTL_F_JSON, pause = strcmp(q->argv[0], "pause") == 0;
	int rc;

	if (!pause && strcmp(q->argv[0], "resume") != 0) {
		fprintf(f, json ? "{\"error\":\"downstream pause|resume NAME\"}\n"
				: "downstream pause|resume NAME\n");
		return "bad-request";
	}
	rc = fg_outbound_downstream_pause(dp->ob, q->argv[1], pause);
	if (rc != 0) {
		fprintf(f, json ? "{\"error\":\"no downstream %s\"}\n" : "no downstream %s\n",
			q->argv[1]);
		return "not-found";
	}
	fprintf(f, json ? "{\"downstream\":\"%s\",\"paused\":%s}\n" : "downstream %s: %s\n",
		q->argv[1], json ? (pause ? "true" : "false")
				 : (pause ? "paused (nothing is sent to it until resumed)" : "resumed"));
	return NULL;
}

/* Run one request; the body goes to f. Returns NULL or an error code. */
static const char *run(void *arg, const struct fg_ctl_req *q, FILE *f)
{
	struct dp *dp = arg;
	bool json = q->flags & FG_CTL_F_JSON, on;
	unsigned ms;
	int rc;

	switch (q->verb) {
	case FG_CTL_PING:
		fprintf(f, json ? "{\"pong\":true}\n" : "pong\n");
		return NULL;
	case FG_CTL_STATUS:
		dp_status(dp, f, json);
		return NULL;
	case FG_CTL_STATS:
		dp_write_counters(f, dp);
		return NULL;
	case FG_CTL_PEERS:
		rc = dp_peers(dp, f, json);
		if (rc != 0)
			fprintf(f, "peers: %s\n", strerror(-rc));
		return rc ? "failed" : NULL;
	case FG_CTL_DRAIN:
		if (q->argc && strcmp(q->argv[0], "off")) {
			fprintf(f, "drain takes no argument but \"off\"\n");
			return "bad-request";
		}
		on = q->argc == 0;
		dp_request_drain(dp, on);
		fprintf(f, json ? "{\"draining\":%s}\n" : "draining: %s\n",
			on ? (json ? "true" : "yes; new sessions are answered 400")
			   : (json ? "false" : "no; new sessions are accepted"));
		return NULL;
	case FG_CTL_SHUTDOWN:
		ms = dp->o.shutdown_grace_ms;
		if (q->argc && parse_seconds(q->argv[0], &ms) != 0) {
			fprintf(f, "shutdown: the grace is 0 to 3600 seconds\n");
			return "bad-request";
		}
		dp_request_shutdown(dp, ms);
		fprintf(f, json ? "{\"shutdown\":true,\"grace_ms\":%u}\n" :
				  "shutting down: sessions have %u ms to end\n", ms);
		return NULL;
	case FG_CTL_RELOAD:
		return fg_ctl_reload_serve(reload_dp, dp, q, f);
	case FG_CTL_THROTTLE:
	case FG_CTL_GO:
	case FG_CTL_PAUSE:
	case FG_CTL_RESUME:
		return dp_levers_ctl(dp, q, f);
	case FG_CTL_DOWNSTREAM:
		return do_downstream(dp, q, f);
	default:
		fprintf(f, "%s is floodctld's, not the dataplane's\n", fg_ctl_verb_name(q->verb));
		return "bad-request";
	}
}

void dp_ctl_serve(struct dp *dp, int timeout_ms)
{
	fg_ctl_serve_one(dp->ctl_fd, timeout_ms, run, dp);
}
