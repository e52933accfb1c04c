#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""74_dp_kill — floodgate SIGKILLed under load, restarted: nothing forgotten.

Four clients (two peers, two connections each) offer their own Message-
IDs, CHECK then TAKETHIS, as fast as they can. floodgate is killed with
SIGKILL in the middle — once the clients have settled a tenth of their
offers, a point measured on their own counters, not a time, so the kill
cuts every session on a fast machine as on a slow one; the history lives on in floodctld's region, which
reaps the dead dataplane's writer slots (its journal records drained,
its half-done offers cleared). A new floodgate starts on the same region;
the clients reconnect and offer every ID of theirs again: each ID that got
239 before the kill must be refused (438) — none forgotten — and every
other one is accepted now, so each ID ends with exactly one 239. Every
239'd ID is in history by floodctld's own account (histwriter --check).
"""
import os
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

PER_CLIENT = 20000
BATCH = 50
KILL_AT = 0.10          # the share of all offers settled when floodgate is killed
KILL_BEFORE = 0.90      # ... and no client may be further on than this


def mid(prefix, n):
    # histwriter's spelling, so `histwriter --check` can look them up
    return "<%s-%d@histwriter.test>" % (prefix, n)


class Client:
    def __init__(self, src, prefix, first):
        self.src = src
        self.prefix = prefix
        self.numbers = list(range(first, first + PER_CLIENT))
        self.accepted = set()		# numbers that got 239
        self.refused = set()		# numbers that got 438 on the second round
        self.settled = 0		# offers of this round with their final answer
        self.error = None

    def round(self, stop):
        """Offer every number, in batches (the second round re-offers the
        accepted ones too: they must be refused now)."""
        try:
            s = fgdp.connect(self.src, timeout=5)
            r = fgdp.Lines(s)
            check(r.line().startswith("200 "), "greeting")
            self.settled = 0
            for i in range(0, len(self.numbers), BATCH):
                if stop.is_set():
                    break
                self.batch(s, r, self.numbers[i:i + BATCH])
                self.settled += len(self.numbers[i:i + BATCH])
            s.sendall(b"QUIT\r\n")
            r.line()
            s.close()
        except (OSError, EOFError) as e:
            self.error = e
        except SystemExit:
            self.error = "a check failed in this client (see FAIL above)"

    def batch(self, s, r, nums):
        s.sendall(b"".join(b"CHECK %s\r\n" % mid(self.prefix, n).encode() for n in nums))
        wanted = []
        for n in nums:
            code, _, arg = r.line().partition(" ")
            check(arg == mid(self.prefix, n), "answer out of order: %s %s" % (code, arg))
            if code == "238":
                wanted.append(n)
            elif code == "438":
                self.refused.add(n)
        s.sendall(b"".join(b"TAKETHIS %s\r\n" % mid(self.prefix, n).encode() +
                           fgdp.article(mid(self.prefix, n), body=600) for n in wanted))
        for n in wanted:
            code, _, arg = r.line().partition(" ")
            check(code in ("239", "400"), "TAKETHIS %d: %s" % (n, code))
            if code == "239":
                check(n not in self.accepted, "%s accepted twice" % mid(self.prefix, n))
                self.accepted.add(n)


def run_round(clients, kill_at=None):
    """Every client's round in its own thread. kill_at: return as soon as
    that share of all offers is settled (the clients still running)."""
    stop = threading.Event()
    threads = [threading.Thread(target=c.round, args=(stop,)) for c in clients]
    for t in threads:
        t.start()
    if kill_at:
        total = len(clients) * PER_CLIENT

        def far_enough():
            for c in clients:
                check(c.error is None, "a client stopped before the kill: %s" % c.error)
            return sum(c.settled for c in clients) >= kill_at * total
        fgkit.wait_until(far_enough, 120, lambda: "the clients to settle %d%% of their offers "
                         "(they have %s)" % (100 * kill_at, [c.settled for c in clients]),
                         step=0.002)
        return threads
    for t in threads:
        t.join(120)
        check(not t.is_alive(), "a client hung")
    return threads


def main():
    w = fgdp.World("kill", workers=1)
    w.start_ctld()
    w.start_dp()
    clients = [Client(src, "dpk%d" % k, k * PER_CLIENT)
               for k, src in enumerate(["198.18.0.1", "198.18.0.1", "198.18.0.3", "198.18.0.3"])]
    threads = run_round(clients, kill_at=KILL_AT)
    w.fg.send_signal(signal.SIGKILL)
    at_kill = [c.settled for c in clients]
    w.fg.wait()
    check(max(at_kill) < KILL_BEFORE * PER_CLIENT,
          "every client had work left at the kill: settled %s of %d each" % (at_kill, PER_CLIENT))
    log("killed with %s of %d offers settled per client" % (at_kill, PER_CLIENT))
    for t in threads:
        t.join(60)
        check(not t.is_alive(), "a client hung after the kill")
    before = {c.prefix: set(c.accepted) for c in clients}
    n_before = sum(len(v) for v in before.values())
    check(n_before > 0, "nothing was accepted before the kill")
    check(all(c.error for c in clients), "the kill cut every session: %s"
          % [str(c.error) for c in clients])
    log("before the kill: %d accepted" % n_before)
    w.logs.remove(w.fg.logp)		# a killed process's log ends anywhere
    w.start_dp()			# the same region; slots reaped, offers cleared
    for c in clients:
        c.error = None
    run_round(clients)
    for c in clients:
        check(c.error is None, "second round: %s" % c.error)
        forgotten = before[c.prefix] - c.refused
        check(not forgotten, "%d IDs that got 239 were forgotten, e.g. %s"
              % (len(forgotten), sorted(forgotten)[:5]))
        check(c.accepted | c.refused == set(c.numbers), "some IDs were never settled")
        check(not (c.accepted - before[c.prefix]) & c.refused, "an ID got 239 and 438")
    # floodctld's own account: every ID is in history now — the 239'd ones,
    # and those whose 239 was lost with the killed connection (the article
    # was made safe, the answer never arrived: refused as known now)
    for c in clients:
        p = subprocess.run([os.path.join(fgdp.BIN, "histwriter"), "-c", w.conf, "--check",
                            "--prefix", c.prefix],
                           input="\n".join(str(n) for n in c.numbers),
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "histwriter --check %s: %s %s" % (c.prefix, p.stdout[-500:],
                                                                 p.stderr[-500:]))
    total = sum(len(c.accepted) for c in clients)
    lost = sum(len(c.refused - before[c.prefix]) for c in clients)
    check(total + lost == 4 * PER_CLIENT, "accepted %d + answers lost %d of %d"
          % (total, lost, 4 * PER_CLIENT))
    check(lost <= 4 * BATCH, "%d answers lost: more than the clients had in flight" % lost)
    log("after the restart: %d more accepted, %d refused as known (%d of them had their "
        "239 lost with the connection)"
        % (total - n_before, sum(len(c.refused) for c in clients), lost))
    w.stop_dp()
    w.check_logs(allow=r"^warn region: writer 'floodgate/w0' .* died; draining its journal ring$")
    fgdp.passed("74_dp_kill")


if __name__ == "__main__":
    main()
