#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""76_dp_drain_shutdown — drain refuses new sessions, shutdown ends all cleanly.

Sessions A and B are open when `floodctl drain` comes (floodctld forwards
it): a new connection is answered "400 ... draining" and closed, while A
goes on (CHECK, TAKETHIS). `drain off` lets new sessions in again.
`floodctl shutdown 4` drains, gives open sessions
four seconds: A uses them to finish its feed and QUIT (205), B stays idle
and is answered "400" and closed when the grace ends — both with an
orderly FIN, no reset. floodgate then exits 0, every session counted as
closed, the log clean, its control socket gone; floodctl peers then says
that no dataplane answers.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402


def session(src):
    s = fgdp.connect(src, timeout=20)
    r = fgdp.Lines(s)
    return s, r, r.line()


def exchange(s, r, msgid):
    s.sendall(b"CHECK %s\r\n" % msgid.encode())
    check(r.line() == "238 " + msgid, "CHECK %s" % msgid)
    s.sendall(b"TAKETHIS %s\r\n" % msgid.encode() + fgdp.article(msgid))
    check(r.line() == "239 " + msgid, "TAKETHIS %s" % msgid)


def closed_cleanly(s):
    """True when the peer ended with a FIN (EOF), not a reset."""
    try:
        return s.recv(100) == b""
    except ConnectionResetError:
        return False


def main():
    w = fgdp.World("drain", workers=2, rx_queues=2)
    stats_file = os.path.join(w.dir, "stats")
    w.start_ctld()
    w.start_dp(["--stats-file", stats_file])
    pid = os.getpid()
    a, ra, greet = session("198.18.0.1")
    check(greet.startswith("200 "), "A greeting %r" % greet)
    b, rb, greet = session("198.18.0.3")
    check(greet.startswith("200 "), "B greeting %r" % greet)
    rc, out, err = w.ctl("drain")
    check(rc == 0 and "draining: yes" in out, "floodctl drain: %s %s" % (out, err))
    c, rc, greet = session("198.18.0.4")
    check(greet.startswith("400 ") and "draining" in greet, "while draining: %r" % greet)
    check(closed_cleanly(c), "the refused connection was not closed with a FIN")
    c.close()
    exchange(a, ra, "<d1.%d@drain.test>" % pid)
    ok, body = w.dp("status")
    check("draining" in body, "status does not say draining: %s" % body)
    rc, out, err = w.ctl("drain", "off")
    check(rc == 0 and "draining: no" in out, "floodctl drain off: %s %s" % (out, err))
    d, rd, greet = session("198.18.0.4")
    check(greet.startswith("200 "), "after drain off: %r" % greet)
    d.sendall(b"QUIT\r\n")
    check(rd.line().startswith("205"), "D QUIT")
    d.close()
    st = w.stats()
    check(st["dp_sessions_refused_draining"] == 1, "refused while draining: %d"
          % st["dp_sessions_refused_draining"])

    # shutdown with 4 s of grace: A finishes inside it, B idles through it
    t0 = time.time()
    rc, out, err = w.ctl("shutdown", "4")
    check(rc == 0 and "shutting down" in out, "floodctl shutdown: %s %s" % (out, err))
    done = threading.Event()

    def finish_a():
        for k in range(5):
            exchange(a, ra, "<d2.%d.%d@drain.test>" % (k, pid))
        a.sendall(b"QUIT\r\n")
        check(ra.line().startswith("205"), "A QUIT")
        check(closed_cleanly(a), "A was not closed with a FIN")
        done.set()

    ta = threading.Thread(target=finish_a)
    ta.start()
    got = rb.line()
    check(got.startswith("400 "), "B at the end of the grace: %r" % got)
    waited = time.time() - t0
    check(3.5 <= waited <= 10, "B was ended after %.1f s of a 4 s grace" % waited)
    check(closed_cleanly(b), "B was not closed with a FIN")
    ta.join(30)
    check(done.is_set(), "A did not finish inside the grace period")
    rc = w.fg.wait(timeout=30)
    check(rc == 0, "floodgate exited %d" % rc)
    log("shutdown: B ended after %.1f s, exit %d" % (waited, rc))
    final = fgdp.read_stats_text(fgdp.slurp(stats_file))
    check(final["nntp_sessions_opened"] == final["nntp_sessions_closed"],
          "sessions opened %d, closed %d" % (final["nntp_sessions_opened"],
                                            final["nntp_sessions_closed"]))
    check(final.get("dp_conns_aborted", 0) == 0, "connections were reset at the end")
    check(final["nntp_response:400"] == 1, "400s: %d" % final["nntp_response:400"])
    check(not os.path.exists(w.dpsock), "the control socket is left behind")
    # floodctld stays; it says plainly that no dataplane answers
    rc, out, err = w.ctl("peers")
    check(rc == 1 and "the dataplane is not running" in err, "peers with no dataplane: %d %s %s"
          % (rc, out, err))
    a.close()
    b.close()
    w.check_logs()
    fgdp.passed("76_dp_drain_shutdown")


if __name__ == "__main__":
    main()
