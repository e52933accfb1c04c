/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "fgtest.h"

static void logcap_sink(enum fg_log_level level, const char *component,
			const char *msg, void *arg)
{
	struct fg_test_logcap *cap = arg;
	int n;

	n = snprintf(cap->text + cap->len, sizeof(cap->text) - cap->len, "%s %s: %s\n",
		     fg_log_level_name(level), component ? component : "-", msg);
	if (n > 0) {
		cap->len += (size_t)n;
		if (cap->len >= sizeof(cap->text))
			cap->len = sizeof(cap->text) - 1;
	}
	cap->lines++;
}

void fg_test_logcap_start(struct fg_test_logcap *cap)
{
	memset(cap, 0, sizeof(*cap));
	fg_log_set_sink(logcap_sink, cap);
}

void fg_test_logcap_stop(void)
{
	fg_log_set_sink(NULL, NULL);
}

int fg_test_logcap_has(const struct fg_test_logcap *cap, const char *needle)
{
	return strstr(cap->text, needle) != NULL;
}

uint64_t fg_test_rng(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool fg_test_wait_until(bool (*cond)(void *arg), void *arg, unsigned step_us)
{
	const char *scale = getenv("FG_TIMEOUT_SCALE");
	double k = scale && atof(scale) > 0 ? atof(scale) : 1.0;
	uint64_t until = fg_mono_ns() + (uint64_t)(FG_TEST_WAIT_S * k * 1e9);

	while (!cond(arg)) {
		if (fg_mono_ns() >= until)
			return cond(arg);
		usleep(step_us);
	}
	return true;
}
