/* SPDX-License-Identifier: MIT */
/*
 * fg-mangen — the keys part of floodgate.conf(5), in scdoc, generated
 * from the parser's key table so that the man page cannot drift from it.
 *
 *   fg-mangen config-keys docs/configuration.md > keys.scd
 *
 * The key table (config_keys.c, walked with fg_config_key_at) decides
 * which keys exist, in which section and order, and their defaults; the
 * words about each key come from its row in docs/configuration.md, the
 * page test_config already holds to the same table. The build fails
 * (exit 1, every problem on stderr) when:
 *   1. a key of the table has no row under its section's heading;
 *   2. a row names a key the table does not have;
 *   3. a key with a default in the table has a default cell that does not
 *      quote it as `default` (the page would tell a different default).
 *
 * The markdown of a cell becomes scdoc: `code` -> *code*, *emphasis* ->
 * _emphasis_, [text](link) -> text; scdoc's own specials (\ * _) are
 * escaped everywhere else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"

#define DOC_MAX (1u << 20)
#define CELLS 4		/* key, type, default, meaning */

struct row {
	const char *line;	/* "| `key` | type | default | meaning |" */
	const char *cell[CELLS];
	size_t len[CELLS];
	bool used;
};

struct doc {
	char *text;
	unsigned errors;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(DOC_MAX + 1);
	size_t n;

	if (!f || !buf) {
		fprintf(stderr, "fg-mangen: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	n = fread(buf, 1, DOC_MAX, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static const char *line_end(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? e : p + strlen(p);
}

/* "### [site]" or "### [peer NAME]": the heading of `section`, or NULL. */
static const char *find_heading(const char *text, const char *section)
{
	size_t n = strlen(section);

	for (const char *p = text; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p))
		if (strncmp(p, "### [", 5) == 0 && strncmp(p + 5, section, n) == 0 &&
		    (p[5 + n] == ']' || p[5 + n] == ' '))
			return p;
	return NULL;
}

/* Split a table row at the '|' outside `code`; false unless CELLS cells. */
static bool split_row(const char *line, struct row *r)
{
	const char *end = line_end(line), *start = line + 1;
	unsigned n = 0;
	bool code = false;

	r->line = line;
	for (const char *p = line + 1; p < end; p++) {
		if (*p == '`')
			code = !code;
		if (*p != '|' || code)
			continue;
		if (n == CELLS)
			return false;
		while (start < p && *start == ' ')
			start++;
		r->cell[n] = start;
		r->len[n] = (size_t)(p - start);
		while (r->len[n] && start[r->len[n] - 1] == ' ')
			r->len[n]--;
		n++;
		start = p + 1;
	}
	return n == CELLS;
}

/* groff -ww warns about any input octet above 127 (man(1) would run
 * preconv first; the page must not need it): the docs' few non-ASCII
 * characters have ASCII stand-ins, and any other fails the build. */
static const struct {
	const char *utf8, *ascii;
} translit[] = {
	{ "\xc2\xb5", "u" },		/* micro sign: "us" */
	{ "\xc3\x97", "x" },		/* multiplication sign */
	{ "\xe2\x80\x94", "-" },	/* em dash */
	{ "\xe2\x80\xa6", "..." },	/* ellipsis */
	{ "\xe2\x88\x92", "-" },	/* minus sign */
};

static unsigned bad_octets;

/* The ASCII for the UTF-8 sequence at s (n octets left); its length in *len. */
static const char *ascii_of(const char *s, size_t n, size_t *len)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(translit); i++) {
		size_t l = strlen(translit[i].utf8);

		if (l <= n && memcmp(s, translit[i].utf8, l) == 0) {
			*len = l;
			return translit[i].ascii;
		}
	}
	return NULL;
}

/* scdoc text from a markdown cell or paragraph. */
static void put_md(const char *s, size_t n)
{
	bool code = false, em = false;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((unsigned char)c >= 0x80) {
			size_t l = 1;
			const char *a = ascii_of(s + i, n - i, &l);

			if (!a) {
				fprintf(stderr, "fg-mangen: a non-ASCII character without an ASCII "
					"stand-in (add it to translit[]): %.*s\n", (int)n, s);
				bad_octets++;
				a = "?";
			}
			fputs(a, stdout);
			i += l - 1;
		} else if (c == '`') {
			code = !code;
			putchar('*');
		} else if (code) {
			if (c == '\\' || c == '*' || c == '_')
				putchar('\\');
			putchar(c);
		} else if (c == '*' && i + 1 < n && s[i + 1] != ' ' && !em) {
			em = true;
			putchar('_');
		} else if (c == '*' && em) {
			em = false;
			putchar('_');
		} else if (c == '[' && memchr(s + i, ']', n - i)) {
			const char *close = memchr(s + i, ']', n - i);

			if (close + 1 < s + n && close[1] == '(' && memchr(close, ')', (size_t)(s + n - close))) {
				put_md(s + i + 1, (size_t)(close - s - i - 1));
				i = (size_t)((const char *)memchr(close, ')', (size_t)(s + n - close)) - s);
			} else {
				putchar('[');
			}
		} else if (c == '\\' && i + 1 < n && strchr("\\`*_[]", s[i + 1])) {
			i++;
			if (s[i] == '\\' || s[i] == '*' || s[i] == '_')
				putchar('\\');
			putchar(s[i]);
		} else {
			if (c == '\\' || c == '*' || c == '_')
				putchar('\\');
			putchar(c);
		}
	}
}

/* The section's rows (up to `cap`) and the paragraph between its heading
 * and its table, which goes out first. */
static unsigned section_rows(struct doc *d, const char *section, struct row *rows, unsigned cap)
{
	const char *h = find_heading(d->text, section), *p;
	unsigned n = 0;
	bool para = false;

	if (!h) {
		fprintf(stderr, "fg-mangen: docs/configuration.md: no \"### [%s\" heading\n", section);
		d->errors++;
		return 0;
	}
	for (p = line_end(h) + 1; *p && *p != '|' && strncmp(p, "### ", 4); p = line_end(p) + 1) {
		size_t len = (size_t)(line_end(p) - p);

		if (len == 0) {
			if (para)
				putchar('\n');
			para = false;
			continue;
		}
		put_md(p, len);
		putchar('\n');
		para = true;
		if (!*line_end(p))
			break;
	}
	if (para)
		putchar('\n');
	/* the header row and the --- row, then the rows */
	for (unsigned skip = 0; *p == '|' && skip < 2; skip++)
		p = *line_end(p) ? line_end(p) + 1 : line_end(p);
	for (; *p == '|' && n < cap; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
		if (!split_row(p, &rows[n]) || rows[n].len[0] < 3 || rows[n].cell[0][0] != '`') {
			fprintf(stderr, "fg-mangen: [%s]: a row that is not | `key` | type | "
				"default | meaning |: %.*s\n", section, (int)(line_end(p) - p), p);
			d->errors++;
			continue;
		}
		rows[n++].used = false;
	}
	return n;
}

static struct row *row_of(struct row *rows, unsigned n, const char *key)
{
	size_t kl = strlen(key);

	for (unsigned i = 0; i < n; i++)
		if (rows[i].len[0] == kl + 2 && strncmp(rows[i].cell[0] + 1, key, kl) == 0)
			return &rows[i];
	return NULL;
}

static void put_key(struct doc *d, const char *section, const char *key, const char *def,
		    struct row *r)
{
	char quoted[512];

	snprintf(quoted, sizeof(quoted), "`%s`", def ? def : "");
	if (def && !memmem(r->cell[2], r->len[2], quoted, strlen(quoted))) {
		fprintf(stderr, "fg-mangen: [%s] %s: the key table's default is %s; the page says "
			"%.*s\n", section, key, quoted, (int)r->len[2], r->cell[2]);
		d->errors++;
	}
	r->used = true;
	printf("*%s*\n\tType: ", key);
	put_md(r->cell[1], r->len[1]);
	printf(". Default: ");
	put_md(r->cell[2], r->len[2]);
	printf(".\n\n\t");
	put_md(r->cell[3], r->len[3]);
	printf("\n\n");
}

static int config_keys(const char *doc_path)
{
	struct doc d = { .text = slurp(doc_path) };
	const char *section, *key, *cur = NULL;
	struct row rows[64];
	unsigned n = 0;

	printf("# SECTIONS AND KEYS\n\n");
	for (unsigned i = 0; fg_config_key_at(i, &section, &key); i++) {
		struct row *r;

		if (!cur || strcmp(cur, section) != 0) {
			for (unsigned j = 0; j < n; j++)
				if (!rows[j].used) {
					fprintf(stderr, "fg-mangen: [%s]: %.*s is not a key the parser "
						"knows\n", cur, (int)rows[j].len[0], rows[j].cell[0]);
					d.errors++;
				}
			cur = section;
			printf("## [%s%s]\n\n", section,
			       !strcmp(section, "peer") || !strcmp(section, "downstream") ? " NAME" : "");
			n = section_rows(&d, section, rows, 64);
		}
		r = row_of(rows, n, key);
		if (!r) {
			fprintf(stderr, "fg-mangen: [%s] %s: no row in %s\n", section, key, doc_path);
			d.errors++;
			continue;
		}
		put_key(&d, section, key, fg_config_key_default(i), r);
	}
	for (unsigned j = 0; j < n; j++)
		if (!rows[j].used) {
			fprintf(stderr, "fg-mangen: [%s]: %.*s is not a key the parser knows\n", cur,
				(int)rows[j].len[0], rows[j].cell[0]);
			d.errors++;
		}
	free(d.text);
	return d.errors || bad_octets ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "config-keys") == 0)
		return config_keys(argv[2]);
	fputs("usage: fg-mangen config-keys docs/configuration.md\n", stderr);
	return 2;
}
