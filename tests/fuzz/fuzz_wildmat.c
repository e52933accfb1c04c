/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wildmat.c — the wildmat matcher against arbitrary bytes.
 *
 * Input: a pattern, a newline, then a name (the rest). Beyond "no crash,
 * no overread", the target checks properties that can fail:
 *   - a Newsgroups value of one name gives the same answer as that name;
 *   - for a valid ASCII pattern and name, the iterative matcher agrees
 *     with an independent reference: a dynamic-programming matcher over
 *     the pattern's items, written from the syntax in wildmat.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/wildmat.h"

#define REF_MAX 64

struct item {
	char kind;		/* '*', '?', '[' or 'l' (literal) */
	char lit;
	bool negate;
	bool set[128];
};

/* Items of one pattern [p, pe) of a valid ASCII wildmat; count or -1. */
static int ref_items(const char *p, const char *pe, struct item *it, int max)
{
	int n = 0;

	while (p < pe) {
		struct item *x = &it[n];

		if (n == max)
			return -1;
		memset(x, 0, sizeof(*x));
		x->kind = *p == '*' || *p == '?' || *p == '[' ? *p : 'l';
		if (*p == '\\') {
			x->lit = p[1];
			p += 2;
		} else if (*p == '[') {
			p++;
			if (*p == '^') {
				x->negate = true;
				p++;
			}
			for (bool first = true; first || *p != ']'; first = false) {
				char lo = *p++, hi = lo;

				if (p[0] == '-' && p[1] != ']') {
					hi = p[1];
					p += 2;
				}
				for (int c = lo; c <= hi; c++)
					x->set[c] = true;
			}
			p++;
		} else {
			x->lit = *p++;
		}
		n++;
	}
	return n;
}

static bool ref_one(const struct item *it, int n, const char *t, size_t tl)
{
	/* m[i][j]: items from i match the name from j */
	static bool m[REF_MAX + 1][REF_MAX + 1];

	for (int i = n; i >= 0; i--) {
		for (int j = (int)tl; j >= 0; j--) {
			const struct item *x = &it[i];
			bool more = j < (int)tl;

			if (i == n)
				m[i][j] = j == (int)tl;
			else if (x->kind == '*')
				m[i][j] = m[i + 1][j] || (more && m[i][j + 1]);
			else if (x->kind == '?')
				m[i][j] = more && m[i + 1][j + 1];
			else if (x->kind == '[')
				m[i][j] = more && x->set[(int)t[j]] != x->negate && m[i + 1][j + 1];
			else
				m[i][j] = more && t[j] == x->lit && m[i + 1][j + 1];
		}
	}
	return m[0][0];
}

/* The reference verdict, or -1 when the input is out of its reach. */
static int ref_eval(const char *pat, const char *t, size_t tl)
{
	static struct item it[REF_MAX];
	int res = FG_WILDMAT_NONE;
	const char *p = pat;

	if (tl > REF_MAX)
		return -1;
	for (size_t i = 0; i < tl; i++)
		if ((unsigned char)t[i] >= 0x80)
			return -1;
	for (;;) {
		int on = FG_WILDMAT_MATCH, n;
		const char *pe = p;

		if (*p == '!' || *p == '@')
			on = *p++ == '!' ? FG_WILDMAT_NONE : FG_WILDMAT_POISON;
		/* the pattern's end: a "," outside a class, not escaped */
		for (pe = p; *pe && *pe != ','; pe++) {
			if (*pe == '\\')
				pe++;
			else if (*pe == '[')
				pe = strchr(pe + (pe[1] == '^') + 2, ']');
		}
		n = ref_items(p, pe, it, REF_MAX);
		if (n < 0)
			return -1;
		if (ref_one(it, n, t, tl))
			res = on;
		if (!*pe)
			return res;
		p = pe + 1;
	}
}

/* A non-empty name with no separator: a Newsgroups value of one group. */
static bool one_group(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (strchr(", \t\r\n", name[i]) || name[i] == '\0')
			return false;
	return len > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl ? (size_t)(nl - data) : size, off;
	const char *name = (const char *)data + (nl ? plen + 1 : size), *why;
	size_t nlen = size - (size_t)(name - (const char *)data);
	char *pat = malloc(plen + 1);
	enum fg_wildmat_result r, g;
	bool ascii = true;
	int ref;

	if (!pat)
		return 0;
	memcpy(pat, data, plen);
	pat[plen] = '\0';
	r = fg_wildmat_eval(pat, name, nlen);
	g = fg_wildmat_groups(pat, name, nlen);
	if (one_group(name, nlen) && g != r)
		abort();
	for (size_t i = 0; i < plen; i++)
		ascii = ascii && data[i] && data[i] < 0x80;
	if (ascii && strlen(pat) == plen && fg_wildmat_check(pat, &off, &why) == 0) {
		ref = ref_eval(pat, name, nlen);
		if (ref >= 0 && ref != (int)r)
			abort();
	}
	free(pat);
	return 0;
}
