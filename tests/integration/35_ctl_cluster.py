#!/usr/bin/env python3
# timeout: 300
"""35_ctl_cluster — a box of a cluster under floodctld (docs/scale.md,
"Several boxes"): floodctld, floodgate-host --floodctld with [cluster], and
a Redis Cluster of three masters, in a namespace of the test's own.

A CHECK of a new ID is claimed (238, the box's claim in the cluster), its
article accepted (239) and the outcome settled: the ID's one key in the
cluster holds this box's acceptance. /metrics has the engine's cluster
counters and the cluster thread's (published in a writer slot of its
own), and the cluster's health (answering, masters, round trips) from the
status file the host writes, as does `floodctl status`. `floodctl forget`
drops the ID here and deletes its cluster key (said in the answer); the
key is gone from every master.
"""
import os
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctlkit import BUILD, Ctl, check, http_get, log, passed, prom_parse, prom_value, wait_for  # noqa: E402
from hostlib import article  # noqa: E402

HOST = os.path.join(BUILD, "bin/floodgate-host")
PORT = 1119


def metric(name, **labels):
    st, body = http_get("http://127.0.0.1:9119/metrics")
    return prom_value(prom_parse(body), name, **labels) if st == 200 else None


def lines(sock_file, line, data=b""):
    sock, f = sock_file
    sock.sendall(line.encode() + b"\r\n" + data)
    return f.readline().decode().rstrip("\r\n")


def id_keys(rc):
    """The ID keys (fg: and 32 hex digits) on every master."""
    import clusterkit
    keys = []
    for p in rc.ports:
        out = clusterkit.cli(p, "--scan", "--pattern", "fg:*") or ""
        keys += [k for k in out.split() if len(k) == 35]
    return keys


def main():
    c = Ctl("clu")
    c.netns()
    import clusterkit
    rc = clusterkit.RedisCluster(masters=3, replicas=0, base_port=7000)
    try:
        c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
                 "[peer local]\naddress 127.0.0.1\nnewsgroups *\n"
                 "[cluster]\nseeds %s\nsecret s1\nbox b0\ntimeout 2s\n"
                 % (PORT, rc.seeds()), http="127.0.0.1:9119")
        c.start(args=["--expire-interval", "3600"])
        hlog = os.path.join(c.dir, "host.log")
        host = subprocess.Popen([HOST, "-c", c.conf, "--floodctld"], stdout=subprocess.DEVNULL,
                                stderr=open(hlog, "w"))
        c.procs.append(host)

        def listening():
            check(host.poll() is None, "floodgate-host exited:\n" + open(hlog).read())
            try:
                socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
                return True
            except OSError:
                return False
        wait_for(listening, "floodgate-host to listen", timeout=30)
        s = socket.create_connection(("127.0.0.1", PORT), timeout=20)
        conn = (s, s.makefile("rb"))
        check(conn[1].readline().startswith(b"200 "), "greeting")
        check(lines(conn, "MODE STREAM").startswith("203"), "MODE STREAM")
        mid = "<clu-1@host.test>"
        check(lines(conn, "CHECK " + mid) == "238 " + mid, "238: the claim won")
        check(lines(conn, "TAKETHIS " + mid, article(mid)) == "239 " + mid, "239")
        check(lines(conn, "CHECK " + mid) == "438 " + mid, "438 from the local history")
        s.close()

        wait_for(lambda: metric("floodgate_cluster_settles_total") == 1,
                 "the cluster thread's counters in /metrics", timeout=30)
        # the worker publishes its own block, on its own beat
        wait_for(lambda: metric("floodgate_nntp_cluster_wins_total") == 1,
                 "the engine's cluster counters in /metrics", timeout=30)
        check(metric("floodgate_nntp_cluster_claims_total") == 1, "one claim")
        check(metric("floodgate_nntp_cluster_fallbacks_total") == 0, "no fallback")
        # the cluster's health: floodctl status and /metrics (the status
        # file the host writes into the data directory once a second)
        wait_for(lambda: metric("floodgate_cluster_rtt_count_total") == 1,
                 "the cluster's status in /metrics", timeout=30)
        check(metric("floodgate_cluster_answering") == 1, "answering, says /metrics")
        check(metric("floodgate_cluster_masters") == 3, "three masters, says /metrics")
        check(metric("floodgate_cluster_digest_mismatch") == 0, "no digest mismatch")
        # a real cluster's replies pass the client's guard (respguard.h)
        check(metric("floodgate_cluster_replies_refused_total") == 0,
              "no reply of a real cluster refused")
        r, out, err = c.ctl("status")
        check(r == 0 and "cluster     answering, 3 masters mapped (16384 slots)" in out,
              "floodctl status shows the cluster: %r" % out)
        rj, j = c.ctl_json("status")
        check(j.get("cluster", {}).get("answering") == 1 and j["cluster"]["rtt_count"] == 1,
              "floodctl status --json: %r" % j.get("cluster"))
        keys = id_keys(rc)
        check(len(keys) == 1, "one ID key in the cluster: %r" % keys)
        val = clusterkit.cli(rc.ports[0], "-c", "get", keys[0])
        check(val == "b0:A", "the key holds this box's acceptance: %r" % val)

        r, out, err = c.ctl("forget", mid)
        check(r == 0 and "cluster key deleted" in out, "forget: %d %r %r" % (r, out, err))
        check(id_keys(rc) == [], "the key is gone from every master")
        r, out, err = c.ctl("forget", mid)
        check(r == 1 and "not in history" in out + err, "a second forget: %d %r" % (r, out))

        host.send_signal(signal.SIGTERM)
        check(host.wait(timeout=20) == 0, "the host stopped cleanly")
        bad = [l for l in open(hlog).read().splitlines() if l.startswith("err ")]
        check(not bad, "errors in the host's log: %r" % bad)
        c.stop()
    finally:
        rc.close()
    log("a box of a cluster under floodctld: claimed, settled, counted, forgotten")
    passed("35_ctl_cluster")


main()
