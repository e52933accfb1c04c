#!/usr/bin/env python3
# timeout: 300
"""57_ctl_compat — the released programs on the golden files (docs/compat.md).

floodctld starts on a data directory made of tests/data/compat's golden
files of the oldest versions (a snapshot, a journal segment, a queue
segment, a cursor, the head and warm-up files written before their slots
had a version) and restores from the snapshot and the journal. Then, one
at a time, each file with its version bumped by one (its checksum made good
again): floodctld refuses to start, exits non-zero, and its log names the
file, the version found and the version it reads; the file is still there,
not set aside. floodgate-host, on the directory with a newer queue segment
or cursor, refuses to start the same way.
"""
import os
import shutil
import struct
import subprocess

import hostlib
from ctlkit import TOP, Ctl, check, log, passed

GOLDEN = os.path.join(TOP, "tests/data/compat")
FILES = [  # golden format dir, file name in the data dir
    ("snapshot", "snapshot-0000000000000001.fgs"),
    ("journal", "journal-0000000000000001.fgj"),
    ("queue", "queue-0000000000000001.fgq"),
    ("cursor", "cursor-down.fgc"),
    ("head", "queue-head.fgh"),
    ("warmup", "warmup.fgw"),
]
# file: (version offset, checksum end (CRC-32C of 0..end at end), what the message says)
BUMPS = {
    "snapshot-0000000000000001.fgs": (8, 4092, "snapshot format version"),
    "journal-0000000000000001.fgj": (8, 124, "journal segment format version"),
    "queue-0000000000000001.fgq": (8, 60, "queue segment format version"),
    "cursor-down.fgc": (48, 60, "cursor slot format version"),
    "warmup.fgw": (48, 60, "warm-up file"),
}


FORMAT = {name: fmt for fmt, name in FILES}


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def oldest(fmt):
    """The golden file of the oldest version of a format."""
    names = sorted(n for n in os.listdir(os.path.join(GOLDEN, fmt)) if n.startswith("v"))
    check(names, "golden files for %s" % fmt)
    return os.path.join(GOLDEN, fmt, names[0])


def newest_version(fmt):
    """The newest version this tree has a golden file of (v<N>... names)."""
    names = [n for n in os.listdir(os.path.join(GOLDEN, fmt)) if n.startswith("v")]
    return max(int(n[1:].split("-")[0].split(".")[0]) for n in names)


def fill(data):
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    for fmt, name in FILES:
        shutil.copyfile(oldest(fmt), os.path.join(data, name))


def bump(path, off, crc_end, newest):
    """One past the newest version at off in every slot (two-slot files),
    checksums good again: an old file bumped by one may be a version this
    build reads (the queue segment's 1 -> 2)."""
    b = bytearray(open(path, "rb").read())
    step = 64 if off == 48 else len(b)
    found = None
    for base in range(0, len(b), step):
        if b[base:base + 4] == b"\0\0\0\0":
            continue
        v = newest + 1
        struct.pack_into("<I", b, base + off, v)
        struct.pack_into("<I", b, base + crc_end, crc32c(bytes(b[base:base + crc_end])))
        found = v
    open(path, "wb").write(bytes(b))
    return found


def main():
    c = Ctl("compat")
    c.config("[persistence]\nsnapshot-interval 1h\nwarmup 0\n"
             "[downstream down]\naddress 127.0.0.1:1\n")
    fill(c.data)
    c.start(args=["--expire-interval", "3600"])
    text = c.log()
    check("restored from snapshot" in text, "restored from the golden snapshot:\n" + text)
    check("10 records" in text, "the golden journal's 10 records replayed:\n" + text)
    c.stop()
    log("floodctld restored from the golden files of the oldest versions")

    for name, (off, crc_end, what) in BUMPS.items():
        fill(c.data)
        c.wipe_shm()        # no region to adopt: a reboot, or an older build's
        v = bump(os.path.join(c.data, name), off, crc_end, newest_version(FORMAT[name]))
        p = c.start(args=["--expire-interval", "3600"], wait=False)
        rc = p.wait(timeout=60)
        text = c.log()
        check(rc != 0, "%s version %d: floodctld refused to start (exit %d)" % (name, v, rc))
        line = [l for l in text.splitlines() if name in l and "refusing" in l]
        check(line and what in line[0] and ("version %d;" % v in line[0] or "warm-up" in what)
              and "this build reads" in text,
              "%s: the message names the file, version %d and what this build reads:\n%s"
              % (name, v, text))
        check(os.path.exists(os.path.join(c.data, name)) and
              not any(f.startswith(name + ".bad") for f in os.listdir(c.data)),
              "%s left where it was, not set aside" % name)
        log("%-30s refused: %s" % (name, line[0].split(": ", 1)[-1][:110]))

    # the dataplane's queue, on its own
    for name in ("queue-0000000000000001.fgq", "cursor-down.fgc"):
        fill(c.data)
        off, crc_end, what = BUMPS[name]
        v = bump(os.path.join(c.data, name), off, crc_end, newest_version(FORMAT[name]))
        conf = os.path.join(c.dir, "host.conf")
        with open(conf, "w") as f:
            f.write(hostlib.CONFIG % (hostlib.PORT, 200000, "") +
                    "[persistence]\ndata-dir %s\nwarmup 0\n[downstream down]\n"
                    "address 127.0.0.1:1\n" % c.data)
        p = subprocess.run([hostlib.HOST_BIN, "-c", conf], capture_output=True, timeout=60)
        err = p.stderr.decode(errors="replace")
        check(p.returncode != 0 and name in err and ("%s %d;" % (what, v)) in err and
              "refusing" in err,
              "floodgate-host on a newer %s: exit %d:\n%s" % (name, p.returncode, err))
        log("floodgate-host refused a newer %s" % name)
    passed("57_ctl_compat")


main()
