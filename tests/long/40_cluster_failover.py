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
import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgkit  # noqa: E402
import hostlib  # noqa: E402
from hostlib import BUILD, HOST_BIN, KEEP, check, fail, in_netns, log, read_stats  # noqa: E402

in_netns("fg-clf")
import clusterkit  # noqa: E402

FEEDGEN = os.path.join(BUILD, "bin", "feedgen")
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


class Box:
    def __init__(self, n, seeds):
        self.n = n
        self.port = BASE_PORT + n
        self.dir = tempfile.mkdtemp(prefix="fg-clf-box%d-" % n)
        KEEP.append(self.dir)
        atexit.register(hostlib._rmtree_unless_failed, self.dir)
        conf = os.path.join(self.dir, "floodgate.conf")
        self.stats_file = os.path.join(self.dir, "stats")
        self.log = os.path.join(self.dir, "host.log")
        with open(conf, "w") as f:
            f.write(CONFIG.format(n=n, port=self.port, seeds=seeds))
        self.proc = fgkit.spawn([HOST_BIN, "-c", conf, "--stats-file", self.stats_file,
                                 "--sink", "null"], self.log)
        fgkit.wait_until(self.listening, 30, "box %d to listen" % n)

    def listening(self):
        import socket
        if self.proc.poll() is not None:
            fail("box %d exited:\n%s" % (self.n, open(self.log).read()))
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stats(self):
        return fgkit.fresh_stats_file(self.proc, self.stats_file, "box %d's stats" % self.n)

    def stop(self):
        rc = fgkit.stop(self.proc)
        check(rc == 0, "box %d exit %s:\n%s" % (self.n, rc, open(self.log).read()))
        return read_stats(self.stats_file)


def main():
    rc = clusterkit.RedisCluster(masters=3, replicas=1, base_port=7000)
    try:
        boxes = [Box(n, rc.seeds()) for n in range(BOXES)]
        out = [None] * BOXES

        def one(i, b):
            r = subprocess.run(
                [FEEDGEN, "--host", "127.0.0.1", "--port", str(b.port), "--mode", "check",
                 "--peers", "2", "--dups", "2", "--articles", str(ARTICLES), "--size", "2K",
                 "--window", "16", "--seed", "909", "--rate", str(RATE), "--cutoff", "10d",
                 "--path-identity", "filter.test.example", "--retry-delay", "0.1",
                 "--max-retries", "200", "--timeout", "600", "--no-progress", "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                out[i] = json.loads(r.stdout)
            except ValueError:
                out[i] = {"error": r.stderr[-2000:]}
        ts = [threading.Thread(target=one, args=(i, b)) for i, b in enumerate(boxes)]
        for t in ts:
            t.start()
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
        for t in ts:
            t.join()
        for i, r in enumerate(out):
            check("error" not in r and not r["timed_out"] and r["unknown_outcome"] == 0,
                  "feed to box %d did not finish: %s" % (i, json.dumps(r)[:1500]))
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
        r = subprocess.run([FEEDGEN, "--host", "127.0.0.1", "--port", str(boxes[0].port),
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
