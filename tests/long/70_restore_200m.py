#!/usr/bin/env python3
# timeout: 5400
"""70_restore_200m — a history of 200 M entries survives a reboot.

floodctld with a table of 250 M slots (16 shards by default); histwriter
fills it with 200 M IDs (every third rejected, the rest accepted),
journaled as the engine does; a snapshot; floodctld SIGKILLed, its region
removed (a reboot), the snapshot's and journal's pages dropped from the
page cache (posix_fadvise DONTNEED: a cold disk); floodctld started again
restores from the snapshot, and every one of 20,000 IDs sampled over the
whole range is found with its state (histwriter --check-state). The
restore's time is printed. FG_LONG_ENTRIES sets a smaller fill for a
quick run (the capacity follows at 1.25 times).
"""
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../integration"))
from ctlkit import HISTWRITER, Ctl, check, log, passed  # noqa: E402

ENTRIES = int(os.environ.get("FG_LONG_ENTRIES", "200000000"))
SAMPLE = 20000


def drop_cache(data):
    for name in os.listdir(data):
        if name.endswith((".fgs", ".fgj")):
            fd = os.open(os.path.join(data, name), os.O_RDONLY)
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)


def main():
    c = Ctl("r200m")
    # the config's capacity is a floor: the test's own, not ctlkit's
    c.config("[persistence]\nsnapshot-interval 24h\n")
    with open(c.conf) as f:
        text = f.read().replace("capacity 200000\n", "capacity %d\n" % (ENTRIES * 5 // 4))
    with open(c.conf, "w") as f:
        f.write(text)
    c.start(args=["--expire-interval", "86400"])
    c.wait_ready(timeout=600)
    t0 = time.time()
    w = c.run_writer("--prefix", "big", "--count", str(ENTRIES), "--state", "mixed", "--quiet",
                     name="fill", timeout=4800)
    done = [l for l in w.lines() if l[0] == "done"]
    check(done and int(done[-1][1]) == ENTRIES, "the writer inserted %d: %r" % (ENTRIES, done))
    log("filled %d entries in %.0f s" % (ENTRIES, time.time() - t0))
    _, st = c.ctl_json("status")
    check(st["history"]["entries"] == ENTRIES, "%d entries before the snapshot: %d" % (
        ENTRIES, st["history"]["entries"]))
    t0 = time.time()
    rc, j = c.ctl_json("snapshot")
    check(rc == 0, "floodctl snapshot: %r" % j)
    log("snapshot %d in %.0f s" % (j["sequence"], time.time() - t0))
    c.kill()
    c.wipe_shm()
    drop_cache(c.data)
    t0 = time.time()
    c.start(wait=False)
    c.wait_ready(timeout=1800)
    log("restored in %.1f s (floodctld ready); its log: %s" % (
        time.time() - t0, [l for l in c.log().splitlines() if "restored from" in l]))
    _, st = c.ctl_json("status")
    check(st["startup"] == "snapshot", "restored from the snapshot: %r" % st["startup"])
    check(st["history"]["entries"] == ENTRIES, "%d entries after the restore: %d" % (
        ENTRIES, st["history"]["entries"]))
    rng = random.Random(ENTRIES)
    sample = sorted(rng.sample(range(ENTRIES), SAMPLE - 2)) + [0, ENTRIES - 1]
    p = subprocess.run([HISTWRITER, "-c", c.conf, "--check-state", "--state", "mixed",
                        "--prefix", "big"],
                       input="\n".join(str(n) for n in sample).encode(), capture_output=True,
                       timeout=600)
    out = p.stdout.decode().splitlines()
    check(out and out[-1] == "checked %d missing 0 wrong 0" % SAMPLE,
          "every sampled ID with its state: %r" % out[-5:])
    # the check can fail: the same sample, asked for all accepted
    p = subprocess.run([HISTWRITER, "-c", c.conf, "--check-state", "--state", "accepted",
                        "--prefix", "big"],
                       input="\n".join(str(n) for n in sample).encode(), capture_output=True,
                       timeout=600)
    wrong = sum(1 for n in sample if n % 3 == 0)
    check(p.stdout.decode().splitlines()[-1] == "checked %d missing 0 wrong %d" % (SAMPLE, wrong),
          "the rejected third is told from accepted: %r" % p.stdout.decode().splitlines()[-1:])
    c.stop()
    passed("70_restore_200m: %d entries, %d sampled IDs found with their states" % (
        ENTRIES, SAMPLE))


main()
