/* SPDX-License-Identifier: MIT */
/*
 * kclock.c — the kernel's own view of its clock, for the operator.
 *
 * adjtimex(2) with modes 0 only reads: whether the kernel's clock is
 * synchronised (NTP, chrony: STA_UNSYNC clear and the state not
 * TIME_ERROR), its estimated and maximum error. floodctld shows them in
 * `floodctl status` and /metrics next to the engines' clock view (their
 * Injection-Date samples, docs/protocol.md "Clock sanity"), so an alarm can
 * be told apart at a glance: the kernel unsynchronised, or the feed's
 * injecting agents. Nothing acts on them.
 */
#include <errno.h>
#include <string.h>
#include <sys/timex.h>

#include "floodgate/metrics.h"

void fg_kclock_from_timex(const struct timex *tx, int state, struct fg_kclock *k)
{
	memset(k, 0, sizeof(*k));
	k->ok = state >= 0;
	if (!k->ok)
		return;
	k->synchronised = state != TIME_ERROR && !(tx->status & STA_UNSYNC);
	k->est_error = (double)tx->esterror / 1e6;	/* microseconds */
	k->max_error = (double)tx->maxerror / 1e6;
}

int fg_kclock_read(struct fg_kclock *k)
{
	struct timex tx;
	int state;

	memset(&tx, 0, sizeof(tx));	/* modes 0: read only */
	state = adjtimex(&tx);
	fg_kclock_from_timex(&tx, state, k);
	return state < 0 ? -errno : 0;
}
