#!/usr/bin/env python3
# timeout: 300
"""42_ctl_powerloss — SIGKILL floodctld and the writer under a power loss.

floodctld runs under the power-loss shim (tests/preload/powerloss.so),
which really drops every write not made durable by fsync/fdatasync, and
every name not made durable by an fsync of the directory. A writer
inserts at 3000 IDs/s with snapshots every second and small journal
segments (so snapshots, renames, rotations and pruning all happen under
load); once floodctld has written two snapshots in this run and the
writer has seen 3000 IDs committed, both processes are SIGKILLed at once, the data directory is reverted
to its durable state, the shared memory is wiped as a reboot would, and
floodctld restarts: every ID whose journal record was committed is in
history, each one checked. Four times in a row, so each crash lands on a
history that was itself restored: the first two in the shim's worst case
(every unsynced write and directory change lost), the last two with a
seeded outcome (unsynced writes kept, torn or zero-tailed at random,
directory changes kept or undone: FG_PL_SEED; a random seed unless the
environment names one). The log names each seed and keeps the crash
image (the shim's FG_PL_SAVE) so a failure replays exactly.
"""
import os
import random

from ctlkit import Ctl, check, committed_ids, crash_round, log, passed, snapshots_logged

COMMITTED = 3000        # IDs the writer has seen committed before the crash
SNAPSHOTS = 2           # snapshots floodctld has written in the round


def main():
    c = Ctl("powerloss")
    c.config("[persistence]\nsnapshot-interval 1s\nsnapshot-keep 2\njournal-commit 250ms\n")
    args = ["--journal-segment-size", "64K", "--expire-interval", "3600"]
    rounds = []
    base = int(os.environ.get("FG_PL_SEED") or random.randrange(1, 1 << 30))
    for i in range(4):
        os.environ.pop("FG_PL_SEED", None)
        if i >= 2:
            os.environ["FG_PL_SEED"] = str(base + i)
            os.environ["FG_PL_SAVE"] = os.path.join(c.dir, "crash-image-%d" % i)
            log("round %d: the crash's outcome from FG_PL_SEED=%d (image in %s)" %
                (i, base + i, os.environ["FG_PL_SAVE"]))
        ids, committed = crash_round(
            c, "p%d" % i, lambda w: w.committed() >= COMMITTED and
            snapshots_logged(c) >= SNAPSHOTS, args=args)
        os.environ.pop("FG_PL_SAVE", None)
        want = committed_ids(ids, committed)
        log("round %d: %d IDs journaled, %d committed" % (i, len(ids), len(want)))
        check(len(want) > 1000, "round %d: enough committed IDs to mean something" % i)
        rounds.append((i, ids, want))
        c.start(powerloss=True, args=args)
        check("restored from snapshot" in c.log(), "restored from a snapshot and the journal")
        for j, ids_j, want_j in rounds:
            missing = c.missing(want_j, prefix="p%d" % j)
            check(not missing, "after crash %d: %d committed IDs of round %d missing, e.g. %s"
                  % (i, len(missing), j, missing[:5]))
        lost = c.missing(sorted(ids), prefix="p%d" % i)
        log("round %d: %d uncommitted IDs lost, as the promise allows" % (i, len(lost)))
        check(all(ids[n] >= committed for n in lost), "only uncommitted IDs may be lost")
        c.stop()
    c.start(powerloss=True, args=args)
    check("adopted the region" in c.log(), "a clean restart adopts")
    c.stop()
    passed("42_ctl_powerloss")


main()
