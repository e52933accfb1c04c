#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""71_dp_memif_exit — floodgate on memif server ports exits cleanly even
when DPDK's interrupt thread is late.

DPDK 22.11's net_memif never unregisters a server port's listening socket
from the interrupt thread, and rte_eal_cleanup() asks that thread to
rebuild its epoll set (it removes the alarm source) shortly before it
unmaps DPDK's memory: a thread that wakes late reads the stale source's
handle from unmapped memory and the process dies of SIGSEGV at its very
end. 88_nic_lacp met it once in a loop of full runs. floodgate parks the
interrupt thread before rte_eal_cleanup (dataplane/dpdk/eal.c, "Stopping
the EAL").

Here the race is made to happen every time: floodgate runs under
tests/preload/intr_late.so, which delays each of the interrupt thread's
rebuilds and holds the process at exit, after the unmapping. Twice: a
single memif server port (71_dp_memif's), then an 802.3ad bond of two
(88_nic_lacp's, whose LACP alarm is the source rte_eal_cleanup removes).
Each time: exit 0, "stopped" logged, the shim's "exit released" logged
(the process lived through the window) and at least one rebuild held (the
shim found the thread). Without the park the bond's case dies every time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402

SHIM = os.path.join(fgdp.BUILD, "tests/preload/intr_late.so")
EAL = "eal-args --no-huge -m 512 --no-pci --no-shconf --no-telemetry"
SHIM_NOISE = r"^intr_late: (rebuild held \d+ ms|exit held \d+ ms|exit released)$"


def run_once(w, base, tag, port_lines):
    """floodgate under the shim with `port_lines` for its port; stopped
    with SIGTERM; its log."""
    with open(w.conf, "w") as f:
        f.write(base)
    os.environ["LD_PRELOAD"] = SHIM
    try:
        fgdp.start_memif_dp(w, port_lines)
    finally:
        del os.environ["LD_PRELOAD"]
    w.stop_dp()
    text = fgdp.slurp(w.fg.logp)
    lines = text.splitlines()
    check(any(l.endswith("notice floodgate: stopped") for l in lines),
          "%s: floodgate logged its last line:\n%s" % (tag, text[-3000:]))
    check("intr_late: exit released" in lines,
          "%s: the process lived through the held exit:\n%s" % (tag, text[-3000:]))
    held = sum(1 for l in lines if l.startswith("intr_late: rebuild held"))
    check(held >= 1, "%s: the shim held the interrupt thread's rebuilds (%d)" % (tag, held))
    log("%s: exit 0 after %d held rebuilds and a held exit" % (tag, held))


def main():
    check(os.path.exists(SHIM), "the shim is built: %s" % SHIM)
    w = fgdp.World("mexit")
    w.start_ctld()
    with open(w.conf) as f:
        base = f.read()
    sock = os.path.join(w.dir, "m.sock")
    run_once(w, base, "memif server port",
             "%s\nport net_memif0,role=server,socket=%s" % (EAL, sock))
    members = ("net_memif0", "net_memif1")
    vdevs = " ".join("--vdev=%s,role=server,socket=%s" % (m, os.path.join(w.dir, "b%d.sock" % i))
                     for i, m in enumerate(members))
    run_once(w, base, "802.3ad bond of two memif servers",
             "%s %s\nport net_bonding0,mode=4,%s"
             % (EAL, vdevs, ",".join("slave=" + m for m in members)))
    w.check_logs(allow="%s|%s|%s|no member takes all-multicast" % (
        fgdp.BOND_NOISE, fgdp.MEMIF_NOISE, SHIM_NOISE))
    fgdp.passed("71_dp_memif_exit")


if __name__ == "__main__":
    main()
