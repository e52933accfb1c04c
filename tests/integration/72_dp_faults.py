#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""72_dp_faults — a lossy wire in both directions, through the tap port.

floodgate runs with the TCP module's fault knob at 1 % of segments
dropped, 1 % duplicated and 1 % reordered, received and sent. feedgen
(20 connections, CHECK then TAKETHIS, some 64 KB articles) must finish
with every answer matching its model, and a TAKETHIS-only feed too: the
sessions complete because the userspace TCP recovers, not because nothing
was lost (the fault counters say how much was). 72_dp_faults6 runs the
same over IPv6 (main(v6=True)).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402

FAULTS = "rx-drop=1,tx-drop=1,rx-dup=1,tx-dup=1,rx-reorder=1,tx-reorder=1,seed=%d" % os.getpid()


def feed(host, *args):
    p = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", host,
                        "--path-identity", "floodgate.test",
                        "--timeout", "150"] + list(args),
                       capture_output=True, text=True, timeout=200)
    check(p.returncode == 0, "feedgen %s:\n%s\n%s" % (args, p.stdout[-3000:], p.stderr[-2000:]))
    log(p.stdout.strip().splitlines()[-1])


def main(v6=False):
    name = "72_dp_faults6" if v6 else "72_dp_faults"
    host = fgdp.DP_ADDR6 if v6 else fgdp.DP_ADDR
    w = fgdp.World("faults6" if v6 else "faults", v6=v6)
    w.start_ctld()
    w.start_dp(["--fault", FAULTS])
    pid = os.getpid()
    # five peers race for each article: while the winner's TAKETHIS is
    # retransmitted (RTO backoff, slower still under ASan in 77) the others
    # are deferred, and feedgen's deferral cap counts them all together, so
    # it gets room here; the test is that sessions complete, not how fast
    feed(host, "--articles", "3000", "--peers", "5", "--conns", "4", "--size", "mix",
         "--binary-size", "64K", "--binary-share", "0.05", "--id-prefix", "fc%d" % pid,
         "--max-retries", "255", "--retry-delay", "0.2")
    feed(host, "--articles", "1500", "--peers", "4", "--mode", "takethis", "--dups", "3",
         "--id-prefix", "ft%d" % pid)
    st = w.stats()
    for k in ("net_fault_rx_drop", "net_fault_tx_drop", "net_fault_rx_dup",
              "net_fault_tx_dup", "net_fault_rx_reorder", "net_fault_tx_reorder"):
        check(st.get(k, 0) > 0, "%s did not fire: %s" % (k, st.get(k)))
    log("faults: rx drop %d dup %d reorder %d, tx drop %d dup %d reorder %d; retransmits %d"
        % (st["net_fault_rx_drop"], st["net_fault_rx_dup"], st["net_fault_rx_reorder"],
           st["net_fault_tx_drop"], st["net_fault_tx_dup"], st["net_fault_tx_reorder"],
           st.get("tcp_retransmits", 0) + st.get("tcp_fast_retrans", 0)))
    w.stop_dp()
    w.check_logs()
    if v6:
        check(st["net6_rx"] > st["net_ip_rx"], "the feeds did not go over IPv6")
    fgdp.passed(name)


if __name__ == "__main__":
    main()
