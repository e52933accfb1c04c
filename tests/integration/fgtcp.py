# SPDX-License-Identifier: MIT
"""fgtcp.py — shared helpers for the TCP integration tests (not a test).

Harness(name, *args, rules=...) creates a network namespace
fg-tcp-<name>-<pid>, moves this process into it (setns), writes a
floodgate.conf for it (one peer, "kernel", at 198.18.0.1; extra [rules]
lines from the argument) and starts fg-taphost there on a
TAP device: userspace TCP, tcpsess and the NNTP session engine with an
in-memory history. It brings the device up with the kernel side at
198.18.0.1/24 (RFC 2544 benchmarking space; nothing leaves the namespace)
plus 198.18.0.3 (NOT_PEER, an address no peer has), the module at
198.18.0.2. Every socket the test opens afterwards is a real Linux TCP
client talking to the userspace stack and the engine. stats() asks the
harness for its counters (SIGUSR1 -> "name value" lines); close() stops
it, checks its log is clean and deletes the namespace.
"""
import ctypes
import email.utils
import os
import re
import signal
import socket
import subprocess
import sys
import time

TOP = os.environ.get("FG_TOP") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
BUILD = os.environ.get("FG_BUILD") or os.path.join(TOP, "build/release")
TAPHOST = os.path.join(BUILD, "bin/fg-taphost")
KERNEL_ADDR = "198.18.0.1"
MODULE_ADDR = "198.18.0.2"
NOT_PEER = "198.18.0.3"
CLONE_NEWNET = 0x40000000
NO_DOWNSTREAM = re.compile(r"^warn config: .*no \[downstream\] sections")


def log(*a):
    print(*a, flush=True)


def fail(msg):
    log("FAIL " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


class Harness:
    def __init__(self, name, *args, rules=""):
        self.ns = "fg-tcp-%s-%d" % (name, os.getpid())
        self.dir = os.path.join(TOP, "build/test-tmp", self.ns)
        os.makedirs(self.dir, exist_ok=True)
        self.stats_file = os.path.join(self.dir, "stats")
        self.log_file = os.path.join(self.dir, "taphost.log")
        self.config = os.path.join(self.dir, "floodgate.conf")
        with open(self.config, "w") as f:
            # the clock check is off: 60's article dated 2006 is to be
            # refused as too old, not taken for a sign of a wrong clock
            f.write("[site]\nserver-name taphost.test\npath-identity taphost.test\n"
                    "listen 0.0.0.0:119\n[rules]\n%s\n[session]\nclock-skew-limit 0\n"
                    "[history]\ncapacity 400000\n[peer kernel]\naddress %s\n" % (
                        rules, KERNEL_ADDR))
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL)
        sh("ip", "netns", "add", self.ns)
        self._enter()
        sh("ip", "link", "set", "lo", "up")
        cmd = [TAPHOST, "--tap", "fgt0", "--addr", MODULE_ADDR, "--config", self.config,
               "--stats-file", self.stats_file] + list(args)
        self.logf = open(self.log_file, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.logf, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            self.close(check_log=False)
            fail("fg-taphost did not start: %r (log %s)" % (line, self.log_file))
        sh("ip", "link", "set", "fgt0", "up")
        sh("ip", "addr", "add", KERNEL_ADDR + "/24", "dev", "fgt0")
        sh("ip", "addr", "add", NOT_PEER + "/24", "dev", "fgt0")
        # no IPv6 chatter on the device: the module counts and drops it anyway
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.fgt0.disable_ipv6=1"],
                       stderr=subprocess.DEVNULL)
        self.pcap = None
        if os.environ.get("FGTCP_PCAP"):
            self.pcap = subprocess.Popen(["tcpdump", "-i", "fgt0", "-s", "96", "-w",
                                          os.path.join(self.dir, "tap.pcap")],
                                         stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        self.wait_ready()

    def _enter(self):
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open("/run/netns/" + self.ns, os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            fail("setns: errno %d" % ctypes.get_errno())
        os.close(fd)

    def wait_ready(self):
        # the tap carrier comes up once the harness holds the device open
        for _ in range(100):
            try:
                s = socket.create_connection((MODULE_ADDR, 9), timeout=0.5)
                s.close()
                return
            except ConnectionRefusedError:
                return          # the module answered with a RST: it is up
            except OSError:
                time.sleep(0.05)
        fail("module never answered at %s" % MODULE_ADDR)

    def stats(self):
        before = os.stat(self.stats_file).st_mtime_ns if os.path.exists(self.stats_file) else 0
        self.proc.send_signal(signal.SIGUSR1)
        for _ in range(200):
            if os.path.exists(self.stats_file) and os.stat(self.stats_file).st_mtime_ns != before:
                break
            time.sleep(0.01)
        time.sleep(0.02)
        return read_stats(self.stats_file)

    def close(self, check_log=True):
        final = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if os.path.exists(self.stats_file):
            final = read_stats(self.stats_file)
        self.logf.close()
        if self.pcap:
            self.pcap.terminate()
            self.pcap.wait()
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL)
        if check_log:
            with open(self.log_file) as f:
                # the harness relays nowhere, and knows it (as fgdp.py)
                text = "".join(ln for ln in f if not NO_DOWNSTREAM.match(ln))
            check(self.proc.returncode == 0, "fg-taphost exited %s" % self.proc.returncode)
            check(text.strip() == "", "fg-taphost log not clean:\n" + text)
        return final


def read_stats(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition(" ")
            if k:
                out[k] = int(v)
    return out


def connect(timeout=30, source=None):
    s = socket.create_connection((MODULE_ADDR, 119), timeout=timeout,
                                 source_address=(source, 0) if source else None)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Lines:
    """Reads CRLF lines from a socket."""

    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed; partial %r" % self.buf[:80])
            self.buf += d
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line.decode()


def article(msgid, body_bytes, date=None):
    """A dot-stuffed article of about body_bytes, ending with the dot line,
    that the engine's rules accept (dated now unless `date` is given)."""
    date = date or email.utils.formatdate(usegmt=True)
    head = ("Path: test!not-for-mail\r\nFrom: t@example.net\r\nNewsgroups: test\r\n"
            "Subject: tcp test\r\nMessage-ID: %s\r\nDate: %s\r\n\r\n" % (
                msgid, date)).encode()
    line = b".dot-stuffed line of article text, 64 octets long..........\r\n"
    n = max(1, body_bytes // len(line))
    return head + line * n + b".\r\n"


def nntp_session(sock, ids, articles=(), art_size=4096, quit=True):
    """Greeting, MODE STREAM, pipelined CHECKs then TAKETHIS; checks every
    response. Returns the responses."""
    r = Lines(sock)
    got = [r.line()]
    check(got[0].startswith("200 "), "greeting %r" % got[0])
    out = [b"MODE STREAM\r\n"] + [b"CHECK %s\r\n" % i.encode() for i in ids]
    for a in articles:
        out.append(b"TAKETHIS %s\r\n" % a.encode())
        out.append(article(a, art_size))
    if quit:
        out.append(b"QUIT\r\n")
    sock.sendall(b"".join(out))
    exp = ["203 Streaming permitted"] + ["238 " + i for i in ids] + ["239 " + a for a in articles]
    if quit:
        exp.append("205 Bye")
    for e in exp:
        line = r.line()
        got.append(line)
        check(line == e, "expected %r, got %r" % (e, line))
    if quit:
        check(sock.recv(10) == b"", "no FIN after QUIT")
    return got
