#!/usr/bin/env python3
# timeout: 400
"""38_ctl_levers_powerloss — the levers journal under a power loss.

floodctld and floodgate-host --floodctld (peers "near" and "far") run
under the power-loss shim (tests/preload/powerloss.so) in a network
namespace of their own. The operator's levers go through floodctld to the
host, which journals each change in <data-dir>/levers.journal
(lib/levers/levers.c) before it answers "done, journaled": pause near,
pause far, resume far, throttle "disk full". The journal then holds the
acknowledged state (floodctl stats --json reads the file: throttled "disk
full", near paused), and a line the test appends without a sync after the
last acknowledged change moves what the file says (throttled "unsynced
tail"): the positive sign that the crash has something to take. Both
processes are SIGKILLed, the data directory is reverted to its durable
state (the power loss), the region wiped (a reboot), both restarted:

  synced, worst case   what was acknowledged survives, the unsynced tail
                       does not; the restarted host acts on it (a new
                       session greeted "400 disk full"; after `go`, near's
                       CHECK 431 and far's 238)
  synced, seeded       what was acknowledged survives whatever the shim
                       draws for the unsynced tail (FG_PL_SEED, random
                       unless the environment names one; logged)
  line fsync skipped   (FG_PL_SKIP_SYNC */levers.journal, the sync of
                       fg_levers_journal) the acknowledged changes are lost:
                       that fsync is what keeps them
  dir fsync skipped    (dir+:*/levers.journal, the directory's sync after
                       the file's creation) the file is gone with every
                       change in it: nothing else syncs the data directory
                       between (the start's snapshot is waited for, the
                       next is an hour away, no article comes)

docs/operations.md ("Durability points") has the two rows.
"""
import os
import random
import signal
import time

from ctlkit import Ctl, check, log, passed
from hostlib import Client

PORT = 1119
PEERS = ("[peer near]\naddress 127.0.0.1\nnewsgroups *\n"
         "[peer far]\naddress 127.0.0.2\nnewsgroups *\n")
CHANGES = [("pause", "near", "--for", "1h"), ("pause", "far", "--for", "1h"),
           ("resume", "far"), ("throttle", "disk", "full")]
WANT = ("disk full", ["near"])
NOTHING = (None, [])
TAIL = "unsynced tail"


def lever(c, *args):
    rc, out, err = c.ctl(*args)
    check(rc == 0 and "done, journaled" in out, "floodctl %s: %d %r %r" % (args, rc, out, err))


def levers(c):
    """(throttle reason or None, [paused peers]) as the journal file says
    (floodctld reads it at each request)."""
    rc, st = c.ctl_json("stats")
    check(rc == 0 and "levers" in st, "floodctl stats --json has levers: %r" % st.get("levers"))
    lv = st["levers"]
    return lv["throttled"], sorted(p["peer"] for p in lv["paused"])


def nntp(source, greeting=b"200 "):
    cl = Client(src=source, addr=("127.0.0.1", PORT))
    first = cl.line()
    check(first.startswith(greeting), "greeting to %s: %r" % (source, first))
    return cl


def cmd(cl, line):
    cl.send(line.encode() + b"\r\n")
    return cl.line().decode().rstrip("\r\n")


def crash(name, first, skip=None, seed=None):
    """One world: the changes acknowledged, an unsynced tail, the power
    loss, the restart. (the levers after it, the world, its host)."""
    c = Ctl("levpl-" + name)
    if first:
        c.netns()
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n" % PORT + PEERS +
             "[persistence]\nsnapshot-interval 1h\n")
    args = ["--expire-interval", "3600"]
    c.start(powerloss=True, args=args)
    host, hlog = c.start_host(PORT, powerloss=True,
                              env={"FG_PL_SKIP_SYNC": skip} if skip else None)
    # floodctld snapshots at once after its start, and the snapshot and its
    # prune fsync the data directory: a snapshot asked for returns once
    # that thread is done (snapper.c), so no directory sync of floodctld's
    # falls among the levers' below (the next snapshot is an hour away)
    rc, out, err = c.ctl("snapshot")
    check(rc == 0, "floodctl snapshot: %d %r %r" % (rc, out, err))
    for ch in CHANGES:
        lever(c, *ch)
    check(levers(c) == WANT, "%s: the journal holds the acknowledged levers: %r"
          % (name, levers(c)))
    journal = os.path.join(c.data, "levers.journal")
    with open(journal, "a") as f:
        f.write("%d throttle %s\n" % (int(time.time()), TAIL))
    check(levers(c) == (TAIL, ["near"]), "%s: the unsynced tail is in the file before the crash"
          % name)
    if skip:
        said = [l for l in open(hlog).read().split("\n") if l.startswith("powerloss: skipping")]
        check(said, "%s: the shim met no sync matching %s:\n%s" % (name, skip, open(hlog).read()))
        log("%s: %s" % (name, said[0]))
    host.send_signal(signal.SIGKILL)
    c.d.send_signal(signal.SIGKILL)
    host.wait()
    c.d.wait()
    said = [l for l in c.powerloss(seed).split("\n") if "levers.journal" in l]
    log("%s: the power loss: %s" % (name, "; ".join(said) or "nothing said of levers.journal"))
    c.wipe_shm()
    c.start(args=args)
    host, hlog = c.start_host(PORT)
    after = levers(c)
    log("%s: after the power loss: throttled %r, paused %r; the journal file %s"
        % (name, after[0], after[1], "is there" if os.path.exists(journal) else "is gone"))
    return after, c, host


def stop(c, host):
    host.send_signal(signal.SIGTERM)
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    c.stop()


def main():
    seed = int(os.environ.pop("FG_PL_SEED", None) or random.randrange(1, 1 << 30))

    after, c, host = crash("synced", True)
    check(after == WANT, "synced: the acknowledged levers survive the power loss, the unsynced "
          "tail does not: %r" % (after,))
    nntp("127.0.0.2", greeting=b"400 disk full")
    lever(c, "go")
    near, far = nntp("127.0.0.1"), nntp("127.0.0.2")
    for cl in (near, far):
        check(cmd(cl, "MODE STREAM").startswith("203"), "MODE STREAM")
    check(cmd(near, "CHECK <pl1@levers.test>") == "431 <pl1@levers.test>",
          "the restarted host keeps near paused")
    check(cmd(far, "CHECK <pl1@levers.test>") == "238 <pl1@levers.test>",
          "the restarted host keeps far resumed")
    stop(c, host)

    log("seeded: the crash's outcome from FG_PL_SEED=%d" % seed)
    after, c, host = crash("seeded", False, seed=seed)
    check(after[1] == WANT[1] and after[0] in (WANT[0], TAIL),
          "seeded (FG_PL_SEED=%d): the acknowledged levers survive: %r" % (seed, after))
    stop(c, host)

    after, c, host = crash("line-fsync-skipped", False, skip="*/levers.journal")
    check(after == NOTHING, "without the line's fsync the acknowledged levers are lost (the "
          "sync is what keeps them), yet after the power loss: %r" % (after,))
    stop(c, host)

    after, c, host = crash("dir-fsync-skipped", False, skip="dir+:*/levers.journal")
    check(after == NOTHING and not os.path.exists(os.path.join(c.data, "levers.journal")),
          "without the directory's fsync the journal's name is lost with every change, yet "
          "after the power loss: %r" % (after,))
    stop(c, host)
    passed("38_ctl_levers_powerloss")


main()
