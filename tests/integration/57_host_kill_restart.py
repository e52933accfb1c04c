#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""57_host_kill_restart — floodgate-host SIGKILLed mid-feed and started
again at once stalls no peer, loses nothing, accepts nothing twice.

Three rounds of restartkit.run_round (its head comment has the steps),
each with its own world and a real innd downstream:
  ctld  floodgate-host --floodctld: the new process claims new writer
        slots while floodctld reaps the dead ones beside it, settling the
        dead writer's transfers from the queue (journalled, a "recovery"
        verdict-log line each) and dropping its other entries;
  ctld-race  the same with floodctld stopped (SIGSTOP) from before the
        kill until the new process serves: it certainly attaches and
        claims while the dead writer's slots are still claimed, and
        floodctld resolves them only after;
  shm   floodgate-host --shm (no floodctld): the new process adopts the
        history file and settles every transfer left in it from the queue
        before it serves.
Before issue 25, the in-flight IDs of the ctld round went unanswered for
more than 150 s.
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import restartkit as rk  # noqa: E402
from fgdp import check, log  # noqa: E402


def clients(tag):
    return [rk.Client("%s%d" % (tag, k), ("127.0.0.1", 1119), "127.0.0.1")
            for k in range(rk.CLIENTS)]


def ctld_round(w, race=False):
    """race: floodctld is stopped (SIGSTOP) across the kill and the restart,
    so the new process certainly claims its slots and serves before the
    reaper has seen the death."""
    w.start_ctld()
    state = {"p": rk.spawn_host(w, ["--floodctld"])}
    name = "ctld-race" if race else "ctld"

    def kill():
        if race:
            fgkit.sigstop(w.ctld)
        state["dead"] = state["p"].pid
        rk.sigkill(state["p"])
        w.logs.remove(state["p"].logp)	# a killed process's log ends anywhere

    def restart():
        state["p"] = rk.spawn_host(w, ["--floodctld"])
        if race:
            check(died(w, state["dead"]) == 0, "floodctld reaped before the restart served")
            w.ctld.send_signal(signal.SIGCONT)

    recovered = rk.run_round(name, w, clients(name[0] + ("r" if race else "")), kill, restart,
                           vlog=os.path.join(w.dir, "verdicts.log"))
    check(rk.floodctl_counter(w, "history_settled") == recovered,
          "floodctld counted the %d recovery lines as settled" % recovered)
    check(died(w, state["dead"]) >= 1, "floodctld reaped the dead writer")
    log("%s: floodctld settled %d, dropped %d entries of the dead writer"
        % (name, recovered, rk.floodctl_counter(w, "history_dead_entries_dropped")))
    state["p"].terminate()
    check(state["p"].wait(30) == 0, "floodgate-host stopped cleanly")
    w.check_logs(allow=rk.RELAY_AWAY + "|" + rk.reaped("floodgate-host-[a-z0-9]+"))


def died(w, pid):
    """floodctld's log lines saying that writer pid died."""
    return fgdp.slurp(w.ctld.logp).count("pid %d) died" % pid)


def shm_round(w):
    shm = os.path.join(w.dir, "history.shm")
    args = ["--shm", shm, "--history-capacity", "100000"]
    state = {"p": rk.spawn_host(w, args)}

    def kill():
        rk.sigkill(state["p"])
        w.logs.remove(state["p"].logp)

    def restart():
        state["p"] = rk.spawn_host(w, args)

    rk.run_round("shm", w, clients("s"), kill, restart)
    check("adopted" in fgdp.slurp(state["p"].logp), "the restarted host adopted the history")
    state["p"].terminate()
    check(state["p"].wait(30) == 0, "floodgate-host stopped cleanly")
    w.check_logs(allow=rk.RELAY_AWAY)


def main():
    rk.require_inn()
    rounds = (("ctld", ctld_round), ("ctld-race", lambda w: ctld_round(w, race=True)),
              ("shm", shm_round))
    for name, run in rounds:
        w = rk.world("restart-" + name, "fg-kr")
        run(w)
        w.cleanup()
        log("%s round passed" % name)
    fgdp.passed("57_host_kill_restart")


if __name__ == "__main__":
    main()
