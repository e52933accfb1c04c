# SPDX-License-Identifier: MIT
"""fgkit.py — the base every Python test kit shares (not a test).

hostlib (floodgate-host), fgtcp (fg-taphost), fgdp (floodgate on DPDK),
ctlkit (floodctld), relaykit (the relay) and ../interop/innkit (INN) keep
what is theirs; what every test does the same way lives here, once:

  verdicts   log(), check(), fail(), passed(), skip(). A failed check prints
             "FAIL <why>" and exits 1; passed() prints "PASS <name>: N
             checks" and exits 0; skip() prints "SKIP: <why>" and exits 77
             (automake's code), which tools/run-tests.sh shows as SKIP and
             counts against the run unless FG_ALLOW_SKIP=1 (a skip is not a
             pass; an exit 77 without the line is a failure).
  waiting    wait_until(pred, timeout, what): polls pred until it returns
             something true and returns that; fails loudly, naming `what`,
             when the deadline passes. The deadline is a bound on failure,
             never a measurement: tests wait on the condition itself.
             FG_TIMEOUT_SCALE (default 1) stretches every deadline for a
             slow machine. poll_until() is the same without the failure, for
             a caller that reports on its own.
  processes  spawn() starts a program with its output in a log and stops it
             at exit whatever happens; stop() asks a process to end, kills
             it after a grace period and returns its exit status.
  counters   parse_counters() reads "name value" lines; fresh_stats_file()
             signals a process to rewrite its stats file (SIGUSR1) and
             waits until the file really was replaced: a helper never hands
             back the previous counters as if they were new.
  lines      Lines(sock).line(): CRLF lines from a socket.
  scratch    scratch(name) and mkdtemp(prefix): a test's scratch directory,
             mode 0755, in scratch_root(): FG_TEST_TMP (tools/run-tests.sh
             makes one per run under /tmp) or /tmp, never inside the tree: a checkout may sit under a
             directory other users cannot search (/root is 0700), and innd,
             innfeed and floodctl run as news or nobody in these directories.
  netns      need_root(); enter_netns(name) moves this process (and every
             child started later) into a fresh namespace with lo up, and
             deletes it at exit; rerun_in_netns(prefix) runs this script
             again inside one instead.

Python stdlib only.
"""
import atexit
import ctypes
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("FG_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("FG_BUILD") or os.path.join(TOP, "build", "release")
BIN = os.path.join(BUILD, "bin")
INNBIN = "/usr/lib/news/bin"

SKIP_EXIT = 77          # automake's "skipped"
CLONE_NEWNET = 0x40000000
POLL_STEP = 0.05        # between two looks at a condition; nothing is decided by it

checks = 0
failed = False
_fail_hooks = []


# ---------------------------------------------------------------- scratch
def scratch_root():
    """Where the tests' scratch directories go: FG_TEST_TMP (the runner's
    per-run directory under /tmp, mode 0755, removed after a green run),
    else /tmp itself (not TMPDIR, which may be private). Not the tree:
    processes of other users (innd and innfeed as news, floodctl as nobody)
    must reach these directories wherever the checkout is."""
    return os.environ.get("FG_TEST_TMP") or "/tmp"


def scratch(name):
    """A fresh, empty directory scratch_root()/name, mode 0755; its path."""
    d = os.path.join(scratch_root(), name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o755)
    return d


def mkdtemp(prefix):
    """A new directory with a unique name in scratch_root(), mode 0755."""
    d = tempfile.mkdtemp(prefix=prefix, dir=scratch_root())
    os.chmod(d, 0o755)
    return d


# ---------------------------------------------------------------- verdicts

def log(*a):
    print(*a, flush=True)


def on_fail(fn):
    """Run fn() when a check fails, before the exit (once per fn)."""
    if fn not in _fail_hooks:
        _fail_hooks.append(fn)


def fail(msg):
    global failed
    failed = True
    log("FAIL " + msg)
    for fn in list(_fail_hooks):
        fn()
    sys.exit(1)


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(msg)


def passed(name):
    log("PASS %s: %d checks" % (name, checks))
    sys.exit(0)


def skip(reason, deps=True):
    """This test cannot run here. deps: what is missing is what `make deps`
    (or running as root, as make test does) provides (the line says so).
    The runner fails the run for any skip unless FG_ALLOW_SKIP=1."""
    log("SKIP%s: %s" % (" (make deps)" if deps else "", reason))
    sys.exit(SKIP_EXIT)


def _excepthook(*exc):
    # an uncaught exception is a failure: the kits keep their worlds for a look
    global failed
    failed = True
    sys.__excepthook__(*exc)


sys.excepthook = _excepthook


# ---------------------------------------------------------------- waiting

def _scale():
    try:
        return max(1.0, float(os.environ.get("FG_TIMEOUT_SCALE", "1")))
    except ValueError:
        return 1.0


def check_rate(times, t0, rate, burst, slack, what):
    """Events seen at monotonic `times` (from t0, before the first could
    happen) never came faster than a token bucket of `rate` a second with
    `burst` at once and `slack` more: the n-th by t at most burst + rate *
    (t - t0) + slack. Seen later than it happened, an event only makes the
    bound more lenient, so load cannot fail it."""
    for n, t in enumerate(sorted(times), 1):
        bound = burst + rate * (t - t0) + slack
        check(n <= bound, "%s %d after %.3f s: faster than %g a second (bound %.1f)" %
              (what, n, t - t0, rate, bound))


def poll_until(pred, timeout, step=POLL_STEP):
    """pred()'s first true value, or its last (false) one after timeout s."""
    end = time.monotonic() + timeout * _scale()
    while True:
        v = pred()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def wait_until(pred, timeout, what, step=POLL_STEP):
    """pred()'s first true value; fails the test, naming `what` (a string,
    or a function giving one at the time of failure), after timeout s."""
    t0 = time.monotonic()
    v = poll_until(pred, timeout, step)
    if not v:
        fail("timed out after %.1f s waiting for %s" % (
            time.monotonic() - t0, what() if callable(what) else what))
    return v


def wait_progress(value, done, stall, what, step=POLL_STEP):
    """Poll value() until done(v) holds; fails the test, naming `what`, only
    when value() has not changed for `stall` s (a slow machine moves slowly;
    a stuck one does not move at all). Returns the last value."""
    last = value()
    moved = time.monotonic()
    while not done(last):
        time.sleep(step)
        v = value()
        if v != last:
            last, moved = v, time.monotonic()
        elif time.monotonic() - moved >= stall:
            fail("%s: no progress for %.1f s, stuck at %r" % (
                what() if callable(what) else what, time.monotonic() - moved, last))
    return last


# ---------------------------------------------------------------- processes

PROCS = []


def spawn(cmd, log_path=None, append=False, **kw):
    """Popen(cmd), stdout and stderr into log_path (a new file, or appended
    to) unless kw says otherwise; killed at exit if still running."""
    if log_path is not None:
        out = open(log_path, "a" if append else "w")
        kw.setdefault("stdout", out)
        kw.setdefault("stderr", subprocess.STDOUT)
    p = subprocess.Popen(cmd, **kw)
    p.logp = log_path
    PROCS.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=30):
    """Send sig, wait up to timeout s, SIGKILL after that; the exit status
    (None when it had to be killed)."""
    if p.poll() is not None:
        return p.returncode
    p.send_signal(sig)
    try:
        return p.wait(timeout=timeout * _scale())
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def kill_all(procs=None):
    for p in PROCS if procs is None else procs:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(kill_all)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def stopped(pid):
    """True once every thread of pid is stopped (a SIGSTOP has taken effect:
    the signal is only sent when kill() returns, a running thread stops at
    its next way into the kernel)."""
    task = "/proc/%d/task" % pid
    for tid in os.listdir(task):
        try:
            with open("%s/%s/stat" % (task, tid)) as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                    return False
        except FileNotFoundError:
            pass    # a thread that ended meanwhile
    return True


def sigstop(p, timeout=30):
    """SIGSTOP p and wait until all its threads are stopped."""
    p.send_signal(signal.SIGSTOP)
    wait_until(lambda: stopped(p.pid), timeout, "process %d to stop" % p.pid)


def slurp(path):
    with open(path, errors="replace") as f:
        return f.read()


# The time our programs put before each stderr line unless systemd runs
# them ([log] timestamps auto): "2026-12-01T20:34:36.123Z ".
LOG_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", re.M)


def log_text(text):
    """A log's lines without their time, so that they can be matched by
    their level prefix ("warn region: ...")."""
    return LOG_TIME.sub("", text)


def slurp_log(path):
    return log_text(slurp(path))


# ---------------------------------------------------------------- counters

def parse_counters(text):
    """{name: int} of "name value" lines; other lines are ignored."""
    out = {}
    for line in text.splitlines():
        k, _, v = line.strip().rpartition(" ")
        if k and v.lstrip("-").isdigit():
            out[k] = int(v)
    return out


def read_counters(path):
    return parse_counters(slurp(path))


def file_identity(path):
    """What changes when path is rewritten or replaced (None: no file)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def wait_counters(read, pred, timeout, what):
    """The first counters read() gives for which pred(counters) holds; the
    failure names `what` and shows the last counters pred turned down."""
    last = {}

    def ok():
        last["st"] = read()
        return pred(last["st"])
    t0 = time.monotonic()
    if not poll_until(ok, timeout):
        fail("timed out after %.1f s waiting for %s; last counters: %s" % (
            time.monotonic() - t0, what() if callable(what) else what,
            " ".join("%s=%s" % kv for kv in sorted(last.get("st", {}).items()))[:3000]))
    return last["st"]


def fresh_stats_file(proc, path, what="the stats file", timeout=30):
    """SIGUSR1 to proc, then its counters once path has been replaced (the
    programs write path.tmp and rename it, so a new file is a whole one)."""
    before = file_identity(path)
    proc.send_signal(signal.SIGUSR1)

    def replaced():
        if proc.poll() is not None:
            fail("%s: the process exited (%s) instead of writing it" % (what, proc.returncode))
        now = file_identity(path)
        return now is not None and now != before
    wait_until(replaced, timeout, "%s to be rewritten after SIGUSR1" % what, step=0.01)
    return read_counters(path)


# ---------------------------------------------------------------- lines

class Lines:
    """CRLF lines from a socket, as str."""

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


# ---------------------------------------------------------------- netns

def icmp_echo(addr, timeout=3):
    """One ICMP echo request to addr (a raw socket: root); fails the test
    unless the reply comes back with the same payload."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(timeout)
    payload = b"floodgate-ping" * 4
    data = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1) + payload
    csum = 0
    for i in range(0, len(data), 2):
        csum += (data[i] << 8) + data[i + 1]
    csum = (csum & 0xffff) + (csum >> 16)
    csum = ~(csum + (csum >> 16)) & 0xffff
    s.sendto(struct.pack("!BBHHH", 8, 0, csum, 0x1234, 1) + payload, (addr, 0))
    while True:
        pkt, peer = s.recvfrom(2048)
        ihl = (pkt[0] & 15) * 4
        if peer[0] == addr and pkt[ihl] == 0:
            check(pkt[ihl + 8:] == payload, "echo payload differs")
            s.close()
            return


def need_root(why="network namespaces"):
    if os.geteuid() != 0:
        skip("needs root (%s); make test runs as root" % why)


def need_inn(program="innd"):
    if not os.access(os.path.join(INNBIN, program), os.X_OK):
        skip("INN's %s is missing (tools/deps.sh installs inn2)" % program)


def del_netns(name):
    subprocess.run(["ip", "netns", "del", name], stderr=subprocess.DEVNULL)


def enter_netns(name):
    """Move this process into a fresh namespace `name` (a stale one of that
    name is replaced) with loopback up; it is deleted at exit."""
    need_root()
    del_netns(name)
    subprocess.run(["ip", "netns", "add", name], check=True)
    atexit.register(del_netns, name)
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    fd = os.open("/run/netns/" + name, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        fail("setns: errno %d" % ctypes.get_errno())
    os.close(fd)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def rerun_in_netns(prefix):
    """Run this script again inside a fresh namespace prefix-<pid> (each
    area names its own), loopback up; this process exits with its status.
    Inside (FG_NETNS set) it returns at once."""
    if os.environ.get("FG_NETNS"):
        return
    need_root()
    name = "%s-%d" % (prefix, os.getpid())
    subprocess.run(["ip", "netns", "add", name], check=True)
    rc = 1
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
                       check=True)
        env = dict(os.environ, FG_NETNS=name)
        rc = subprocess.call(["ip", "netns", "exec", name, sys.executable] + sys.argv, env=env)
    finally:
        del_netns(name)
    sys.exit(rc)


def inet_csum(data):
    """The Internet checksum (RFC 1071) of `data`, for crafted packets."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s & 0xffff) + (s >> 16)
    return ~(s + (s >> 16)) & 0xffff
