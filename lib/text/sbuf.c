/* SPDX-License-Identifier: MIT */
/*
 * sbuf.c — growable text buffer and JSON writer (sbuf.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/sbuf.h"

void fg_sbuf_init(struct fg_sbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void fg_sbuf_free(struct fg_sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void fg_sbuf_reset(struct fg_sbuf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->p)
		b->p[0] = '\0';
}

/* Room for n more octets and a NUL; false (sticky) if it cannot grow. */
static bool reserve(struct fg_sbuf *b, size_t n)
{
	size_t want, cap;
	char *np;

	if (b->failed)
		return false;
	want = b->len + n + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->failed = true;
		return false;
	}
	b->p = np;
	b->cap = cap;
	return true;
}

void fg_sbuf_put(struct fg_sbuf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void fg_sbuf_puts(struct fg_sbuf *b, const char *s)
{
	fg_sbuf_put(b, s, strlen(s));
}

void fg_sbuf_printf(struct fg_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void fg_sbuf_json_str(struct fg_sbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	fg_sbuf_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			fg_sbuf_put(b, esc, 2);
		} else if (c < 0x20 || c > 0x7e) {
			fg_sbuf_put(b, esc, 6);
		} else {
			fg_sbuf_put(b, s + i, 1);
		}
	}
	fg_sbuf_put(b, "\"", 1);
}

void fg_sbuf_time(struct fg_sbuf *b, fg_time_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[40];

	if (!gmtime_r(&tt, &tm)) {
		fg_sbuf_printf(b, "@%lld", (long long)t);
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fg_sbuf_puts(b, buf);
}

/* ---- JSON ---- */

static void json_key(struct fg_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fg_sbuf_put(j->b, ",", 1);
	j->need_comma[j->depth] = true;
	if (!j->array[j->depth] && key) {
		fg_sbuf_json_str(j->b, key, strlen(key));
		fg_sbuf_put(j->b, ":", 1);
	}
}

static void json_open(struct fg_json *j, const char *key, bool array)
{
	json_key(j, key);
	fg_sbuf_put(j->b, array ? "[" : "{", 1);
	FG_ASSERT(j->depth + 1 < FG_JSON_DEPTH);
	j->depth++;
	j->array[j->depth] = array;
	j->need_comma[j->depth] = false;
}

void fg_json_begin(struct fg_json *j, struct fg_sbuf *b)
{
	memset(j, 0, sizeof(*j));
	j->b = b;
	fg_sbuf_put(b, "{", 1);
}

void fg_json_end(struct fg_json *j)
{
	while (j->depth)
		fg_json_close(j);
	fg_sbuf_put(j->b, "}", 1);
}

void fg_json_obj(struct fg_json *j, const char *key)
{
	json_open(j, key, false);
}

void fg_json_arr(struct fg_json *j, const char *key)
{
	json_open(j, key, true);
}

void fg_json_close(struct fg_json *j)
{
	FG_ASSERT(j->depth > 0);
	fg_sbuf_put(j->b, j->array[j->depth] ? "]" : "}", 1);
	j->depth--;
}

void fg_json_strn(struct fg_json *j, const char *key, const char *s, size_t n)
{
	if (!s) {
		fg_json_null(j, key);
		return;
	}
	json_key(j, key);
	fg_sbuf_json_str(j->b, s, n);
}

void fg_json_str(struct fg_json *j, const char *key, const char *s)
{
	if (!s) {
		fg_json_null(j, key);
		return;
	}
	fg_json_strn(j, key, s, strlen(s));
}

void fg_json_u64(struct fg_json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fg_sbuf_printf(j->b, "%llu", (unsigned long long)v);
}

void fg_json_i64(struct fg_json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fg_sbuf_printf(j->b, "%lld", (long long)v);
}

void fg_json_f64(struct fg_json *j, const char *key, double v)
{
	json_key(j, key);
	if (isfinite(v))
		fg_sbuf_printf(j->b, "%.6g", v);
	else
		fg_sbuf_puts(j->b, "null");	/* JSON has no NaN or infinity */
}

void fg_json_bool(struct fg_json *j, const char *key, bool v)
{
	json_key(j, key);
	fg_sbuf_puts(j->b, v ? "true" : "false");
}

void fg_json_null(struct fg_json *j, const char *key)
{
	json_key(j, key);
	fg_sbuf_puts(j->b, "null");
}

void fg_json_time(struct fg_json *j, const char *key, fg_time_t t)
{
	if (t == 0) {
		fg_json_null(j, key);
		return;
	}
	json_key(j, key);
	fg_sbuf_put(j->b, "\"", 1);
	fg_sbuf_time(j->b, t);
	fg_sbuf_put(j->b, "\"", 1);
}
