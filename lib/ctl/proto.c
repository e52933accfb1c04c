/* SPDX-License-Identifier: MIT */
/*
 * proto.c — the control protocol's request and reply-head grammar
 * (ctl.h). Both directions are parsed from untrusted octets: every length
 * is checked before it is used, and nothing is read past `len`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "floodgate/common.h"
#include "floodgate/ctl.h"

struct verb_def {
	const char *name;
	unsigned min_args, max_args;
	unsigned flags;		/* flags it accepts besides --json */
};

static const struct verb_def verbs[FG_CTL_VERB__COUNT] = {
	[FG_CTL_PING] = { "ping", 0, 0, 0 },
	[FG_CTL_STATUS] = { "status", 0, 0, 0 },
	[FG_CTL_STATS] = { "stats", 0, 1, FG_CTL_F_PROM },	/* [PEER] */
	[FG_CTL_LOOKUP] = { "lookup", 1, 1, 0 },
	[FG_CTL_EXPIRE] = { "expire", 0, 0, FG_CTL_F_DRY_RUN },
	[FG_CTL_SNAPSHOT] = { "snapshot", 0, 0, 0 },
	[FG_CTL_RELOAD] = { "reload", 0, 1, 0 },
	[FG_CTL_PEERS] = { "peers", 0, 0, 0 },
	[FG_CTL_DRAIN] = { "drain", 0, 1, 0 },
	[FG_CTL_SHUTDOWN] = { "shutdown", 0, 1, 0 },
	[FG_CTL_FORGET] = { "forget", 1, 1, 0 },
	[FG_CTL_REMEMBER] = { "remember", 1, 2, 0 },
	[FG_CTL_THROTTLE] = { "throttle", 1, FG_CTL_ARGS_MAX, 0 },
	[FG_CTL_GO] = { "go", 0, 0, 0 },
	[FG_CTL_PAUSE] = { "pause", 1, 2, 0 },
	[FG_CTL_RESUME] = { "resume", 1, 1, 0 },
	[FG_CTL_REOPEN_LOGS] = { "reopen-logs", 0, 0, 0 },
	[FG_CTL_DOWNSTREAMS] = { "downstreams", 0, 0, 0 },
	[FG_CTL_DOWNSTREAM] = { "downstream", 2, 2, 0 },
	[FG_CTL_REMEMBER_FILE] = { "remember-file", 2, 2, 0 },
	[FG_CTL_REPORT] = { "report", 0, 1, FG_CTL_F_HTML },	/* [SECONDS] */
};

static const struct {
	const char *name;
	unsigned flag;
} flag_names[] = {
	{ "--json", FG_CTL_F_JSON },
	{ "--prom", FG_CTL_F_PROM },
	{ "--dry-run", FG_CTL_F_DRY_RUN },
	{ "--html", FG_CTL_F_HTML },
};

const char *fg_ctl_verb_name(enum fg_ctl_verb v)
{
	return (unsigned)v < FG_CTL_VERB__COUNT ? verbs[v].name : NULL;
}

static int find_verb(const char *w, size_t n)
{
	for (unsigned v = 0; v < FG_CTL_VERB__COUNT; v++)
		if (strlen(verbs[v].name) == n && memcmp(verbs[v].name, w, n) == 0)
			return (int)v;
	return -1;
}

static unsigned find_flag(const char *w, size_t n)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(flag_names); i++)
		if (strlen(flag_names[i].name) == n && memcmp(flag_names[i].name, w, n) == 0)
			return flag_names[i].flag;
	return 0;
}

/* One word after the verb: a flag or a positional argument. */
static int take_word(struct fg_ctl_req *req, const char *w, size_t n, const char **why)
{
	unsigned f;

	if (n >= 2 && w[0] == '-' && w[1] == '-') {
		f = find_flag(w, n);
		if (!f || (f != FG_CTL_F_JSON && !(verbs[req->verb].flags & f))) {
			*why = "unknown option for this verb";
			return -EINVAL;
		}
		if (__builtin_popcount((req->flags | f) &
				       (FG_CTL_F_JSON | FG_CTL_F_PROM | FG_CTL_F_HTML)) > 1) {
			*why = "--json, --prom and --html exclude each other";
			return -EINVAL;
		}
		req->flags |= f;
		return 0;
	}
	if (req->argc >= verbs[req->verb].max_args) {
		*why = "too many arguments";
		return -EINVAL;
	}
	if (n >= FG_CTL_ARG_MAX) {
		*why = "an argument is too long";
		return -EINVAL;
	}
	memcpy(req->argv[req->argc], w, n);
	req->argv[req->argc][n] = '\0';
	req->argc++;
	return 0;
}

int fg_ctl_parse_request(const char *line, size_t len, struct fg_ctl_req *req,
			 const char **why)
{
	size_t i = 0;
	bool have_verb = false;
	int v;

	memset(req, 0, sizeof(*req));
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (len >= FG_CTL_LINE_MAX) {
		*why = "request line too long";
		return -EINVAL;
	}
	for (size_t k = 0; k < len; k++) {
		if (line[k] != ' ' && (line[k] < 0x21 || line[k] > 0x7e)) {
			*why = "a request holds only printable US-ASCII words";
			return -EINVAL;
		}
	}
	while (i < len) {
		size_t start, n;

		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && line[i] != ' ')
			i++;
		n = i - start;
		if (!have_verb) {
			v = find_verb(line + start, n);
			if (v < 0) {
				*why = "unknown verb";
				return -EINVAL;
			}
			req->verb = (enum fg_ctl_verb)v;
			have_verb = true;
		} else if (take_word(req, line + start, n, why) < 0) {
			return -EINVAL;
		}
	}
	if (!have_verb) {
		*why = "empty request";
		return -EINVAL;
	}
	if (req->argc < verbs[req->verb].min_args) {
		*why = "missing argument";
		return -EINVAL;
	}
	return 0;
}

int fg_ctl_format_request(const struct fg_ctl_req *req, char *buf, size_t len)
{
	size_t off = 0;
	int n;

	if ((unsigned)req->verb >= FG_CTL_VERB__COUNT)
		return -EINVAL;
	n = snprintf(buf, len, "%s", verbs[req->verb].name);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (unsigned i = 0; i < req->argc; i++) {
		n = snprintf(buf + off, len - off, " %s", req->argv[i]);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	for (size_t i = 0; i < FG_ARRAY_SIZE(flag_names); i++) {
		if (!(req->flags & flag_names[i].flag))
			continue;
		n = snprintf(buf + off, len - off, " %s", flag_names[i].name);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	if (off + 1 >= len || off + 1 >= FG_CTL_LINE_MAX)
		return -ENOSPC;
	buf[off++] = '\n';
	buf[off] = '\0';
	return (int)off;
}

int fg_ctl_format_reply_head(char *buf, size_t len, const char *err_code, size_t body_len)
{
	int n = err_code ? snprintf(buf, len, "err %s %zu\n", err_code, body_len)
			 : snprintf(buf, len, "ok %zu\n", body_len);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

/* A decimal length of at most 8 digits, nothing else. */
static bool parse_len(const char *s, size_t n, size_t *out)
{
	size_t v = 0;

	if (n == 0 || n > 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (size_t)(s[i] - '0');
	}
	*out = v;
	return v <= FG_CTL_BODY_MAX;
}

int fg_ctl_parse_reply_head(const char *line, size_t len, bool *ok, char code[32],
			    size_t *body_len, const char **why)
{
	const char *sp;

	code[0] = '\0';
	if (len >= 3 && memcmp(line, "ok ", 3) == 0) {
		*ok = true;
		if (parse_len(line + 3, len - 3, body_len))
			return 0;
		*why = "bad body length in an ok reply";
		return -EPROTO;
	}
	if (len < 5 || memcmp(line, "err ", 4) != 0) {
		*why = "a reply starts with \"ok\" or \"err\"";
		return -EPROTO;
	}
	sp = memchr(line + 4, ' ', len - 4);
	if (!sp || sp == line + 4 || (size_t)(sp - (line + 4)) >= 32) {
		*why = "bad error code in an err reply";
		return -EPROTO;
	}
	for (const char *c = line + 4; c < sp; c++) {
		if (!((*c >= 'a' && *c <= 'z') || *c == '-')) {
			*why = "bad error code in an err reply";
			return -EPROTO;
		}
	}
	memcpy(code, line + 4, (size_t)(sp - (line + 4)));
	code[sp - (line + 4)] = '\0';
	*ok = false;
	if (parse_len(sp + 1, len - (size_t)(sp + 1 - line), body_len))
		return 0;
	*why = "bad body length in an err reply";
	return -EPROTO;
}
