#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""75_dp_cluster — two kinds of box, one site (docs/scale.md, "Several
boxes"): floodgate on a tap port (with floodctld) and floodgate-host on
kernel sockets share a Redis Cluster of three masters, all in one network
namespace. feedgen feeds both the same articles at once: every wanted
article is accepted exactly once across the two boxes, no claim fell back
to a local decision, the dataplane's cluster thread answers (its stats),
and its counters reach floodctld's /metrics through a writer slot of its
own. Both boxes stop cleanly with clean logs.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

SEEDS = "127.0.0.1:7000,127.0.0.1:7001"
CLUSTER = "[cluster]\nseeds %s\nsecret site-secret\nbox %s\ntimeout 2s\n"
HOST_PORT = 1119
ARTICLES = 1500
HOST_CONFIG = """[site]
server-name host.test
path-identity floodgate.test
listen 127.0.0.1:%d
[rules]
cutoff 10d
[history]
capacity 100000
[peer local]
address 127.0.0.1
""" % HOST_PORT


def feed(host, port, seed, out, i):
    r = subprocess.run(
        [os.path.join(fgdp.BIN, "feedgen"), "--host", host, "--port", str(port), "--mode",
         "check", "--peers", "3", "--dups", "3", "--articles", str(ARTICLES), "--size", "2K",
         "--window", "16", "--seed", str(seed), "--path-identity", "floodgate.test",
         "--retry-delay", "0.05", "--max-retries", "200", "--timeout", "200",
         "--no-progress", "--json"], capture_output=True, text=True, timeout=260)
    try:
        out[i] = json.loads(r.stdout)
    except ValueError:
        out[i] = {"error": r.stderr[-2000:]}


def main():
    w = fgdp.World("clu", extra=CLUSTER % (SEEDS, "dp"))
    import clusterkit
    rc = clusterkit.RedisCluster(masters=3, replicas=0, base_port=7000)
    try:
        w.start_ctld()
        w.start_dp()
        hconf = os.path.join(w.dir, "host.conf")
        with open(hconf, "w") as f:
            f.write(HOST_CONFIG + CLUSTER % (SEEDS, "host"))
        hlog = os.path.join(w.dir, "host.log")
        host = fgkit.spawn([os.path.join(fgdp.BIN, "floodgate-host"), "-c", hconf, "--sink",
                            "null", "--stats-file", os.path.join(w.dir, "host.stats")], hlog)

        def listening():
            check(host.poll() is None, "floodgate-host exited:\n" + fgdp.slurp(hlog))
            try:
                socket.create_connection(("127.0.0.1", HOST_PORT), timeout=1).close()
                return True
            except OSError:
                return False
        fgkit.wait_until(listening, 30, "floodgate-host to listen")

        out = [None, None]
        ts = [threading.Thread(target=feed, args=(fgdp.DP_ADDR, 119, 77, out, 0)),
              threading.Thread(target=feed, args=("127.0.0.1", HOST_PORT, 77, out, 1))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for r in out:
            check("error" not in r and not r["timed_out"] and r["unknown_outcome"] == 0,
                  "a feed did not finish: %s" % json.dumps(r)[:1500])
        wanted = out[0]["expected_accepted"]
        acc = [r["accepted"] for r in out]
        log("%d wanted; accepted by the dataplane %d, by the host %d" % (wanted, acc[0], acc[1]))
        check(sum(acc) == wanted, "accepted %d across the boxes, want exactly %d"
              % (sum(acc), wanted))
        st = w.wait_stats(lambda s: s.get("cluster_settles", 0) >= acc[0],
                          "the dataplane's cluster thread to settle its acceptances")
        check(st["nntp_cluster_fallbacks"] == 0, "the dataplane fell back: %r"
              % st["nntp_cluster_fallbacks"])
        check(st["cluster_answering"] == 1 and st["cluster_masters"] == 3,
              "the dataplane's cluster status")
        check(st["nntp_cluster_claims"] > 0, "the dataplane claimed")
        log("dataplane: %d claims, %d won, %d lost, %d waited for the other box"
            % (st["nntp_cluster_claims"], st["nntp_cluster_wins"], st["nntp_cluster_losses"],
               st["nntp_cluster_inflight_waits"]))
        # floodctld's /metrics: the cluster thread's counters, from its slot
        fgkit.wait_until(lambda: "floodgate/cluster" in w.ctl("status")[1],
                         10, "the cluster thread's writer slot in floodctl status")

        host.send_signal(signal.SIGTERM)
        check(host.wait(timeout=30) == 0, "floodgate-host stopped cleanly")
        hs = fgkit.read_counters(os.path.join(w.dir, "host.stats"))
        check(hs["nntp_cluster_fallbacks"] == 0, "the host fell back")
        check(hs["nntp_cluster_losses"] + st["nntp_cluster_losses"] > 0,
              "no box lost a claim to the other")
        w.stop_dp()
        w.check_logs(allow=r"^(notice|info) |downstream: no \[downstream\]|"
                           r"--sink queue without a \[downstream\]")
        bad = [l for l in fgdp.slurp(hlog).splitlines() if l.startswith("err ")]
        check(not bad, "errors in the host's log: %r" % bad)
    finally:
        rc.close()
    fgkit.passed("75_dp_cluster")


main()
