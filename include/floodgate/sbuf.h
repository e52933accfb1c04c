/* SPDX-License-Identifier: MIT */
/*
 * sbuf.h — a growable text buffer and a JSON writer on top of it, for the
 * control plane's replies (control socket, /stats.json, /metrics, the
 * verdict log's lines).
 *
 * Allocation failure is sticky: the buffer stops growing, `failed` is
 * set, and the caller checks it once at the end instead of after every
 * append. The text is always NUL-terminated when len < cap.
 *
 * JSON strings escape '"', '\\' and every octet below 0x20 or above 0x7e
 * (as \u00XX), so any octet string — a hostile Message-ID, a file name —
 * yields valid JSON.
 */
#ifndef FLOODGATE_SBUF_H
#define FLOODGATE_SBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"

struct fg_sbuf {
	char *p;
	size_t len;
	size_t cap;
	bool failed;
};

void fg_sbuf_init(struct fg_sbuf *b);
void fg_sbuf_free(struct fg_sbuf *b);
void fg_sbuf_reset(struct fg_sbuf *b);
void fg_sbuf_put(struct fg_sbuf *b, const void *p, size_t n);
void fg_sbuf_puts(struct fg_sbuf *b, const char *s);
void fg_sbuf_printf(struct fg_sbuf *b, const char *fmt, ...) FG_PRINTF(2, 3);
/* A JSON string literal, quotes included. */
void fg_sbuf_json_str(struct fg_sbuf *b, const char *s, size_t n);
/* "2026-11-29T16:30:00Z" (RFC 3339, UTC). */
void fg_sbuf_time(struct fg_sbuf *b, fg_time_t t);

/* JSON writer: keys are ignored inside arrays (pass NULL). A string
 * value whose s is NULL is written as null. */
#define FG_JSON_DEPTH 16
struct fg_json {
	struct fg_sbuf *b;
	unsigned depth;
	bool array[FG_JSON_DEPTH];
	bool need_comma[FG_JSON_DEPTH];
};

void fg_json_begin(struct fg_json *j, struct fg_sbuf *b);	/* opens the top object */
void fg_json_end(struct fg_json *j);				/* closes it */
void fg_json_obj(struct fg_json *j, const char *key);
void fg_json_arr(struct fg_json *j, const char *key);
void fg_json_close(struct fg_json *j);			/* the innermost object/array */
void fg_json_str(struct fg_json *j, const char *key, const char *s);
void fg_json_strn(struct fg_json *j, const char *key, const char *s, size_t n);
void fg_json_u64(struct fg_json *j, const char *key, uint64_t v);
void fg_json_i64(struct fg_json *j, const char *key, int64_t v);
void fg_json_f64(struct fg_json *j, const char *key, double v);
void fg_json_bool(struct fg_json *j, const char *key, bool v);
void fg_json_null(struct fg_json *j, const char *key);
/* A time as an RFC 3339 string; t == 0 writes null. */
void fg_json_time(struct fg_json *j, const char *key, fg_time_t t);

#endif /* FLOODGATE_SBUF_H */
