#!/usr/bin/env python3
# timeout: 300
"""39_powerloss_shim — the power-loss shim (tests/preload/powerloss.so)
models what it says, before any durability test relies on it.

A scripted writer (this file, run again under the shim with a step
name) makes files in two watched directories, one with a subdirectory:
some synced, some written after their sync, some renamed over a synced
name without a directory sync. Then the crash:
  - worst case (no seed): exactly the durable state survives;
  - seeds 1..SEEDS: every outcome the model promises turns up (unsynced
    writes lost, kept whole, torn at 512-octet sectors, a zero tail; an
    entry change undone and kept) and nothing durable is ever lost; a
    rename is never half done;
  - a seed replayed on the saved crash image (FG_PL_SAVE) gives the same
    files, octet for octet;
  - FG_PL_SKIP_SYNC: GLOB#first skips only a file's first sync, GLOB#later
    the others, dir:GLOB the first directory sync after a change of a
    matching entry, and each announces its first skip.
"""
import os
import shutil
import subprocess
import sys

import fgkit

TOP = os.environ.get("FG_TOP") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
BUILD = os.environ.get("FG_BUILD") or os.path.join(TOP, "build/release")
SHIM = os.path.join(BUILD, "tests/preload/powerloss.so")
SEEDS = 40
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        print("FAIL " + msg, flush=True)
        sys.exit(1)


def put(path, data, sync):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, data)
    if sync:
        os.fsync(fd)
    os.close(fd)


def append(path, data, sync):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, data)
    if sync:
        os.fdatasync(fd)
    os.close(fd)


def dsync(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


SECTORS = bytes(range(256)) * 16          # 4096 octets: 8 sectors


def writer(a, b):
    """The scripted workload (runs under the shim)."""
    os.makedirs(os.path.join(a, "sub"), exist_ok=True)
    dsync(a)
    put(os.path.join(a, "synced"), b"S" * 1000, True)
    put(os.path.join(a, "grows"), b"G" * 1024, True)
    put(os.path.join(a, "sub", "deep"), b"D" * 700, True)
    put(os.path.join(a, "target"), b"old target", True)
    put(os.path.join(b, "other"), SECTORS, True)
    put(os.path.join(a, "moved-from"), b"M" * 10, True)
    dsync(os.path.join(a, "sub"))
    dsync(a)
    dsync(b)
    # after the last directory syncs: nothing below has its entry durable
    append(os.path.join(a, "grows"), b"g" * 3000, False)
    fd = os.open(os.path.join(b, "other"), os.O_WRONLY)
    os.pwrite(fd, bytes(4096), 0)           # every sector changed, unsynced
    os.close(fd)
    put(os.path.join(a, "new-unsynced"), b"N" * 100, False)
    put(os.path.join(a, "target.tmp"), b"new target", True)
    os.rename(os.path.join(a, "target.tmp"), os.path.join(a, "target"))
    os.rename(os.path.join(a, "moved-from"), os.path.join(a, "moved-to"))


def skip_writer(a, only_first=False):
    """FG_PL_SKIP_SYNC workload: one file synced three times, then a new
    name and two directory syncs."""
    p = os.path.join(a, "seg")
    put(p, b"1" * 10, True)                  # first sync
    dsync(a)
    if only_first:
        return
    append(p, b"2" * 10, True)               # later
    append(p, b"3" * 10, True)               # later
    dsync(a)
    put(os.path.join(a, "late"), b"L", True)
    dsync(a)                                 # the first after "late" appeared
    put(os.path.join(a, "later"), b"M", True)
    dsync(a)                                 # "late" is spent: this one counts


def run_under(step, dirs, state, extra=None):
    env = dict(os.environ, FG_PL_DIR=":".join(dirs), FG_PL_STATE=state, LD_PRELOAD=SHIM)
    env.pop("FG_PL_SEED", None)
    env.update(extra or {})
    p = subprocess.run([sys.executable, __file__, step] + dirs, env=env, capture_output=True)
    check(p.returncode == 0, "%s under the shim: %r" % (step, p.stderr))
    return p.stderr.decode()


def revert(dirs, state, seed=None, save=None):
    env = dict(os.environ, FG_PL_DIR=":".join(dirs), FG_PL_STATE=state, FG_PL_REVERT="1",
               LD_PRELOAD=SHIM)
    env.pop("FG_PL_SEED", None)
    if seed is not None:
        env["FG_PL_SEED"] = str(seed)
    if save:
        env["FG_PL_SAVE"] = save
    p = subprocess.run(["/bin/true"], env=env, capture_output=True)
    err = p.stderr.decode()
    check(p.returncode == 0 and "reverted to its durable state" in err, "revert: %r" % err)
    return err


def tree(dirs):
    """{relative path: bytes} of every file under the roots."""
    out = {}
    for i, d in enumerate(dirs):
        for base, _, files in os.walk(d):
            for f in files:
                p = os.path.join(base, f)
                out["%d/%s" % (i, os.path.relpath(p, d))] = open(p, "rb").read()
    return out


def fresh(work, name):
    dirs = [os.path.join(work, name, "a"), os.path.join(work, name, "b")]
    for d in dirs:
        os.makedirs(d)
    return dirs, os.path.join(work, name + ".state")


def sectors(data):
    return [data[i:i + 512] for i in range(0, len(data), 512)]


def main():
    work = os.path.join(fgkit.scratch_root(), "fg-plshim-%d" % os.getpid())
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. worst case: exactly what was made durable
    dirs, state = fresh(work, "worst")
    run_under("write", dirs, state)
    revert(dirs, state)
    t = tree(dirs)
    want = {"0/synced": b"S" * 1000, "0/grows": b"G" * 1024, "0/sub/deep": b"D" * 700,
            "0/target": b"old target", "0/moved-from": b"M" * 10, "1/other": SECTORS}
    check(t == want, "worst case keeps exactly the durable state: %r" %
          {k: v[:12] for k, v in t.items()})

    # 2. seeds: every outcome turns up, nothing durable is lost
    seen = set()
    for seed in range(1, SEEDS + 1):
        dirs, state = fresh(work, "s%d" % seed)
        run_under("write", dirs, state)
        err = revert(dirs, state, seed)
        t = tree(dirs)
        check(t.get("0/synced") == b"S" * 1000 and t.get("0/sub/deep") == b"D" * 700,
              "seed %d: synced files intact" % seed)
        g = t.get("0/grows")
        check(g is not None and g[:1024] == b"G" * 1024, "seed %d: synced prefix kept" % seed)
        if g == b"G" * 1024:
            seen.add("lost")
        elif g == b"G" * 1024 + b"g" * 3000:
            seen.add("whole")
        elif g == b"G" * 1024 + bytes(3000):
            seen.add("zeros")
        else:
            seen.add("torn")
            for i, s in enumerate(sectors(g)[2:]):
                check(s in (b"g" * len(s), bytes(len(s)), (b"G" * 1024 + bytes(3000))[1024 + 512 * i:][:len(s)]),
                      "seed %d: a torn sector is old or new, whole: %r" % (seed, s[:8]))
        o = t.get("1/other")
        check(o is not None and all(s in (bytes(512), SECTORS[i * 512:(i + 1) * 512])
                                    for i, s in enumerate(sectors(o))),
              "seed %d: each sector of an overwritten file is old or new" % seed)
        if o is not None and 0 < sum(s == bytes(512) for s in sectors(o)) < 8:
            seen.add("torn-overwrite")
        check(t.get("0/target") in (b"old target", b"new target"),
              "seed %d: the renamed-over name holds one of the two files" % seed)
        check("0/target.tmp" not in t, "seed %d: the temp name never was durable" % seed)
        check(("0/moved-from" in t) != ("0/moved-to" in t),
              "seed %d: a rename is done or undone, never half: %s" % (seed, sorted(t)))
        seen.add("rename kept" if t.get("0/target") == b"new target" else "rename undone")
        seen.add("new name kept" if "0/new-unsynced" in t else "new name undone")
        check("seed %d" % seed in err, "seed %d named in the log" % seed)
    for outcome in ("lost", "whole", "zeros", "torn", "torn-overwrite", "rename kept",
                    "rename undone", "new name kept", "new name undone"):
        check(outcome in seen, "over %d seeds, the outcome '%s' turned up (%s)" %
              (SEEDS, outcome, sorted(seen)))
    print("seeds 1..%d: outcomes %s" % (SEEDS, sorted(seen)), flush=True)

    # 3. a seed replayed on the saved crash image gives the same files
    for seed in (7, 23):
        dirs, state = fresh(work, "replay%d" % seed)
        run_under("write", dirs, state)
        save = os.path.join(work, "image%d" % seed)
        revert(dirs, state, seed, save=save)
        first = tree(dirs)
        sdirs = [os.path.join(save, "root0"), os.path.join(save, "root1")]
        revert(sdirs, os.path.join(save, "state"), seed)
        check(tree(sdirs) == first, "seed %d replayed on the saved image: the same files" % seed)

    # 4. skip rules
    cases = [
        ("*/seg#first", "skip1", b"", "the first sync skipped: nothing durable"),
        ("*/seg#first", "skip", b"1" * 10 + b"2" * 10 + b"3" * 10,
         "only the first sync skipped: the later ones count"),
        ("*/seg#later", "skip", b"1" * 10, "later syncs skipped: the first one's content"),
        ("*/seg", "skip", b"", "every sync skipped"),
        ("dir:*/late", "skip", b"1" * 10 + b"2" * 10 + b"3" * 10,
         "the directory sync after 'late' skipped; the next one makes it durable"),
    ]
    for n, (rule, step, seg, what) in enumerate(cases):
        dirs, state = fresh(work, "skip%d" % n)
        err = run_under(step, dirs[:1], state, {"FG_PL_SKIP_SYNC": rule})
        check(("powerloss: skipping" in err), "%s: announced (%r)" % (rule, err))
        revert(dirs[:1], state)
        t = tree(dirs[:1])
        check(t.get("0/seg") == seg, "%s: %s: %r" % (rule, what, t.get("0/seg")))
        if rule.startswith("dir:"):
            check(t.get("0/late") == b"L" and t.get("0/later") == b"M",
                  "%s: %s: %s" % (rule, what, sorted(t)))
    dirs, state = fresh(work, "skipdir2")
    run_under("skip2", dirs[:1], state, {"FG_PL_SKIP_SYNC": "dir:*/later"})
    revert(dirs[:1], state)
    t = tree(dirs[:1])
    check("0/later" not in t and t.get("0/late") == b"L",
          "dir:*/later: the last directory sync skipped, 'later' lost: %s" % sorted(t))
    shutil.rmtree(work, ignore_errors=True)
    print("PASS 39_powerloss_shim: %d checks" % checks)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        writer(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] in ("skip", "skip2", "skip1"):
        skip_writer(sys.argv[2], only_first=sys.argv[1] == "skip1")
    else:
        main()
