/* SPDX-License-Identifier: MIT */
/*
 * status.c — what `floodctl status` and `floodctl lookup` show, and the
 * daemon state the stats export samples.
 *
 * lookup: the history gives the state, first-seen and the article date
 * (to the minute, rounded up: history.h); which header gave that date and
 * a reject's reason are only in the journal, so the retained segments are
 * searched newest first (up to LOOKUP_SCAN_MAX octets) for the ID's last
 * record. For a version-number ID (seed 000) the side index names the
 * newest known version, said plainly when it is not the ID asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floodgate/log.h"
#include "floodgate/msgid.h"
#include "floodgate/innhist.h"
#include "floodctld.h"

#define LOOKUP_SCAN_MAX (1ull << 30)

void ctld_metrics_state(struct ctld *d, struct fg_metrics_state *m)
{
	uint64_t now_ns = fg_mono_ns();
	int rc;

	memset(m, 0, sizeof(*m));
	pthread_mutex_lock(&d->lock);
	m->now = time(NULL);
	m->started = d->started;
	m->startup = d->startup;
	m->restore_seconds = d->restore_seconds;
	m->journal_lag_records = d->j_uncommitted;
	m->journal_commit_age = d->j_last_commit_ns ? (double)(now_ns - d->j_last_commit_ns) / 1e9
						    : -1;
	m->journal_segment = d->j_appended.segment;
	m->snapshot_time = d->snap_last.created;
	m->snapshot_seconds = d->snap_seconds;
	m->snapshot_seq = d->snap_last.seq;
	m->expiry_mode = d->set.expiry;
	m->expiry_last_end = d->exp_last_end;
	m->expiry_last_seconds = d->exp_last.seconds;
	m->expiry_last_expired = d->exp_last.expired;
	m->vlog_on = fg_region_vlog_on(d->r);
	pthread_mutex_unlock(&d->lock);
	/* read from the queue's own files: the dataplane writes them */
	rc = fg_queue_inspect(d->data_dir, d->cfg, m->now, &m->queue);

	if (rc == -EPROTONOSUPPORT && !d->queue_newer_logged) {
		FG_LOG_ERR(CTLD, "the outbound queue's head or cursor files in %s are of a newer "
			   "format version than this floodctld reads: no queue metrics (docs/compat.md)",
			   d->data_dir);
		d->queue_newer_logged = true;
	}
	if (rc != 0)
		m->queue.present = false;
	/* the levers the dataplane (floodgate or floodgate-host) journaled;
	 * pauses already over are dropped as the dataplane drops them */
	m->levers_ok = fg_levers_load(d->data_dir, m->now, &m->levers, NULL) == 0;
	/* what the dataplane last said of each downstream */
	if (fg_ds_status_read(d->data_dir, m->ds, FG_CONFIG_MAX_DOWNSTREAMS, &m->n_ds,
			      &m->ds_written) != 0) {
		m->n_ds = 0;
		m->ds_written = 0;
	}
	/* and of the cluster (docs/scale.md, "Several boxes") */
	if (fg_cs_status_read(d->data_dir, &m->cs, &m->cs_written) != 0)
		m->cs_written = 0;
}

/* ---- status ---- */

static void status_writers_json(struct ctld *d, struct fg_json *j)
{
	fg_json_arr(j, "writers");
	for (unsigned i = 0; i < fg_region_nslots(d->r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(d->r, i, &si) < 0 || si.state == FG_SLOT_FREE)
			continue;
		fg_json_obj(j, NULL);
		fg_json_u64(j, "slot", i);
		fg_json_str(j, "name", si.name);
		fg_json_i64(j, "pid", si.pid);
		fg_json_str(j, "state", fg_region_slot_state_name(si.state));
		fg_json_f64(j, "heartbeat_age_seconds", si.heartbeat_age_ns == UINT64_MAX
							? -1 : (double)si.heartbeat_age_ns / 1e9);
		fg_json_u64(j, "journal_pushed", si.pushed[FG_RING_JOURNAL]);
		fg_json_u64(j, "journal_committed", si.consumed[FG_RING_JOURNAL]);
		fg_json_u64(j, "journal_ring_used", si.pushed[FG_RING_JOURNAL] - si.consumed[FG_RING_JOURNAL]);
		fg_json_bool(j, "clock_suspect", si.clock_suspect);
		fg_json_close(j);
	}
	fg_json_close(j);
}

static void inn_history_json(struct ctld *d, struct fg_json *j, fg_time_t now);

static void status_json(struct ctld *d, const struct fg_metrics_state *m,
			const struct fg_history_stats *hs, struct fg_sbuf *out)
{
	struct fg_kclock kc;
	struct fg_json j;

	fg_json_begin(&j, out);
	fg_json_i64(&j, "pid", getpid());
	fg_json_time(&j, "started", m->started);
	fg_json_str(&j, "startup", m->startup);
	fg_json_str(&j, "config", d->config_path[0] ? d->config_path : "<default>");
	fg_json_obj(&j, "region");
	fg_json_str(&j, "path", fg_region_path(d->r));
	fg_json_u64(&j, "bytes", fg_region_mapped_size(d->r));
	fg_json_bool(&j, "hugepages", fg_region_hugepages(d->r));
	fg_json_close(&j);
	fg_json_obj(&j, "history");
	fg_json_u64(&j, "entries", hs->entries);
	fg_json_u64(&j, "capacity", hs->slots);
	fg_json_f64(&j, "load", hs->load_ppm / 1e6);
	fg_json_bool(&j, "alarm", hs->alarm);
	fg_json_close(&j);
	status_writers_json(d, &j);
	fg_metrics_nic_json(&j, d->r);
	pthread_mutex_lock(&d->lock);
	fg_json_obj(&j, "journal");
	fg_json_str(&j, "dir", d->data_dir);
	fg_json_u64(&j, "segment", d->j_appended.segment);
	fg_json_u64(&j, "appended_offset", d->j_appended.offset);
	fg_json_u64(&j, "durable_segment", d->j_durable.segment);
	fg_json_u64(&j, "durable_offset", d->j_durable.offset);
	fg_json_u64(&j, "lag_records", d->j_uncommitted);
	fg_json_i64(&j, "commit_ms", d->set.journal_commit_ms);
	fg_json_close(&j);
	fg_json_obj(&j, "snapshot");
	fg_json_u64(&j, "sequence", d->snap_last.seq);
	fg_json_time(&j, "created", d->snap_last.created);
	fg_json_u64(&j, "entries", d->snap_last.entries);
	fg_json_i64(&j, "interval_seconds", d->set.snapshot_interval);
	fg_json_u64(&j, "keep", d->set.snapshot_keep);
	fg_json_u64(&j, "rate_bytes_per_second", d->set.snapshot_rate);
	fg_json_f64(&j, "last_seconds", d->snap_seconds);
	fg_json_close(&j);
	fg_json_obj(&j, "expiry");
	fg_json_str(&j, "mode", fg_expiry_mode_name(d->set.expiry));
	fg_json_i64(&j, "cutoff_seconds", d->set.cutoff);
	fg_json_i64(&j, "retention_seconds", d->set.retention);
	fg_json_time(&j, "last_pass_end", d->exp_last_end);
	fg_json_u64(&j, "last_pass_expired", d->exp_last.expired);
	fg_json_close(&j);
	fg_json_str(&j, "verdict_log", d->set.verdict_log[0] ? d->set.verdict_log : NULL);
	pthread_mutex_unlock(&d->lock);
	inn_history_json(d, &j, m->now);
	fg_json_bool(&j, "clock_suspect", fg_metrics_clock_suspect(d->r));
	if (m->cs_written) {
		fg_json_obj(&j, "cluster");
		fg_json_time(&j, "written", m->cs_written);
		fg_json_i64(&j, "age_seconds", m->now - m->cs_written);
		for (unsigned k = 0; k < fg_cs_n_fields; k++)
			fg_json_u64(&j, fg_cs_fields[k].name, fg_cs_value(&m->cs, &fg_cs_fields[k]));
		fg_json_close(&j);
	}
	fg_kclock_read(&kc);
	fg_metrics_kclock_json(&j, &kc);
	fg_json_end(&j);
	fg_sbuf_puts(out, "\n");
}

/* INN's imported history (docs/history.md "History carried over from
 * INN"): the table's header, or NULL when there is none (or it is refused:
 * *why). The caller closes it. */
static struct fg_foreign *inn_history(struct ctld *d, char *path, size_t len, const char **why)
{
	int err;

	*why = NULL;
	pthread_mutex_lock(&d->lock);
	snprintf(path, len, "%s/%s", d->data_dir, FG_FOREIGN_FILE);
	pthread_mutex_unlock(&d->lock);
	return fg_foreign_open(path, false, &err, why);
}

static void inn_history_json(struct ctld *d, struct fg_json *j, fg_time_t now)
{
	char path[PATH_MAX];
	const char *why;
	struct fg_foreign *f = inn_history(d, path, sizeof(path), &why);

	if (!f && (!why || strcmp(why, "cannot be opened") == 0)) {
		fg_json_str(j, "inn_history", NULL);
		return;
	}
	fg_json_obj(j, "inn_history");
	fg_json_str(j, "file", path);
	if (f) {
		fg_json_u64(j, "ids", fg_foreign_count(f));
		fg_json_time(j, "imported", fg_foreign_imported(f));
		fg_json_time(j, "until", fg_foreign_until(f));
		fg_json_bool(j, "in_force", now < fg_foreign_until(f));
		fg_foreign_close(f);
	} else {
		fg_json_str(j, "refused", why);
	}
	fg_json_close(j);
}

static void inn_history_text(struct ctld *d, struct fg_sbuf *b, fg_time_t now)
{
	char path[PATH_MAX];
	const char *why;
	struct fg_foreign *f = inn_history(d, path, sizeof(path), &why);

	if (!f) {
		if (why && strcmp(why, "cannot be opened") != 0)
			fg_sbuf_printf(b, "inn history %s: REFUSED: %s\n", path, why);
		return;
	}
	fg_sbuf_printf(b, "inn history %llu IDs imported ", (unsigned long long)fg_foreign_count(f));
	fg_sbuf_time(b, fg_foreign_imported(f));
	fg_sbuf_puts(b, now < fg_foreign_until(f) ? ", consulted on a miss until " : ", window ended ");
	fg_sbuf_time(b, fg_foreign_until(f));
	fg_sbuf_puts(b, "\n");
	fg_foreign_close(f);
}

static void ago(struct fg_sbuf *b, fg_time_t now, fg_time_t t)
{
	if (!t) {
		fg_sbuf_puts(b, "never");
		return;
	}
	fg_sbuf_time(b, t);
	fg_sbuf_printf(b, " (%llds ago)", (long long)(now - t));
}

static void status_text(struct ctld *d, const struct fg_metrics_state *m,
			const struct fg_history_stats *hs, struct fg_sbuf *b)
{
	struct fg_kclock kc;

	fg_sbuf_printf(b, "floodctld pid %d, up %llds, history %s\n", (int)getpid(),
		       (long long)(m->now - m->started), m->startup);
	fg_sbuf_printf(b, "config      %s\n", d->config_path[0] ? d->config_path : "<default>");
	fg_sbuf_printf(b, "region      %s, %zu octets%s\n", fg_region_path(d->r),
		       fg_region_mapped_size(d->r), fg_region_hugepages(d->r) ? ", huge pages" : "");
	fg_sbuf_printf(b, "history     %llu of %llu entries (%.1f %%)%s\n",
		       (unsigned long long)hs->entries, (unsigned long long)hs->slots,
		       hs->load_ppm / 1e4, hs->alarm ? "  ALARM: near full" : "");
	fg_sbuf_printf(b, "writers     %u\n", fg_region_live_writers(d->r));
	for (unsigned i = 0; i < fg_region_nslots(d->r); i++) {
		struct fg_region_slot_info si;

		if (fg_region_slot_info(d->r, i, &si) < 0 || si.state == FG_SLOT_FREE)
			continue;
		fg_sbuf_printf(b, "  slot %-3u %-16s pid %-8d %-8s journal %llu pushed, %llu committed%s\n",
			       i, si.name, (int)si.pid, fg_region_slot_state_name(si.state),
			       (unsigned long long)si.pushed[FG_RING_JOURNAL],
			       (unsigned long long)si.consumed[FG_RING_JOURNAL],
			       si.clock_suspect ? ", CLOCK SUSPECT" : "");
	}
	fg_metrics_nic_text(b, d->r);
	pthread_mutex_lock(&d->lock);
	fg_sbuf_printf(b, "journal     segment %llu offset %llu (durable %llu:%llu), %llu records waiting, commit every %lld ms\n",
		       (unsigned long long)d->j_appended.segment, (unsigned long long)d->j_appended.offset,
		       (unsigned long long)d->j_durable.segment, (unsigned long long)d->j_durable.offset,
		       (unsigned long long)d->j_uncommitted, (long long)d->set.journal_commit_ms);
	fg_sbuf_printf(b, "snapshot    %llu, ", (unsigned long long)d->snap_last.seq);
	ago(b, m->now, d->snap_last.created);
	fg_sbuf_printf(b, ", every %llds, keep %u, took %.1f s", (long long)d->set.snapshot_interval,
		       d->set.snapshot_keep, d->snap_seconds);
	if (d->set.snapshot_rate)
		fg_sbuf_printf(b, " at most %.1f MB/s", (double)d->set.snapshot_rate / 1e6);
	fg_sbuf_printf(b, "\n");
	fg_sbuf_printf(b, "expiry      %s, cutoff %llds, retention %llds, last pass ",
		       fg_expiry_mode_name(d->set.expiry), (long long)d->set.cutoff,
		       (long long)d->set.retention);
	ago(b, m->now, d->exp_last_end);
	fg_sbuf_printf(b, ": %llu expired\n", (unsigned long long)d->exp_last.expired);
	fg_sbuf_printf(b, "verdict log %s\n", d->set.verdict_log[0] ? d->set.verdict_log : "off");
	pthread_mutex_unlock(&d->lock);
	inn_history_text(d, b, m->now);
	if (m->cs_written) {
		const struct fg_cluster_status *c = &m->cs;

		fg_sbuf_printf(b, "cluster     %s, %llu masters mapped (%llu slots), %llu nodes up, "
			       "claim round trip p50 <%llu us, p99 <%llu us%s (%llds ago%s)\n",
			       c->answering ? "answering" : "NOT ANSWERING: claims decided locally",
			       (unsigned long long)c->masters, (unsigned long long)c->slots_mapped,
			       (unsigned long long)c->nodes_up, (unsigned long long)c->rtt_p50_us,
			       (unsigned long long)c->rtt_p99_us,
			       c->digest_mismatch ? ", DIGEST MISMATCH: another box feeds its "
						    "downstreams otherwise" : "",
			       (long long)(m->now - m->cs_written),
			       m->now - m->cs_written > 5 ? ": stale, is the dataplane running?" : "");
	}
	if (fg_metrics_clock_suspect(d->r))
		fg_sbuf_puts(b, "CLOCK SUSPECT: a writer's recent Injection-Dates sit hours away from the "
			     "local clock; date verdicts it could flip are passed on, none remembered\n");
	fg_kclock_read(&kc);
	fg_metrics_kclock_text(b, &kc);
}

void ctld_status(struct ctld *d, bool json, struct fg_sbuf *out)
{
	struct fg_metrics_state m;
	struct fg_history_stats hs;

	ctld_metrics_state(d, &m);
	fg_history_stats(fg_region_history(d->r), &hs);
	if (json)
		status_json(d, &m, &hs, out);
	else
		status_text(d, &m, &hs, out);
}

/* ---- lookup ---- */

struct jfind {
	struct fg_history_key k;
	struct fg_jrec rec;
	bool found;
};

static int jfind_rec(void *arg, const struct fg_jrec *r)
{
	struct jfind *f = arg;

	if (r->key_lo == f->k.lo && r->key_hi == f->k.hi) {
		f->rec = *r;
		f->found = true;
	}
	return 0;
}

/* The ID's newest record in the retained journal, newest segment first. */
static bool journal_find(const char *dir, struct jfind *f)
{
	uint64_t *segs = NULL, scanned = 0;
	size_t n = 0;

	fg_journal_list(dir, &segs, &n);
	for (size_t i = n; i-- > 0 && !f->found && scanned < LOOKUP_SCAN_MAX;) {
		char path[PATH_MAX];
		struct fg_jseg_scan sc;
		struct stat st;
		void *map;
		int fd;

		if (fg_journal_segment_path(dir, segs[i], path, sizeof(path)) < 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_size > 0) {
			map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (map != MAP_FAILED) {
				fg_jseg_scan(map, (size_t)st.st_size, 0, jfind_rec, f, &sc);
				munmap(map, (size_t)st.st_size);
			}
			scanned += (uint64_t)st.st_size;
		}
		close(fd);
	}
	free(segs);
	return f->found;
}

struct lookup {
	const char *id;
	enum fg_history_state state;
	struct fg_history_entry e;
	struct jfind jf;
	bool have_version;
	uint64_t asked_version, newest_version;
	char newest[FG_HISTORY_ID_MAX + 1];
	enum fg_history_state newest_state;
};

static void lookup_versions(struct ctld *d, struct lookup *l, fg_time_t now)
{
	struct fg_msgid_version v;
	struct fg_history *h = fg_region_history(d->r);
	struct fg_history_key k;
	size_t idl;

	if (fg_msgid_version_parse(l->id, strlen(l->id), &v) < 0)
		return;
	if (fg_history_version_newest(h, v.base, v.base_len, &l->newest_version, l->newest,
				      sizeof(l->newest), &idl) < 0)
		return;
	l->have_version = true;
	l->asked_version = v.version;
	fg_history_hash(h, l->newest, idl, &k);
	l->newest_state = fg_history_lookup(h, &k, now, NULL);
}

static void lookup_json(const struct lookup *l, struct fg_sbuf *out)
{
	bool final = l->state >= FG_HISTORY_ACCEPTED;
	struct fg_json j;

	fg_json_begin(&j, out);
	fg_json_str(&j, "id", l->id);
	fg_json_str(&j, "state", fg_history_state_name(l->state));
	fg_json_time(&j, "first_seen", final ? l->e.first_seen : 0);
	fg_json_time(&j, "article_date", final ? l->e.article_date : 0);
	fg_json_bool(&j, "article_date_clamped",
		     final && (l->e.flags & (FG_HISTORY_F_DATE_CLAMPED_OLD | FG_HISTORY_F_DATE_CLAMPED_FUTURE)));
	fg_json_str(&j, "date_header", l->jf.found ? fg_jrec_date_source(l->jf.rec.flags) : NULL);
	fg_json_str(&j, "reason", l->jf.found && l->jf.rec.reason ? fg_reason_name(l->jf.rec.reason) : NULL);
	fg_json_bool(&j, "in_retained_journal", l->jf.found);
	if (l->have_version) {
		fg_json_obj(&j, "newest_version");
		fg_json_str(&j, "id", l->newest);
		fg_json_u64(&j, "version", l->newest_version);
		fg_json_str(&j, "state", fg_history_state_name(l->newest_state));
		fg_json_bool(&j, "differs_from_asked", strcmp(l->newest, l->id) != 0);
		fg_json_close(&j);
	}
	fg_json_end(&j);
	fg_sbuf_puts(out, "\n");
}

static void lookup_text(const struct lookup *l, fg_time_t now, struct fg_sbuf *b)
{
	fg_sbuf_printf(b, "%s\n  state          %s\n", l->id, fg_history_state_name(l->state));
	if (l->state >= FG_HISTORY_ACCEPTED) {
		fg_sbuf_puts(b, "  first seen     ");
		ago(b, now, l->e.first_seen);
		fg_sbuf_puts(b, "\n  article date   ");
		fg_sbuf_time(b, l->e.article_date);
		fg_sbuf_puts(b, l->e.flags & FG_HISTORY_F_DATE_CLAMPED_OLD ? " or earlier"
			     : l->e.flags & FG_HISTORY_F_DATE_CLAMPED_FUTURE ? " or later"
			     : " (kept to the minute, rounded up)");
		fg_sbuf_printf(b, "\n  date header    %s\n",
			       l->jf.found ? fg_jrec_date_source(l->jf.rec.flags)
					   : "not recorded (older than the retained journal)");
		if (l->jf.found && l->jf.rec.reason)
			fg_sbuf_printf(b, "  reason         %s\n", fg_reason_name(l->jf.rec.reason));
	}
	if (l->have_version && strcmp(l->newest, l->id) != 0)
		fg_sbuf_printf(b, "  newest version %s ($v=%llu, %s)\n"
			       "                 NOTE: this is a newer version than the ID asked for\n",
			       l->newest, (unsigned long long)l->newest_version,
			       fg_history_state_name(l->newest_state));
}

int ctld_lookup(struct ctld *d, const char *id, bool json, struct fg_sbuf *out)
{
	struct fg_history *h = fg_region_history(d->r);
	fg_time_t now = time(NULL);
	struct lookup l;
	bool versions;

	memset(&l, 0, sizeof(l));
	l.id = id;
	if (!fg_msgid_valid_wire(id, strlen(id))) {
		fg_sbuf_printf(out, json ? "{\"error\":\"not a valid Message-ID (RFC 3977 3.6)\"}\n"
					 : "not a valid Message-ID (RFC 3977 3.6)\n");
		return -EINVAL;
	}
	fg_history_hash(h, id, strlen(id), &l.jf.k);
	l.state = fg_history_lookup(h, &l.jf.k, now, &l.e);
	if (l.state >= FG_HISTORY_ACCEPTED)
		journal_find(d->data_dir, &l.jf);
	pthread_mutex_lock(&d->lock);
	versions = d->set.version_numbers;
	pthread_mutex_unlock(&d->lock);
	if (versions)
		lookup_versions(d, &l, now);
	if (json)
		lookup_json(&l, out);
	else
		lookup_text(&l, now, out);
	return l.state == FG_HISTORY_ABSENT ? -ENOENT : 0;
}
