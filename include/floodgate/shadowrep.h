/* SPDX-License-Identifier: MIT */
/*
 * shadowrep.h — shadow mode's figures (shadow.h decides them) and the
 * report file the dataplane writes and `floodctl shadow` reads.
 *
 * The file is text, one item a line, so any build reads what another
 * wrote:
 *
 *   floodgate-shadow 1 <Unix time written>
 *   count <class> <n>            every class: agree, refused-took,
 *                                took-refused, timing
 *   reason <reason-name> <n>     refused-took by floodgate's reason, n > 0
 *   not-compared <n>
 *   followups <n>
 *   gaps <n>
 *   flows <n>
 *   unanchored <n>
 *   sample <class> <ours> <theirs> <reason-name> <message-id>
 *
 * A reader refuses a file whose first line is not the header, and a line
 * it does not know (the format is this one program's, not an interface
 * to extend silently).
 */
#ifndef FLOODGATE_SHADOWREP_H
#define FLOODGATE_SHADOWREP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "floodgate/stats.h"

#define FG_SHADOW_MAGIC "floodgate-shadow"
#define FG_SHADOW_VERSION 1
#define FG_SHADOW_STATUS_FILE "shadow.status"	/* in the data directory */
#define FG_SHADOW_SAMPLES 8
#define FG_SHADOW_ID_MAX 250		/* RFC 5536 3.1.3's 250 octets */

enum fg_shadow_class {
	FG_SHADOW_AGREE,
	FG_SHADOW_REFUSED_TOOK,
	FG_SHADOW_TOOK_REFUSED,
	FG_SHADOW_TIMING,
	FG_SHADOW__CLASSES
};

struct fg_shadow_sample {
	char id[FG_SHADOW_ID_MAX + 1];
	uint16_t ours, theirs;		/* the codes */
	uint8_t reason;			/* enum fg_reason: floodgate's */
};

struct fg_shadow_report {
	uint64_t n[FG_SHADOW__CLASSES];
	uint64_t refused_took[FG_REASON__COUNT];	/* by floodgate's reason */
	uint64_t not_compared;
	uint64_t followups;
	uint64_t gaps;				/* holes in server halves */
	uint64_t flows, unanchored;
	unsigned n_samples[FG_SHADOW__CLASSES];
	struct fg_shadow_sample samples[FG_SHADOW__CLASSES][FG_SHADOW_SAMPLES];
};

/* Operator-facing class names: "agree", "refused-took", ...; -1 unknown. */
const char *fg_shadow_class_name(enum fg_shadow_class c);
int fg_shadow_class_parse(const char *name, size_t len);

/* dst += src, samples kept while there is room. */
void fg_shadow_report_add(struct fg_shadow_report *dst, const struct fg_shadow_report *src);

/* 0 or -errno. */
int fg_shadow_report_write(const struct fg_shadow_report *r, int64_t now, FILE *f);
/* A whole file's text: 0, or -EINVAL at the first line it refuses (*line,
 * 1-based, says which; 0 when the text is empty). */
int fg_shadow_report_parse(const char *text, size_t len, struct fg_shadow_report *out,
			   unsigned *line);

#endif /* FLOODGATE_SHADOWREP_H */
