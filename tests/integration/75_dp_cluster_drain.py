#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""75_dp_cluster_drain — two boxes of one site sharing `[cluster]`, one of
them upgraded while the peers feed both (docs/operations.md, "Two boxes
behind one name" and "Upgrading").

The boxes, in one network namespace with a Redis Cluster of three masters:
  A  floodgate on a tap port (198.18.0.2), its own floodctld and verdict log
  B  floodgate-host --floodctld on 127.0.0.1:1119, its own floodctld and
     verdict log
Both: `[session] offer-timeout 5s`, `[cluster]` with the same seeds and
secret. The steps:
  1. feedgen offers the same articles to both boxes (CHECK, three peers
     each, paced), reconnecting as a peer does (every 200 ms); B's feed
     starts once A has taken 200, at twice the pace so that it catches up
     (started together, the box faster at the start may take nearly all);
  2. once B has taken some too: `floodctl drain` on A. A new
     connection to A is answered 400 and closed; A's open sessions go on
     (A's verdict log grows: it answers, mostly 438 now);
  3. `floodctl shutdown 1` on A: its sessions end (400) after a second,
     A exits 0. Its peers now find no server; B keeps accepting (waited
     for: B's verdict log grows while A is down);
  4. A is started again; its peers reconnect and finish their feed;
  5. the verdict logs: no ID has two accept lines on a box, no ID is
     accepted by both boxes, and together they accepted exactly the
     feed's wanted IDs (feedgen's outcome file): nothing lost, nothing
     twice. A's claims cut short by the stop lapse at the offer timeout,
     B's peers are answered 431 until then and offer again;
  6. A takes feed again: new articles offered to A alone are all accepted
     there, and then offered to B are all refused (438: B learns them from
     the cluster).
Waits are on conditions (verdict-log lines, feedgen's end), never on the
clock.
"""
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

ARTICLES = 5000
RATE = 900			# offers a second, per feed (every peer's first offer of an
			# article counts): 5000 articles x 3 peers last 17 s, past the steps
HOST_PORT = 1119
SEEDS = "127.0.0.1:7000,127.0.0.1:7001"
CLUSTER = ("[cluster]\nseeds %s\nsecret site-secret\nbox %%s\ntimeout 2s\n"
           "[session]\noffer-timeout 5s\n" % SEEDS)
HOST_CONFIG = """[site]
server-name boxb.test
path-identity floodgate.test
listen 127.0.0.1:%d
[rules]
cutoff 10d
[session]
clock-skew-limit 0
[peer local]
address 127.0.0.1
[stats]
verdict-log %%s
""" % HOST_PORT


def feedgen(host, port, seed, outcomes, articles=ARTICLES, rate=RATE):
    """feedgen's command: CHECK, three peers each offering every article
    (a 431 offered again, a lost connection re-made, for long enough to
    outlast an offer timeout and a restart)."""
    return [os.path.join(fgdp.BIN, "feedgen"), "--host", host, "--port", str(port),
            "--mode", "check", "--peers", "3", "--dups", "3", "--articles", str(articles),
            "--size", "2K", "--window", "16", "--seed", str(seed), "--cutoff", "10d",
            "--path-identity", "floodgate.test", "--retry-delay", "0.1",
            "--max-retries", "250", "--max-reconnects", "1000", "--rate", str(rate),
            "--timeout", "200", "--outcomes", outcomes, "--no-progress", "--json"]


class Feed:
    def __init__(self, cmd):
        self.out = None
        self.t = threading.Thread(target=self._run, args=(cmd,))
        self.t.start()

    def _run(self, cmd):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=260)
        try:
            self.out = json.loads(r.stdout)
        except ValueError:
            self.out = {"error": r.stderr[-2000:]}

    def running(self):
        return self.t.is_alive()

    def join(self, what):
        self.t.join(280)
        r = self.out
        check(r is not None and "error" not in r and not r["timed_out"],
              "%s did not finish: %s" % (what, json.dumps(r)[:1500]))
        return r


_read = {}			# verdict log -> [octets read, {message-id: accept lines}, lines]


def accepts(path):
    """{message-id: accept lines} of a verdict log so far, read on from
    where the last call stopped (the waits poll it); every whole line must
    parse."""
    off, acc, _ = _read.setdefault(path, [0, {}, 0])
    if os.path.exists(path):
        with open(path, "rb") as f:
            f.seek(off)
            data = f.read()
        whole = data[:data.rfind(b"\n") + 1]
        for line in whole.splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                r = None
            if not isinstance(r, dict):
                check(False, "%s: a line does not parse: %r" % (path, line[:200]))
            if r.get("verdict") == "accept":
                acc[r["id"]] = acc.get(r["id"], 0) + 1
            _read[path][2] += 1
        _read[path][0] = off + len(whole)
    return dict(acc)


def decisions(path):
    """How many lines (decisions of any kind) the verdict log has so far."""
    accepts(path)
    return _read[path][2]


def wanted(outcomes):
    ids = set()
    with open(outcomes) as f:
        for line in f:
            p = line.split()
            check(len(p) == 4, "%s: %r" % (outcomes, line))
            if p[1] == "wanted":
                ids.add(p[0])
    return ids


def main():
    w = fgdp.World("cdrain", extra=CLUSTER % "a")
    vlog_a = os.path.join(w.dir, "verdicts.log")
    w.write_config(extra=CLUSTER % "a" + "[stats]\nverdict-log %s\n" % vlog_a)
    import clusterkit
    import ctlkit
    redis = clusterkit.RedisCluster(masters=3, replicas=0, base_port=7000)
    b = ctlkit.Ctl("cdrainb")
    vlog_b = os.path.join(b.dir, "verdicts.log")
    try:
        b.config(HOST_CONFIG % vlog_b + CLUSTER % "b")
        b.start()
        host, host_log = b.start_host(HOST_PORT, args=["--log-level", "notice"])
        first_stats = os.path.join(w.dir, "stats.first")
        w.start_ctld()
        w.start_dp(["--stats-file", first_stats])
        scenario(w, b, host, vlog_a, vlog_b, first_stats)
        fgkit.stop(host)
        check(host.returncode == 0, "box B stopped with %s" % host.returncode)
        bad = [l for l in fgdp.slurp(host_log).splitlines() if l.startswith("err ")]
        check(not bad, "errors in box B's log: %r" % bad)
        b.stop()
        w.stop_dp()
        w.check_logs()
    finally:
        redis.close()
    fgkit.passed("75_dp_cluster_drain")


def scenario(w, b, host, vlog_a, vlog_b, first_stats):
    out_a, out_b = os.path.join(w.dir, "outcomes.a"), os.path.join(w.dir, "outcomes.b")
    # 1. the same articles to both boxes; B's feed starts once A has taken
    # some (started together, the faster box may take nearly all)
    fa = Feed(feedgen(fgdp.DP_ADDR, 119, 77, out_a))
    fb = None

    def feeding(b_too=True):
        check(fa.running() and (not b_too or not fb or fb.running()), "a feed ended before "
              "A was back (the machine outpaced RATE): %s"
              % json.dumps([fa.out, fb and fb.out])[:1500])
        return True
    fgkit.wait_until(lambda: feeding() and len(accepts(vlog_a)) >= 200, 120,
                     "box A's first 200 acceptances")
    fb = Feed(feedgen("127.0.0.1", HOST_PORT, 77, out_b, rate=2 * RATE))
    fgkit.wait_until(lambda: feeding() and len(accepts(vlog_b)) >= 20, 120,
                     "box B's first 20 acceptances")
    # 2. drain A; its open sessions go on, a new one is refused
    w.drain()
    n_a = decisions(vlog_a)
    fgkit.wait_until(lambda: feeding() and decisions(vlog_a) >= n_a + 100, 60,
                     "box A's open sessions to go on while it drains")
    # 3. stop A: its sessions are answered 400 after a second's grace
    w.shutdown(1)
    a_before = set(accepts(vlog_a))
    n_b = len(accepts(vlog_b))
    fgkit.wait_until(lambda: feeding(b_too=False) and (
        not fb.running() or len(accepts(vlog_b)) >= n_b + 100), 60,
        "box B to accept while A is down")
    n_b_alone = len(accepts(vlog_b)) - n_b
    check(n_b_alone > 0, "box B accepted nothing while A was down")
    # 4. A again; its peers come back by themselves
    w.start_dp()
    ra, rb = fa.join("the feed to A"), fb.join("the feed to B")
    log("feeds: A %d accepted (%d reconnects), B %d accepted; B took %d while A was down"
        % (ra["accepted"], ra["reconnects"], rb["accepted"], n_b_alone))
    check(ra["reconnects"] > 0, "the feed to A never had to reconnect")

    # 5. the verdict logs: exactly once across the boxes
    want = wanted(out_b)
    check(want == wanted(out_a) and len(want) == rb["expected_accepted"],
          "both feeds want the same %d IDs" % len(want))
    fgkit.poll_until(lambda: set(accepts(vlog_a)) | set(accepts(vlog_b)) >= want, 30)
    acc_a, acc_b = accepts(vlog_a), accepts(vlog_b)
    for name, acc in (("A", acc_a), ("B", acc_b)):
        twice = [m for m, n in acc.items() if n > 1]
        check(not twice, "box %s accepted IDs twice: %s" % (name, twice[:3]))
    both = sorted(set(acc_a) & set(acc_b))
    check(not both, "%d IDs accepted by both boxes, e.g. %s" % (len(both), both[:3]))
    union = set(acc_a) | set(acc_b)
    check(union == want, "the boxes accepted %d IDs, %d wanted: missing %s, unwanted %s"
          % (len(union), len(want), sorted(want - union)[:3], sorted(union - want)[:3]))
    check(a_before and acc_b, "both boxes accepted")
    log("verdict logs: %d wanted, A %d (%d before its stop), B %d; none twice"
        % (len(want), len(acc_a), len(a_before), len(acc_b)))
    last = fgdp.read_stats_text(fgdp.slurp(first_stats))
    check(last["dp_sessions_refused_draining"] >= 1 and last.get("dp_conns_aborted", 0) == 0,
          "the drained box's last counters: refused %d, reset %d"
          % (last["dp_sessions_refused_draining"], last.get("dp_conns_aborted", 0)))

    # 6. A takes feed again; B learns its articles from the cluster
    out_a2, out_b2 = os.path.join(w.dir, "outcomes.a2"), os.path.join(w.dir, "outcomes.b2")
    r = Feed(feedgen(fgdp.DP_ADDR, 119, 78, out_a2, articles=200, rate=0)).join("new to A")
    want2 = wanted(out_a2)
    check(r["accepted"] == len(want2) and want2, "A took %d of %d new" % (r["accepted"],
                                                                       len(want2)))
    r = Feed(feedgen("127.0.0.1", HOST_PORT, 78, out_b2, articles=200, rate=0)).join(
        "A's new to B")
    check(r["accepted"] == 0 and r["codes"].get("438", 0) >= len(want2),
          "B took %d of A's new articles (438s: %s)" % (r["accepted"], r["codes"].get("438")))
    log("A's %d new articles offered to B: answers %s" % (len(want2), r["codes"]))
    fgkit.poll_until(lambda: set(accepts(vlog_a)) >= want2, 30)
    check(set(accepts(vlog_a)) >= want2 and not set(accepts(vlog_b)) & want2,
          "A's verdict log has its new articles, B's none")


main()
