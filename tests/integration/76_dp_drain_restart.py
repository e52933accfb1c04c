#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""76_dp_drain_restart — an upgrade's restart of floodgate on a tap port
(docs/operations.md, "Upgrading"): `floodctl drain`, `floodctl shutdown
GRACE`, start again, loses nothing and accepts nothing twice.

restartkit.run_round (its head comment has the steps) with a clean stop
in place of the SIGKILL of 74_dp_kill_restart:
  1. four kernel clients stream TAKETHIS into floodgate, which relays to a
     real innd through its durable queue;
  2. once every client has transfers in flight, `floodctl drain` (a new
     connection is answered 400 and closed: checked), then `floodctl
     shutdown 0`: no grace, the hardest case (with one the clients of this
     test finish their whole feed inside it): every open session is
     answered 400 mid-stream and closed; floodgate exits 0 with no
     connection reset (`dp_conns_aborted` 0 in its last counters), and is
     started again at once;
  3. every client reconnects and re-offers what it had sent without an
     answer, then the rest: the in-flight IDs are answered 239 or 439
     within the offer timeout;
  3b. a fifth peer had CHECKed IDs (238) and not sent them at the stop:
     after the restart it offers them again and gets 238 at the latest
     once the offer timeout has passed since the first 238 (431 before
     that, offered again), then 239 (class Held);
  4. the queue holds every ID once, innd stores every ID once, no ID got
     239 twice, the verdict log has one accept line for each and no
     recovery line (a clean stop leaves floodctld nothing to settle).
The time from the drain to the restarted floodgate's first greeting is
logged (measured, not asserted).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import restartkit as rk  # noqa: E402
from fgdp import check, log  # noqa: E402

GRACE_S = 0	# the hardest case: every session ended at once, mid-stream


def run(w):
    first = os.path.join(w.dir, "stats.first")
    w.start_ctld()
    w.start_dp(["--stats-file", first])
    srcs = [fgdp.KERNEL_ADDRS[i] for i in (0, 0, 1, 2)]
    clients = [rk.Client("u%d" % k, (fgdp.DP_ADDR, fgdp.CLIENT_PORT), srcs[k])
               for k in range(rk.CLIENTS)]
    t = {}

    held = rk.Held(lambda: fgdp.connect("198.18.0.4", timeout=20))

    def drain_and_stop():
        held.check()
        t["drain"] = time.time()
        w.drain()
        w.shutdown(GRACE_S)
        t["exit"] = time.time()

    def start_again():
        w.start_dp()
        t["ready"] = time.time()
        held.start_again()

    recovered = rk.run_round("drain", w, clients, drain_and_stop, start_again,
                             vlog=os.path.join(w.dir, "verdicts.log"), all_inflight=False)
    log("drain: stopped %.2f s after the drain (grace %d s), answering again %.2f s after "
        "the drain" % (t["exit"] - t["drain"], GRACE_S, t["ready"] - t["drain"]))
    held.join(vlog=os.path.join(w.dir, "verdicts.log"))
    # a clean stop leaves floodctld nothing to settle for it
    check(recovered == 0, "%d IDs settled from the queue after a clean stop" % recovered)
    last = fgdp.read_stats_text(fgdp.slurp(first))
    check(last["dp_sessions_refused_draining"] == 1 and last.get("dp_conns_aborted", 0) == 0,
          "the drained floodgate's last counters: refused while draining %d, reset %d"
          % (last["dp_sessions_refused_draining"], last.get("dp_conns_aborted", 0)))
    check(last["nntp_response:400"] >= rk.CLIENTS,
          "every open session was ended with a 400: %d" % last["nntp_response:400"])
    w.stop_dp()
    w.check_logs(allow=rk.RELAY_AWAY)


def main():
    rk.require_inn()
    run(rk.world("drainr", "fg-ddr"))
    fgkit.passed("76_dp_drain_restart")


if __name__ == "__main__":
    main()
