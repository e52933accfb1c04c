/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c — floodgate.conf from arbitrary bytes.
 *
 * Every input must load or be refused with errors (never a crash, never a
 * read past the input, never a refusal without an error). A config that
 * loads must survive the round trip: load(format(cfg)) gives the same
 * struct, byte for byte, or the target aborts. The first line also goes
 * through each value parser on its own.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floodgate/config.h"

static void value_parsers(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t len = nl ? (size_t)(nl - data) : size;
	char *s = malloc(len + 1);
	struct fg_prefix p;
	struct fg_endpoint ep;
	char buf[64];
	int64_t d;
	uint64_t u;
	bool b;

	if (!s)
		return;
	memcpy(s, data, len);
	s[len] = '\0';
	fg_parse_duration(s, &d);
	fg_parse_duration_ms(s, &d);
	fg_parse_size(s, &u);
	fg_parse_bool(s, &b);
	if (fg_parse_prefix(s, &p) == 0) {
		struct fg_prefix back;

		/* a parsed prefix formats to text that parses to the same prefix */
		if (fg_prefix_format(&p, buf, sizeof(buf)) != 0 ||
		    fg_parse_prefix(buf, &back) != 0 || memcmp(&p, &back, sizeof(p)) != 0)
			abort();
	}
	if (fg_parse_endpoint(s, 119, &ep) == 0) {
		struct fg_endpoint back;

		if (fg_endpoint_format(&ep, buf, sizeof(buf)) != 0 ||
		    fg_parse_endpoint(buf, 0, &back) != 0 || memcmp(&ep, &back, sizeof(ep)) != 0)
			abort();
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fg_config_errors errs;
	static char text[1 << 20];
	struct fg_config *cfg, *back;
	size_t n;

	value_parsers(data, size);
	cfg = fg_config_load_text("fuzz", (const char *)data, size, &errs);
	if (!cfg) {
		if (errs.total == 0 || errs.n == 0)
			abort();
		return 0;
	}
	n = fg_config_format(cfg, text, sizeof(text));
	if (n >= sizeof(text))
		abort();
	back = fg_config_load_text("format", text, n, &errs);
	if (!back || memcmp(cfg, back, sizeof(*cfg)) != 0)
		abort();
	fg_config_free(back);
	fg_config_free(cfg);
	return 0;
}
