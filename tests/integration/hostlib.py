# SPDX-License-Identifier: MIT
"""Helpers for the floodgate-host integration tests (3N_host_*.py), on
fgkit's base (verdicts, waiting, processes, netns).

Every test runs inside a network namespace it creates (fg-eng-<pid>), so
loopback addresses and ports are its own: 127.0.0.1 is a configured peer,
127.0.0.2 is not. A failed check here stops every process at once and
keeps the scratch directories for a look. Python stdlib only.
"""
import atexit
import email.utils
import os
import shutil
import signal
import socket
import subprocess
import time

import fgkit
from fgkit import BUILD, TOP, check, fail, log, wait_until  # noqa: F401 (the tests' names)

HOST_BIN = os.path.join(BUILD, "bin", "floodgate-host")
PORT = 1119

KEEP = []      # directories kept for inspection after a failure
PROCS = []     # processes to stop, whatever happens


def _stop_everything():
    """On a failed check: keep the directories, stop every process, and
    leave at once (threads included: os._exit)."""
    for d in KEEP:
        log("kept for inspection: " + d)
    fgkit.kill_all(PROCS)
    fgkit.kill_all()
    os._exit(1)


def in_netns(prefix="fg-eng"):
    """Re-run this script inside a fresh namespace (prefix-<pid>: each area
    names its own) with loopback up."""
    fgkit.on_fail(_stop_everything)
    fgkit.rerun_in_netns(prefix)


def _rmtree_unless_failed(d):
    if not fgkit.failed:
        shutil.rmtree(d, True)


CONFIG = """[site]
server-name host.test.example
path-identity filter.test.example
listen 127.0.0.1:%d
[rules]
cutoff 10d
retention 11d
max-article-size %d
[session]
%s
[history]
capacity 200000
[peer local]
address 127.0.0.1
newsgroups *,!junk.*
"""


class Host:
    """A floodgate-host process with its own config and stats file."""

    def __init__(self, args=(), session="", extra="", env=None, capacity=None,
                 max_article_size=200000):
        self.dir = fgkit.mkdtemp("fg-eng-host-")
        KEEP.append(self.dir)
        fgkit.on_fail(_stop_everything)
        atexit.register(_rmtree_unless_failed, self.dir)
        os.chmod(self.dir, 0o755)
        self.conf = os.path.join(self.dir, "floodgate.conf")
        self.stats_file = os.path.join(self.dir, "stats")
        self.log = os.path.join(self.dir, "host.log")
        text = CONFIG % (PORT, max_article_size, session)
        if capacity is not None:
            text = text.replace("\ncapacity 200000\n", "\ncapacity %d\n" % capacity)
            check("capacity %d\n" % capacity in text, "hostlib: the [history] capacity line")
        with open(self.conf, "w") as f:
            f.write(text + extra)
        self.proc = subprocess.Popen(
            [HOST_BIN, "-c", self.conf, "--stats-file", self.stats_file] + list(args),
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"),
            env=dict(os.environ, **env) if env else None)
        PROCS.append(self.proc)

        def listening():
            if self.proc.poll() is not None:
                fail("floodgate-host exited at start:\n" + open(self.log).read())
            try:
                socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
                return True
            except OSError:
                return False
        wait_until(listening, 30, "floodgate-host to listen on port %d" % PORT, step=0.02)

    def stats(self):
        """Counters as a dict, fresh (SIGUSR1, then the file is replaced);
        fails the test if no new file comes."""
        return fgkit.fresh_stats_file(self.proc, self.stats_file, "floodgate-host's stats")

    def wait_stats(self, pred, what, timeout=30):
        """The first fresh counters for which pred(counters) holds."""
        return fgkit.wait_counters(self.stats, pred, timeout, what)

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, allow=()):
        """SIGTERM: clean shutdown; returns the final counters. An error
        line of the log fails the test unless its message (after the
        level and component) starts with one of `allow`."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("floodgate-host did not stop on SIGTERM")
        check(rc == 0, "floodgate-host exit status %d:\n%s" % (rc, open(self.log).read()))
        log = fgkit.slurp_log(self.log)
        bad = [l for l in log.splitlines()
               if (l.startswith("err ") and not any(l.split(": ", 1)[-1].startswith(a)
                                                    for a in allow))
               or "runtime error" in l or "Sanitizer" in l]
        check(not bad, "errors in the log:\n" + log)
        return read_stats(self.stats_file)


read_stats = fgkit.read_counters


class Client:
    """One NNTP connection, line oriented."""

    def __init__(self, src=None, timeout=20, rcvbuf=0, addr=None):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if src:
            self.s.bind((src, 0))
        self.s.settimeout(timeout)
        self.s.connect(addr or ("127.0.0.1", PORT))
        self.f = self.s.makefile("rb")

    def send(self, data):
        self.s.sendall(data if isinstance(data, bytes) else data.encode())

    def line(self):
        return self.f.readline()

    def expect(self, want):
        got = self.line()
        want = want if isinstance(want, bytes) else want.encode()
        check(got == want, "want %r, got %r" % (want, got))

    def lines(self, n):
        return [self.line() for _ in range(n)]

    def eof(self):
        return self.f.read() == b""

    def close(self):
        self.f.close()
        self.s.close()

    def cmd(self, line, data=b""):
        """Send a command line (and data after it); its reply line, as text."""
        self.send(line.encode() + b"\r\n" + data)
        return self.line().decode().rstrip("\r\n")


def streaming(source, port):
    """A MODE STREAM connection from `source` (127.0.0.0/8 is all loopback)."""
    cl = Client(src=source, addr=("127.0.0.1", port))
    check(cl.line().startswith(b"200 "), "greeting to " + source)
    check(cl.cmd("MODE STREAM").startswith("203"), "MODE STREAM")
    return cl


GREETING = (b"200 host.test.example floodgate transit-only NNTP service ready "
            b"(feeds only, no reading or posting)\r\n")


def article(mid, hdr_mid=None, age=300, inj_age=240, groups="test.one", body=None,
            extra=""):
    """An article in wire form (CRLF, dot-stuffed, terminated)."""
    date = email.utils.formatdate(time.time() - age, usegmt=True)
    inj = email.utils.formatdate(time.time() - inj_age, usegmt=True)
    lines = ["Path: peer.example!not-for-mail", "From: Poster <poster@example.com>",
             "Newsgroups: " + groups, "Subject: test " + mid,
             "Message-ID: " + (hdr_mid or mid), "Date: " + date, "Injection-Date: " + inj]
    if extra:
        lines.append(extra)
    lines.append("")
    lines += body if body is not None else ["Hello.", ".a line with a dot", "..", "bye"]
    wire = "".join(("." + l if l.startswith(".") else l) + "\r\n" for l in lines)
    return (wire + ".\r\n").encode()
