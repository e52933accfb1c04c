/* SPDX-License-Identifier: MIT */
/*
 * ctl.h — floodctld's control socket: a small line protocol, its parser
 * (untrusted input: fuzz_ctl drives it) and the client side floodctl uses.
 *
 * The socket is a Unix stream socket (config [stats] control-socket),
 * mode 0600, accepted only from root or floodctld's own user. One request
 * per connection:
 *
 *   request  = verb *( SP word ) LF        at most 1024 octets, printable
 *                                          US-ASCII words, CR before LF ok
 *   reply    = status SP length LF body    status "ok", or "err" SP code
 *              "err" SP code SP length LF body
 *
 * `length` is the body's size in octets (decimal, at most 64 MiB); the
 * body is JSON when the request carried --json, else text for people (the
 * Prometheus text for `stats --prom`, a page for `report --html`). An error body says what was wrong,
 * one problem per line (JSON: {"error": ..., "details": [...]}). Codes:
 * bad-request (unparsable, or a bad argument), not-found (a lookup of an
 * ID not in history: the body is the normal answer), refused (a reload
 * with errors), denied (not root), busy (too many clients), failed.
 *
 * Verbs (docs/floodctl.md): ping; status; stats [--json|--prom];
 * report [seconds] [--json|--html];
 * lookup <message-id>; expire [--dry-run]; snapshot; reload [path];
 * forget <message-id>; remember <message-id> [accepted|rejected];
 * reopen-logs;
 * and the dataplane's, which floodctld forwards to it (docs/dataplane.md):
 * peers; drain [off]; shutdown [seconds]; throttle <reason words>; go;
 * pause <peer> [seconds]; resume <peer>. --json is accepted by every
 * verb. The dataplane's own socket speaks the same protocol.
 *
 * The server reads a request for at most 2 s and drops the connection
 * otherwise; the client gives up after its own timeout. Nobody hangs.
 */
#ifndef FLOODGATE_CTL_H
#define FLOODGATE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FG_CTL_LINE_MAX 1024
#define FG_CTL_ARGS_MAX 4
#define FG_CTL_ARG_MAX 512
#define FG_CTL_BODY_MAX (64u << 20)
#define FG_CTL_READ_TIMEOUT_MS 2000

enum fg_ctl_verb {
	FG_CTL_PING = 0,
	FG_CTL_STATUS,
	FG_CTL_STATS,
	FG_CTL_LOOKUP,
	FG_CTL_EXPIRE,
	FG_CTL_SNAPSHOT,
	FG_CTL_RELOAD,
	FG_CTL_PEERS,		/* the dataplane's peers and connections */
	FG_CTL_DRAIN,		/* refuse new sessions ("off": accept again) */
	FG_CTL_SHUTDOWN,	/* drain, end the sessions left, exit */
	FG_CTL_FORGET,		/* drop an ID from history (journaled tombstone) */
	FG_CTL_REMEMBER,	/* put an ID in history: accepted (default) or rejected */
	FG_CTL_THROTTLE,	/* the dataplane's: every session 400 REASON (1-4 words) */
	FG_CTL_GO,		/* ... ends the throttle */
	FG_CTL_PAUSE,		/* a peer's new offers deferred [SECONDS, default 24 h] */
	FG_CTL_RESUME,		/* ... ends the pause */
	FG_CTL_REOPEN_LOGS,	/* floodctld reopens its log files (logrotate) */
	FG_CTL_DOWNSTREAMS,	/* each downstream: state, lag, backlog, counters */
	FG_CTL_DOWNSTREAM,	/* pause|resume NAME: stop or go on feeding one */
	FG_CTL_REMEMBER_FILE,	/* ids|inn-news-log PATH: every ID of a file put in history */
	FG_CTL_REPORT,		/* the daily report [SECONDS back] (report.h) */
	FG_CTL_VERB__COUNT
};

#define FG_CTL_F_JSON 0x1u
#define FG_CTL_F_PROM 0x2u
#define FG_CTL_F_DRY_RUN 0x4u
#define FG_CTL_F_HTML 0x8u	/* report: one HTML page */

struct fg_ctl_req {
	enum fg_ctl_verb verb;
	unsigned flags;			/* FG_CTL_F_* */
	unsigned argc;			/* positional words after the verb */
	char argv[FG_CTL_ARGS_MAX][FG_CTL_ARG_MAX];
};

const char *fg_ctl_verb_name(enum fg_ctl_verb v);

/*
 * Parse one request line (without or with its LF). 0, or -EINVAL with
 * *why: empty, too long, a byte that is not printable ASCII, unknown verb,
 * unknown or misplaced flag, too few or too many words, a word too long.
 */
int fg_ctl_parse_request(const char *line, size_t len, struct fg_ctl_req *req,
			 const char **why);
/* The request line for req (LF included); its length, or -ENOSPC. */
int fg_ctl_format_request(const struct fg_ctl_req *req, char *buf, size_t len);

/* The reply's first line: "ok N\n" or "err CODE N\n". Its length or -ENOSPC. */
int fg_ctl_format_reply_head(char *buf, size_t len, const char *err_code, size_t body_len);

/* Parse a reply's first line (without its LF). 0 with *ok, code (for an
 * error; "" otherwise) and *body_len, or -EPROTO with *why. */
int fg_ctl_parse_reply_head(const char *line, size_t len, bool *ok, char code[32],
			    size_t *body_len, const char **why);

/* ---- client ---- */

struct fg_ctl_reply {
	bool ok;
	char code[32];
	char *body;		/* NUL-terminated, malloc'd */
	size_t body_len;
};

/*
 * Send one request and read the reply within timeout_ms. 0 with *out
 * filled (out->ok false for an error reply), or:
 *   -ENOENT / -ECONNREFUSED  no daemon at that socket
 *   -EACCES / -EPERM         not allowed to use the socket
 *   -ETIMEDOUT               no complete reply in time
 *   -EPROTO                  a malformed reply (*why)
 *   other -errno             I/O errors
 */
int fg_ctl_call(const char *socket_path, const struct fg_ctl_req *req, int timeout_ms,
		struct fg_ctl_reply *out, const char **why);
void fg_ctl_reply_free(struct fg_ctl_reply *r);

/* ---- a small server: the dataplanes' own sockets (lib/ctl/server.c) ---- */

/*
 * Listen on `path` (0600; one request per connection; root or this
 * process's user only). A socket file nobody answers on (its owner died)
 * is replaced; one another process answers on is -EADDRINUSE. 0 with
 * *fd, or -errno, logged under `comp`.
 */
int fg_ctl_listen(const char *path, const char *comp, int *fd);
/* Close the listener and unlink its path (fd -1: nothing). */
void fg_ctl_unlisten(int *fd, const char *path);

/* Wait up to timeout_ms for a connection on the listener, read its
 * request (within FG_CTL_READ_TIMEOUT_MS), run `fn` on it — the body to
 * f, NULL or an error code for the reply head — and reply. */
void fg_ctl_serve_one(int lfd, int timeout_ms,
		      const char *(*fn)(void *arg, const struct fg_ctl_req *q, FILE *f),
		      void *arg);

/* A dataplane's `reload [FILE]`: run reload(arg, file, report) — 0;
 * -EINVAL: the file refused; else a failure — and reply with its report
 * as it is, or with --json {"reloaded": bool, "report": text}. The
 * reply's error code, or NULL. */
const char *fg_ctl_reload_serve(int (*reload)(void *arg, const char *file, FILE *report),
				void *arg, const struct fg_ctl_req *q, FILE *f);

#endif /* FLOODGATE_CTL_H */
