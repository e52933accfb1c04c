#!/usr/bin/env python3
# timeout: 300
"""40_ctl_basic — floodctld and floodctl as an operator meets them.

No daemon: exit 3, one line. A daemon: status (text and JSON), lookup of a
present, an absent, a rejected and an invalid ID, version-number lookups
that name the newest successor and say it differs, the socket's mode and a
non-root user refused (exit 4), a malformed reply (exit 5) and a silent
server (exit 6 within the timeout) from fake servers, a raw client that
sends junk or nothing (an error reply, never a hang, while others are
served), a second floodctld refused, a clean stop, --help and
docs/floodctl.md listing the same commands.
"""
import json
import os
import re
import socket
import subprocess
import threading
import time

from ctlkit import FLOODCTL, FLOODCTLD, TOP, Ctl, check, log, passed


def raw(sock_path, data, read_timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(read_timeout)
    s.connect(sock_path)
    if data:
        s.sendall(data)
    buf = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            buf += b
    finally:
        s.close()
    return buf


def fake_server(path, behaviour):
    """A Unix socket server that misbehaves one way, in a thread."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.recv(1024)
            if behaviour == "garbage":
                c.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello")
            elif behaviour == "short":
                c.sendall(b"ok 100\nonly a little")
            elif behaviour == "silent":
                time.sleep(30)
            c.close()
    threading.Thread(target=loop, daemon=True).start()
    return srv


def lookup_state(c, mid):
    rc, j = c.ctl_json("lookup", mid)
    return j.get("state")


def levers(c):
    """forget and remember: history changed, journaled, counted, logged, and
    kept across a restart that rebuilds the history from the disk."""
    rc, out, err = c.ctl("forget", "<hw-4@histwriter.test>")
    check(rc == 0 and "forgot <hw-4@histwriter.test>: it was accepted" in out and
          "journaled" in out, "forget: %d %r %r" % (rc, out, err))
    check(lookup_state(c, "<hw-4@histwriter.test>") == "absent", "forgotten ID still there")
    rc, out, err = c.ctl("forget", "<hw-4@histwriter.test>")
    check(rc == 1 and "not in history" in out, "forget twice: %d %r %r" % (rc, out, err))
    rc, out, err = c.ctl("forget", "junk")
    check(rc == 1 and "not a Message-ID" in err, "forget junk: %d %r" % (rc, err))
    rc, j = c.ctl_json("forget", "<hw-3@histwriter.test>")
    check(rc == 0 and j.get("was") == "rejected" and j.get("journaled") is True,
          "forget --json: %r" % j)
    rc, out, err = c.ctl("remember", "<hw-4@histwriter.test>", "rejected")
    check(rc == 0 and "remembered <hw-4@histwriter.test> as rejected" in out,
          "remember rejected: %d %r %r" % (rc, out, err))
    rc, out, err = c.ctl("remember", "<hw-4@histwriter.test>")
    check(rc == 1 and "already in history (rejected)" in err, "remember twice: %d %r" % (rc, err))
    rc, out, err = c.ctl("remember", "<hw-4@histwriter.test>", "maybe")
    check(rc == 1 and "accepted or rejected" in err, "remember maybe: %d %r" % (rc, err))
    rc, j = c.ctl_json("remember", "<added@levers.test>")
    check(rc == 0 and j.get("state") == "accepted", "remember --json: %r" % j)
    want = {"<hw-3@histwriter.test>": "absent", "<hw-4@histwriter.test>": "rejected",
            "<added@levers.test>": "accepted", "<hw-5@histwriter.test>": "accepted"}
    got = {m: lookup_state(c, m) for m in want}
    check(got == want, "after the levers: %r" % got)
    rc, st = c.ctl_json("stats")
    ctr = st.get("counters", {})
    check(ctr.get("control_forgotten") == 2 and ctr.get("control_remembered") == 2,
          "lever counters: %r" % {k: v for k, v in ctr.items() if k.startswith("control_")})
    text = c.log()
    check("forgot <hw-4@histwriter.test> (was accepted" in text and
          "remembered <hw-4@histwriter.test> as rejected: journaled" in text,
          "the levers are logged:\n" + text[-1500:])
    # a restart that rebuilds the table from snapshot and journal keeps them
    c.stop()
    c.wipe_shm()
    c.start()
    rc, st = c.ctl_json("status")
    got = {m: lookup_state(c, m) for m in want}
    check(st["startup"] in ("snapshot", "journal") and got == want,
          "after a restart from %s: %r" % (st["startup"], got))


def main():
    c = Ctl("basic")
    c.config("[rules]\nversion-numbers on\n[peer alpha]\naddress 192.0.2.1\n")

    rc, out, err = c.ctl("status")
    check(rc == 3, "status without a daemon: exit %d (want 3)" % rc)
    check(err.count("\n") == 1 and "not running" in err, "one line saying so: %r" % err)

    c.start()
    rc, out, err = c.ctl("status")
    check(rc == 0 and "history" in out and "writers" in out, "status: %d %r" % (rc, out))
    rc, st = c.ctl_json("status")
    check(st["startup"] == "empty" and st["history"]["entries"] == 0, "status json: %r" % st)
    check(st["pid"] == c.d.pid, "status names the daemon's pid")
    # the kernel's clock view (adjtimex), shown and not acted on
    kc = st.get("kernel_clock") or {}
    check(isinstance(kc.get("synchronized"), bool) and kc.get("estimated_error_seconds", -1) >= 0
          and kc.get("max_error_seconds", -1) >= 0, "status json kernel_clock: %r" % kc)
    check("kernel clock: " in out and "(adjtimex; not acted on)" in out,
          "status text shows the kernel clock: %r" % out)
    check(oct(os.stat(c.sock).st_mode & 0o777) == "0o600", "control socket mode 0600")

    w = c.run_writer("--count", "30", "--state", "mixed", "--peer", "alpha")
    rc, out, err = c.ctl("lookup", "<hw-4@histwriter.test>")
    check(rc == 0 and "accepted" in out and "Injection-Date" in out, "lookup present: %r" % out)
    rc, j = c.ctl_json("lookup", "<hw-3@histwriter.test>")
    check(rc == 0 and j["state"] == "rejected" and j["reason"] == "too-old" and
          j["date_header"] == "Injection-Date", "lookup rejected json: %r" % j)
    rc, out, err = c.ctl("lookup", "<hw-99@histwriter.test>")
    check(rc == 1 and "absent" in out, "lookup absent: exit %d %r" % (rc, out))
    rc, out, err = c.ctl("lookup", "no-angle-brackets")
    check(rc == 1 and "not a valid Message-ID" in err, "lookup invalid: %d %r" % (rc, err))

    # seed 000: versions 1..3 of <faq@histwriter.test>; the base itself never seen
    c.run_writer("--version-of", "faq", "--start", "1", "--count", "3", name="v")
    rc, j = c.ctl_json("lookup", "<faq$v=1$r1@histwriter.test>")
    nv = j.get("newest_version") or {}
    check(rc == 0 and nv.get("id") == "<faq$v=3$r3@histwriter.test>" and nv.get("version") == 3
          and nv.get("differs_from_asked") is True, "lookup old version: %r" % j)
    rc, out, _ = c.ctl("lookup", "<faq@histwriter.test>")
    check(rc == 1 and "<faq$v=3$r3@histwriter.test>" in out and "newer version" in out,
          "lookup of the base names the newest: %r" % out)
    rc, j = c.ctl_json("lookup", "<faq$v=3$r3@histwriter.test>")
    check(j["newest_version"]["differs_from_asked"] is False, "the newest is itself: %r" % j)

    levers(c)

    # a user who is not root
    rc, out, err = c.ctl("status", user=65534)
    check(rc == 4 and "permission denied" in err, "non-root: exit %d %r" % (rc, err))

    # misbehaving servers
    for beh, want, text in (("garbage", 5, "malformed"), ("short", 5, "malformed"),
                            ("silent", 6, "no reply")):
        path = os.path.join(c.dir, "fake-%s.sock" % beh)
        srv = fake_server(path, beh)
        t0 = time.time()
        rc, out, err = c.ctl("status", "--timeout", "2", sock=path)
        took = time.time() - t0
        check(rc == want and text in err and took < 10,
              "%s server: exit %d in %.1fs: %r" % (beh, rc, took, err))
        srv.close()

    # raw clients: junk gets an error line; silence is cut after 2 s; others go on
    r = raw(c.sock, b"bogus verb\n")
    check(r.startswith(b"err bad-request "), "junk request: %r" % r)
    r = raw(c.sock, b"lookup\n")
    check(r.startswith(b"err bad-request") and b"missing argument" in r, "lookup without id: %r" % r)
    r = raw(c.sock, b"status \x01\n")
    check(r.startswith(b"err bad-request"), "control octet: %r" % r)
    r = raw(c.sock, b"ping --json\n")
    check(r.startswith(b"ok ") and json.loads(r.split(b"\n", 1)[1])["pong"], "ping: %r" % r)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(c.sock)
    t0 = time.time()
    rc, _, _ = c.ctl("status")
    t_status = time.time()
    s.settimeout(10)
    r = s.recv(4096)
    t_cut = time.time()
    check(rc == 0 and t_status < t_cut, "status answered while a client was silent")
    check(r.startswith(b"err bad-request") and 1.5 < t_cut - t0 < 8,
          "silent client cut after about 2 s (%.1f s): %r" % (t_cut - t0, r))
    s.close()

    # a second floodctld on the same data directory / region refuses to start
    p = subprocess.run([FLOODCTLD, "-c", c.conf], capture_output=True, timeout=30)
    check(p.returncode == 1 and b"another floodctld" in p.stderr, "second floodctld: %d %r" %
          (p.returncode, p.stderr[-300:]))
    # and a bad configuration never starts one
    bad = os.path.join(c.dir, "bad.conf")
    with open(bad, "w") as f:
        f.write("[history]\ncapacity lots\nbogus-key 1\n")
    p = subprocess.run([FLOODCTLD, "-c", bad], capture_output=True, timeout=30)
    check(p.returncode == 2 and b"capacity" in p.stderr and b"bogus-key" in p.stderr,
          "bad config: %d %r" % (p.returncode, p.stderr))

    c.stop()
    check(not os.path.exists(c.sock), "the socket is removed at a clean stop")
    check("stopped" in c.log(), "clean stop logged")
    rc, _, err = c.ctl("status")
    check(rc == 3, "after stop: exit %d" % rc)

    # --help and docs/floodctl.md list the same commands
    out = subprocess.run([FLOODCTL, "--help"], capture_output=True).stdout.decode()
    cmds = re.findall(r"^  (\w+) ", out, re.M)
    doc = open(os.path.join(TOP, "docs/floodctl.md")).read()
    for name in ("status", "stats", "lookup", "explain", "msgid", "expire", "snapshot", "reload"):
        check(name in cmds, "--help lists %s" % name)
    for name in cmds:
        check(re.search(r"^## .*\b%s\b" % name, doc, re.M), "docs/floodctl.md has a section for %s" % name)
    log("writer ids: %d" % len(w.ids()))
    passed("40_ctl_basic")


main()
