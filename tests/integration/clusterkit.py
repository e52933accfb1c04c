# SPDX-License-Identifier: MIT
"""clusterkit.py — a real Redis Cluster on loopback ports for the tests
(not a test): redis-server --cluster-enabled yes per node, redis-cli
--cluster create, and waits on every node's `cluster info` saying
cluster_state:ok and knowing every node. stop() kills the nodes and
start_again() restarts them from their nodes-PORT.conf files (same node
IDs and slots; the keys are gone: no persistence). Python stdlib only;
call it inside the test's own network namespace.
"""
import os
import shutil
import subprocess
import tempfile

import fgkit
from fgkit import check, fail, wait_until


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
        self.dir = tempfile.mkdtemp(prefix="fg-redis-")
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
