#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""71_dp_memif — kernel-free end to end: floodgate and feedgen as two DPDK
processes joined by net_memif (shared-memory rings, no system call per
packet), feedgen's peers on the project's own TCP (its active open).

floodgate runs two workers on a memif server port with two queue pairs;
feedgen (--dpdk, the memif client, socket in the test's private
directory) opens four connections, pinning each to a queue by its source
port. A CHECK-heavy feed, then TAKETHIS of 48 KB articles: feedgen's model
checks every answer (exit 0 and "check: OK"). While the paced CHECK feed
runs, `peers` shows every connection on the worker its source port names
(port mod 2: the queue feedgen sent it on), on both workers. Then
floodgate's own counters: every connection was accepted and ended in
order, both workers were busy, no multi-segment frame or port error, and
the checksums both ends computed in software held (no bad checksum
counted).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402



def feed(w, sock, tag, *args, watch=None):
    """feedgen --dpdk to the end; `watch()` is called while it runs until
    it returns true (or feedgen ends)."""
    cmd = [os.path.join(fgdp.BIN, "feedgen"), "--dpdk",
           "net_memif0,role=client,socket=%s" % sock, "--dpdk-queues", "2",
           "--host", fgdp.DP_ADDR, "--path-identity", "floodgate.test",
           "--id-prefix", "memif%s%d" % (tag, os.getpid()), "--peers", "2", "--conns", "2",
           "--no-progress", "--timeout", "120"] + list(args)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = False
    while watch and not seen and p.poll() is None:
        seen = watch()
        time.sleep(0.05)
    out, err = p.communicate(timeout=240)
    log(out.strip().splitlines()[-1] if out.strip() else "(no output)")
    check(p.returncode == 0 and "check: OK, every answer matched the model" in out,
          "feedgen --dpdk %s: exit %d\n%s\n%s" % (tag, p.returncode, out[-3000:], err[-2000:]))
    return out, seen


def pinned(w, where):
    """Every connection `peers` lists sits on worker (its port mod 2): the
    queue feedgen sent it on. True once both workers hold one."""
    for c in w.dp_json("peers")["connections"]:
        port = int(c["remote"].rsplit(":", 1)[1])
        check(c["worker"] == port % 2, "connection from port %d on worker %d, sent on queue %d"
              % (port, c["worker"], port % 2))
        where.add(c["worker"])
    return where == {0, 1}


def main():
    w = fgdp.World("memif", workers=2, rx_queues=2)
    sock = os.path.join(w.dir, "memif.sock")
    w.start_ctld()
    fgdp.start_memif_dp(w, "port net_memif0,role=server,socket=%s" % sock)
    # paced, so that the connections are there to be looked at while it runs
    where = set()
    out, seen = feed(w, sock, "check", "--mode", "check", "--articles", "1500", "--dups", "2",
                     "--rate", "1000", watch=lambda: pinned(w, where))
    check(seen, "connections seen only on worker(s) %s while feedgen ran" % sorted(where))
    feed(w, sock, "takethis", "--mode", "takethis", "--articles", "120", "--dups", "1",
         "--size", "48K", "--window", "8")
    st = w.stats()
    log("tcp_accepted %d, port_ipackets %d, port_opackets %d, busy cycles %d / %d"
        % (st.get("tcp_accepted", 0), st.get("port_ipackets", 0), st.get("port_opackets", 0),
           st.get("worker:0:busy_cycles", 0), st.get("worker:1:busy_cycles", 0)))
    # two runs of four connections, each accepted once and closed in order
    check(st.get("tcp_accepted") == 8, "tcp_accepted %s, want 8" % st.get("tcp_accepted"))
    check(st.get("tcp_close_fin", 0) + st.get("tcp_to_time_wait", 0) >= 8,
          "connections did not end in order: %r" % {k: v for k, v in st.items()
                                                    if k.startswith("tcp_close")})
    check(st.get("nntp_articles_accepted", 0) >= 120, "too few articles accepted: %s"
          % st.get("nntp_articles_accepted"))
    # both workers worked
    for i in (0, 1):
        check(st.get("worker:%d:busy_cycles" % i, 0) > 0,
              "worker %d was never busy: its queue got no connection" % i)
    for k in ("tcp_rx_bad_csum", "net_ip_bad_csum", "dp_rx_multiseg", "port_ierrors",
              "port_oerrors"):
        check(st.get(k, 0) == 0, "%s = %s" % (k, st.get(k)))
    # a ring feedgen did not empty for 1024 of the worker's passes (feedgen
    # descheduled on a loaded machine) makes floodgate drop a frame as
    # refused (dp_tx_refused) and TCP send it again: the answers above are
    # what must hold; the count is logged
    log("dp_tx_refused %d, dp_tx_ring_full %d, tcp_retrans_segs %d"
        % (st.get("dp_tx_refused", 0), st.get("dp_tx_ring_full", 0),
           st.get("tcp_retrans_segs", 0)))
    w.stop_dp()
    w.check_logs(allow=fgdp.MEMIF_NOISE)
    fgdp.passed("71_dp_memif")


if __name__ == "__main__":
    main()
