/* SPDX-License-Identifier: MIT */
/*
 * expire.c — floodctld's expiry thread: a full pass every
 * --expire-interval seconds, or less often when the last pass's CPU time
 * asks for it (--expire-share, expiry.h: fg_expiry_next_wait_ns), and at
 * once on `floodctl expire`, in the
 * configured RFC 5537 mode, in slices that never pause a writer; dry runs
 * (`floodctl expire --dry-run`) run in the asking client's thread, since
 * they change nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "floodctld.h"

static int run_pass(struct ctld *d, bool dry_run, struct fg_expiry_result *out)
{
	enum fg_expiry_mode mode;
	int64_t cutoff, retention;
	unsigned pause;
	int rc;

	pthread_mutex_lock(&d->lock);
	mode = d->set.expiry;
	cutoff = d->set.cutoff;
	retention = d->set.retention;
	pause = d->opt.expire_pause_us;
	pthread_mutex_unlock(&d->lock);
	rc = fg_expiry_pass(fg_region_history(d->r), mode, time(NULL), cutoff, retention, dry_run,
			    FG_EXPIRY_SLICE_DEFAULT, dry_run ? 0 : pause, &d->stop, out);
	if (rc < 0)
		FG_LOG_ERR(CTLD, "expiry refused its parameters (mode %s, cutoff %" PRId64
			   " s, retention %" PRId64 " s)", fg_expiry_mode_name(mode), cutoff, retention);
	return rc;
}

void *ctld_expire_main(void *arg)
{
	struct ctld *d = arg;
	uint64_t next, wait;

	pthread_mutex_lock(&d->lock);
	next = fg_mono_ns() + (uint64_t)d->opt.expire_interval * 1000000000ull;
	while (!atomic_load(&d->stop)) {
		uint64_t now = fg_mono_ns(), want = d->exp_requested;
		struct fg_expiry_result res;
		int rc;

		if (want == d->exp_done && now < next) {
			ctld_wait(d, (int64_t)((next - now) / 1000000) + 1);
			continue;
		}
		pthread_mutex_unlock(&d->lock);
		rc = run_pass(d, false, &res);
		pthread_mutex_lock(&d->lock);
		if (rc == 0 && res.complete) {
			d->exp_last = res;
			d->exp_last_end = time(NULL);
			ctld_count(d, FG_CTR_EXPIRY_PASSES);
			FG_LOG_INFO(CTLD, "expiry (%s): %llu expired, %llu kept, %.2f s",
				    fg_expiry_mode_name(res.mode), (unsigned long long)res.expired,
				    (unsigned long long)res.kept, res.seconds);
		}
		d->exp_done = want;
		wait = fg_expiry_next_wait_ns((uint64_t)d->opt.expire_interval * 1000000000ull,
					      d->opt.expire_share, rc == 0 ? res.cpu_seconds : 0);
		if (rc == 0 && res.complete)
			FG_LOG_INFO(CTLD, "expiry: %.2f s of CPU; the next pass in %llu s (--expire-share %g %%)",
				    res.cpu_seconds, (unsigned long long)(wait / 1000000000ull),
				    d->opt.expire_share);
		next = fg_mono_ns() + wait;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int ctld_expire_request(struct ctld *d, int timeout_ms, struct fg_expiry_result *out)
{
	uint64_t deadline = fg_mono_ns() + (uint64_t)timeout_ms * 1000000ull, ticket;
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	ticket = ++d->exp_requested;
	pthread_cond_broadcast(&d->cond);
	while (d->exp_done < ticket && !atomic_load(&d->stop) && fg_mono_ns() < deadline)
		ctld_wait(d, (int64_t)((deadline - fg_mono_ns()) / 1000000) + 1);
	if (d->exp_done < ticket)
		rc = -ETIMEDOUT;
	*out = d->exp_last;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

int ctld_expire_dry_run(struct ctld *d, struct fg_expiry_result *out)
{
	return run_pass(d, true, out);
}

void ctld_expiry_json(struct fg_json *j, const struct fg_expiry_result *e)
{
	fg_json_str(j, "mode", fg_expiry_mode_name(e->mode));
	fg_json_bool(j, "dry_run", e->dry_run);
	fg_json_bool(j, "complete", e->complete);
	fg_json_time(j, "now", e->now);
	fg_json_i64(j, "cutoff_seconds", e->cutoff);
	fg_json_i64(j, "retention_seconds", e->retention);
	fg_json_u64(j, "buckets", e->buckets);
	fg_json_u64(j, "kept", e->kept);
	fg_json_u64(j, "expired", e->expired);
	fg_json_u64(j, "expired_offers", e->expired_offers);
	fg_json_obj(j, "expired_by_state");
	for (unsigned s = FG_HISTORY_ACCEPTED; s < FG_HISTORY_STATE__COUNT; s++)
		fg_json_u64(j, fg_history_state_name(s), e->expired_by_state[s]);
	fg_json_close(j);
	fg_json_f64(j, "seconds", e->seconds);
	fg_json_f64(j, "cpu_seconds", e->cpu_seconds);
}

void ctld_expiry_text(struct fg_sbuf *b, const struct fg_expiry_result *e)
{
	fg_sbuf_printf(b, "expiry %s (%s, cutoff %llds, retention %llds)%s\n",
		       e->dry_run ? "dry run" : "pass", fg_expiry_mode_name(e->mode),
		       (long long)e->cutoff, (long long)e->retention,
		       e->complete ? "" : " — stopped early");
	fg_sbuf_printf(b, "  %-22s %14llu\n", e->dry_run ? "would expire" : "expired",
		       (unsigned long long)e->expired);
	for (unsigned s = FG_HISTORY_ACCEPTED; s < FG_HISTORY_STATE__COUNT; s++)
		fg_sbuf_printf(b, "    %-20s %14llu\n", fg_history_state_name(s),
			       (unsigned long long)e->expired_by_state[s]);
	fg_sbuf_printf(b, "  %-22s %14llu\n  %-22s %14llu\n  %-22s %14.3f\n  %-22s %14.3f\n",
		       "kept", (unsigned long long)e->kept, "dead offers dropped",
		       (unsigned long long)e->expired_offers, "seconds", e->seconds, "CPU seconds",
		       e->cpu_seconds);
}
