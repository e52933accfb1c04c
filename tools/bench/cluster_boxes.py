#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cluster_boxes.py --quick|--full --md FILE — three boxes with and without
the shared second-level history (docs/scale.md, "Several boxes").

The same CHECK-heavy feed (feedgen, the same articles to every box, each
offered by several peers of that box) against three floodgate-host boxes
(one thread each, a null sink: the figures are the filter's), first each
box alone, then the three sharing a Redis Cluster of three masters, all in
a network namespace of this run's own. Per variant, a markdown table:
articles accepted across the boxes (what reaches the site's downstream),
cluster round trips per offer (claims and settles over offers), CPU per
million offers of each box and of the Redis nodes together, and the p99
CHECK answer latency per box (feedgen's). tools/bench/run.sh stamps the
fragment with its run; docs/bench/cluster.md is where it lands.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.environ.get("FG_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
B = os.path.join(TOP, "build", "release")
HOST = os.path.join(B, "bin", "floodgate-host")
FEEDGEN = os.path.join(B, "bin", "feedgen")
BOXES = 3
BASE_PORT = 1119
REDIS_PORTS = [7000, 7001, 7002]
TICK = os.sysconf("SC_CLK_TCK")

CONFIG = """[site]
server-name box{n}.bench.example
path-identity filter.bench.example
listen 127.0.0.1:{port}
[rules]
cutoff 10d
retention 11d
[history]
capacity 1000000
[peer local]
address 127.0.0.1
{cluster}"""

CLUSTER = """[cluster]
seeds {seeds}
secret bench-secret
box box{n}
timeout 1s
"""


def die(msg):
    print("cluster_boxes: " + msg, file=sys.stderr)
    sys.exit(1)


def in_netns():
    """Run again in a network namespace of our own (unshare), lo up."""
    if os.environ.get("FG_BENCH_NETNS"):
        return
    env = dict(os.environ, FG_BENCH_NETNS="1")
    rc = subprocess.call(["unshare", "--net", "sh", "-c",
                          'ip link set lo up && exec "$0" "$@"', sys.executable,
                          os.path.abspath(__file__)] + sys.argv[1:], env=env, cwd=TOP)
    sys.exit(rc)


def wait(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.02)
    die("timed out waiting for " + what)


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cli(port, *args):
    r = subprocess.run(["redis-cli", "-p", str(port)] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=30)
    return r.stdout.strip() if r.returncode == 0 else ""


class Redis:
    def __init__(self, work):
        self.dir = os.path.join(work, "redis")
        os.makedirs(self.dir)
        self.procs = []
        for p in REDIS_PORTS:
            self.procs.append(subprocess.Popen(
                ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--cluster-enabled",
                 "yes", "--cluster-config-file", "nodes-%d.conf" % p, "--dir", self.dir,
                 "--save", "", "--appendonly", "no", "--protected-mode", "no",
                 "--logfile", os.path.join(self.dir, "%d.log" % p)]))
        for p in REDIS_PORTS:
            wait(lambda p=p: cli(p, "ping") == "PONG", 30, "redis %d" % p)
        r = subprocess.run(["redis-cli", "--cluster", "create"] +
                           ["127.0.0.1:%d" % p for p in REDIS_PORTS] + ["--cluster-yes"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            die("redis-cli --cluster create: " + r.stdout[-1000:])
        wait(lambda: all("cluster_state:ok" in cli(p, "cluster", "info") for p in REDIS_PORTS),
             60, "the cluster to be ok")

    def cpu(self):
        return sum(cpu_s(p.pid) for p in self.procs)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


class Box:
    def __init__(self, work, n, seeds):
        self.n = n
        self.port = BASE_PORT + n
        d = os.path.join(work, "box%d-%s" % (n, "shared" if seeds else "alone"))
        os.makedirs(d)
        conf = os.path.join(d, "floodgate.conf")
        self.stats_file = os.path.join(d, "stats")
        with open(conf, "w") as f:
            f.write(CONFIG.format(n=n, port=self.port, cluster=CLUSTER.format(
                seeds=seeds, n=n) if seeds else ""))
        self.proc = subprocess.Popen([HOST, "-c", conf, "-t", "1", "--sink", "null",
                                      "--stats-file", self.stats_file],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(d, "log"), "w"))
        wait(self.listening, 30, "box %d" % n)

    def listening(self):
        if self.proc.poll() is not None:
            die("box %d exited at start" % self.n)
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(timeout=60) != 0:
            die("box %d did not stop cleanly" % self.n)
        out = {}
        for line in open(self.stats_file):
            k, _, v = line.strip().rpartition(" ")
            try:
                out[k] = int(v)
            except ValueError:
                pass
        return out


def feed(boxes, articles, seed):
    res = [None] * len(boxes)

    def one(i, b):
        r = subprocess.run(
            [FEEDGEN, "--host", "127.0.0.1", "--port", str(b.port), "--server-pid",
             str(b.proc.pid), "--mode", "check", "--peers", "4", "--dups", "4",
             "--articles", str(articles), "--size", "2K", "--window", "64", "--seed",
             str(seed), "--cutoff", "10d", "--path-identity", "filter.bench.example",
             "--retry-delay", "0.05", "--max-retries", "200", "--timeout", "600",
             "--no-progress", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            res[i] = json.loads(r.stdout)
        except ValueError:
            die("feedgen against box %d: %s" % (b.n, r.stderr[-500:]))
    ts = [threading.Thread(target=one, args=(i, b)) for i, b in enumerate(boxes)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in res:
        if r["timed_out"] or r["unknown_outcome"]:
            die("a feed did not finish")
    return res


def variant(work, shared, articles, seed):
    redis = Redis(work) if shared else None
    seeds = ",".join("127.0.0.1:%d" % p for p in REDIS_PORTS[:2]) if shared else None
    boxes = [Box(work, n, seeds) for n in range(BOXES)]
    load = open("/proc/loadavg").read().split()[0]
    r_cpu0 = redis.cpu() if redis else 0
    res = feed(boxes, articles, seed)
    r_cpu = (redis.cpu() - r_cpu0) if redis else 0
    stats = [b.stop() for b in boxes]
    if redis:
        redis.stop()
    offers = sum(r["offers"] for r in res)
    trips = sum(s.get("nntp_cluster_claims", 0) + s.get("cluster_settles", 0) for s in stats)
    return {
        "shared": shared, "load": load, "wanted": res[0]["expected_accepted"],
        "accepted": [r["accepted"] for r in res], "offers": offers,
        "round_trips_per_offer": trips / offers if offers else 0,
        "box_cpu_per_m": [r["cpu_server_per_m_offers"] for r in res],
        "redis_cpu_per_m": r_cpu / offers * 1e6 if offers else 0,
        "p99_us": [r["latency"]["offer"]["p99_us"] for r in res],
        "p50_us": [r["latency"]["offer"]["p50_us"] for r in res],
        "fallbacks": sum(s.get("nntp_cluster_fallbacks", 0) for s in stats),
        "elapsed_s": max(r["elapsed_s"] for r in res),
    }


def table(rows, articles):
    out = ["Three floodgate-host boxes (one thread each, null sink), the same %d "
           "articles to each (feedgen CHECK mode, 4 peers a box, every article offered "
           "by each: 12 offers an article across the site), all at once; the Redis "
           "Cluster: three masters, no replicas, on the same machine." % articles, "",
           "| | each box alone | sharing the cluster |", "| --- | --- | --- |"]

    def row(name, f):
        out.append("| %s | %s | %s |" % (name, f(rows[0]), f(rows[1])))
    row("articles wanted (one box's feed)", lambda v: "%d" % v["wanted"])
    row("accepted across the boxes (reach the downstream)",
        lambda v: "%d (%s)" % (sum(v["accepted"]), " + ".join(map(str, v["accepted"]))))
    row("copies per wanted article", lambda v: "%.2f" % (sum(v["accepted"]) / v["wanted"]))
    row("offers, all boxes", lambda v: "%d" % v["offers"])
    row("cluster round trips per offer (claims + settles)",
        lambda v: "%.3f" % v["round_trips_per_offer"])
    row("CPU per M offers, each box (s)",
        lambda v: " / ".join("%.2f" % x for x in v["box_cpu_per_m"]))
    row("CPU per M offers, the Redis nodes together (s)", lambda v: "%.2f" % v["redis_cpu_per_m"])
    row("CHECK answer p50, each box (µs)", lambda v: " / ".join("%.0f" % x for x in v["p50_us"]))
    row("CHECK answer p99, each box (µs)", lambda v: " / ".join("%.0f" % x for x in v["p99_us"]))
    row("claims decided locally (fallbacks)", lambda v: "%d" % v["fallbacks"])
    row("feed time (s)", lambda v: "%.1f" % v["elapsed_s"])
    row("load average as it began", lambda v: v["load"])
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("--quick", "--full") or sys.argv[2] != "--md":
        die("usage: cluster_boxes.py --quick|--full --md FILE")
    for prog in (HOST, FEEDGEN):
        if not os.path.exists(prog):
            die(prog + " not built (make all)")
    if not shutil.which("redis-server"):
        die("redis-server not installed (make deps)")
    in_netns()
    articles = 4000 if sys.argv[1] == "--quick" else 30000
    work = tempfile.mkdtemp(prefix="fg-bench-cluster-")
    try:
        rows = [variant(work, False, articles, 501), variant(work, True, articles, 502)]
    finally:
        shutil.rmtree(work, True)
    if sum(rows[1]["accepted"]) != rows[1]["wanted"]:
        die("shared: accepted %d, wanted %d exactly once" % (sum(rows[1]["accepted"]),
                                                            rows[1]["wanted"]))
    with open(sys.argv[3], "w") as f:
        f.write("### Several boxes (cluster_boxes)\n\n" + table(rows, articles))
    print(table(rows, articles))


main()
