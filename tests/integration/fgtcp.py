# SPDX-License-Identifier: MIT
"""fgtcp.py — shared helpers for the TCP integration tests (not a test).

Harness(name, *args, rules=..., peer=...) creates a network namespace
fg-tcp-<name>-<pid>, moves this process into it (setns), writes a
floodgate.conf for it (one peer, "kernel", at 198.18.0.1; extra [rules]
and [peer] lines from the arguments) and starts fg-taphost there on a
TAP device: userspace TCP, tcpsess and the NNTP session engine with an
in-memory history. It brings the device up with the kernel side at
198.18.0.1/24 (RFC 2544 benchmarking space; nothing leaves the namespace)
plus 198.18.0.3 (NOT_PEER, an address no peer has), the module at
198.18.0.2. Every socket the test opens afterwards is a real Linux TCP
client talking to the userspace stack and the engine. stats() asks the
harness for its counters (SIGUSR1 -> "name value" lines); close() stops
it, checks its log is clean and deletes the namespace. Verdicts, waiting
and the namespace come from fgkit.
"""
import atexit
import email.utils
import os
import re
import signal
import shutil
import socket
import subprocess
import time

import fgkit
from fgkit import BUILD, TOP, Lines, check, fail, log, wait_until  # noqa: F401 (the tests' names)

TAPHOST = os.path.join(BUILD, "bin/fg-taphost")
KERNEL_ADDR = "198.18.0.1"
MODULE_ADDR = "198.18.0.2"
# History slots: offered IDs (a 238 not yet followed by its article) are
# pinned in their bucket pair, so a table whose pinned entries fill both
# buckets of a new ID answers it 431 (nntp_history_full) at any load. 64
# holds 60000 offers at once: at 400000 slots (80000 buckets of 5, 0.75
# per bucket) a make test loop met such a pair (and a 90000-slot table met
# one at once); at 2 M slots (0.15 per bucket) a Poisson estimate puts the
# odds of a full pair over a run below one in a million.
HISTORY_SLOTS = 2000000
NOT_PEER = "198.18.0.3"
NO_DOWNSTREAM = re.compile(r"^warn config: .*no \[downstream\] sections")


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


class Harness:
    def __init__(self, name, *args, rules="", peer=""):
        fgkit.need_root()
        self.ns = "fg-tcp-%s-%d" % (name, os.getpid())
        self.dir = fgkit.scratch(self.ns)
        atexit.register(self.remove_dir)
        self.stats_file = os.path.join(self.dir, "stats")
        self.log_file = os.path.join(self.dir, "taphost.log")
        self.config = os.path.join(self.dir, "floodgate.conf")
        with open(self.config, "w") as f:
            # the clock check is off: 60's article dated 2006 is to be
            # refused as too old, not taken for a sign of a wrong clock
            f.write("[site]\nserver-name taphost.test\npath-identity taphost.test\n"
                    "listen 0.0.0.0:119\n[rules]\n%s\n[session]\nclock-skew-limit 0\n"
                    "[history]\ncapacity %d\n[peer kernel]\naddress %s\n%s" % (
                        rules, HISTORY_SLOTS, KERNEL_ADDR, peer))
        fgkit.enter_netns(self.ns)
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

    def wait_ready(self):
        # the tap carrier comes up once the harness holds the device open
        def answers():
            try:
                socket.create_connection((MODULE_ADDR, 9), timeout=0.5).close()
                return True
            except ConnectionRefusedError:
                return True     # the module answered with a RST: it is up
            except OSError:
                return False
        wait_until(answers, 30, "the module to answer at %s" % MODULE_ADDR)

    def stats(self):
        """Fresh counters (SIGUSR1, then the file is replaced); fails the
        test if no new file comes."""
        return fgkit.fresh_stats_file(self.proc, self.stats_file, "fg-taphost's stats")

    def wait_stats(self, pred, what, timeout=30):
        """The first fresh counters for which pred(counters) holds."""
        return fgkit.wait_counters(self.stats, pred, timeout, what)

    def remove_dir(self):
        """At the test's exit: its directory goes unless it failed (as
        fgdp.World's; FG_KEEP_TMP=1 keeps it anyway)."""
        if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
            log("kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

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
        fgkit.del_netns(self.ns)
        if check_log:
            # the harness relays nowhere, and knows it (as fgdp.py)
            text = "".join(ln for ln in fgkit.slurp_log(self.log_file).splitlines(True)
                           if not NO_DOWNSTREAM.match(ln))
            check(self.proc.returncode == 0, "fg-taphost exited %s" % self.proc.returncode)
            check(text.strip() == "", "fg-taphost log not clean:\n" + text)
        return final


read_stats = fgkit.read_counters


def connect(timeout=30, source=None):
    s = socket.create_connection((MODULE_ADDR, 119), timeout=timeout,
                                 source_address=(source, 0) if source else None)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


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
