#!/usr/bin/env python3
# timeout: 900
"""40_cluster_failover — a master killed mid-feed (docs/scale.md, "Several
boxes", "Failure semantics"): three floodgate-host boxes share a Redis
Cluster of three masters with a replica each; feedgen feeds the three the
same articles at a steady rate, and a third of the way through the master
of the most slots is SIGKILLed. The cluster fails over to its replica
(cluster-node-timeout 1 s) while the feed goes on.

Checked: every feed finishes (no stall, every answer came); nothing is
lost (the articles accepted across the boxes cover every wanted one);
never twice on one box (each box's acceptances are at most the wanted
count: its own history); and the articles accepted more than once across
the boxes stay within the stated bound — each such copy needs a claim the
cluster did not answer (counted as nntp_cluster_fallbacks) or a key the
dead master acknowledged and had not yet replicated (its replication lag,
milliseconds on loopback: LAG_SLACK) — and the boxes answer shared again
after the failover (fallbacks stop growing).
"""
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgkit  # noqa: E402
from hostlib import check, in_netns, log  # noqa: E402

in_netns("fg-clf")
import clusterkit  # noqa: E402

BOXES = 3
BASE_PORT = 1119
ARTICLES = 3000
RATE = 500              # first offers a second, per feed
LAG_SLACK = 20          # keys the dead master may have acknowledged unreplicated

CONFIG = """[site]
server-name box{n}.test.example
path-identity filter.test.example
listen 127.0.0.1:{port}
[rules]
cutoff 10d
[session]
offer-timeout 5s
[history]
capacity 100000
[peer local]
address 127.0.0.1
[cluster]
seeds {seeds}
secret failover-secret
box box{n}
timeout 200ms
"""


def box(n, seeds):
    return clusterkit.Box(n, BASE_PORT + n,
                          CONFIG.format(n=n, port=BASE_PORT + n, seeds=seeds), "fg-clf-box",
                          clean_log=False)


def main():
    rc = clusterkit.RedisCluster(masters=3, replicas=1, base_port=7000)
    try:
        boxes = [box(n, rc.seeds()) for n in range(BOXES)]
        feeds = clusterkit.Feeds(boxes, [
            "--mode", "check", "--peers", "2", "--dups", "2", "--articles", str(ARTICLES),
            "--size", "2K", "--window", "16", "--seed", "909", "--rate", str(RATE),
            "--cutoff", "10d", "--path-identity", "filter.test.example", "--retry-delay", "0.1",
            "--max-retries", "200", "--timeout", "600", "--no-progress", "--json"])
        # a third of the way: kill the master holding slot 0's range
        fgkit.wait_until(lambda: sum(b.stats().get("cluster_settles", 0) for b in boxes)
                         >= ARTICLES // 3, 120, "a third of the feed settled")
        victim = None
        for p in rc.ports:
            role = clusterkit.cli(p, "role") or ""
            if role.startswith("master") and "0-" in (clusterkit.cli(p, "cluster", "nodes")
                                                      or "").split("myself")[1].split("\n")[0]:
                victim = p
        check(victim is not None, "found the master of slot 0")
        before = [b.stats() for b in boxes]
        log("killing the master on port %d mid-feed" % victim)
        rc.procs[victim].send_signal(signal.SIGKILL)
        rc.procs[victim].wait()
        out = feeds.check_finished()
        wanted = out[0]["expected_accepted"]
        acc = [r["accepted"] for r in out]
        st = [b.stats() for b in boxes]
        fallbacks = sum(s["nntp_cluster_fallbacks"] for s in st)
        races = sum(s["cluster_takethis_races"] for s in st)
        extra = sum(acc) - wanted
        log("%d wanted; accepted %s; %d copies beyond one; fallbacks %d (%d before the kill); "
            "races %d" % (wanted, acc, extra, fallbacks,
                          sum(s["nntp_cluster_fallbacks"] for s in before), races))
        check(sum(acc) >= wanted, "articles lost: %d accepted of %d" % (sum(acc), wanted))
        check(all(a <= wanted for a in acc), "a box accepted an article twice: %s" % acc)
        check(extra <= fallbacks + LAG_SLACK,
              "accepted twice across boxes %d, beyond the bound (fallbacks %d + %d)"
              % (extra, fallbacks, LAG_SLACK))
        check(all(s["cluster_answering"] == 1 for s in st), "answering again after the failover")
        # shared again: a new claim after the failover is answered by the cluster
        fb = fallbacks
        r = subprocess.run([clusterkit.FEEDGEN, "--host", "127.0.0.1", "--port",
                            str(boxes[0].port),
                            "--mode", "check", "--peers", "1", "--dups", "1", "--articles",
                            "200", "--seed", "910", "--cutoff", "10d", "--path-identity",
                            "filter.test.example", "--no-progress", "--json"],
                           stdout=subprocess.PIPE, text=True)
        check(json.loads(r.stdout)["accepted"] > 0, "a feed after the failover")
        check(sum(b.stats()["nntp_cluster_fallbacks"] for b in boxes) == fb,
              "claims fell back after the failover")
        for b in boxes:
            b.stop()
    finally:
        rc.close()
    fgkit.passed("40_cluster_failover")


main()
