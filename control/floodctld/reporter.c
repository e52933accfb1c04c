/* SPDX-License-Identifier: MIT */
/*
 * reporter.c — floodctld's report thread and `floodctl report`.
 *
 * The thread takes a sample (report.h) at start and every
 * `[stats] report-interval` after: the region's counter sum per peer and
 * what the dataplane last wrote of each downstream (downstreams.status),
 * appended to <data-dir>/report/<UTC day>; day files older than
 * `report-keep` days go. A failed append is logged once until one
 * succeeds again; sampling never waits on anything but the region's sum.
 *
 * `floodctl report` is answered here, not by floodctl reading the files
 * itself: floodctld knows the data directory of the configuration it
 * runs, the files are its own (floodctl may run as another user with
 * another -c), and the reply's three forms come over the socket like
 * every other verb's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "floodgate/log.h"
#include "floodgate/report.h"
#include "floodctld.h"

static void take_one(struct ctld *d, struct fg_report_sample *s, int64_t interval, unsigned keep,
		     bool *failing)
{
	struct fg_ds_status ds[FG_CONFIG_MAX_DOWNSTREAMS];
	fg_time_t written;
	unsigned n_ds = 0;
	int rc;

	if (fg_ds_status_read(d->data_dir, ds, FG_CONFIG_MAX_DOWNSTREAMS, &n_ds, &written) != 0)
		n_ds = 0;
	rc = fg_report_sample_take(d->r, ds, n_ds, time(NULL), interval, s);
	if (rc == 0)
		rc = fg_report_append(d->data_dir, s, keep);
	if (rc < 0 && !*failing)
		FG_LOG_ERR(CTLD, "report sample not written to %s/%s: %s (said once until one is)",
			   d->data_dir, FG_REPORT_DIR, strerror(-rc));
	*failing = rc < 0;
}

void *ctld_report_main(void *arg)
{
	struct ctld *d = arg;
	struct fg_report_sample *s = malloc(sizeof(*s));
	bool failing = false;

	if (!s) {
		FG_LOG_ERR(CTLD, "report sampling off: no memory");
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	while (!atomic_load(&d->stop)) {
		int64_t interval = d->set.report_interval;
		unsigned keep = d->set.report_keep;
		uint64_t taken;

		pthread_mutex_unlock(&d->lock);
		take_one(d, s, interval, keep, &failing);
		taken = fg_mono_ns();
		pthread_mutex_lock(&d->lock);
		/* the interval in force: a reload (which wakes us) may change it */
		for (uint64_t now = fg_mono_ns(), next;
		     !atomic_load(&d->stop) &&
		     now < (next = taken + (uint64_t)d->set.report_interval * 1000000000ull);
		     now = fg_mono_ns())
			ctld_wait(d, (int64_t)((next - now) / 1000000) + 1);
	}
	pthread_mutex_unlock(&d->lock);
	free(s);
	return NULL;
}

const char *ctld_report(struct ctld *d, int64_t since, unsigned flags, struct fg_sbuf *out)
{
	fg_time_t now = time(NULL);
	struct fg_report *r;
	unsigned keep, newer = 0;
	int rc;

	pthread_mutex_lock(&d->lock);
	keep = d->set.report_keep;
	pthread_mutex_unlock(&d->lock);
	if (since <= 0)
		since = 86400;
	/* no file is older than report-keep days: read no further back */
	if (since > (int64_t)(keep + 1) * 86400)
		since = (int64_t)(keep + 1) * 86400;
	r = fg_report_new(now - since, now);
	if (!r)
		return "failed";
	rc = fg_report_load(r, d->data_dir, &newer);
	if (rc < 0) {
		fg_sbuf_printf(out, "the report's files in %s/%s cannot be read: %s\n", d->data_dir,
			       FG_REPORT_DIR, strerror(-rc));
		fg_report_free(r);
		return "failed";
	}
	if (newer)
		FG_LOG_WARN(CTLD, "%u report files in %s/%s are of a newer format version than "
			    "this floodctld reads: left out of the report (docs/compat.md)",
			    newer, d->data_dir, FG_REPORT_DIR);
	if (flags & FG_CTL_F_JSON) {
		fg_report_json(r, out);
		fg_sbuf_puts(out, "\n");
	} else if (flags & FG_CTL_F_HTML) {
		fg_report_html(r, out);
	} else {
		fg_report_text(r, out);
	}
	fg_report_free(r);
	return NULL;
}
