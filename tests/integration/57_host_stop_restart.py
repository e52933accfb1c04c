#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""57_host_stop_restart — floodgate-host's upgrade: stopped cleanly
(SIGTERM) mid-feed and started again at once, it loses nothing and
accepts nothing twice (docs/operations.md, "Upgrading").

floodgate-host has no drain: its SIGTERM closes the listeners, answers
400 to every session, lets the transfers in flight finish and exits 0.
restartkit.run_round (its head comment has the steps) with that stop in
place of 57_host_kill_restart's SIGKILL, floodgate-host --floodctld
relaying to a real innd: the IDs in flight at the stop are answered
within the offer timeout after the restart, each ID is queued, stored by
innd and logged as accepted exactly once, and no recovery line (a clean
stop leaves floodctld nothing to settle). A peer's CHECKed-and-unsent IDs
(restartkit.Held) are answered 238 again by the new process, then 239.
"""
import os
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
import restartkit as rk  # noqa: E402
from fgdp import check  # noqa: E402

ADDR = ("127.0.0.1", 1119)


def connect():
    s = socket.create_connection(ADDR, timeout=20)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def main():
    rk.require_inn()
    w = rk.world("hstop", "fg-hsr")
    vlog = os.path.join(w.dir, "verdicts.log")
    w.start_ctld()
    state = {"p": rk.spawn_host(w, ["--floodctld"])}
    held = rk.Held(connect)

    def stop():
        held.check()
        state["p"].send_signal(signal.SIGTERM)
        rc = state["p"].wait(60)
        check(rc == 0, "floodgate-host's stop exited %s" % rc)

    def restart():
        state["p"] = rk.spawn_host(w, ["--floodctld"])
        held.start_again()

    clients = [rk.Client("hs%d" % k, ADDR, "127.0.0.1") for k in range(rk.CLIENTS)]
    recovered = rk.run_round("host-stop", w, clients, stop, restart, vlog=vlog,
                             all_inflight=False)
    held.join(vlog)
    check(recovered == 0, "%d IDs settled from the queue after a clean stop" % recovered)
    state["p"].terminate()
    check(state["p"].wait(30) == 0, "floodgate-host stopped cleanly")
    w.check_logs(allow=rk.RELAY_AWAY)
    fgkit.passed("57_host_stop_restart")


if __name__ == "__main__":
    main()
