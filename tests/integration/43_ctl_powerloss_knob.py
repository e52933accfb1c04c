#!/usr/bin/env python3
# timeout: 300
"""43_ctl_powerloss_knob — the power-loss test can fail.

The same crash as 42_ctl_powerloss, with one fsync removed from floodctld
through the test-only knob FG_TEST_SKIP_FSYNC=journal-commit (the group
commit's fdatasync; floodctld still tells writers their records are
durable). After the simulated power loss, committed IDs are missing and
the check that 42 relies on reports them: proof that the simulation drops
unsynced writes and that the check would catch a missing fsync.
"""
from ctlkit import Ctl, check, committed_ids, crash_round, log, passed


def main():
    c = Ctl("plknob")
    c.config("[persistence]\nsnapshot-interval 1h\njournal-commit 250ms\n")
    env = {"FG_TEST_SKIP_FSYNC": "journal-commit"}
    ids, committed = crash_round(c, "k", lambda w: w.committed() >= 3000, env=env,
                                 args=["--expire-interval", "3600"])
    want = committed_ids(ids, committed)
    check(len(want) > 1000, "the writer saw %d IDs committed" % len(want))
    check("durability deliberately broken" in c.log(), "floodctld said the knob is set")
    c.start(powerloss=True)
    missing = c.missing(want, prefix="k")
    log("with the group commit's fdatasync skipped: %d of %d committed IDs lost" %
        (len(missing), len(want)))
    check(len(missing) > 0, "the check detects the loss a missing fsync causes")
    c.stop()
    passed("43_ctl_powerloss_knob")


main()
