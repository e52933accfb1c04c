/* SPDX-License-Identifier: MIT */
/*
 * expiry.c — a full expiry pass in slices (expiry.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "floodgate/expiry.h"

const char *fg_expiry_mode_name(enum fg_expiry_mode m)
{
	return m == FG_EXPIRY_ARTICLE_DATE ? "article-date" : "first-seen";
}

static double mono(void)
{
	return (double)fg_mono_ns() * 1e-9;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t fg_expiry_next_wait_ns(uint64_t floor_ns, double share_pct, double pass_cpu_s)
{
	double wait_s;

	if (!(share_pct > 0 && share_pct < 100) || !(pass_cpu_s > 0))
		return floor_ns;
	wait_s = pass_cpu_s * (100.0 / share_pct - 1.0);
	if (wait_s >= (double)UINT64_MAX / 1e9)
		return UINT64_MAX;
	return (uint64_t)(wait_s * 1e9) > floor_ns ? (uint64_t)(wait_s * 1e9) : floor_ns;
}

int fg_expiry_pass(struct fg_history *h, enum fg_expiry_mode mode, fg_time_t now,
		   int64_t cutoff, int64_t retention, bool dry_run, unsigned slice,
		   unsigned pause_us, const atomic_bool *stop, struct fg_expiry_result *out)
{
	struct fg_history_sweep s;
	struct timespec pause = { .tv_nsec = (long)pause_us * 1000 };
	double t0 = mono(), c0 = thread_cpu();
	int more;

	memset(out, 0, sizeof(*out));
	if (fg_history_sweep_init(&s, mode, now, cutoff, retention, dry_run) < 0)
		return -EINVAL;
	if (!slice)
		slice = FG_EXPIRY_SLICE_DEFAULT;
	while ((more = fg_history_sweep_step(h, &s, slice)) == 1) {
		if (stop && atomic_load(stop))
			break;
		if (pause_us)
			nanosleep(&pause, NULL);
	}
	out->mode = mode;
	out->dry_run = dry_run;
	out->complete = more == 0;
	out->now = now;
	out->cutoff = cutoff;
	out->retention = retention;
	out->buckets = s.buckets;
	out->kept = s.kept;
	out->expired = s.expired;
	out->expired_offers = s.expired_offers;
	memcpy(out->expired_by_state, s.expired_by_state, sizeof(out->expired_by_state));
	out->seconds = mono() - t0;
	out->cpu_seconds = thread_cpu() - c0;
	return 0;
}
