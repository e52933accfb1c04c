#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 5400
"""10_soak_kills — the demo's topology under a mixed feed for half an hour,
with floodgate SIGKILLed every 2-3 minutes and floodctld twice; then as
long again without kills.

floodgate on a tap port with its durable queue, floodctld, a real innd
downstream. feedgen rounds (CHECK then TAKETHIS from two peers, text
posts and binaries, old, future, path-looped and malformed articles in
the mix, every answer checked against feedgen's own model) run back to
back. A killer thread SIGKILLs floodgate at random 120-180 s intervals and
starts it again at once, and kills floodctld (restarted at once) at a
third and two thirds of the phase.

At the end of the kill phase, once the relay has drained:
  - no feedgen round saw a wrong answer (a lost answer is not wrong:
    feedgen re-offers and accepts 438/439 for what it cannot know);
  - floodgate's verdict log (every line of it parses) has at most one
    accept line per ID (its 239, or floodctld's recovery line for an
    article the queue held when its writer died): no ID got 239 twice;
  - every ID feedgen got a 239 for (its --outcomes files, whose count is
    its reports' accepted) has its accept line, and every other accept
    line is a recovery or an ID whose answer feedgen lost with a kill;
  - every ID with an accept line was stored by innd exactly once (its news
    log's `+` lines; innd remembers refused IDs too, so its history alone
    would prove nothing).
Then the calm phase, as long: the same feed, no kills. The idle resident
memory of floodgate, floodctld and innd and floodgate's mempool in-use
count, taken after its first round, are where they were after its last
(within a margin for allocator slack).

FG_SOAK_MINUTES sets the length of each phase (default 30); a shorter run
is for developing the test, not a soak.
"""
import json
import os
import random
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgdp  # noqa: E402
import relaykit  # noqa: E402
import restartkit as rk  # noqa: E402
from fgdp import check, log  # noqa: E402

MINUTES = float(os.environ.get("FG_SOAK_MINUTES", "30"))
RATE = 150			# first offers a second, both peers together
ROUND_ARTICLES = 6000		# about 40 s of feed a round at RATE
KILL_EVERY = (120, 180)
RSS_SLACK_KB = 24 * 1024
RSS_SLACK_SHARE = 0.10
MEMPOOL_SLACK = 256


class Soak:
    def __init__(self, w):
        self.w = w
        self.rounds = []
        self.round_no = 0
        self.kills = {"floodgate": 0, "floodctld": 0}
        self.lock = threading.Lock()	# no kill while a restart is half done

    def feed_round(self, tag):
        self.round_no += 1
        r = subprocess.run(
            [os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR, "--source",
             fgdp.KERNEL_ADDRS[1], "--peers", "2", "--mode", "check", "--size", "mix",
             "--binary-size", "200K", "--binary-share", "0.02", "--articles",
             str(ROUND_ARTICLES), "--dups", "3", "--rate", str(RATE), "--window", "32",
             "--seed", str(self.round_no), "--id-prefix", "%s%d" % (tag, self.round_no),
             "--path-identity", "floodgate.test", "--max-reconnects", "1000",
             "--timeout", "900", "--json", "--no-progress", "--outcomes",
             os.path.join(self.w.dir, "outcomes.%d" % self.round_no)],
            capture_output=True, text=True, timeout=1200)
        check(r.stdout.strip(), "feedgen round %d printed nothing: %s"
              % (self.round_no, r.stderr[-800:]))
        res = json.loads(r.stdout)
        res["outcomes"] = os.path.join(self.w.dir, "outcomes.%d" % self.round_no)
        check(r.returncode == 0 and res["mismatches"] == 0,
              "feedgen round %d: exit %d, %d mismatches: %s"
              % (self.round_no, r.returncode, res["mismatches"], res["first_mismatches"][:3]))
        self.rounds.append(res)
        return res

    def restart_dp(self):
        rk.sigkill(self.w.fg)
        self.w.logs.remove(self.w.fg.logp)	# a killed process's log ends anywhere
        self.w.start_dp()
        self.kills["floodgate"] += 1

    def restart_ctld(self):
        rk.sigkill(self.w.ctld)
        self.w.logs.remove(self.w.ctld.logp)
        self.w.start_ctld()
        self.kills["floodctld"] += 1

    def killer(self, end, stop):
        rnd = random.Random(25)
        ctld_at = [time.time() + (end - time.time()) * f for f in (1 / 3, 2 / 3)]
        next_kill = time.time() + rnd.uniform(*KILL_EVERY)
        while not stop.wait(0.5):
            now = time.time()
            with self.lock:
                if ctld_at and now >= ctld_at[0]:
                    ctld_at.pop(0)
                    self.restart_ctld()
                    log("floodctld killed and restarted (%d)" % self.kills["floodctld"])
                if now >= next_kill and now < end:
                    self.restart_dp()
                    log("floodgate killed and restarted (%d)" % self.kills["floodgate"])
                    next_kill = now + rnd.uniform(*KILL_EVERY)

    def phase(self, tag, minutes, kills):
        end = time.time() + minutes * 60
        stop = threading.Event()
        t = None
        if kills:
            t = threading.Thread(target=self.killer, args=(end, stop))
            t.start()
        first = len(self.rounds)
        try:
            while time.time() < end:
                self.feed_round(tag)
        finally:
            stop.set()
            if t:
                t.join()
        done = self.rounds[first:]
        log("%s: %d rounds, %d offers, %d accepted, %d reconnects" % (
            tag, len(done), sum(r["offers"] for r in done), sum(r["accepted"] for r in done),
            sum(r["reconnects"] for r in done)))
        return done


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def idle_sample(w, innd_dir):
    """After the relay drained: resident memory of the three, floodgate's
    mempool in use."""
    relaykit.wait_drained(w, timeout=300)
    innd_pid = int(open(os.path.join(innd_dir, "run", "innd.pid")).read().strip())
    return {"floodgate": rss_kb(w.fg.pid), "floodctld": rss_kb(w.ctld.pid),
            "innd": rss_kb(innd_pid), "mempool_in_use": w.stats()["mempool_in_use"]}


def feedgen_outcomes(rounds):
    """Across feedgen's rounds: the IDs it got a 239 for, and those whose
    answer was lost with a connection (floodgate killed under it)."""
    got, lost = set(), set()
    for r in rounds:
        with open(r["outcomes"]) as f:
            for n, line in enumerate(f, 1):
                p = line.split()
                check(len(p) == 4 and p[2].isdigit() and p[3].isdigit(),
                      "%s line %d does not parse: %r" % (r["outcomes"], n, line))
                if int(p[2]) > 0:
                    got.add(p[0])
                if int(p[3]):
                    lost.add(p[0])
    return got, lost


def check_exactly_once(w, innd_dir, rounds):
    """The verdict log against feedgen's 239s and innd's news log (head
    comment)."""
    relaykit.wait_drained(w, timeout=600)
    vlog = os.path.join(w.dir, "verdicts.log")
    accepts, recovered = rk.vlog_accepts(vlog, strict=True)
    twice = [m for m, n in accepts.items() if n > 1]
    check(not twice, "IDs with more than one accept line: %s" % twice[:5])
    # every 239 feedgen saw has its accept line; an accept line feedgen
    # did not see is a recovery from the queue or an answer lost with a
    # killed connection, nothing else
    got, lost = feedgen_outcomes(rounds)
    check(sum(r["accepted"] for r in rounds) == len(got),
          "feedgen's accepted counts %d, its outcome files %d"
          % (sum(r["accepted"] for r in rounds), len(got)))
    unlogged = sorted(got - set(accepts))
    check(not unlogged, "%d IDs got 239 with no accept line, e.g. %s"
          % (len(unlogged), unlogged[:3]))
    unexplained = sorted(set(accepts) - got - lost - rk.vlog_recovered(vlog, strict=True))
    check(not unexplained, "%d accept lines feedgen neither got a 239 for nor lost, and "
          "no recovery, e.g. %s" % (len(unexplained), unexplained[:3]))
    rk.wait_innd(sorted(accepts), innd_dir, timeout=600)
    news = rk.innd_news(innd_dir)
    stored_twice = [m for m, marks in news.items() if marks.count("+") > 1]
    check(not stored_twice, "innd stored IDs twice: %s" % stored_twice[:5])
    check(rk.floodctl_counter(w, "verdict_log_dropped") == 0, "no verdict-log line dropped")
    log("%d IDs accepted (%d recovered from the queue at a crash), each stored once by innd"
        % (len(accepts), recovered))


def run(w):
    innd_dir = os.path.join(w.dir, "innd")
    relaykit.innd("start", innd_dir, str(rk.INND_PORT))
    try:
        w.start_ctld()
        w.start_dp()
        s = Soak(w)
        s.phase("kill", MINUTES, kills=True)
        check(s.kills["floodgate"] >= max(1, int(MINUTES / 3)) and s.kills["floodctld"] == 2,
              "kills: %s" % s.kills)
        check_exactly_once(w, innd_dir, s.rounds)

        s.feed_round("calm-warm")
        base = idle_sample(w, innd_dir)
        s.phase("calm", MINUTES, kills=False)
        end = idle_sample(w, innd_dir)
        log("idle after the first calm round: %s; after the last: %s" % (base, end))
        for k in ("floodgate", "floodctld", "innd"):
            check(end[k] <= base[k] * (1 + RSS_SLACK_SHARE) + RSS_SLACK_KB,
                  "%s resident memory grew from %d to %d KiB" % (k, base[k], end[k]))
        check(end["mempool_in_use"] <= base["mempool_in_use"] + MEMPOOL_SLACK,
              "mempool in use grew from %d to %d" % (base["mempool_in_use"],
                                                      end["mempool_in_use"]))
        check_exactly_once(w, innd_dir, s.rounds)
        w.stop_dp()
    finally:
        relaykit.innd("stop", innd_dir)
    w.check_logs(allow=rk.reaped("floodgate/[a-z0-9]+") + "|" + rk.RELAY_AWAY)


def main():
    rk.require_inn()
    run(rk.world("soak", "fg-soak", commit_ms=10))
    fgdp.passed("10_soak_kills")


if __name__ == "__main__":
    main()
