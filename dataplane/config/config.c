/* SPDX-License-Identifier: MIT */
/*
 * config.c — loading floodgate.conf: lines, sections, keys, defaults; the
 * checks that span keys (the RFC 5537 date rules among them) are
 * config_check.c's.
 *
 * Loading is four passes over one zeroed struct:
 *   1. every line is split into words and applied through the key table
 *      (config_keys.c); each key records the line that set it, so later
 *      checks can name it;
 *   2. keys that no line set get the table's default text;
 *   3. derived defaults: server-name (host name), path-identity (server
 *      name), retention (cutoff + 1 d), warmup (cutoff), rx-queues
 *      (workers);
 *   4. validation across keys and sections (config_check.c).
 * A problem never stops the load: each is recorded as "file:line: key:
 * message" and the load goes on, so one run lists every mistake. Checks
 * that involve a key whose own line was refused are skipped (the real
 * error is already listed; a second one about a default would mislead).
 * The caller gets the struct only when nothing was refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "config_int.h"

#define CFG_LINE_MAX 4096
#define CFG_MAX_WORDS 128
#define CFG_FILE_MAX (16u << 20)

#define SEC_NONE (-1)	/* before the first section header */
#define SEC_SKIP (-2)	/* inside a refused header: its keys are ignored */

/* ---------------------------------------------------------------- errors */

static void add_msg(struct parse *ps, bool warn, unsigned line, const char *key,
		    const char *fmt, va_list ap)
{
	struct fg_config_errors *e = ps->errs;
	struct fg_config_error *slot = NULL;
	char msg[400];
	size_t n;
	int w;

	if (warn && e->n_warn < FG_ARRAY_SIZE(e->warn))
		slot = &e->warn[e->n_warn++];
	if (!warn && e->n < FG_ARRAY_SIZE(e->err))
		slot = &e->err[e->n++];
	if (!warn)
		e->total++;
	if (!slot)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	w = line ? snprintf(slot->text, sizeof(slot->text), "%s:%u: ", ps->name, line)
		 : snprintf(slot->text, sizeof(slot->text), "%s: ", ps->name);
	n = w < 0 ? 0 : FG_MIN((size_t)w, sizeof(slot->text) - 1);
	slot->line = line;
	slot->key_off = (uint16_t)n;
	slot->key_len = (uint16_t)FG_MIN(strlen(key), sizeof(slot->text) - 1 - n);
	snprintf(slot->text + n, sizeof(slot->text) - n, "%s: %s", key, msg);
	slot->msg_off = (uint16_t)FG_MIN(n + strlen(key) + 2, strlen(slot->text));
}

void cfg_error_at(struct parse *ps, unsigned line, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(ps, false, line, key, fmt, ap);
	va_end(ap);
}

void cfg_warn_at(struct parse *ps, unsigned line, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(ps, true, line, key, fmt, ap);
	va_end(ap);
}

void fg_config_errors_log(const struct fg_config_errors *errs)
{
	for (unsigned i = 0; i < errs->n; i++)
		FG_LOG_ERR("config", "%s", errs->err[i].text);
	if (errs->total > errs->n)
		FG_LOG_ERR("config", "... and %u more errors", errs->total - errs->n);
	for (unsigned i = 0; i < errs->n_warn; i++)
		FG_LOG_WARN("config", "%s", errs->warn[i].text);
}

int fg_config_log_open(const struct fg_config *cfg, const char *ident)
{
	int rc = fg_log_open(cfg->log_target, cfg->log_timestamps, ident, NULL);

	if (rc < 0)
		FG_LOG_ERR("config", "[log] target: %s; logging to stderr", strerror(-rc));
	return rc;
}

/* ---------------------------------------------------------------- words */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One "..." word from s (at the opening quote); its end, or NULL. */
static const char *quoted_word(const char *s, const char *end, char **out, const char **why)
{
	char *o = *out;

	for (s++; s < end && *s != '"'; s++) {
		if (*s == '\\' && s + 1 < end && (s[1] == '"' || s[1] == '\\'))
			s++;
		*o++ = *s;
	}
	if (s == end) {
		*why = "unterminated quote";
		return NULL;
	}
	s++;
	if (s < end && !is_blank(*s)) {
		*why = "text after a closing quote (put a blank after it)";
		return NULL;
	}
	*out = o;
	return s;
}

int cfg_split_words(const char *s, size_t len, char *buf, size_t bufsz, char **words,
		    unsigned max, const char **why)
{
	const char *end = s + len;
	char *o = buf;
	unsigned n = 0;

	/* every word is at most as long as its source, plus a NUL */
	if (bufsz < len + 1) {
		*why = "line too long";
		return -ENOSPC;
	}
	for (;;) {
		while (s < end && is_blank(*s))
			s++;
		if (s == end || *s == '#')
			break;
		if (n == max) {
			*why = "too many words on one line";
			return -E2BIG;
		}
		words[n++] = o;
		if (*s == '"') {
			s = quoted_word(s, end, &o, why);
			if (!s)
				return -EINVAL;
		} else {
			for (; s < end && !is_blank(*s); s++) {
				if (*s == '"') {
					*why = "a quote inside a word (quote the whole word)";
					return -EINVAL;
				}
				*o++ = *s;
			}
		}
		*o++ = '\0';
	}
	return (int)n;
}

int fg_config_split_args(const char *args, char *buf, size_t buflen, char **argv,
			 unsigned max)
{
	const char *why;

	return cfg_split_words(args, strlen(args), buf, buflen, argv, max, &why);
}

/* ---------------------------------------------------------------- lines */

bool cfg_valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') && !(*s >= '0' && *s <= '9') &&
		    *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* Open [peer NAME] or [downstream NAME]: its index, or -1 (error given). */
static int open_instance(struct parse *ps, enum cfg_section sec, const char *name,
			 const char *hdr)
{
	struct fg_config *cfg = ps->cfg;
	bool peer = sec == SEC_PEER;
	unsigned n = peer ? cfg->n_peer : cfg->n_downstream;
	unsigned max = peer ? FG_CONFIG_MAX_PEERS : FG_CONFIG_MAX_DOWNSTREAMS;

	if (!cfg_valid_name(name) || strlen(name) >= FG_CONFIG_NAME_MAX) {
		cfg_error_at(ps, ps->line, hdr, "a name is 1-%d letters, digits, \"-\", \"_\" "
			     "or \".\"", FG_CONFIG_NAME_MAX - 1);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *other = peer ? cfg->peer[i].name : cfg->downstream[i].name;

		if (strcmp(other, name) == 0) {
			cfg_error_at(ps, ps->line, hdr, "duplicate %s name (first at line %u)",
				     cfg_section_names[sec],
				     ps->hdr_line[peer ? SLOT_PEER(i) : SLOT_DS(i)]);
			return -1;
		}
	}
	if (n == max) {
		cfg_error_at(ps, ps->line, hdr, "too many %s sections (at most %u)",
			     cfg_section_names[sec], max);
		return -1;
	}
	memcpy(peer ? cfg->peer[n].name : cfg->downstream[n].name, name, strlen(name) + 1);
	ps->hdr_line[peer ? SLOT_PEER(n) : SLOT_DS(n)] = ps->line;
	if (peer)
		cfg->n_peer++;
	else
		cfg->n_downstream++;
	return (int)n;
}

/* "[name]" or "[name arg]", then nothing but a comment. */
static void parse_header(struct parse *ps, const char *s, const char *end)
{
	const char *close = memchr(s, ']', (size_t)(end - s)), *why = NULL;
	char buf[CFG_LINE_MAX + 1], hdr[FG_CONFIG_NAME_MAX * 2 + 16];
	char *w[3];
	int n, sec = SEC_SKIP, idx;

	ps->sec = SEC_SKIP;
	snprintf(hdr, sizeof(hdr), "%.*s", close ? (int)(close - s + 1) : (int)(end - s), s);
	if (!close) {
		cfg_error_at(ps, ps->line, hdr, "section header without \"]\"");
		return;
	}
	n = cfg_split_words(close + 1, (size_t)(end - close - 1), buf, sizeof(buf), w, 3, &why);
	if (n != 0) {
		cfg_error_at(ps, ps->line, hdr, "text after the section header");
		return;
	}
	n = cfg_split_words(s + 1, (size_t)(close - s - 1), buf, sizeof(buf), w, 3, &why);
	for (int i = 0; n > 0 && i < SEC__COUNT; i++)
		if (strcmp(w[0], cfg_section_names[i]) == 0)
			sec = i;
	if (n <= 0 || sec == SEC_SKIP) {
		cfg_error_at(ps, ps->line, hdr, "unknown section (known: site, rules, session, "
			     "history, persistence, stats, dataplane, log, cluster, peer NAME, "
			     "downstream NAME)");
		return;
	}
	if (sec == SEC_PEER || sec == SEC_DOWNSTREAM) {
		if (n != 2) {
			cfg_error_at(ps, ps->line, hdr, "needs exactly one name: [%s NAME]", w[0]);
			return;
		}
		idx = open_instance(ps, sec, w[1], hdr);
		if (idx < 0)
			return;
		ps->idx = (unsigned)idx;
	} else if (n != 1) {
		cfg_error_at(ps, ps->line, hdr, "[%s] takes no name", w[0]);
		return;
	}
	ps->sec = sec;
}

static struct key_state *key_state(struct parse *ps, enum cfg_section sec, unsigned idx,
				   int key)
{
	unsigned slot = sec == SEC_PEER ? SLOT_PEER(idx) :
			sec == SEC_DOWNSTREAM ? SLOT_DS(idx) : 0;

	return &ps->ks[slot][key];
}

/* A key line inside the current section. */
static void parse_key(struct parse *ps, char **w, unsigned n)
{
	const struct cfg_key *k;
	struct key_state *st;
	char why[200];
	int key, other = -1;
	unsigned n_addr;

	if (ps->sec == SEC_SKIP)
		return;
	if (ps->sec == SEC_NONE) {
		cfg_error_at(ps, ps->line, w[0], "key outside any section (start with [site])");
		return;
	}
	key = cfg_key_find(ps->sec, w[0]);
	if (key < 0) {
		for (int s = 0; s < SEC__COUNT && other < 0; s++)
			if (cfg_key_find(s, w[0]) >= 0)
				other = s;
		if (other >= 0)
			cfg_error_at(ps, ps->line, w[0], "unknown key in [%s] (it belongs in [%s])",
				     cfg_section_names[ps->sec], cfg_section_names[other]);
		else
			cfg_error_at(ps, ps->line, w[0], "unknown key in [%s]",
				     cfg_section_names[ps->sec]);
		return;
	}
	k = &cfg_keys[key];
	st = key_state(ps, ps->sec, ps->idx, key);
	if (st->line && !(k->flags & F_REPEAT)) {
		cfg_error_at(ps, ps->line, w[0], "already set at line %u", st->line);
		return;
	}
	n_addr = k->type == T_PEER_ADDRS ? ps->cfg->peer[ps->idx].n_addr : 0;
	st->line = ps->line;
	if (cfg_key_set(k, cfg_key_base(ps->cfg, ps->sec, ps->idx), w + 1, n - 1, why,
			sizeof(why)) < 0) {
		st->bad = true;
		cfg_error_at(ps, ps->line, w[0], "%s", why);
	}
	/* each peer address remembers its line, for the overlap checks */
	if (k->type == T_PEER_ADDRS)
		for (unsigned i = n_addr; i < ps->cfg->peer[ps->idx].n_addr; i++)
			ps->addr_line[ps->idx][i] = ps->line;
}

static void parse_line(struct parse *ps, const char *s, size_t len)
{
	char buf[CFG_LINE_MAX + 1];
	char *w[CFG_MAX_WORDS];
	const char *why = NULL, *end;
	int n;

	if (len && s[len - 1] == '\r')
		len--;
	end = s + len;
	for (const char *c = s; c < end; c++) {
		if ((unsigned char)*c < 0x20 && *c != '\t') {
			cfg_error_at(ps, ps->line, "line", "control character 0x%02x", *c);
			return;
		}
	}
	while (s < end && is_blank(*s))
		s++;
	if (s == end || *s == '#')
		return;
	if (len > CFG_LINE_MAX) {
		cfg_error_at(ps, ps->line, "line", "longer than %d octets", CFG_LINE_MAX);
		/* a refused header: its keys must not land in the section before */
		if (*s == '[')
			ps->sec = SEC_SKIP;
		return;
	}
	if (*s == '[') {
		parse_header(ps, s, end);
		return;
	}
	n = cfg_split_words(s, (size_t)(end - s), buf, sizeof(buf), w, CFG_MAX_WORDS, &why);
	if (n < 0) {
		char key[40];
		int k;

		snprintf(key, sizeof(key), "%.*s", (int)strcspn(s, " \t\""), s);
		cfg_error_at(ps, ps->line, key, "%s", why);
		/* the key's value was refused: no default, no follow-on errors */
		k = ps->sec >= 0 ? cfg_key_find(ps->sec, key) : -1;
		if (k >= 0) {
			key_state(ps, ps->sec, ps->idx, k)->line = ps->line;
			key_state(ps, ps->sec, ps->idx, k)->bad = true;
		}
		return;
	}
	parse_key(ps, w, (unsigned)n);
}

/* ---------------------------------------------------------------- defaults */

/* Set key `key` of one struct from text (a default), replacing whatever
 * a refused line left in it (part of a list): cannot fail. */
static void set_from_text(void *base, int key, const char *text)
{
	const struct cfg_key *k = &cfg_keys[key];
	char buf[CFG_LINE_MAX + 1], why[200];
	char *w[CFG_MAX_WORDS];
	const char *e;
	int n = cfg_split_words(text, strlen(text), buf, sizeof(buf), w, CFG_MAX_WORDS, &e);

	FG_ASSERT(n > 0);
	memset((char *)base + k->off, 0, k->size);
	if (k->cnt)
		memset((char *)base + k->cnt, 0, sizeof(unsigned));
	FG_ASSERT(cfg_key_set(&cfg_keys[key], base, w, (unsigned)n, why, sizeof(why)) == 0);
}

static bool unset(struct parse *ps, enum cfg_section sec, unsigned idx, const char *name)
{
	struct key_state *st = key_state(ps, sec, idx, cfg_key_find(sec, name));

	return !st->line || st->bad;
}

bool cfg_refused(struct parse *ps, enum cfg_section sec, unsigned idx, const char *name)
{
	return key_state(ps, sec, idx, cfg_key_find(sec, name))->bad;
}

unsigned cfg_line_of(struct parse *ps, enum cfg_section sec, unsigned idx,
		     const char *name)
{
	return key_state(ps, sec, idx, cfg_key_find(sec, name))->line;
}

static void apply_table_defaults(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;

	for (unsigned key = 0; key < cfg_n_keys; key++) {
		const struct cfg_key *k = &cfg_keys[key];
		unsigned n = k->section == SEC_PEER ? cfg->n_peer :
			     k->section == SEC_DOWNSTREAM ? cfg->n_downstream : 1;

		if (!k->def)
			continue;
		for (unsigned i = 0; i < n; i++) {
			struct key_state *st = key_state(ps, k->section, i, (int)key);

			if (!st->line || st->bad)
				set_from_text(cfg_key_base(cfg, k->section, i), (int)key, k->def);
		}
	}
}

static void apply_derived_defaults(struct parse *ps)
{
	struct fg_config *cfg = ps->cfg;
	char host[256] = "";
	char why[200], *w[1];
	int key;

	if (unset(ps, SEC_SITE, 0, "server-name")) {
		key = cfg_key_find(SEC_SITE, "server-name");
		w[0] = host;
		if (gethostname(host, sizeof(host) - 1) < 0 ||
		    cfg_key_set(&cfg_keys[key], cfg, w, 1, why, sizeof(why)) < 0) {
			cfg_warn_at(ps, 0, "server-name", "the host name \"%s\" is not usable (%s); "
				    "using \"floodgate\"", host, why);
			set_from_text(cfg, key, "floodgate");
		}
	}
	if (unset(ps, SEC_SITE, 0, "path-identity") && !cfg_refused(ps, SEC_SITE, 0, "path-identity")) {
		key = cfg_key_find(SEC_SITE, "path-identity");
		w[0] = cfg->server_name;
		if (cfg_key_set(&cfg_keys[key], cfg, w, 1, why, sizeof(why)) < 0)
			cfg_error_at(ps, 0, "path-identity", "not set, and the server name cannot "
				     "serve: %s", why);
	}
	/* RFC 5537 3.3: first-seen retention is at least cutoff + 24 h; INN's
	 * /remember/ keeps one day beyond artcutoff. */
	if (unset(ps, SEC_RULES, 0, "retention"))
		cfg->retention = cfg->cutoff <= INT64_MAX - CFG_DAY ? cfg->cutoff + CFG_DAY : INT64_MAX;
	if (unset(ps, SEC_PERSISTENCE, 0, "warmup"))
		cfg->warmup = cfg->cutoff;
	if (unset(ps, SEC_DATAPLANE, 0, "rx-queues"))
		cfg->rx_queues = cfg->workers;
	for (unsigned d = 0; d < cfg->n_downstream; d++) {
		struct fg_config_downstream *ds = &cfg->downstream[d];

		if (unset(ps, SEC_DOWNSTREAM, d, "id"))
			memcpy(ds->id, ds->name, sizeof(ds->id));
		ds->ident = fg_config_ident(ds->id);
		/* a quarter of the shared queue behind: parked; kept for it while
		 * parked: as much again as the shared queue */
		if (unset(ps, SEC_DOWNSTREAM, d, "backlog-bytes"))
			ds->backlog_bytes = cfg->queue_limit / 4;
		if (unset(ps, SEC_DOWNSTREAM, d, "backlog-disk"))
			ds->backlog_disk = cfg->queue_limit;
	}
}

uint64_t fg_config_ident(const char *id)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);	/* FNV-1a offset basis */

	for (; *id; id++) {
		h ^= (uint8_t)*id;
		h *= UINT64_C(0x100000001b3);		/* FNV prime */
	}
	return h;
}

/* ---------------------------------------------------------------- load */

struct fg_config *fg_config_load_text(const char *name, const char *text, size_t len,
				       struct fg_config_errors *errs)
{
	struct fg_config *cfg = calloc(1, sizeof(*cfg));
	struct parse *ps = calloc(1, sizeof(*ps));
	const char *s = text, *end = text + len, *nl;

	FG_ASSERT(cfg_n_keys <= CFG_MAX_KEYS);
	memset(errs, 0, sizeof(*errs));
	if (!cfg || !ps) {
		snprintf(errs->err[0].text, sizeof(errs->err[0].text), "%s: out of memory", name);
		errs->n = errs->total = 1;
		goto out_free_cfg;
	}
	ps->name = name;
	ps->cfg = cfg;
	ps->errs = errs;
	ps->sec = SEC_NONE;
	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		ps->line++;
		parse_line(ps, s, nl ? (size_t)(nl - s) : (size_t)(end - s));
		s = nl ? nl + 1 : end;
	}
	apply_table_defaults(ps);
	apply_derived_defaults(ps);
	cfg_read_credentials(ps);
	cfg_check(ps);
	if (errs->total == 0)
		goto out_free_parse;
out_free_cfg:
	fg_config_free(cfg);
	cfg = NULL;
out_free_parse:
	free(ps);
	return cfg;
}

struct fg_config *fg_config_load_file(const char *path, struct fg_config_errors *errs)
{
	struct fg_config *cfg = NULL;
	struct stat st;
	char *text = NULL;
	ssize_t got;
	size_t len = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)CFG_FILE_MAX) {
		err = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		goto out_close;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		err = ENOMEM;
		goto out_close;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, text + len, (size_t)st.st_size - len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = errno;
			goto out_free_text;
		}
		len += (size_t)got;
	}
	cfg = fg_config_load_text(path, text, len, errs);
out_free_text:
	free(text);
out_close:
	if (fd >= 0)
		close(fd);
	if (err) {
		memset(errs, 0, sizeof(*errs));
		snprintf(errs->err[0].text, sizeof(errs->err[0].text), "%s: cannot read: %s%s",
			 path, strerror(err), err == EFBIG ? " (at most 16 MiB)" :
			 err == EINVAL ? " (not a regular file)" : "");
		errs->n = errs->total = 1;
	}
	return cfg;
}

struct fg_config *fg_config_load_default(struct fg_config_errors *errs)
{
	return fg_config_load_text("<default>", fg_config_default_text,
				   strlen(fg_config_default_text), errs);
}

void fg_config_free(struct fg_config *cfg)
{
	if (!cfg)
		return;
	/* the peers' passwords do not outlive the configuration in memory */
	for (unsigned p = 0; p < FG_CONFIG_MAX_PEERS; p++)
		explicit_bzero(&cfg->peer[p].cred, sizeof(cfg->peer[p].cred));
	free(cfg);
}

/* ---------------------------------------------------------------- lookup */

/*
 * Longest-prefix match over every address of every peer. Called once per
 * accepted connection, not per packet, so a linear scan over at most
 * 256 x 16 prefixes is fine; load-time checks guarantee that no two peers
 * share a prefix, so the answer is unique.
 */
const struct fg_config_peer *fg_config_find_peer(const struct fg_config *cfg, int family,
						 const void *addr)
{
	const struct fg_config_peer *best = NULL;
	int best_len = -1;

	for (unsigned p = 0; p < cfg->n_peer; p++)
		for (unsigned i = 0; i < cfg->peer[p].n_addr; i++)
			if (cfg->peer[p].addr[i].len > best_len &&
			    fg_prefix_contains(&cfg->peer[p].addr[i], family, addr)) {
				best = &cfg->peer[p];
				best_len = cfg->peer[p].addr[i].len;
			}
	return best;
}

const struct fg_config_peer *fg_config_peer_by_name(const struct fg_config *cfg,
						    const char *name)
{
	for (unsigned p = 0; p < cfg->n_peer; p++)
		if (strcmp(cfg->peer[p].name, name) == 0)
			return &cfg->peer[p];
	return NULL;
}

/* ---------------------------------------------------------------- format */

static void format_section(struct cfg_text *t, enum cfg_section sec, const void *base)
{
	for (unsigned key = 0; key < cfg_n_keys; key++)
		if (cfg_keys[key].section == sec)
			cfg_key_format(t, &cfg_keys[key], base);
}

size_t fg_config_format(const struct fg_config *cfg, char *buf, size_t len)
{
	struct cfg_text t = { .buf = buf, .size = len };

	if (len)
		buf[0] = '\0';
	for (int sec = 0; sec < SEC_PEER; sec++) {
		cfg_text_printf(&t, "%s[%s]\n", sec ? "\n" : "", cfg_section_names[sec]);
		format_section(&t, sec, cfg);
	}
	for (unsigned d = 0; d < cfg->n_downstream; d++) {
		cfg_text_printf(&t, "\n[downstream %s]\n", cfg->downstream[d].name);
		format_section(&t, SEC_DOWNSTREAM, &cfg->downstream[d]);
	}
	for (unsigned p = 0; p < cfg->n_peer; p++) {
		cfg_text_printf(&t, "\n[peer %s]\n", cfg->peer[p].name);
		format_section(&t, SEC_PEER, &cfg->peer[p]);
	}
	return t.len;
}
