#!/usr/bin/env python3
# timeout: 300
"""41_ctl_writer_kill — a writer SIGKILLed mid-load loses nothing.

A writer inserts at 3000 IDs/s and is SIGKILLed; another starts at once
and keeps inserting; every ID the first one journaled is in history (each
one checked), floodctld reaps the dead slot only after draining its ring
and committing it, and drops the transient entries of the dead writer's
sessions once no writer is alive. Then floodctld itself is SIGKILLed and
restarted: it adopts the region (the shared memory outlived it) with
every ID still there. Last, a clean stop, the region wiped as a reboot
would, and a restart from the journal: every ID again.
"""

import re

from ctlkit import Ctl, check, log, passed, wait_until


def main():
    c = Ctl("wkill")
    c.config("[persistence]\nsnapshot-interval 1h\n")
    c.start(args=["--expire-interval", "3600"])

    a = c.writer("--prefix", "a", "--count", "0", "--rate", "3000", name="a")
    a.wait_ids(2000)
    a.kill()
    a_ids = a.ids()
    log("writer a journaled %d IDs before SIGKILL" % len(a_ids))
    b = c.writer("--prefix", "b", "--count", "0", "--rate", "2000", name="b")
    b.wait_ids(500)
    missing = c.missing(sorted(a_ids), prefix="a")
    check(not missing, "IDs of the killed writer missing: %d, e.g. %s" % (len(missing), missing[:5]))

    # the dead slot is reaped once its ring is drained and committed
    def one_writer():
        ws = c.ctl_json("status")[1]["writers"]
        return ws if len(ws) == 1 else None
    writers = wait_until(one_writer, 60, "the dead writer's slot to be reaped")
    check(len(writers) == 1 and writers[0]["pid"] == b.p.pid, "only writer b left: %r" % writers)
    # the order the docstring promises, read from floodctld's log: the death,
    # then the reap, which comes only once the ring is drained and durable
    text = c.log()
    died = text.find("died; draining its journal ring")
    reaped = text.find("reaped: its ring drained")
    check(died >= 0, "the death was logged")
    check(reaped > died, "the slot reaped after the death was seen (died at %d, reaped at %d)"
          % (died, reaped))
    m = re.search(r"reaped: its ring drained, its (\d+) journal records durable", text)
    check(m is not None and int(m.group(1)) >= len(a_ids),
          "the reaped ring's durable records cover a's %d journaled IDs: %s"
          % (len(a_ids), m.group(0) if m else "no reap line"))

    # floodctld SIGKILLed while b writes: b keeps going, the region survives
    c.kill()		# waits for its end
    c.start()
    check("adopted the region" in c.log(), "restarted floodctld adopted the region")
    b.wait_ids(len(b.ids()) + 500)
    b.p.terminate()
    check(b.wait() == 0, "writer b stopped cleanly")
    b_ids = b.ids()
    check(not c.missing(sorted(a_ids), prefix="a"), "a's IDs after the floodctld restart")
    check(not c.missing(sorted(b_ids), prefix="b"), "b's IDs after the floodctld restart")
    # no writer alive: the killed writer's half-done entry (if any) is gone
    _, st = c.ctl_json("stats")
    by = st["history"]["by_state"]
    check(by["accepting"] == 0 and by["offered"] == 0, "transient entries cleared: %r" % by)

    # clean stop, reboot (the region goes), restart from the journal
    c.stop()
    c.wipe_shm()
    c.start()
    check("restored from" in c.log(), "restored from disk")
    check(not c.missing(sorted(a_ids), prefix="a"), "a's IDs after a reboot")
    check(not c.missing(sorted(b_ids), prefix="b"), "b's IDs after a reboot")
    _, st = c.ctl_json("status")
    check(st["history"]["entries"] == len(a_ids) + len(b_ids),
          "entries %d == %d + %d" % (st["history"]["entries"], len(a_ids), len(b_ids)))
    c.stop()
    passed("41_ctl_writer_kill")


main()
