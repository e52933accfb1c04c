#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""76_dp_restoring — floodgate (DPDK) while floodctld restores the history.

A region in state BUILDING is a history being restored. floodctld's region
is put back into BUILDING (the state word of its header, as it is during a
restore, owner alive: the hold 49_ctl_host_restoring uses), then floodgate
(two workers) starts on its tap: it says "restoring", answers ARP and TCP,
and greets every new session "400 ... being restored ..." and closes it
before any command is answered — a client that sends MODE STREAM, a TAKETHIS
and a CHECK at once reads that one line and EOF (a FIN), never a 431 (nor a
238, 239, 438 or 439) from a half-restored history. Once the region is READY
again floodgate attaches by itself: the next session is greeted 200 and a
CHECK of an ID floodctld's history holds is refused 438 (the real table),
one not in it 238; a drain asked during the wait still holds after the
switch. The refusals and the switch are counted
(dp_sessions_refused_restoring, dp_restore_attached) and logged once. A
SIGTERM during the wait is a clean stop (exit 0); floodctld killed during it
ends the wait, and floodgate exits 1 saying why.
"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import BUILD, check, log, slurp, wait_until  # noqa: E402

STATE_OFF = 32          # region header: state (0 BUILDING, 1 READY)
HISTWRITER = os.path.join(BUILD, "bin/histwriter")


def set_state(w, v):
    fd = os.open(w.shm, os.O_RDWR)
    os.pwrite(fd, struct.pack("<I", v), STATE_OFF)
    os.close(fd)


def read_all(s):
    """What the server sends until EOF: (text, ended by a FIN)."""
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return data.decode(errors="replace"), True
            data += b
    except ConnectionResetError:
        return data.decode(errors="replace"), False


def main():
    w = fgdp.World("restoring", workers=2, rx_queues=2)
    w.start_ctld()
    pid = os.getpid()
    rc = subprocess.run([HISTWRITER, "-c", w.conf, "--prefix", "r%d" % pid, "--count",
                         "10", "--wait-commit"], capture_output=True, timeout=120)
    check(rc.returncode == 0, "histwriter: %s" % rc.stderr.decode(errors="replace"))
    known = "<r%d-3@histwriter.test>" % pid
    new = "<new.%d@restoring.test>" % pid
    set_state(w, 0)

    w.start_dp(first_line="restoring")
    check("floodctld is restoring the history" in slurp(w.fg.logp),
          "floodgate says why it greets 400")
    # three sources: with two workers, both are likely to refuse one
    for src in ("198.18.0.1", "198.18.0.3", "198.18.0.4"):
        s = fgdp.connect(src, timeout=20)
        s.sendall(b"MODE STREAM\r\nTAKETHIS " + new.encode() + b"\r\n" + fgdp.article(new) +
                  b"CHECK " + known.encode() + b"\r\n")
        text, fin = read_all(s)
        s.close()
        lines = text.splitlines()
        log("while restoring: %r" % lines)
        check(len(lines) == 1 and lines[0].startswith("400 ") and "being restored" in lines[0],
              "one line, 400 with the reason: %r" % lines)
        check(fin, "the refused connection was not closed with a FIN")
    st = w.stats()
    # the greeting of wait_tcp's probe is one of them
    check(st["dp_sessions_refused_restoring"] >= 3, "refused while restoring: %d"
          % st["dp_sessions_refused_restoring"])
    check(st["nntp_sessions_opened"] == 0, "a session was opened on the placeholder table")
    check(w.fg.poll() is None, "floodgate exited while floodctld restores")
    status = w.dp_json("status")
    check(status["restoring"] is True, "status while restoring: %r" % status)

    # a drain asked during the wait holds for the workers built after it
    ok, body = w.dp("drain")
    check(ok, "drain while restoring: %s" % body)

    set_state(w, 1)
    wait_until(lambda: not w.dp_json("status")["restoring"], 60,
               "floodgate to attach once the history is ready")
    s = fgdp.connect("198.18.0.3", timeout=20)
    greet = fgdp.Lines(s).line()
    s.close()
    check(greet.startswith("400 ") and "draining" in greet, "draining after the switch: %r"
          % greet)
    ok, body = w.dp("drain", "off")
    check(ok, "drain off: %s" % body)
    greeting = []

    def served():
        # a connection caught in the switch may be reset or left unanswered
        try:
            s = fgdp.connect("198.18.0.1", timeout=5)
            greeting[:] = [fgdp.Lines(s).line()]
            s.close()
        except (OSError, EOFError):
            return False
        return greeting[0].startswith("200 ")
    wait_until(served, 60, "floodgate to attach once the history is ready")
    s = fgdp.connect("198.18.0.1", timeout=20)
    r = fgdp.Lines(s)
    check(r.line().startswith("200 "), "greeting")
    s.sendall(b"MODE STREAM\r\nCHECK " + known.encode() + b"\r\nCHECK " + new.encode() + b"\r\n")
    check(r.line().startswith("203 "), "MODE STREAM")
    ans = r.line()
    check(ans == "438 " + known, "the restored history's entry refuses it: %r" % ans)
    ans = r.line()
    check(ans == "238 " + new, "an ID not in the history is wanted: %r" % ans)
    s.sendall(b"QUIT\r\n")
    check(r.line().startswith("205"), "QUIT")
    s.close()
    st = w.stats()
    check(st["dp_restore_attached"] == 1, "switches: %d" % st["dp_restore_attached"])
    check(st["dp_sessions_refused_restoring"] >= 3, "the refusals were kept over the switch: "
          "%d" % st["dp_sessions_refused_restoring"])
    logtext = slurp(w.fg.logp)
    check(logtext.count("the history is restored") == 1, "the switch is logged once")
    check(w.dp_json("status")["restoring"] is False, "status after the restore")
    w.stop_dp()

    # a SIGTERM during the wait is a clean shutdown, as at any other time
    set_state(w, 0)
    w.start_dp(first_line="restoring")
    w.stop_dp()
    check("the history is restored" not in slurp(w.fg.logp), "attached to a BUILDING region")

    # floodctld dies during its restore: the wait ends, floodgate exits 1
    # as it does at a start without floodctld (its unit restarts it)
    w.start_dp(first_line="restoring")
    w.ctld.kill()
    w.ctld.wait()
    rc = w.fg.wait(timeout=60)
    check(rc == 1, "floodgate exited %d after floodctld died:\n%s" % (rc, slurp(w.fg.logp)))
    check("cannot attach to floodctld's region" in slurp(w.fg.logp), "the reason is logged")
    w.check_logs(allow=r"cannot attach to floodctld's region|floodctld.*(killed|signal)")
    fgdp.passed("76_dp_restoring")


if __name__ == "__main__":
    main()
