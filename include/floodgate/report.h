/* SPDX-License-Identifier: MIT */
/*
 * report.h — the daily report (`floodctl report`, INN's innreport for
 * floodgate): samples of the counters, taken by floodctld every
 * `[stats] report-interval` and appended to a file a day, and the sums of
 * their differences over a window, as text, HTML or JSON.
 *
 * The source is the counters (region.h, dstatus.h), never the verdict log:
 * that one may drop lines under load, a counter never drops a count.
 *
 * Files: `<data-dir>/report/YYYY-MM-DD` (the UTC day of the samples it
 * holds), `[stats] report-keep` days kept. Information, not state: never
 * synced, written with one append per sample. Text, one record a line,
 * fields separated by one space:
 *
 *     floodgate-report 1                         the first line of a file
 *     S <unix time> <interval seconds>           a sample begins
 *     P <peer> <offers> <accepted> <octets> <refused> <injection> <propagation>
 *     D <downstream> <sent> <delivered> <refused> <lag records> <lag seconds>
 *     E <unix time>                              the sample is complete
 *
 * P: a peer's nntp_offers, nntp_articles_accepted, nntp_article_bytes
 * (a peer that has counted nothing yet has no line: read as all zeros);
 * <refused> its rejections by reason, `reason=n` joined by "," (non-zero
 * ones, "-" for none; a reason this build does not know is skipped); the
 * two delay histograms of seed 002 (stats.h), `i=n` joined by "," for the
 * non-empty log2 buckets i and `neg=n` for negative delays ("-": empty).
 * D: a downstream's sent, accepted (delivered) and refused counters and
 * its lag, from downstreams.status. Counters are as the processes keep
 * them: since the region was made (peers) or the dataplane started
 * (downstreams).
 *
 * A reader counts a sample only when its E line is there with the S
 * line's time: a last sample torn by a crash, or any line of a sample that
 * is not of this shape, drops that sample (counted as damaged), never the
 * file. A first line of another version refuses the file
 * (-EPROTONOSUPPORT); one that is not the magic, -EINVAL.
 *
 * Summing (fg_report_add): the difference of each counter between two
 * samples in a row; a counter lower than in the sample before was reset
 * (floodctld rebuilt the region, the dataplane restarted, a reboot): its
 * difference is its new value. Two samples further apart than twice the
 * longer interval (plus a second) leave a gap — floodctld was not
 * sampling — which the report lists; the counts across it are still
 * summed (the counters kept counting while nobody looked).
 */
#ifndef FLOODGATE_REPORT_H
#define FLOODGATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "floodgate/common.h"
#include "floodgate/config.h"
#include "floodgate/dstatus.h"
#include "floodgate/region.h"
#include "floodgate/sbuf.h"
#include "floodgate/stats.h"

#define FG_REPORT_MAGIC "floodgate-report"
#define FG_REPORT_VERSION 1
#define FG_REPORT_DIR "report"
/* gaps listed in a report; more are counted */
#define FG_REPORT_GAPS_MAX 32

struct fg_report_peer {
	char name[FG_REGION_NAME_MAX];
	uint64_t offers, accepted, octets;
	uint64_t refused[FG_REASON__COUNT];
	struct fg_hist injection, propagation;	/* buckets and negative only */
};

struct fg_report_ds {
	char name[FG_CONFIG_NAME_MAX];
	uint64_t sent, delivered, refused;
	uint64_t lag_records, lag_seconds;	/* gauges */
};

struct fg_report_sample {
	fg_time_t time;
	int64_t interval;
	unsigned n_peers, n_ds;
	struct fg_report_peer peer[FG_REGION_PEERS];
	struct fg_report_ds ds[FG_CONFIG_MAX_DOWNSTREAMS];
};

/* Fill s from the region's counter sum and the downstreams' status
 * (n_ds of them). 0, or -ENOMEM. */
int fg_report_sample_take(struct fg_region *r, const struct fg_ds_status *ds, unsigned n_ds,
			  fg_time_t now, int64_t interval, struct fg_report_sample *s);

/* The lines of one sample (S to E), appended to out. */
void fg_report_format(struct fg_sbuf *out, const struct fg_report_sample *s);

/* Append one sample to <dir>/report/<its day>, the header first in a new
 * file; delete the day files older than `keep` days. 0 or -errno. */
int fg_report_append(const char *dir, const struct fg_report_sample *s, unsigned keep);

/*
 * Parse a file's text (len octets, no NUL needed), calling fn for every
 * complete sample in order (s is scratch, reused). 0 with *damaged the
 * samples dropped; -EINVAL (no header), -EPROTONOSUPPORT (another
 * version); or what fn returned when not 0 (it stops).
 */
int fg_report_parse(const char *text, size_t len, struct fg_report_sample *s,
		    int (*fn)(void *arg, const struct fg_report_sample *s), void *arg,
		    unsigned *damaged);

/* The sums over a window. */
struct fg_report_gap {
	fg_time_t from, to;	/* the samples either side */
};

struct fg_report_ds_sum {
	struct fg_report_ds d;	/* counters: differences; lag: the last */
	uint64_t lag_seconds_max, lag_records_max;
};

struct fg_report {
	fg_time_t from, to;		/* the window asked */
	fg_time_t first, last;		/* the first and last sample in it (0: none) */
	unsigned samples, damaged, resets, files;
	struct fg_report_gap gap[FG_REPORT_GAPS_MAX];
	unsigned n_gaps;		/* may exceed FG_REPORT_GAPS_MAX */
	unsigned n_peers, n_ds;
	struct fg_report_peer peer[FG_REGION_PEERS];	/* differences */
	struct fg_report_ds_sum ds[FG_CONFIG_MAX_DOWNSTREAMS];
	bool have_prev;
	struct fg_report_sample prev;	/* the sample before the next */
};

/* A report of [from, to], nothing summed yet (heap: a few hundred KiB). */
struct fg_report *fg_report_new(fg_time_t from, fg_time_t to);
void fg_report_free(struct fg_report *r);
/* Take the next sample (in time order). One before the window only becomes
 * the base of the window's first difference; one after it is ignored. */
void fg_report_add(struct fg_report *r, const struct fg_report_sample *s);
/* Read the day files of the window from <dir>/report into r. 0, or
 * -errno of a file that could not be read; a file of another version is
 * skipped and counted in *newer. */
int fg_report_load(struct fg_report *r, const char *dir, unsigned *newer);

/* A delay's percentile (0 < q <= 1) from a histogram of differences: the
 * upper bound of the bucket it falls in, in seconds (-1: negative). false
 * when the histogram is empty. */
bool fg_report_percentile(const struct fg_hist *h, double q, int64_t *out);

/* The report as a table for people, as one HTML page (every name
 * escaped, no script), as one JSON object. */
void fg_report_text(const struct fg_report *r, struct fg_sbuf *out);
void fg_report_html(const struct fg_report *r, struct fg_sbuf *out);
void fg_report_json(const struct fg_report *r, struct fg_sbuf *out);

#endif /* FLOODGATE_REPORT_H */
