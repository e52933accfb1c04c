# SPDX-License-Identifier: MIT
"""fgdp.py — shared helpers for the dataplane integration tests (not a test).

World(name) makes a private world: a network namespace fg-dp-<name>-<pid>
(another area's tests give their own prefix)
that this process moves into (every child follows), a directory under
fgkit.scratch_root() with a floodgate.conf, a data directory and the control
sockets, and a region file /dev/shm/fg-dp-<name>-<pid>. start_ctld() runs
floodctld; start_dp() runs floodgate on a net_tap port (fgd0) and, once it
says "ready" (or first_line: "restoring" while floodctld restores), gives
the kernel side of the tap its address (the tap only exists while the port
is open). The kernel side is 198.18.0.1/24 plus
.3 and .4 as extra client addresses; the dataplane is 198.18.0.2. dp()
talks to the dataplane's control socket, ctl() runs floodctl. Every log is
checked at the end: no error line, no sanitizer report. Everything is
removed at exit.
"""
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import fgkit
from fgkit import (BIN, BUILD, TOP, Lines, check, cpu_ticks, fail, log, passed,  # noqa: F401
                   poll_until, slurp, wait_until)

DP_ADDR = "198.18.0.2"
KERNEL_ADDRS = ["198.18.0.1", "198.18.0.3", "198.18.0.4"]
# World(v6=True): the same three peers and the dataplane on IPv6 as well
DP_ADDR6 = "fd00:fd::2"
KERNEL_ADDRS6 = ["fd00:fd::1", "fd00:fd::3", "fd00:fd::4"]
CLIENT_PORT = 119

# DPDK's own chatter on a tap port in a container: notices, not problems
DPDK_NOISE = re.compile(r"^(EAL: |TELEMETRY: |tap_nl_dump_ext_ack|qdisc_create_multiq|"
                        r"eth_dev_tap_create|tap_mp_req_on_rxtx|tap_flow_|rte_pmd_tap_probe|"
                        r"(notice|info) |warn config: .*no \[downstream\] sections|"
                        r"warn restore: no snapshot and no journal)")

read_stats_text = fgkit.parse_counters


def asan_runtime():
    """The ASan runtime the compiler links (for an LD_PRELOAD beside it)."""
    r = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True)
    path = r.stdout.strip()
    check(r.returncode == 0 and os.path.isabs(path) and os.path.exists(path),
          "gcc -print-file-name=libasan.so: %r" % path)
    return path


class World:
    def __init__(self, name, workers=1, rx_queues=None, extra="", prefix="fg-dp", v6=False,
                 peer_keys=""):
        fgkit.need_root()
        self.v6 = v6
        self.peer_keys = peer_keys      # lines for every [peer] section
        self.name = "%s-%s-%d" % (prefix, name, os.getpid())
        self.dir = fgkit.scratch(self.name)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "control.sock")
        self.dpsock = os.path.join(self.dir, "dataplane.sock")
        self.shm = "/dev/shm/" + self.name
        self.conf = os.path.join(self.dir, "floodgate.conf")
        self.logs = []
        self.procs = []
        self.ctld = None
        self.fg = None
        self.ns = self.name
        atexit.register(self.cleanup)
        self.write_config(workers, rx_queues, extra)
        self.enter_netns()

    # ---------------------------------------------------------- set-up
    def write_config(self, workers=1, rx_queues=None, extra="", cutoff="10d", path=None):
        v6 = self.v6
        text = ("[site]\npath-identity floodgate.test\nlisten %s:119%s\n"
                "[rules]\ncutoff %s\n"
                "[session]\nclock-skew-limit 0\n"
                "[history]\ncapacity 400000\nshm-path %s\n"
                "[persistence]\ndata-dir %s\n"
                "[stats]\ncontrol-socket %s\n"
                "[peer feeder-a]\naddress 198.18.0.1%s\n%s"
                "[peer feeder-b]\naddress 198.18.0.3%s\n%s"
                "[peer feeder-c]\naddress 198.18.0.4%s\n%s"
                "[dataplane]\nport net_tap0,iface=fgd0\naddress %s/24%s\n"
                "mac 02:fd:00:00:00:02\nworkers %d\n%s"
                % (DP_ADDR, " [%s]:119" % DP_ADDR6 if v6 else "", cutoff, self.shm,
                   self.data, self.sock,
                   *[x for a in KERNEL_ADDRS6 for x in (" " + a if v6 else "", self.peer_keys)],
                   DP_ADDR, " %s/64" % DP_ADDR6 if v6 else "", workers,
                   "rx-queues %d\n" % rx_queues if rx_queues else ""))
        with open(path or self.conf, "w") as f:
            f.write(text + extra)
        return path or self.conf

    def enter_netns(self):
        fgkit.enter_netns(self.ns)

    def _spawn(self, tag, cmd, env=None):
        logp = os.path.join(self.dir, "%s.%d.log" % (tag, len(self.logs)))
        self.logs.append(logp)
        p = fgkit.spawn(cmd, logp, env=dict(os.environ, **env) if env else None)
        self.procs.append(p)
        return p

    def start_ctld(self, env=None):
        """env: variables added to the environment (a preload shim, say)."""
        self.ctld = self._spawn("floodctld", [os.path.join(BIN, "floodctld"), "-c", self.conf,
                                              "--log-level", "notice"], env)

        def ready():
            if self.ctld.poll() is not None:
                fail("floodctld exited %s:\n%s" % (self.ctld.returncode, slurp(self.ctld.logp)))
            return self.ctl("status")[0] == 0
        wait_until(ready, 30, "floodctld to answer `floodctl status`")
        return self.ctld

    def start_dp(self, args=(), build=None, expect_ready=True, first_line="ready", env=None):
        # FG_DP_BUILD: run this build's floodgate (the ASan pass) with the
        # release build's other programs
        exe = os.path.join(build or os.environ.get("FG_DP_BUILD") or BUILD, "bin/floodgate")
        logp = os.path.join(self.dir, "floodgate.%d.log" % len(self.logs))
        self.logs.append(logp)
        if env and env.get("LD_PRELOAD") and (build or os.environ.get("FG_DP_BUILD")):
            # an ASan floodgate takes a preload shim only behind its own
            # runtime, which must come first in the list
            env = dict(env, LD_PRELOAD=asan_runtime() + ":" + env["LD_PRELOAD"])
        p = subprocess.Popen([exe, "-c", self.conf] + list(args), stdout=subprocess.PIPE,
                             stderr=open(logp, "w"), text=True,
                             env=dict(os.environ, **env) if env else None)
        p.logp = logp
        self.procs.append(p)
        self.fg = p
        line = p.stdout.readline()
        if not expect_ready:
            return p
        if line.strip() != first_line:
            p.wait()
            fail("floodgate did not start (exit %s):\n%s" % (p.returncode, slurp(logp)))
        # the tap exists now: give the kernel side its addresses
        subprocess.run(["ip", "link", "set", "fgd0", "up"], check=True)
        for a in KERNEL_ADDRS:
            subprocess.run(["ip", "addr", "add", a + "/24", "dev", "fgd0"], check=True)
        if self.v6:
            # nodad: usable at once (the kernel's own DAD would only delay)
            for a in KERNEL_ADDRS6:
                subprocess.run(["ip", "-6", "addr", "add", a + "/64", "dev", "fgd0", "nodad"],
                               check=True)
            self.wait_tcp(addr=DP_ADDR6)
        else:
            subprocess.run(["sysctl", "-qw", "net.ipv6.conf.fgd0.disable_ipv6=1"],
                           stderr=subprocess.DEVNULL)
        self.wait_tcp()
        return p

    def wait_tcp(self, timeout=20, addr=DP_ADDR):
        def greets():
            try:
                s = socket.create_connection((addr, 119), timeout=1)
                s.recv(512)
                s.close()
                return True
            except OSError:
                return False
        wait_until(greets, timeout, "the dataplane to answer on %s port 119" % addr)

    # ---------------------------------------------------------- talk
    def ctl(self, *args, timeout=30):
        cmd = [os.path.join(BIN, "floodctl"), args[0], "-s", self.sock] + list(args[1:])
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def dp(self, *words, timeout=10):
        """One request on the dataplane's control socket: (ok, body)."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        s.connect(self.dpsock)
        s.sendall((" ".join(words) + "\n").encode())
        data = b""
        while True:
            k = s.recv(65536)
            if not k:
                break
            data += k
        s.close()
        head, _, body = data.partition(b"\n")
        return head.startswith(b"ok "), body.decode(errors="replace")

    def dp_json(self, *words):
        ok, body = self.dp(*(list(words) + ["--json"]))
        check(ok, "dataplane %s: %s" % (words, body))
        return json.loads(body)

    def stats(self):
        ok, body = self.dp("stats")
        check(ok, "dataplane stats: %s" % body)
        return read_stats_text(body)

    def wait_stats(self, pred, what, timeout=30):
        """The first counters for which pred(counters) holds."""
        return fgkit.wait_counters(self.stats, pred, timeout, what)

    def drain(self, src="198.18.0.4"):
        """`floodctl drain`, and a new connection from src is answered 400
        (draining) and closed; the open sessions go on."""
        rc, out, err = self.ctl("drain")
        check(rc == 0 and "draining: yes" in out, "floodctl drain: %s %s" % (out, err))
        s = connect(src, timeout=10)
        greet = Lines(s).line()
        check(greet.startswith("400 ") and "draining" in greet, "while draining: %r" % greet)
        s.close()

    def shutdown(self, grace):
        """`floodctl shutdown GRACE`; floodgate must exit 0."""
        rc, out, err = self.ctl("shutdown", str(grace))
        check(rc == 0 and "shutting down" in out, "floodctl shutdown: %s %s" % (out, err))
        rc = self.fg.wait(timeout=60 + grace)
        check(rc == 0, "floodgate exited %s:\n%s" % (rc, slurp(self.fg.logp)))

    def stop_dp(self, grace=None):
        """A clean shutdown: exit 0 within the grace period."""
        if grace is None:
            self.fg.send_signal(signal.SIGTERM)
        else:
            ok, body = self.dp("shutdown", str(grace))
            check(ok, "shutdown refused: %s" % body)
        rc = self.fg.wait(timeout=60 + (grace or 10))
        check(rc == 0, "floodgate exited %s:\n%s" % (rc, slurp(self.fg.logp)))

    def check_logs(self, allow=None):
        """No line but DPDK's chatter and notices; `allow` is a regular
        expression of lines this test caused on purpose."""
        extra = re.compile(allow) if allow else None
        for p in self.logs:
            bad = [l for l in fgkit.slurp_log(p).splitlines()
                   if l.strip() and not DPDK_NOISE.match(l) and l.strip() != "ready"
                   and not (extra and extra.search(l))]
            check(not bad, "log %s not clean:\n%s" % (p, "\n".join(bad[:20])))

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if os.path.exists(self.shm):
            os.unlink(self.shm)
        fgkit.del_netns(self.ns)
        if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
            log("kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------- NNTP clients

def connect(src=None, timeout=30, dst=DP_ADDR, port=CLIENT_PORT):
    """A client connection to the dataplane, of dst's family (an IPv6 dst
    such as DP_ADDR6 with an IPv6 src)."""
    s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((dst, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def rfc5322(t):
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(t))


def article(msgid, age=3600, body=2048, path="peer.example!not-for-mail"):
    """An article dated `age` seconds ago, in wire form, with its dot line."""
    head = ("Path: %s\r\nFrom: t@example.net\r\nNewsgroups: fg.test\r\nSubject: dp test\r\n"
            "Message-ID: %s\r\nDate: %s\r\nInjection-Date: %s\r\n\r\n"
            % (path, msgid, rfc5322(time.time() - age - 60), rfc5322(time.time() - age)))
    line = b"..a dot-stuffed line of article text, 64 octets long.........\r\n"
    return head.encode() + line * max(1, body // len(line)) + b".\r\n"


class Feed(threading.Thread):
    """A feeding peer for the length of a test: TAKETHIS in batches of 20
    on one connection from `src`, every answer checked to be 239 (the
    first wrong one is kept in `error`); `n` articles accepted so far,
    `port` its local port. stop, then join: it QUITs."""

    def __init__(self, src, tag):
        super().__init__()
        self.src, self.tag = src, tag
        self.stop = threading.Event()
        self.n = 0
        self.port = None
        self.error = None

    def run(self):
        try:
            s = connect(self.src, timeout=10)
            self.port = s.getsockname()[1]
            r = Lines(s)
            r.line()
            while not self.stop.is_set():
                ids = ["<%s.%d.%d@feed.test>" % (self.tag, self.n + k, os.getpid())
                       for k in range(20)]
                s.sendall(b"".join(b"TAKETHIS %s\r\n" % i.encode() + article(i, body=700)
                                   for i in ids))
                for i in ids:
                    got = r.line()
                    if got != "239 " + i:
                        raise AssertionError("%s: %r" % (i, got))
                self.n += len(ids)
            s.sendall(b"QUIT\r\n")
            r.line()
            s.close()
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e

    def moving(self, what):
        """It answers on through `what`: 40 more articles after it."""
        n = self.n
        wait_until(lambda: self.n >= n + 40 or self.error or not self.is_alive(), 60,
                   "%s's feed moving after %s" % (self.tag, what))
        check(self.error is None and self.is_alive(), "%s's feed after %s: %r"
              % (self.tag, what, self.error))


# memif under --no-shconf has no multi-process channel: a notice, not a fault
MEMIF_NOISE = r"rte_pmd_memif_probe\(\): Failed to register mp action callback"
# DPDK's bonding PMD: a bond stops its members before ethdev does, and
# says so; mode 4's warning at start and its members' refusals (memif
# takes neither promiscuous nor all-multicast)
BOND_NOISE = r"^Device with port_id=\d+ already stopped$|^bond_\w+\(\d+\) - (Using mode 4|[Ff]ailed to)"


def start_memif_dp(w, lines):
    """floodgate on memif (the tap-specific steps of World.start_dp do not
    apply): `lines` replace the tap's port line of w's config; returns once
    it answers on its control socket."""
    with open(w.conf) as f:
        text = f.read()
    with open(w.conf, "w") as f:
        f.write(text.replace("port net_tap0,iface=fgd0", lines))
    w.start_dp(expect_ready=False)	# it read floodgate's first line

    def answers():
        if w.fg.poll() is not None:
            fail("floodgate did not start on memif (exit %s):\n%s"
                 % (w.fg.returncode, slurp(w.fg.logp)))
        try:
            return w.dp("status")[0]
        except OSError:
            return False
    wait_until(answers, 30, "floodgate on memif to answer on its control socket")

