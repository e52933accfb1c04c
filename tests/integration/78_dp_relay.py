#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""78_dp_relay — floodgate (DPDK, tap port) relays what it accepts.

The configuration has a [downstream]: floodgate's sink is the durable
queue and its relay (no --sink given), the downstream the counting server
(countd.py) on the namespace's loopback. Four parts:

1. feedgen through the tap: every article that got 239 reaches countd
   exactly once (its count of distinct accepted IDs equals feedgen's and
   floodgate's 239s, and no ID came twice); a scripted feed of known
   articles: each 239'd one arrives byte for byte, the 439'd ones never;
   700 KB articles (larger than the receive window) too.
2. The downstream goes away: articles are still accepted, the queue and
   the downstream's lag grow by as many; it comes back and they drain,
   still exactly once.
3. A slow downstream; floodgate is SIGKILLed once relaying has begun and
   started again (floodctld and its region live on): everything that got
   239 is delivered, re-sends stay within the relay's crash bound
   (4 x connections x window), none more than twice.
4. floodctld's view: the dataplane's queue and downstream counters reach
   `floodctl stats`, and every 239'd ID is in history (a CHECK of each
   gets 438; floodctl lookup of every 25th says accepted).
5. The journal lags (journal-commit 60 s) and the downstream is away: both
   floodgate and floodctld, started again under the power-loss shim, are
   SIGKILLed, what they had not synced is dropped and the region wiped, as
   a power cut would. floodctld's restore re-inserts the IDs of the queue the
   dataplane wrote; the restarted floodgate answers 438 to a CHECK of every
   ID that ever got 239, and, the downstream back, delivers what was
   queued, once.
"""
import json
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

WINDOW = 4
BOUND = 4 * 1 * WINDOW
DP = (fgdp.DP_ADDR, 119)
SRC = fgdp.KERNEL_ADDRS[0]


def feed(arts, answers, until_eof=False):
    got = relaykit.feed(arts, addr=DP, src=SRC, until_eof=until_eof)
    relaykit.first_answers(got, answers)
    return got


def checks(mids):
    """CHECK each ID (pipelined, one connection): {mid: code}."""
    s = fgdp.connect(SRC)
    r = fgdp.Lines(s)
    check(r.line().startswith("200 "), "greeting")
    out = {}
    for i in range(0, len(mids), 100):
        part = mids[i:i + 100]
        s.sendall(b"".join(b"CHECK %s\r\n" % m.encode() for m in part))
        for m in part:
            code, _, arg = r.line().partition(" ")
            check(arg == m, "answer out of order: %s %s" % (code, arg))
            out[m] = int(code)
    s.sendall(b"QUIT\r\n")
    s.close()
    return out


def part_reboot(w, countd, answers, wires):
    # both processes again, now under the power-loss shim: what they have
    # not synced when they die is lost, as in a power cut (the page cache
    # would otherwise keep it across a SIGKILL)
    for p in (w.fg, w.ctld):
        p.send_signal(signal.SIGTERM)
        check(p.wait(timeout=60) == 0, "a clean stop before the power-loss part")
    state = w.data + ".pl"
    pl = relaykit.powerloss_env(w.data, state)
    w.start_ctld(env=pl)
    w.start_dp(env=pl)
    countd.stop()
    lost = arts("d", 200)
    wires.update(lost)
    feed(lost, answers)
    check(all(answers[m] == 239 for m, _ in lost), "accepted with the downstream away")
    for p in (w.fg, w.ctld):
        p.send_signal(signal.SIGKILL)
        p.wait()
        w.logs.remove(p.logp)
    relaykit.powerloss(w.data, state)
    os.unlink(w.shm)
    w.start_ctld()
    m = re.search(r"the outbound queue: (\d+) IDs re-inserted", fgdp.slurp(w.ctld.logp))
    accepted = [mid for mid, code in answers.items() if code == 239]
    # the clean stop before made the journal whole up to the 200; those the
    # journal (60 s behind) never had come back from the queue
    check(m and int(m.group(1)) >= len(lost), "the restore took the %d IDs from the queue: %s"
          % (len(lost), m.group(0) if m else fgdp.slurp(w.ctld.logp)[-2000:]))
    w.start_dp()
    got = checks(sorted(accepted))
    bad = [mid for mid, code in got.items() if code != 438]
    check(not bad, "%d IDs that got 239 are not in history after the reboot, e.g. %s"
          % (len(bad), bad[:3]))
    countd.start()
    relaykit.wait_drained(w)
    log("reboot with the journal behind: %s; all %d IDs known, the queued 200 delivered"
        % (m.group(0), len(accepted)))


def arts(prefix, n, **kw):
    return [("<%s%d@dprelay.test>" % (prefix, i),
             relaykit.make_article("<%s%d@dprelay.test>" % (prefix, i), **kw)) for i in range(n)]


def part_feedgen(w, countd):
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                         "--articles", "3000", "--peers", "2", "--dups", "3", "--json",
                         "--path-identity", "floodgate.test", "--id-prefix",
                         "dpr%d" % os.getpid(), "--timeout", "90"],
                        capture_output=True, text=True, timeout=150)
    check(fg.returncode == 0, "feedgen:\n%s\n%s" % (fg.stdout[-3000:], fg.stderr[-2000:]))
    accepted = json.loads(fg.stdout)["accepted"]
    check(accepted > 2000, "feedgen: only %d accepted" % accepted)
    st = relaykit.wait_drained(w, timeout=90)
    counts = countd.counts()
    mine = {m: n for m, n in counts.items() if ("dpr%d" % os.getpid()) in m}
    check(len(mine) == accepted, "countd has %d distinct IDs, feedgen had %d accepted"
          % (len(mine), accepted))
    check(all(n == 1 for n in mine.values()), "an ID relayed twice: %s"
          % [m for m, n in mine.items() if n > 1][:5])
    check(st["nntp_response:239"] == accepted, "floodgate said 239 %d times, feedgen saw %d"
          % (st["nntp_response:239"], accepted))
    check(relaykit.stats_line(st, "down", "accepted") == accepted, "downstream accepted: %s"
          % relaykit.stats_line(st, "down", "accepted"))
    log("feedgen: %d accepted, each relayed once" % accepted)


def main():
    w = fgdp.World("relay", prefix="fg-dpr",
                   extra="[persistence]\njournal-commit 60s\nwarmup 0\n"
                   "[downstream down]\naddress 127.0.0.1:%d\nwindow %d\n"
                   % (relaykit.DOWN_PORT, WINDOW))
    countd = relaykit.Countd(w.dir)
    countd.start()
    w.start_ctld()
    w.start_dp()
    st = w.stats()
    check("queue_records_on_disk" in st and "downstream:down:lag_records" in st,
          "the queue is not floodgate's sink: %s" % sorted(st)[:10])

    # 1. feedgen, then known articles: new, too old, duplicates
    part_feedgen(w, countd)
    answers, wires = {}, {}
    first = arts("a", 200) + arts("old", 10, age=20 * 86400)
    wires.update(first)
    got = feed(first + first[:10], answers)
    check(all(code == 439 for _, code in got[210:]), "duplicates refused")
    check(sum(answers[m] == 239 for m, _ in first[:200]) == 200, "200 accepted")
    check(all(answers[m] == 439 for m, _ in first[200:]), "too old refused")
    # articles larger than the receive window (256 KiB): a connection
    # holds at most half of it for the queue, the rest is copied
    big = arts("big", 4, size=700 * 1000)
    wires.update(big)
    feed(big, answers)
    check(all(answers[m] == 239 for m, _ in big), "700 KB articles accepted")
    relaykit.wait_drained(w)
    relaykit.expect_exactly_once(countd, answers, wires)
    log("known articles: 200 relayed byte for byte, 4 of 700 KB too, the refused ones not")

    # 2. the downstream goes away and comes back
    countd.stop()
    more = arts("b", 150)
    wires.update(more)
    feed(more, answers)
    check(all(answers[m] == 239 for m, _ in more), "accepted while the downstream is down")
    st = w.stats()
    check(relaykit.stats_line(st, "down", "lag_records") == 150, "150 waiting: %s"
          % relaykit.stats_line(st, "down", "lag_records"))
    check(relaykit.stats_line(st, "down", "ready") == 0, "no connection up")
    check(st["queue_records_on_disk"] >= 150, "the queue holds them: %s"
          % st["queue_records_on_disk"])
    countd.start()
    relaykit.wait_drained(w)
    relaykit.expect_exactly_once(countd, answers, wires)
    log("downstream away and back: 150 queued, drained")

    # 3. a slow downstream; SIGKILL floodgate once relaying has begun
    countd.restart(["--delay-ms", "20"])
    last = arts("c", 300)
    wires.update(last)
    feed(last, answers)
    check(all(answers[m] == 239 for m, _ in last), "accepted before the kill")
    countd.wait_mid_relay(last)
    w.fg.send_signal(signal.SIGKILL)
    w.fg.wait()
    w.logs.remove(w.fg.logp)		# a killed process's log ends anywhere
    countd.restart()
    w.start_dp()
    relaykit.wait_drained(w)
    counts = countd.counts()
    twice = [m for m, n in counts.items() if n > 1]
    check(len(twice) <= BOUND, "%d articles re-sent after the crash, bound %d"
          % (len(twice), BOUND))
    check(all(counts[m] == 2 for m in twice), "none more than twice")
    relaykit.expect_exactly_once(countd, answers, wires, allow_twice=set(twice))
    log("SIGKILL mid-relay: everything delivered, %d re-sent (bound %d)" % (len(twice), BOUND))

    # 4. floodctld sees the queue's and the relay's counters; history has every ID
    # the dataplane's counters reach its region slot every 100 ms
    def ctl_counters():
        rc, out, err = w.ctl("stats", "--json")
        check(rc == 0, "floodctl stats: %s" % err)
        c = json.loads(out)["counters"]
        return c if c.get("relay_accepted", 0) > 0 and c.get("queue_records", 0) > 0 else None
    c = fgdp.poll_until(ctl_counters, 30) or json.loads(w.ctl("stats", "--json")[1])["counters"]
    check(c.get("relay_accepted", 0) > 0 and c.get("queue_records", 0) > 0,
          "floodctld lacks the dataplane's queue/relay counters: relay_accepted %s "
          "queue_records %s" % (c.get("relay_accepted"), c.get("queue_records")))
    accepted = sorted(m for m, code in answers.items() if code == 239)
    unknown = [m for m, code in checks(accepted).items() if code != 438]
    check(not unknown, "%d of %d IDs that got 239 are not in history, e.g. %s"
          % (len(unknown), len(accepted), unknown[:3]))
    # and floodctld's own reading of the table says why: accepted
    for mid in accepted[::25]:
        rc, out, _ = w.ctl("lookup", mid, "--json")
        check(rc == 0 and json.loads(out).get("state") == "accepted",
              "%s got 239 and is not in history: %s" % (mid, out))

    # 5. a reboot with the journal behind: the queue is history's safety net
    part_reboot(w, countd, answers, wires)
    relaykit.expect_exactly_once(countd, answers, wires, allow_twice=set(twice))
    w.stop_dp()
    countd.stop()
    w.check_logs(allow=r"^warn region: writer 'floodgate/(w0|outbound)' .* died; "
                 r"draining its journal ring$|^warn relay: |^warn queue: ")
    fgdp.passed("78_dp_relay")


if __name__ == "__main__":
    main()
