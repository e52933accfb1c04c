#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""74_dp_kill_restart — floodgate on a tap port SIGKILLed mid-feed and
started again at once stalls no peer, loses nothing, accepts nothing twice.

restartkit.run_round (its head comment has the steps) with the DPDK
dataplane: four kernel clients on the tap's side stream TAKETHIS into
floodgate, which relays to a real innd through its durable queue.
floodgate is SIGKILLed while every client has transfers in flight and
started again as soon as it is gone; floodctld reaps the dead worker's
writer slot beside the new one, settling its transfers from the queue.
The in-flight IDs are answered within the offer timeout, each ID is
accepted once (its 239 or a "recovery" line in the verdict log) and innd
stores each once.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import restartkit as rk  # noqa: E402
from fgdp import check, log  # noqa: E402


def run(w):
    w.start_ctld()
    w.start_dp()
    srcs = [fgdp.KERNEL_ADDRS[i] for i in (0, 0, 1, 2)]
    clients = [rk.Client("d%d" % k, (fgdp.DP_ADDR, fgdp.CLIENT_PORT), srcs[k])
               for k in range(rk.CLIENTS)]

    def kill():
        rk.sigkill(w.fg)
        w.logs.remove(w.fg.logp)	# a killed process's log ends anywhere

    recovered = rk.run_round("tap", w, clients, kill, w.start_dp,
                           vlog=os.path.join(w.dir, "verdicts.log"))
    check(rk.floodctl_counter(w, "history_settled") == recovered,
          "floodctld counted the %d recovery lines as settled" % recovered)
    log("tap: floodctld settled %d, dropped %d entries of the dead writer"
        % (recovered, rk.floodctl_counter(w, "history_dead_entries_dropped")))
    w.stop_dp()
    w.check_logs(allow=rk.RELAY_AWAY + "|" + rk.reaped("floodgate/[a-z0-9]+"))


def main():
    rk.require_inn()
    run(rk.world("restart", "fg-dkr"))
    fgdp.passed("74_dp_kill_restart")


if __name__ == "__main__":
    main()
