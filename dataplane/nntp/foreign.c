/* SPDX-License-Identifier: MIT */
/*
 * foreign.c — the engine's view of the history a site brought from INN
 * (innhist.h; docs/history.md, "History carried over from INN").
 *
 * 1. At create and then once a second (poll's idle scan) the engine looks
 *    at <data-dir>/inn-history.fgf: a file it has not mapped (a new
 *    import renamed over the old one) is mapped, read-only; one that is
 *    gone, or whose window has ended (`until`), is unmapped. Mapping
 *    checks the header, the sizes and the index's bounds, not the
 *    contents' checksum (floodctl checks it after writing): a worker
 *    maps a table of a billion IDs at once.
 * 2. The table is asked only on a miss of floodgate's own history: an
 *    offer that found the ID absent (and placed its OFFERED entry: the
 *    entry is released again on a hit), a TAKETHIS whose ID the history
 *    does not hold. A hit is a duplicate (438 / 439 / 435), counted in
 *    nntp_inn_history_hits as well as under its reason. Nothing is put in
 *    floodgate's history for it: the table answers for the whole window.
 * Each engine maps the file itself (the pages are the page cache's,
 * shared), so nothing is shared between threads but read-only memory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "floodgate/log.h"
#include "nntp_int.h"

static void drop(struct fg_nntp_engine *e)
{
	fg_foreign_close(e->foreign);
	e->foreign = NULL;
}

void fg_nntp_foreign_refresh(struct fg_nntp_engine *e, fg_time_t now)
{
	char path[PATH_MAX];
	struct fg_foreign *f;
	const char *why;
	int err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", e->cfg->data_dir, FG_FOREIGN_FILE) >=
	    (int)sizeof(path))
		return;
	if (e->foreign && fg_foreign_same_file(e->foreign, path)) {
		if (now < fg_foreign_until(e->foreign))
			return;
		FG_LOG_NOTICE(FG_NNTP_COMP, "%s: the window of INN's history ended; no longer "
			      "consulted", path);
		drop(e);
		e->foreign_err = -ETIME;
		return;
	}
	f = fg_foreign_open(path, false, &err, &why);
	if (!f) {
		if (e->foreign)
			drop(e);
		if (err != e->foreign_err && err != -ENOENT)
			FG_LOG_ERR(FG_NNTP_COMP, "%s: %s (%s): INN's history is not consulted",
				   path, why, err == -EINVAL ? "refused" : "cannot map");
		e->foreign_err = err;
		return;
	}
	if (now >= fg_foreign_until(f)) {
		fg_foreign_close(f);
		if (e->foreign)
			drop(e);
		e->foreign_err = -ETIME;
		return;
	}
	if (e->foreign)
		drop(e);
	e->foreign = f;
	e->foreign_err = 0;
	FG_LOG_INFO(FG_NNTP_COMP, "%s: %llu IDs of INN's history consulted on a miss until %lld",
		    path, (unsigned long long)fg_foreign_count(f), (long long)fg_foreign_until(f));
}

void fg_nntp_foreign_fini(struct fg_nntp_engine *e)
{
	drop(e);
}

bool fg_nntp_foreign_known(struct fg_nntp_session *s, const char *id, uint32_t len)
{
	struct fg_nntp_engine *e = s->e;

	if (!e->foreign || !fg_foreign_has_id(e->foreign, id, len, e->now))
		return false;
	fg_nntp_count(s, FG_CTR_NNTP_INN_HISTORY_HITS);
	return true;
}
