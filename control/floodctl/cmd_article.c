/* SPDX-License-Identifier: MIT */
/*
 * cmd_article.c — the article commands: `floodctl explain` runs the
 * admission rules on one article and shows their work; `floodctl msgid`
 * says what a Message-ID is and what its successor would be.
 *
 * explain reads the whole article (a file or stdin, wire or plain form,
 * told apart by the first line's end), scans it with the same scanner and
 * decides with the same rules as the dataplane, under the embedded default
 * configuration or -c FILE, at the time --now (default: the clock). It has
 * no history (no daemon is asked), so it never says `duplicate`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "floodctl.h"
#include "floodgate/article.h"
#include "floodgate/config.h"
#include "floodgate/date.h"
#include "floodgate/feeds.h"
#include "floodgate/msgid.h"
#include "floodgate/rules.h"

#define EXPLAIN_MAX_INPUT (64u << 20)	/* octets read from one article */

struct explain {
	/* options */
	const char *config_path, *peer_name, *arg, *path;
	int64_t now;
	bool json;
	int date_syntax;	/* enum fg_date_syntax, or -1: the config's */
	/* input */
	char *buf;
	size_t len;		/* octets read */
	enum fg_article_form form;
	uint64_t size;		/* wire-form size */
	bool ended_in_header;	/* input ended inside the header section */
	/* work */
	struct fg_config *cfg;
	const struct fg_config_peer *peer;
	struct fg_article art;
	struct fg_rules rules;
	struct fg_rules_verdict v;
	bool remember;
	/* the downstreams it would go to (feeds.h), were it accepted */
	struct fg_feeds_set route;
	struct fg_feeds_decision feeds[FG_FEEDS_MAX];
};

/* ---------------------------------------------------------------- input */

static int parse_explain_args(int argc, char **argv, struct explain *e)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "now", required_argument, NULL, 'n' },
		{ "peer", required_argument, NULL, 'p' },
		{ "msgid", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "date-syntax", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct fg_ctl_command *cmd = &fg_ctl_cmd_explain;
	int c;

	e->now = time(NULL);
	e->date_syntax = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			e->config_path = optarg;
			break;
		case 'n':
			if (fg_ctl_parse_time(optarg, &e->now) < 0)
				return fg_ctl_fail(cmd, "--now: not epoch seconds nor an RFC 5322 date: %s", optarg);
			break;
		case 'p':
			e->peer_name = optarg;
			break;
		case 'm':
			e->arg = optarg;
			break;
		case 'j':
			e->json = true;
			break;
		case 'd':
			if (strcmp(optarg, "inn") == 0)
				e->date_syntax = FG_DATE_SYNTAX_INN;
			else if (strcmp(optarg, "rfc5322") == 0)
				e->date_syntax = FG_DATE_SYNTAX_RFC5322;
			else
				return fg_ctl_fail(cmd, "--date-syntax: inn or rfc5322, not %s", optarg);
			break;
		case 'h':
			fg_ctl_usage(cmd, stdout);
			exit(FG_CTL_EXIT_OK);
		default:
			fg_ctl_usage(cmd, stderr);
			return FG_CTL_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		return fg_ctl_fail(cmd, "one article at a time");
	e->path = optind < argc ? argv[optind] : "-";
	return 0;
}

/*
 * The whole input into e->buf, with four spare octets so that an input
 * ending inside its header section can be given the empty line it lacks.
 */
static int read_article(struct explain *e)
{
	FILE *f = strcmp(e->path, "-") == 0 ? stdin : fopen(e->path, "rb");
	size_t cap = 65536;
	int rc = 0;

	if (!f)
		return -errno;
	e->buf = malloc(cap + 4);
	if (!e->buf) {
		rc = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		size_t n = fread(e->buf + e->len, 1, cap - e->len, f);
		char *grown;

		e->len += n;
		if (n == 0)
			break;
		if (e->len < cap)
			continue;
		if (cap >= EXPLAIN_MAX_INPUT) {
			rc = -EFBIG;
			goto out_close;
		}
		cap *= 2;
		grown = realloc(e->buf, cap + 4);
		if (!grown) {
			rc = -ENOMEM;
			goto out_close;
		}
		e->buf = grown;
	}
	if (ferror(f))
		rc = -EIO;
out_close:
	if (f != stdin)
		fclose(f);
	return rc;
}

static struct fg_config *load_config(const char *path)
{
	struct fg_config_errors errs;
	struct fg_config *cfg;

	memset(&errs, 0, sizeof(errs));
	cfg = path ? fg_config_load_file(path, &errs) : fg_config_load_default(&errs);
	for (unsigned i = 0; !cfg && i < errs.n; i++)
		fprintf(stderr, "floodctl explain: %s\n", errs.err[i].text);
	return cfg;
}

/* Scan; an input that ends inside its header section is read as if the
 * empty line followed (a file holding only a header). */
static void scan_article(struct explain *e)
{
	static const char eol[2][5] = { "\r\n\r\n", "\n\n" };

	e->form = fg_article_detect(e->buf, e->len);
	e->size = fg_article_wire_size(e->buf, e->len, e->form);
	fg_article_init(&e->art, e->form);
	if (fg_article_scan(&e->art, e->buf, e->len) != FG_ARTICLE_AGAIN)
		return;
	e->ended_in_header = true;
	memcpy(e->buf + e->len, eol[e->form == FG_ARTICLE_PLAIN],
	       e->form == FG_ARTICLE_PLAIN ? 2 : 4);
	fg_article_scan(&e->art, e->buf, e->len + (e->form == FG_ARTICLE_PLAIN ? 2 : 4));
}

/* ---------------------------------------------------------------- output */

static const char *date_used_name(enum fg_rules_date_used u)
{
	return u == FG_RULES_DATE_INJECTION ? "injection-date" :
	       u == FG_RULES_DATE_DATE ? "date" : NULL;
}

static void text_value(const char *label, struct fg_article_value v)
{
	printf("%-16s", label);
	if (v.ptr)
		fg_ctl_print_escaped(stdout, v.ptr, v.len);
	else
		fputs("(absent)", stdout);
}

static void text_date(const char *label, const struct fg_rules_date *d)
{
	char when[64];
	bool same;

	text_value(label, d->text);
	if (d->count > 1)
		printf("  (appears %u times)", d->count);
	if (d->count && d->err != FG_DATE_OK) {
		printf("  [does not parse: %s]", fg_date_error_str(d->err));
	} else if (d->count && fg_date_format(d->t, when, sizeof(when)) > 0) {
		/* the UTC form only when it says something the text does not */
		same = d->text.len == strlen(when) && memcmp(d->text.ptr, when, d->text.len) == 0;
		printf("  (%" PRId64 "%s%s)", d->t, same ? "" : " = ", same ? "" : when);
	}
	putchar('\n');
	if (d->count && d->reading.notes) {
		char words[512];

		fg_date_reading_describe(&d->reading, d->text.ptr, d->text.len, words, sizeof(words));
		printf("%-16s%s\n", "  read:", words);
	}
}

static void text_reason(const struct explain *e)
{
	const struct fg_rules_verdict *v = &e->v;

	printf("%-16s%s\n", "verdict:", v->reason == FG_REASON_NONE ? "accepted" : "rejected");
	if (v->reason == FG_REASON_NONE)
		return;
	printf("%-16s%s (step %u, %s): %s", "reason:", fg_reason_name(v->reason), v->step,
	       fg_rules_step_name(v->step), v->detail);
	if (v->why)
		printf(" [%s]", v->why);
	if (v->what.ptr) {
		fputs(": ", stdout);
		fg_ctl_print_escaped(stdout, v->what.ptr, v->what.len);
	}
	putchar('\n');
}

static void text_msgid(const struct explain *e)
{
	const struct fg_rules_verdict *v = &e->v;

	text_value("message-id:", v->msgid);
	if (v->msgid.ptr)
		printf("  (%s%s%s)", fg_msgid_form_str(v->msgid_form),
		       v->msgid_form == FG_MSGID_HEADER ? "" : ": ",
		       v->msgid_form == FG_MSGID_HEADER ? "" : fg_msgid_error_str(v->msgid_error));
	putchar('\n');
	if (v->version_ok)
		printf("%-16s%s%" PRIu64 ", base %s\n", "  version:",
		       v->version.has_version ? "$v=" : "none, i.e. ",
		       v->version.version, v->version.base);
	if (e->arg)
		printf("%-16s%s\n", "argument:", e->arg);
}

/* Per downstream: where it goes and the pattern, group or word that
 * decided (feeds.h). */
static void text_feeds(const struct explain *e)
{
	const char *label = "downstreams:";

	if (e->cfg->n_downstream == 0)
		printf("%-16s(none configured)\n", label);
	for (unsigned i = 0; i < e->cfg->n_downstream; i++) {
		const struct fg_feeds_decision *d = &e->feeds[i];

		printf("%-16s%s: %s", label, e->cfg->downstream[i].name,
		       d->why == FG_FEEDS_SENT ? "sent" : "not sent");
		if (d->why != FG_FEEDS_SENT)
			printf(" (%s: %s)", fg_feeds_why_name(d->why), fg_feeds_why_help(d->why));
		if (fg_feeds_group(d).ptr)
			printf(", group %.*s", (int)fg_feeds_group(d).len, fg_feeds_group(d).ptr);
		if (d->pattern.ptr)
			printf(", pattern %.*s", (int)d->pattern.len, d->pattern.ptr);
		if (d->item.ptr)
			printf(", %s %.*s", d->why == FG_FEEDS_EXCLUDED_PATH ? "path element"
					    : "distribution", (int)d->item.len, d->item.ptr);
		puts("");
		label = "";
	}
	if (e->v.reason != FG_REASON_NONE && e->cfg->n_downstream)
		printf("%-16s(where it would go, were it accepted)\n", "");
}

static void json_feeds(struct fg_json *j, const struct explain *e)
{
	fg_json_arr(j, "downstreams");
	for (unsigned i = 0; i < e->cfg->n_downstream; i++) {
		const struct fg_feeds_decision *d = &e->feeds[i];

		fg_json_obj(j, NULL);
		fg_json_str(j, "name", e->cfg->downstream[i].name);
		fg_json_str(j, "id", e->cfg->downstream[i].id);
		fg_json_bool(j, "sent", d->why == FG_FEEDS_SENT);
		fg_json_str(j, "why", fg_feeds_why_name(d->why));
		fg_json_strn(j, "group", fg_feeds_group(d).ptr, fg_feeds_group(d).len);
		fg_json_strn(j, "pattern", d->pattern.ptr, d->pattern.len);
		fg_json_strn(j, "item", d->item.ptr, d->item.len);
		fg_json_close(j);
	}
	fg_json_close(j);
}

static void print_text(const struct explain *e)
{
	const struct fg_rules_verdict *v = &e->v;
	char when[64], span[64];

	printf("%-16s%s (%s form, %" PRIu64 " octets)\n", "article:", e->path,
	       fg_article_form_str(e->form), e->size);
	text_reason(e);
	text_msgid(e);
	text_date("date:", &v->date);
	text_date("injection-date:", &v->injection_date);
	printf("%-16s%s\n", "date syntax:", fg_date_syntax_name(e->cfg->date_syntax));
	printf("%-16s%s\n", "date used:", v->date_used ? date_used_name(v->date_used) : "none");
	if (v->date_used) {
		fg_date_format(v->article_date, when, sizeof(when));
		printf("%-16s%s = %" PRId64 "\n", "article date:", when, v->article_date);
		printf("%-16s%s (%" PRId64 " s)\n", "age:",
		       fg_ctl_format_span(e->now - v->article_date, span, sizeof(span)),
		       e->now - v->article_date);
	}
	if (fg_date_format(e->now, when, sizeof(when)) < 0)
		snprintf(when, sizeof(when), "(out of range)");
	printf("%-16s%s = %" PRId64 "\n", "now:", when, e->now);
	printf("%-16s%s\n", "peer:", e->peer ? e->peer->name : "(none: every newsgroup wanted)");
	if (v->supersedes.ptr) {
		text_value("supersedes:", v->supersedes);
		puts(v->supersedes_valid ? "" : "  (not a valid Message-ID: ignored)");
	}
	if (e->art.n_defects)
		printf("%-16s%u, the first at offset %zu: %s\n", "header defects:", e->art.n_defects,
		       e->art.first_defect_off, fg_article_error_str(e->art.first_defect));
	if (e->ended_in_header)
		printf("%-16sthe input ends inside the header section; read as if an empty line followed\n",
		       "note:");
	if (v->reason != FG_REASON_NONE)
		printf("%-16s%s\n", "remembered:", e->remember ? "yes (with remember-rejects on)" : "no");
	text_feeds(e);
}

/* How an inn reading went: its notes (space-separated names), in words,
 * the zone used and innd's, and whether it may feed the clock guard. */
static void json_reading(struct fg_json *j, const struct fg_rules_date *d)
{
	const struct fg_date_reading *r = &d->reading;
	char names[256] = "", words[512];
	size_t n = 0;

	for (uint32_t bit = 1; bit && bit <= r->notes; bit <<= 1)
		if (r->notes & bit)
			n += (size_t)snprintf(names + n, sizeof(names) - FG_MIN(n, sizeof(names)), "%s%s",
					      n ? " " : "", fg_date_note_name(bit));
	fg_date_reading_describe(r, d->text.ptr, d->text.len, words, sizeof(words));
	fg_json_obj(j, "reading");
	fg_json_str(j, "notes", names);
	fg_json_str(j, "words", words);
	fg_json_i64(j, "zone", r->zone);
	fg_json_i64(j, "innd_zone", r->inn_zone);
	fg_json_bool(j, "clock_sample", fg_date_reading_trusted(r));
	fg_json_close(j);
}

static void json_date(struct fg_json *j, const char *key, const struct fg_rules_date *d,
		      enum fg_date_syntax syntax)
{
	if (!d->count) {
		fg_json_null(j, key);
		return;
	}
	fg_json_obj(j, key);
	fg_json_strn(j, "text", d->text.ptr, d->text.len);
	fg_json_u64(j, "count", d->count);
	if (d->err == FG_DATE_OK) {
		fg_json_i64(j, "epoch", d->t);
		fg_json_null(j, "error");
	} else {
		fg_json_null(j, "epoch");
		fg_json_str(j, "error", fg_date_error_str(d->err));
	}
	if (syntax == FG_DATE_SYNTAX_INN && d->err == FG_DATE_OK)
		json_reading(j, d);
	else
		fg_json_null(j, "reading");
	fg_json_close(j);
}

static void json_msgid(struct fg_json *j, const struct explain *e)
{
	const struct fg_rules_verdict *v = &e->v;

	fg_json_strn(j, "message_id", v->msgid.ptr, v->msgid.len);
	fg_json_str(j, "message_id_form", v->msgid.ptr ? fg_msgid_form_str(v->msgid_form) : NULL);
	if (v->version_ok) {
		fg_json_obj(j, "version");
		fg_json_bool(j, "has_version", v->version.has_version);
		fg_json_u64(j, "number", v->version.version);
		fg_json_strn(j, "base", v->version.base, v->version.base_len);
		fg_json_close(j);
	} else {
		fg_json_null(j, "version");
	}
	fg_json_str(j, "argument", e->arg);
	fg_json_strn(j, "supersedes", v->supersedes.ptr, v->supersedes.len);
	fg_json_bool(j, "supersedes_valid", v->supersedes_valid);
}

static void print_json(const struct explain *e)
{
	const struct fg_rules_verdict *v = &e->v;
	bool rejected = v->reason != FG_REASON_NONE;
	struct fg_ctl_json doc;
	struct fg_json *j;

	j = fg_ctl_json_begin(&doc, stdout);
	fg_json_str(j, "verdict", rejected ? "rejected" : "accepted");
	fg_json_str(j, "reason", rejected ? fg_reason_name(v->reason) : NULL);
	fg_json_str(j, "step", rejected ? fg_rules_step_name(v->step) : NULL);
	fg_json_str(j, "detail", rejected ? v->detail : NULL);
	fg_json_str(j, "why", v->why);
	fg_json_strn(j, "what", v->what.ptr, v->what.len);
	fg_json_str(j, "date_used", date_used_name(v->date_used));
	if (v->date_used) {
		fg_json_i64(j, "article_date", v->article_date);
		fg_json_i64(j, "age", e->now - v->article_date);
	} else {
		fg_json_null(j, "article_date");
		fg_json_null(j, "age");
	}
	fg_json_i64(j, "now", e->now);
	fg_json_str(j, "date_syntax", fg_date_syntax_name(e->cfg->date_syntax));
	json_date(j, "date", &v->date, e->cfg->date_syntax);
	json_date(j, "injection_date", &v->injection_date, e->cfg->date_syntax);
	json_msgid(j, e);
	fg_json_str(j, "peer", e->peer ? e->peer->name : NULL);
	fg_json_str(j, "file", e->path);
	fg_json_str(j, "form", fg_article_form_str(e->form));
	fg_json_u64(j, "size", e->size);
	fg_json_u64(j, "header_defects", e->art.n_defects);
	fg_json_str(j, "first_defect",
			 e->art.n_defects ? fg_article_error_str(e->art.first_defect) : NULL);
	fg_json_bool(j, "ended_in_header", e->ended_in_header);
	fg_json_bool(j, "remembered", e->remember);
	json_feeds(j, e);
	fg_ctl_json_end(&doc);
}

/* ---------------------------------------------------------------- explain */

static int explain_run(int argc, char **argv)
{
	const struct fg_ctl_command *cmd = &fg_ctl_cmd_explain;
	struct explain *e = calloc(1, sizeof(*e));
	struct fg_rules_input in;
	int rc;

	if (!e)
		return fg_ctl_fail(cmd, "out of memory");
	rc = parse_explain_args(argc, argv, e);
	if (rc)
		goto out_free;
	rc = FG_CTL_EXIT_USAGE;
	e->cfg = load_config(e->config_path);
	if (e->cfg && e->date_syntax >= 0)
		e->cfg->date_syntax = (enum fg_date_syntax)e->date_syntax;
	if (!e->cfg)
		goto out_free;
	if (e->peer_name && !(e->peer = fg_config_peer_by_name(e->cfg, e->peer_name))) {
		fg_ctl_fail(cmd, "no peer '%s' in the configuration", e->peer_name);
		goto out_free_config;
	}
	if (fg_rules_init(&e->rules, e->cfg, NULL) < 0) {
		fg_ctl_fail(cmd, "the configuration's required headers or path identities are unusable");
		goto out_free_config;
	}
	rc = read_article(e);
	if (rc < 0) {
		fg_ctl_fail(cmd, "%s: %s", e->path, rc == -EFBIG ? "larger than 64 MiB" : strerror(-rc));
		rc = FG_CTL_EXIT_USAGE;
		goto out_free_buf;
	}
	scan_article(e);
	memset(&in, 0, sizeof(in));
	in.art = &e->art;
	in.arg = e->arg;
	in.arg_len = e->arg ? strlen(e->arg) : 0;
	in.size = e->size;
	in.now = e->now;
	in.peer = e->peer;
	in.explain = true;
	fg_rules_decide(&e->rules, &in, &e->v, NULL);
	e->remember = fg_rules_remember(&e->rules, &e->v);
	fg_feeds_select(e->cfg, &e->art, e->size, &e->route, e->feeds);
	if (e->json)
		print_json(e);
	else
		print_text(e);
	rc = e->v.reason == FG_REASON_NONE ? FG_CTL_EXIT_OK : FG_CTL_EXIT_NO;
out_free_buf:
	free(e->buf);
out_free_config:
	fg_config_free(e->cfg);
out_free:
	free(e);
	return rc;
}

const struct fg_ctl_command fg_ctl_cmd_explain = {
	.name = "explain",
	.args = "[-c CONFIG] [--now RFC5322-DATE|EPOCH] [--peer NAME] [--msgid ID] [--date-syntax inn|rfc5322] [--json] [FILE|-]",
	.summary = "run the admission rules on one article and show the verdict and why",
	.help =
	"  -c, --config FILE  floodgate.conf to use (default: the embedded default)\n"
	"  --now DATE|EPOCH   decide at this time (default: now)\n"
	"  --peer NAME        as if sent by this configured peer (its newsgroups, size limit)\n"
	"  --msgid ID         the command's argument (as after TAKETHIS); default: none\n"
	"  --date-syntax S    read dates as inn (innd's set) or rfc5322 (strict);\n"
	"                     default: the config's date-syntax (inn)\n"
	"  --json             one JSON object instead of text\n"
	"  FILE               the article, wire form (CRLF, dot-stuffed) or plain (LF);\n"
	"                     \"-\" or nothing reads standard input\n"
	"\n"
	"No history is consulted, so explain never answers `duplicate`.\n"
	"Exit status: 0 accepted, 1 rejected, 2 usage or I/O error.\n",
	.run = explain_run,
};

/* ---------------------------------------------------------------- msgid */

static void msgid_text(const char *id, size_t len, enum fg_msgid_form form,
		       enum fg_msgid_error why, const struct fg_msgid_version *ver,
		       const char *succ)
{
	fg_ctl_print_escaped(stdout, id, len);
	if (form == FG_MSGID_HEADER)
		puts(": header form (valid in a Message-ID header and as a command argument)");
	else if (form == FG_MSGID_WIRE)
		printf(": wire form only (valid as a command argument, not in a Message-ID header: %s)\n",
		       fg_msgid_error_str(why));
	else
		printf(": invalid (%s)\n", fg_msgid_error_str(why));
	if (!ver)
		return;
	if (ver->has_version)
		printf("version:   %" PRIu64 " (\"%.*s\")\n", ver->version, (int)ver->v_len, id + ver->v_off);
	else
		puts("version:   none (version 0 of its own base)");
	printf("base:      %s\n", ver->base);
	printf("successor: %s\n", succ ? succ : "(none can be derived)");
}

static void msgid_json(const char *id, size_t len, enum fg_msgid_form form,
		       enum fg_msgid_error why, const struct fg_msgid_version *ver,
		       const char *succ)
{
	struct fg_ctl_json doc;
	struct fg_json *j;

	j = fg_ctl_json_begin(&doc, stdout);
	fg_json_strn(j, "id", id, len);
	fg_json_str(j, "form", fg_msgid_form_str(form));
	fg_json_str(j, "why", form == FG_MSGID_HEADER ? NULL : fg_msgid_error_str(why));
	if (ver) {
		fg_json_bool(j, "has_version", ver->has_version);
		fg_json_u64(j, "version", ver->version);
		fg_json_str(j, "base", ver->base);
	} else {
		fg_json_null(j, "version");
		fg_json_null(j, "base");
	}
	fg_json_str(j, "successor", succ);
	fg_ctl_json_end(&doc);
}

static int msgid_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "date-syntax", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct fg_ctl_command *cmd = &fg_ctl_cmd_msgid;
	struct fg_msgid_version ver;
	enum fg_msgid_error why;
	enum fg_msgid_form form;
	char succ[FG_MSGID_MAX + 1];
	uint8_t rnd[9];
	bool json = false, has_ver, has_succ = false;
	const char *id;
	size_t len;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 'h') {
			fg_ctl_usage(cmd, stdout);
			return FG_CTL_EXIT_OK;
		} else {
			fg_ctl_usage(cmd, stderr);
			return FG_CTL_EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return fg_ctl_fail(cmd, "give exactly one Message-ID (quote it: '<id@host>')");
	id = argv[optind];
	len = strlen(id);
	form = fg_msgid_classify(id, len, &why);
	has_ver = form == FG_MSGID_HEADER && fg_msgid_version_parse(id, len, &ver) == 0;
	if (has_ver && getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return fg_ctl_fail(cmd, "getrandom: %s", strerror(errno));
	if (has_ver)
		has_succ = fg_msgid_successor(id, len, rnd, sizeof(rnd), succ, sizeof(succ)) > 0;
	if (json)
		msgid_json(id, len, form, why, has_ver ? &ver : NULL, has_succ ? succ : NULL);
	else
		msgid_text(id, len, form, why, has_ver ? &ver : NULL, has_succ ? succ : NULL);
	return form == FG_MSGID_HEADER ? FG_CTL_EXIT_OK : FG_CTL_EXIT_NO;
}

const struct fg_ctl_command fg_ctl_cmd_msgid = {
	.name = "msgid",
	.args = "[--json] '<ID>'",
	.summary = "say whether a Message-ID is valid, its $v=N version parts and a successor",
	.help =
	"  --json   one JSON object instead of text\n"
	"\n"
	"Forms: header (RFC 5536 3.1.3, valid anywhere), wire form only (RFC 3977 3.6:\n"
	"a valid command argument, refused in a Message-ID header), invalid.\n"
	"The successor follows seed 000: $v=N+1 (or $v=1) and a fresh random\n"
	"dollars-sequence that never starts with \"$<letter>=\".\n"
	"Exit status: 0 header form, 1 wire form only or invalid, 2 usage error.\n",
	.run = msgid_run,
};
