#!/usr/bin/env python3
# timeout: 300
"""53_relay_powerloss — nothing that got 239 is lost to a power loss.

floodgate-host runs under the power-loss shim (tests/preload/powerloss.so),
which really drops every write to the data directory that no fsync made
durable. The downstream (countd) is down, so everything accepted waits in
the queue; the host is SIGKILLed mid-feed, the directory reverted to its
durable state, the host started again and the downstream too: every
article that got 239 before the kill is delivered, each once. Then the same with the queue's group
commit fdatasync removed (FG_TEST_SKIP_FSYNC=queue-commit): articles that
got 239 are lost, and this check sees it — proof that it can fail."""
import os
import signal
import tempfile
import threading
import time

import hostlib
import relaykit
from hostlib import check

relaykit.in_netns()


def crash_round(work, name, env=None):
    """Feed, kill mid-feed, power loss, restart; what got 239 and what the
    downstream received."""
    data = os.path.join(work, name)
    state = os.path.join(work, name + ".pl")
    countd = relaykit.Countd(work, args=["--pidfile", os.path.join(work, name + ".pid")])
    countd.record_path = os.path.join(work, name + ".record")
    pl = relaykit.powerloss_env(data, state)
    pl.update(env or {})
    host = hostlib.Host(extra=relaykit.host_config(data), env=pl)
    arts = [("<%s%d@pl.test>" % (name, i), relaykit.make_article("<%s%d@pl.test>" % (name, i),
                                                                  size=4000))
            for i in range(3000)]
    answers = []
    t = threading.Thread(target=lambda: swallow(arts, answers))
    t.start()
    while len(answers) < 1000 and t.is_alive():
        time.sleep(0.01)
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait()
    t.join()
    accepted = [m for m, c in answers if c == 239]
    check(len(accepted) >= 1000, "%d accepted before the kill" % len(accepted))
    relaykit.powerloss(data, state)
    countd.start()
    host = hostlib.Host(extra=relaykit.host_config(data))
    st = relaykit.wait_drained(host)
    got = countd.counts()
    host.proc.send_signal(signal.SIGTERM)
    host.proc.wait()
    countd.stop()
    return accepted, got, st


def swallow(arts, answers):
    """feed() until the connection dies under it."""
    relaykit.feed(arts, answers=answers, until_eof=True)


def main():
    work = tempfile.mkdtemp(prefix="fg-relay-53-")
    os.chmod(work, 0o755)
    hostlib.KEEP.append(work)

    accepted, got, st = crash_round(work, "p")
    lost = [m for m in accepted if m not in got]
    check(not lost, "%d articles got 239 and were not delivered after the power loss, e.g. %s"
          % (len(lost), lost[:3]))
    check(all(n == 1 for n in got.values()), "each delivered once")
    print("power loss: %d accepted before the kill, all %d delivered" % (len(accepted), len(got)))

    accepted, got, st = crash_round(work, "k", env={"FG_TEST_SKIP_FSYNC": "queue-commit"})
    lost = [m for m in accepted if m not in got]
    print("with the queue's fdatasync skipped: %d of %d accepted articles lost" %
          (len(lost), len(accepted)))
    check(len(lost) > 0, "the check sees what a missing fsync loses")
    print("PASS: 53_relay_powerloss")


main()
