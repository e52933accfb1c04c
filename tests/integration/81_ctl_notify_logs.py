#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""81_ctl_notify_logs — floodctld as systemd runs it (debian/systemd/floodctld.service).

Type=notify: with $NOTIFY_SOCKET naming a datagram socket this test binds
(systemd's stand-in), floodctld says STATUS= before and after restoring
the history, sends READY=1 once it serves — the control socket answers at
the first try after it — and STOPPING=1 on SIGTERM.
[log] timestamps auto (the default), not under systemd: every line of its
stderr starts with an ISO 8601 UTC time. With $INVOCATION_ID set (a
systemd service whose stderr is not the journal): no time; with
`timestamps on`, the time again. $JOURNAL_STREAM naming its stderr (as
systemd sets it): lines start with "<N>", the syslog priority, and no
time. `floodctl reopen-logs`: after the verdict log was renamed
(logrotate), lines written after the reopen go to a new file of the
configured name, none to the renamed one.
"""
import os
import re
import signal
import socket

from ctlkit import Ctl, check, log, passed, wait_until

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (err|warn|notice|info|debug) \S+: ")
BARE = re.compile(r"^(err|warn|notice|info|debug) \S+: ")
# not under systemd, whatever runs this test
NO_SYSTEMD = {"INVOCATION_ID": None, "JOURNAL_STREAM": None}
PRIO = re.compile(r"^<([3-7])>(err|warn|notice|info|debug) \S+: ")
PRIO_OF = {"err": "3", "warn": "4", "notice": "5", "info": "6", "debug": "7"}


def notify_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(60)        # a failure bound only: floodctld is ready in well under a second
    return s


def lines_with(path, needle):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l for l in f if needle in l]


def wait_lines(path, needle, n, timeout=60):
    wait_until(lambda: len(lines_with(path, needle)) >= n, timeout,
               lambda: "%s: %d lines with %r, wanted %d" % (path, len(lines_with(path, needle)),
                                                          needle, n))


def log_lines(c):
    return [l for l in c.log(raw=True).splitlines() if l.strip()]


def run_once(c, env):
    """floodctld started and stopped; its log's lines as written."""
    c.start(env=env)
    c.stop()
    return log_lines(c)


def main():
    c = Ctl("notify")
    vlog = os.path.join(c.dir, "verdict.log")
    c.config("[stats]\nverdict-log %s\n[peer p]\naddress 192.0.2.1\n" % vlog)

    # --- Type=notify: READY=1 when it serves, STOPPING=1 when it stops
    nsock_path = os.path.join(c.dir, "notify.sock")
    ns = notify_socket(nsock_path)
    d = c.start(env=dict(NO_SYSTEMD, NOTIFY_SOCKET=nsock_path), wait=False)
    # the restore says what it does (STATUS=, `systemctl status`), then READY=1
    msgs = [ns.recv(4096).decode() for _ in range(3)]
    check(msgs == ["STATUS=restoring the history from the data directory",
                   "STATUS=history restored", "READY=1"], "notifications: %r" % msgs)
    rc, out, err = c.ctl("status", timeout=5)
    check(rc == 0, "status right after READY=1: exit %d %s" % (rc, err))
    log("READY=1 received; the control socket answered at once")

    # --- reopen-logs: the renamed file gets nothing after the reopen
    c.run_writer("--prefix", "before", "--count", "20", "--vlog", "--peer", "p")
    wait_lines(vlog, "before", 20)
    rotated = vlog + "-20261201"
    os.rename(vlog, rotated)
    rc, out, err = c.ctl("reopen-logs")
    check(rc == 0 and out.strip() == "verdict log reopened: %s" % vlog,
          "reopen-logs: exit %d %r %r" % (rc, out, err))
    check(os.path.exists(vlog), "reopen-logs made a new %s" % vlog)
    c.run_writer("--prefix", "after", "--count", "20", "--vlog", "--peer", "p")
    wait_lines(vlog, "after", 20)
    check(not lines_with(rotated, "after"), "lines after the reopen went to the renamed file")
    check(len(lines_with(rotated, "before")) == 20 and not lines_with(vlog, "before"),
          "the 20 lines before the reopen stay in the renamed file only")
    rc, out, err = c.ctl("reopen-logs", "--json")
    check(rc == 0 and '"verdict_log":"%s"' % vlog in out.replace(" ", ""), "--json: %r" % out)
    log("reopen-logs: 20 lines in the rotated file, 20 in the new one")

    d.send_signal(signal.SIGTERM)
    msg = ns.recv(4096).decode()
    check(msg == "STOPPING=1", "notification at SIGTERM: %r" % msg)
    check(d.wait(timeout=60) == 0, "floodctld exit status %s" % d.returncode)
    ns.close()

    # --- timestamps auto, not under systemd: every line starts with the time
    lines = log_lines(c)
    check(len(lines) >= 3, "a few lines logged: %r" % lines)
    bad = [l for l in lines if not ISO.match(l)]
    check(not bad, "lines without an ISO 8601 time: %r" % bad[:5])
    check(any("ready: region" in l for l in lines), "the ready line is there")
    # the kits match lines by their level once the time is off
    check(any(l.startswith("notice floodctld: ready") for l in c.log().splitlines()),
          "the kit's log() takes the time off")

    # --- a systemd service (its stderr not the journal): no time ...
    lines = run_once(c, {"INVOCATION_ID": "0123456789abcdef0123456789abcdef",
                         "JOURNAL_STREAM": None})
    bad = [l for l in lines if not BARE.match(l)]
    check(lines and not bad, "lines with something before their level: %r" % (bad[:5] or lines))
    # ... unless asked for
    with open(c.conf, "a") as f:
        f.write("[log]\ntimestamps on\n")
    lines = run_once(c, {"INVOCATION_ID": "0123456789abcdef0123456789abcdef",
                         "JOURNAL_STREAM": None})
    bad = [l for l in lines if not ISO.match(l)]
    check(lines and not bad, "timestamps on: lines without the time: %r" % (bad[:5] or lines))
    log("timestamps: by default outside systemd, none under it, `on` everywhere")

    # --- under systemd's journal stream: "<N>" prefixes, no time
    logp = os.path.join(c.dir, "floodctld.%d.log" % len(c.logs))
    open(logp, "w").close()
    st = os.stat(logp)
    c.start(env={"JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino)})
    c.stop()
    check(c.logs[-1] == logp, "the kit wrote the log this test named")
    lines = log_lines(c)
    bad = [l for l in lines if not PRIO.match(l) or PRIO.match(l).group(1) != PRIO_OF[PRIO.match(l).group(2)]]
    check(lines and not bad, "lines without their priority prefix: %r" % (bad[:5] or lines))
    check(any(l.startswith("<5>notice floodctld: ready") for l in lines), "ready at notice (<5>)")
    log("journal stream: %d lines, each with its priority" % len(lines))
    passed("81_ctl_notify_logs")


main()
