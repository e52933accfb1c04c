/* SPDX-License-Identifier: MIT */
/*
 * dataplane.c — floodctld's link to the dataplane (floodgate): the
 * operator has one socket, floodctld's; what only the dataplane can answer
 * is forwarded to the dataplane's control socket, same protocol (ctl.h).
 *
 *   peers, drain [off], shutdown [SECONDS]   forwarded as they came, the
 *                                            dataplane's reply returned
 *   reload [FILE]                            floodctld validates and applies
 *                                            its part first (reload.c); only
 *                                            a file it accepted goes on, and
 *                                            the dataplane's report is added
 *
 * The dataplane's socket is dataplane.sock in the directory of floodctld's
 * control socket, where floodgate creates it unless told otherwise
 * (--ctl-socket). A dataplane that is not running is said so plainly;
 * for a reload that is no failure (floodctld's part stands and the next
 * dataplane starts with the file).
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "floodctld.h"

#define FORWARD_TIMEOUT_MS 15000	/* a reload waits for every worker */

static void dataplane_path(const struct ctld *d, char *out, size_t len)
{
	char dir[sizeof(d->ctl_path)];

	snprintf(dir, sizeof(dir), "%s", d->ctl_path);
	snprintf(out, len, "%s/dataplane.sock", dirname(dir));
}

/* Ask the dataplane; 0 with *rep filled, or -errno (down: -ENOENT,
 * -ECONNREFUSED) with a line for people in `why`. */
static int ask(const struct ctld *d, const struct fg_ctl_req *q, struct fg_ctl_reply *rep,
	       char *why, size_t len)
{
	char path[FG_CONFIG_PATH_MAX + 32];
	const char *proto = NULL;
	int rc;

	dataplane_path(d, path, sizeof(path));
	rc = fg_ctl_call(path, q, FORWARD_TIMEOUT_MS, rep, &proto);
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		snprintf(why, len, "the dataplane is not running (nothing answers on %s)", path);
	else if (rc < 0)
		snprintf(why, len, "the dataplane at %s: %s", path,
			 rc == -EPROTO && proto ? proto : strerror(-rc));
	return rc;
}

/* The reply's error code, as one of floodctld's own (static) strings. */
static const char *code_of(const struct fg_ctl_reply *rep)
{
	static const char *const known[] = { "bad-request", "not-found", "refused", "denied",
					     "busy", "failed" };

	if (rep->ok)
		return NULL;
	for (size_t i = 0; i < FG_ARRAY_SIZE(known); i++)
		if (strcmp(rep->code, known[i]) == 0)
			return known[i];
	return "failed";
}

const char *ctld_dataplane_forward(struct ctld *d, const struct fg_ctl_req *q,
				   struct fg_sbuf *out)
{
	struct fg_ctl_reply rep;
	const char *code;
	char why[FG_CONFIG_PATH_MAX + 128];

	if (ask(d, q, &rep, why, sizeof(why)) < 0) {
		if (q->flags & FG_CTL_F_JSON) {
			struct fg_json j;

			fg_json_begin(&j, out);
			fg_json_str(&j, "error", why);
			fg_json_end(&j);
			fg_sbuf_puts(out, "\n");
		} else {
			fg_sbuf_printf(out, "%s\n", why);
		}
		return "failed";
	}
	fg_sbuf_put(out, rep.body, rep.body_len);
	code = code_of(&rep);
	fg_ctl_reply_free(&rep);
	return code;
}

/* The dataplane's answer to a reload of `file`: rc as ask()'s, *rep
 * filled when rc >= 0, `why` when it is not running. */
static int dataplane_reload(struct ctld *d, const char *file, struct fg_ctl_reply *rep,
			    bool json, char *why, size_t len)
{
	struct fg_ctl_req q = { .verb = FG_CTL_RELOAD, .flags = json ? FG_CTL_F_JSON : 0 };

	if (file[0]) {
		if (strlen(file) >= sizeof(q.argv[0])) {
			snprintf(why, len, "the path (%zu octets) is too long to hand over",
				 strlen(file));
			return -ENAMETOOLONG;
		}
		memcpy(q.argv[0], file, strlen(file) + 1);
		q.argc = 1;
	}
	return ask(d, &q, rep, why, len);
}

/* The dataplane's part of the report, after floodctld's. */
static void dataplane_report(int rc, const struct fg_ctl_reply *rep, const char *why, bool json,
			     struct fg_sbuf *out)
{
	if (json) {
		/* floodctld's own object gains a "dataplane" member */
		while (out->len && (out->p[out->len - 1] == '\n' || out->p[out->len - 1] == '}'))
			if (out->p[--out->len] == '}')
				break;
		fg_sbuf_puts(out, ",\"dataplane\":");
		if (rc < 0) {
			fg_sbuf_puts(out, "{\"running\":false,\"why\":");
			fg_sbuf_json_str(out, why, strlen(why));
			fg_sbuf_puts(out, "}");
		} else {
			fg_sbuf_put(out, rep->body, rep->body_len);
			while (out->len && out->p[out->len - 1] == '\n')
				out->len--;
		}
		fg_sbuf_puts(out, "}\n");
	} else if (rc < 0) {
		fg_sbuf_printf(out, "dataplane: %s; it will start with this file\n", why);
	} else {
		fg_sbuf_puts(out, "dataplane: ");
		fg_sbuf_put(out, rep->body, rep->body_len);
	}
}

/* A reload of both, all or nothing (reload.c, its steps): floodctld
 * checks the file, the dataplane checks and applies it, and floodctld
 * applies its part only if the dataplane did (or is not running: it
 * starts with the file). */
const char *ctld_reload_all(struct ctld *d, const char *path, bool json, struct fg_sbuf *out)
{
	char file[sizeof(d->config_path)], why[FG_CONFIG_PATH_MAX + 128];
	struct fg_ctl_reply rep;
	const char *code = NULL;
	struct fg_config *cfg = ctld_reload_check(d, path, json, out, file, sizeof(file));
	int rc;

	if (!cfg)
		return "refused";
	rc = dataplane_reload(d, file, &rep, json, why, sizeof(why));
	if (rc >= 0)
		code = code_of(&rep);
	if (rc == -ENAMETOOLONG || code) {
		ctld_reload_refused(d, file);
		fg_config_free(cfg);
		if (json) {
			struct fg_json j;

			fg_json_begin(&j, out);
			fg_json_str(&j, "error", "refused by the dataplane; the running "
				    "configuration is kept");
			fg_json_str(&j, "file", file[0] ? file : "<default>");
			fg_json_end(&j);
		} else {
			fg_sbuf_printf(out, "%s: refused by the dataplane; nothing applied, the "
				       "running configuration is kept\n", file[0] ? file : "<default>");
		}
		dataplane_report(rc, &rep, why, json, out);
		if (rc >= 0)
			fg_ctl_reply_free(&rep);
		return rc == -ENAMETOOLONG ? "failed" : code;
	}
	ctld_reload_apply(d, cfg, file, json, out);
	dataplane_report(rc, &rep, why, json, out);
	if (rc >= 0)
		fg_ctl_reply_free(&rep);
	return NULL;
}
