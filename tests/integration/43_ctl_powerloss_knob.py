#!/usr/bin/env python3
# timeout: 400
"""43_ctl_powerloss_knob — each of floodctld's syncs, removed one at a time.

The crash of 42_ctl_powerloss (a writer inserting, floodctld and the writer
SIGKILLed, a power loss, a restart), each time with one sync of floodctld
turned into a no-op by the power-loss shim (FG_PL_SKIP_SYNC, keyed by
path: the floodctld under test is the release binary, unchanged). A sync
that alone protects committed records must lose some when it is skipped;
a sync that docs/operations.md ("Durability points") argues is covered by
another must lose none — both outcomes are checked, and each case first
checks that the shim announced the skip (the rule met its sync):

  journal commit (fdatasync of the segment)        loss
  a new segment's directory entry (dir fsync)      loss
  the snapshot file's fsync                        loss
  a new segment's header fsync                     none: the commit's fdatasync covers it
  the snapshot rename's directory fsync            none: the prune's directory fsync covers it
  the prune's directory fsync (segments unlinked)  none: a segment that comes back is ignored

Before the rounds, every product directory (the Makefile's tiers, read
with `make print-tiers` / `print-tier-dirs` / `print-tier-progs`, and
include/) is read for a sync the shim does not model (O_SYNC, O_DSYNC,
msync, a waiting sync_file_range); every source outside tests/ that
syncs must be among those read. The levers journal's syncs have their
own test (38_ctl_levers_powerloss), the queue's 53, the warm-up file's 58.
"""
import os
import re
import subprocess

from ctlkit import TOP, Ctl, check, committed_ids, crash_round, log, passed

SEGMENTS = ["--journal-segment-size", "64K", "--expire-interval", "3600"]
CASES = [
    # name, skip rule, [persistence] text, floodctld args, committed IDs lost?
    ("journal-commit", "*/journal-*.fgj#later",
     "snapshot-interval 1h\njournal-commit 250ms\n", ["--expire-interval", "3600"], True),
    ("journal-dir", "dir+:*/journal-*.fgj",
     "snapshot-interval 1h\njournal-commit 250ms\n", SEGMENTS, True),
    ("snapshot", "*/snapshot-*.fgs.tmp",
     "snapshot-interval 1s\nsnapshot-keep 2\njournal-commit 250ms\n", SEGMENTS, True),
    ("journal-create", "*/journal-*.fgj#first",
     "snapshot-interval 1h\njournal-commit 250ms\n", SEGMENTS, False),
    ("snapshot-dir", "dir+:*/snapshot-*.fgs",
     "snapshot-interval 1s\nsnapshot-keep 2\njournal-commit 250ms\n", SEGMENTS, False),
    ("prune-dir", "dir-:*/journal-*.fgj",
     "snapshot-interval 1s\nsnapshot-keep 2\njournal-commit 250ms\n", SEGMENTS, False),
]


def make_print(*args):
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", TOP] + list(args),
                       capture_output=True, text=True)
    check(r.returncode == 0, "make %s: %s" % (" ".join(args), r.stderr))
    return r.stdout.split()


def product_dirs():
    """Every directory of the product, from the Makefile's tiers (each
    tier's module and program directories, as tools/check-layers.sh reads
    them), and include/, whose headers every tier compiles."""
    dirs = ["include"]
    for tier in make_print("print-tiers"):
        dirs += make_print("print-tier-dirs", "TIER=" + tier)
        dirs += make_print("print-tier-progs", "TIER=" + tier)
    return sorted(set(dirs))


def sources(dirs):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(TOP, d)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(base, f), TOP)


def unmodelled_syncs():
    """The shim models fsync, fdatasync, sync and syncfs only: nothing in
    the product may make data durable another way. sync_file_range is
    allowed with SYNC_FILE_RANGE_WRITE alone (the paced snapshot): it
    starts writeback and waits for nothing, so it makes nothing durable
    and its pages stay unsynced writes to the shim (docs/operations.md,
    "Durability points"). Any wait flag would be a sync the shim does not
    see. Every product directory is read (the journal, the warm-up file
    and the levers journal write from lib/); the scan's positive sign:
    every source of the tree outside tests/ that calls a modelled sync is
    among the files read. ([unmodelled], files read, modelled-sync files)"""
    found, read, syncing = [], set(), set()
    for path in sources(product_dirs()):
        read.add(path)
        text = open(os.path.join(TOP, path)).read()
        if re.search(r"\b(?:fsync|fdatasync|syncfs)\s*\(", text):
            syncing.add(path)
        found += ["%s: %s" % (path, w) for w in re.findall(
            r"\b(O_SYNC|O_DSYNC|msync|SYNC_FILE_RANGE_WAIT_\w+)\b", text)]
        calls = re.findall(r"\bsync_file_range\s*\(([^;]*)\)\s*[;=!<>)]", text)
        found += ["%s: sync_file_range(%s)" % (path, " ".join(c.split()))
                  for c in calls if "SYNC_FILE_RANGE_WRITE" not in c]
    outside = []
    for base, dirs, files in os.walk(TOP):
        dirs[:] = [d for d in dirs if not d.startswith(".") and
                   os.path.relpath(os.path.join(base, d), TOP) not in ("build", "tests")]
        for f in files:
            path = os.path.relpath(os.path.join(base, f), TOP)
            if f.endswith((".c", ".h")) and path not in read and re.search(
                    r"\b(?:fsync|fdatasync|syncfs)\s*\(", open(os.path.join(TOP, path)).read()):
                outside.append(path)
    check(not outside, "sources that sync outside the Makefile's tiers, not scanned: %s" % outside)
    check(any(p.startswith("lib/levers/") for p in syncing) and
          any(p.startswith("lib/journal/") for p in syncing),
          "the scan read the levers journal's and the journal's syncs: %s" % sorted(syncing))
    return found, read, syncing


def pruned(c):
    """Journal segments floodctld has pruned behind a kept snapshot."""
    rc, st = c.ctl_json("stats")
    return st.get("counters", {}).get("journal_segments_pruned", 0) if rc == 0 else 0


def main():
    other, read, syncing = unmodelled_syncs()
    check(not other, "syncs the power-loss shim does not model: %s" % other)
    log("scanned %d sources of the product's directories for syncs; %d of them sync, all "
        "modelled" % (len(read), len(syncing)))
    summary = []
    for name, rule, persistence, args, loses in CASES:
        c = Ctl("plskip-" + name)
        c.config("[persistence]\n" + persistence)
        ids, committed = crash_round(
            # with snapshots each second: a journal segment pruned behind the
            # oldest snapshot kept (what the lost snapshot then costs)
            c, "k", lambda w: w.committed() >= 3000 and (
                pruned(c) >= 1 if "snapshot-interval 1s" in persistence else True),
            env={"FG_PL_SKIP_SYNC": rule}, args=args)
        want = committed_ids(ids, committed)
        check(len(want) > 1000, "%s: the writer saw %d IDs committed" % (name, len(want)))
        said = re.findall(r"powerloss: skipping the sync of .*", c.log())
        check(said, "%s: the shim never met a sync matching %s:\n%s" % (name, rule, c.log()))
        c.start(powerloss=True, args=args)
        missing = c.missing(want, prefix="k")
        log("%-15s %-26s %5d of %5d committed IDs lost (%s)" %
            (name, rule, len(missing), len(want), said[0].split(" (")[0][len("powerloss: "):]))
        if loses:
            check(len(missing) > 0, "%s: skipping %s loses committed IDs, and the check "
                  "sees it" % (name, rule))
        else:
            check(not missing, "%s: skipping %s lost %d committed IDs, e.g. %s: the argument "
                  "in docs/operations.md does not hold" % (name, rule, len(missing), missing[:5]))
        summary.append("%s %s" % (name, "loses" if missing else "safe"))
        c.stop()
    log("; ".join(summary))
    passed("43_ctl_powerloss_knob")


main()
