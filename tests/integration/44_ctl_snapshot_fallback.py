#!/usr/bin/env python3
# timeout: 300
"""44_ctl_snapshot_fallback — damaged snapshots and torn journals.

A flipped byte in the newest snapshot: the restore refuses it, sets it
aside (snapshot-…fgs.bad, never deleted), says so loudly, falls back to
the previous snapshot and replays the journal after that one — every ID
is there. Then a journal truncated in the middle of a record: everything
before the cut is restored, nothing after it, and the log says where the
segment was torn.
"""
import os

from ctlkit import Ctl, check, log, passed


def flip(path, off):
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x40]))


def fallback():
    c = Ctl("snapfb")
    c.config("[persistence]\nsnapshot-interval 1h\nsnapshot-keep 3\n")
    c.start(args=["--expire-interval", "3600"])
    batches = [("a", 1000), ("b", 1000), ("c", 500)]
    seqs = []
    for i, (prefix, n) in enumerate(batches):
        c.run_writer("--prefix", prefix, "--count", str(n), name=prefix)
        if i < 2:
            rc, j = c.ctl_json("snapshot")
            check(rc == 0, "floodctl snapshot: %r" % j)
            seqs.append(j["sequence"])
    c.stop()
    newest = "snapshot-%016x.fgs" % seqs[-1]
    check(newest in c.data_files(".fgs"), "%s exists" % newest)
    flip(os.path.join(c.data, newest), 4096 + 70000)
    c.wipe_shm()
    c.start()
    log_text = c.log()
    check("failed its check" in log_text and "set aside as" in log_text and
          "falling back to the previous snapshot" in log_text, "the fallback is logged loudly")
    check(("err restore: snapshot " + os.path.join(c.data, newest)) in log_text,
          "logged at level err, naming the file")
    check(newest + ".bad" in os.listdir(c.data), "the damaged snapshot is kept aside")
    _, st = c.ctl_json("status")
    check(st["startup"] == "snapshot", "restored from a snapshot: %r" % st["startup"])
    for prefix, n in batches:
        missing = c.missing(range(n), prefix=prefix)
        check(not missing, "batch %s: %d missing after the fallback" % (prefix, len(missing)))
    check(st["history"]["entries"] == 2500, "2500 entries: %d" % st["history"]["entries"])
    c.stop()


def torn():
    c = Ctl("torn")
    c.config("[persistence]\nsnapshot-interval 1h\n")
    c.start(args=["--expire-interval", "3600"])
    c.run_writer("--prefix", "d", "--count", "1000", name="d")
    _, st = c.ctl_json("status")
    seg, cut = st["journal"]["durable_segment"], st["journal"]["durable_offset"]
    c.run_writer("--prefix", "e", "--count", "1000", name="e")
    c.stop()
    path = os.path.join(c.data, "journal-%016x.fgj" % seg)
    size = os.path.getsize(path)
    check(size > cut + 32 * 1000, "the second batch follows offset %d (size %d)" % (cut, size))
    # inside the first record of the second batch's first block
    os.truncate(path, cut + 32 + 17)
    c.wipe_shm()
    c.start()
    check(("ends torn at offset %d" % cut) in c.log(), "the torn tail is reported")
    check(not c.missing(range(1000), prefix="d"), "everything before the cut is there")
    gone = c.missing(range(1000), prefix="e")
    check(len(gone) == 1000, "nothing after the cut: %d of 1000 absent" % len(gone))
    check(os.path.getsize(path) == cut, "the torn tail was cut off the segment")
    c.stop()


def main():
    fallback()
    torn()
    passed("44_ctl_snapshot_fallback")


main()
