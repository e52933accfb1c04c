# SPDX-License-Identifier: MIT
"""clusterkit.py — a real Redis Cluster on loopback ports for the tests
(not a test): redis-server --cluster-enabled yes per node, redis-cli
--cluster create, and waits on every node's `cluster info` saying
cluster_state:ok and knowing every node. stop() kills the nodes and
start_again() restarts them from their nodes-PORT.conf files (same node
IDs and slots; the keys are gone: no persistence). Box and Feeds are
the other half of such a test: floodgate-host boxes that share it, and
feedgen feeding them all at once. Python stdlib only; call it inside the
test's own network namespace.
"""
import atexit
import json
import os
import shutil
import socket
import subprocess
import threading

import fgkit
import hostlib
from fgkit import check, fail, wait_until

FEEDGEN = os.path.join(fgkit.BUILD, "bin", "feedgen")


def cli(port, *args, timeout=10):
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    return r.stdout.strip() if r.returncode == 0 else None


class RedisCluster:
    def __init__(self, masters=3, replicas=0, base_port=7000):
        if not shutil.which("redis-server") or not shutil.which("redis-cli"):
            fgkit.skip("redis-server or redis-cli not installed", deps=True)
        self.ports = [base_port + i for i in range(masters * (1 + replicas))]
        self.dir = fgkit.mkdtemp("fg-redis-")
        self.procs = {}
        self.start_nodes()
        r = subprocess.run(["redis-cli", "--cluster", "create"] +
                           ["127.0.0.1:%d" % p for p in self.ports] +
                           ["--cluster-replicas", str(replicas), "--cluster-yes"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120)
        check(r.returncode == 0, "redis-cli --cluster create:\n" + r.stdout[-2000:])
        self.wait_ok()

    def seeds(self):
        return ",".join("127.0.0.1:%d" % p for p in self.ports[:2])

    def start_nodes(self):
        for p in self.ports:
            self.procs[p] = fgkit.spawn(
                ["redis-server", "--port", str(p), "--bind", "127.0.0.1",
                 "--cluster-enabled", "yes", "--cluster-config-file", "nodes-%d.conf" % p,
                 "--dir", self.dir, "--cluster-node-timeout", "1000", "--save", "",
                 "--appendonly", "no", "--protected-mode", "no"],
                os.path.join(self.dir, "redis-%d.log" % p), append=True)
        for p in self.ports:
            wait_until(lambda p=p: cli(p, "ping") == "PONG", 30, "redis node %d to answer" % p)

    def wait_ok(self, timeout=60):
        want = "cluster_known_nodes:%d" % len(self.ports)

        def ok():
            for p in self.ports:
                info = cli(p, "cluster", "info") or ""
                if "cluster_state:ok" not in info or want not in info:
                    return False
            return True
        wait_until(ok, timeout, "the Redis Cluster to say cluster_state:ok on every node")

    def stop(self):
        for p in self.ports:
            fgkit.stop(self.procs[p])
        for p in self.ports:
            check(cli(p, "ping", timeout=5) is None, "redis node %d still answers" % p)

    def start_again(self):
        self.start_nodes()
        self.wait_ok()

    def close(self):
        for p in self.ports:
            if self.procs.get(p) and self.procs[p].poll() is None:
                fgkit.stop(self.procs[p])
        if not fgkit.failed:
            shutil.rmtree(self.dir, True)
        else:
            fgkit.log("kept for inspection: " + self.dir)
        self.procs = {}


def must(v, what):
    if v is None:
        fail(what)
    return v


class Box:
    """One floodgate-host box (docs/scale.md, "Several boxes"): its own
    directory (prefix + n, kept when the test fails), the config text the
    test gives, listening on 127.0.0.1:port, a null sink. clean_log: stop()
    also fails on an error line in its log."""

    def __init__(self, n, port, config, prefix, args=(), clean_log=True):
        self.n = n
        self.port = port
        self.clean_log = clean_log
        self.dir = fgkit.mkdtemp("%s%d-" % (prefix, n))
        hostlib.KEEP.append(self.dir)
        atexit.register(hostlib._rmtree_unless_failed, self.dir)
        self.conf = os.path.join(self.dir, "floodgate.conf")
        self.stats_file = os.path.join(self.dir, "stats")
        self.log = os.path.join(self.dir, "host.log")
        with open(self.conf, "w") as f:
            f.write(config)
        self.proc = fgkit.spawn([hostlib.HOST_BIN, "-c", self.conf, "--stats-file",
                                 self.stats_file, "--sink", "null"] + list(args), self.log)
        wait_until(self.listening, 30, "box %d to listen" % n, step=0.02)

    def listening(self):
        if self.proc.poll() is not None:
            fail("box %d exited at start:\n%s" % (self.n, open(self.log).read()))
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stats(self):
        return fgkit.fresh_stats_file(self.proc, self.stats_file, "box %d's stats" % self.n)

    def stop(self):
        """SIGTERM: a clean exit; the final counters."""
        rc = fgkit.stop(self.proc)
        text = open(self.log).read()
        check(rc == 0, "box %d exit status %s:\n%s" % (self.n, rc, text))
        if self.clean_log:
            bad = [l for l in text.splitlines()
                   if l.startswith("err ") or "runtime error" in l or "Sanitizer" in l]
            check(not bad, "errors in box %d's log:\n%s" % (self.n, text))
        return hostlib.read_stats(self.stats_file)


class Feeds:
    """feedgen against every box at once, one thread a box, each with
    `--host 127.0.0.1 --port <its port>` and args. join() waits for them
    all: feedgen's JSON reports in the boxes' order, {"error": its stderr}
    where none came."""

    seq = 0

    def __init__(self, boxes, args):
        self.out = [None] * len(boxes)
        Feeds.seq += 1
        # each feed's outcome per article (feedgen --outcomes), in its box's
        # directory: sets of IDs to compare, not only counts
        self.paths = [os.path.join(b.dir, "outcomes.%d" % Feeds.seq) for b in boxes]
        self.threads = [threading.Thread(target=self._one, args=(i, b, args))
                        for i, b in enumerate(boxes)]
        for t in self.threads:
            t.start()

    def _one(self, i, box, args):
        r = subprocess.run([FEEDGEN, "--host", "127.0.0.1", "--port", str(box.port),
                            "--outcomes", self.paths[i]] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.out[i] = json.loads(r.stdout)
        except ValueError:
            self.out[i] = {"error": r.stderr[-2000:]}

    def join(self):
        for t in self.threads:
            t.join()
        return self.out

    def outcomes(self, i):
        """Feed i's articles: {Message-ID: (class, 239s it got)}; every line
        must parse, and there is one per article."""
        out = {}
        with open(self.paths[i]) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                check(len(parts) == 4 and parts[2].isdigit(),
                      "%s line %d does not parse: %r" % (self.paths[i], n, line))
                out[parts[0]] = (parts[1], int(parts[2]))
        return out

    def check_finished(self):
        """join(), and fail unless every feed finished: a report, no
        time-out, an answer to every offer."""
        for i, r in enumerate(self.join()):
            check("error" not in r and not r["timed_out"] and r["unknown_outcome"] == 0,
                  "feed to box %d did not finish: %s" % (i, json.dumps(r)[:1500]))
        return self.out
