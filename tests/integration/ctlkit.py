# SPDX-License-Identifier: MIT
"""ctlkit.py — shared helpers for the control-plane integration tests (not a test).

Ctl(name) makes a private world in fgkit.scratch("fg-ctl-<name>-<pid>"):
a floodgate.conf, a data directory, a control socket, a region file in
/dev/shm (fg-ctl-<name>-<pid>). start() runs floodctld, optionally under
the power-loss shim (tests/preload/powerloss.so); writer() runs
tools/histwriter; start_host() runs floodgate-host on the region; ctl()
runs floodctl; powerloss() throws away everything
not made durable (the shim's revert); wipe_shm() deletes the region, as a
reboot would. netns() moves this process into a fresh network namespace
(fg-ctl-<name>-<pid>) so the stats endpoint listens only there.
Everything is removed at exit.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess

import fgkit
from fgkit import BUILD, TOP, check, fail, log, passed, wait_until  # noqa: F401 (the tests' names)

FLOODCTLD = os.path.join(BUILD, "bin/floodctld")
FLOODCTL = os.path.join(BUILD, "bin/floodctl")
HISTWRITER = os.path.join(BUILD, "bin/histwriter")
HOST = os.path.join(BUILD, "bin/floodgate-host")
POWERLOSS = os.path.join(BUILD, "tests/preload/powerloss.so")
DAY = 86400


class Writer:
    """A running histwriter; its stdout is parsed into ids/committed."""

    def __init__(self, ctl, args, name):
        self.out_path = os.path.join(ctl.dir, "%s.out" % name)
        self.err_path = os.path.join(ctl.dir, "%s.err" % name)
        self.p = fgkit.spawn([HISTWRITER, "-c", ctl.conf] + list(args),
                             stdout=open(self.out_path, "w"), stderr=open(self.err_path, "w"))
        ctl.procs.append(self.p)

    def lines(self):
        with open(self.out_path) as f:
            return [l.split() for l in f if l.strip()]

    def ids(self):
        """{n: seq} of every ID it journaled."""
        return {int(l[1]): int(l[2]) for l in self.lines() if l[0] == "id"}

    def committed(self):
        c = [int(l[1]) for l in self.lines() if l[0] == "committed"]
        return c[-1] if c else 0

    def wait_ids(self, n, timeout=30):
        wait_until(lambda: len(self.ids()) >= n, timeout,
                   lambda: "the writer to print %d ids (it has %d)" % (n, len(self.ids())))

    def wait(self, timeout=60):
        rc = self.p.wait(timeout=timeout)
        return rc

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()


class Ctl:
    def __init__(self, name):
        self.name = "fg-ctl-%s-%d" % (name, os.getpid())
        self.dir = fgkit.scratch(self.name)
        self.data = os.path.join(self.dir, "data")
        self.state = os.path.join(self.dir, "powerloss-state")
        self.sock = os.path.join(self.dir, "control.sock")
        self.shm = "/dev/shm/" + self.name
        self.conf = os.path.join(self.dir, "floodgate.conf")
        self.d = None
        self.logs = []
        self.procs = []
        self.ns = None
        self.extra = {}
        atexit.register(self.cleanup)

    def config(self, text="", http="off"):
        """Write floodgate.conf: the test's private paths plus `text`. The
        stats endpoint is off unless asked for (then only inside netns())."""
        base = ("[history]\ncapacity 200000\nshm-path %s\n"
                "[persistence]\ndata-dir %s\n"
                "[stats]\ncontrol-socket %s\nhttp %s\n" % (self.shm, self.data, self.sock, http))
        with open(self.conf, "w") as f:
            f.write(base + text)
        return self.conf

    def start(self, powerloss=False, env=None, args=(), wait=True):
        e = dict(os.environ)
        for k, v in (env or {}).items():   # None: not in floodctld's environment
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        if powerloss:
            os.makedirs(self.data, exist_ok=True)
            e.update(FG_PL_DIR=self.data, FG_PL_STATE=self.state, LD_PRELOAD=POWERLOSS)
        logp = os.path.join(self.dir, "floodctld.%d.log" % len(self.logs))
        self.logs.append(logp)
        self.d = subprocess.Popen([FLOODCTLD, "-c", self.conf, "--log-level", "info"] + list(args),
                                  stdout=open(logp, "w"), stderr=subprocess.STDOUT, env=e)
        self.procs.append(self.d)
        if wait:
            self.wait_ready()
        return self.d

    def wait_ready(self, timeout=30):
        def ready():
            if self.d.poll() is not None:
                fail("floodctld exited %s:\n%s" % (self.d.returncode, self.log()))
            return self.ctl("status", timeout=5)[0] == 0
        wait_until(ready, timeout, lambda: "floodctld to be ready:\n" + self.log())

    def log(self, i=-1, raw=False):
        """floodctld's log; its lines' times taken off unless raw."""
        text = fgkit.slurp(self.logs[i])
        return text if raw else fgkit.log_text(text)

    def stop(self):
        self.d.send_signal(signal.SIGTERM)
        rc = self.d.wait(timeout=30)
        check(rc == 0, "floodctld stopped with %s:\n%s" % (rc, self.log()))
        self.clean_log()

    def clean_log(self):
        """No sanitizer report and no assertion in any floodctld log (FG_BUILD
        may point at build/asan)."""
        for p in self.logs:
            text = open(p).read()
            for bad in ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                        "assertion failed"):
                check(bad not in text, "%s in %s" % (bad, p))

    def kill(self):
        self.d.send_signal(signal.SIGKILL)
        self.d.wait()

    def ctl(self, *args, timeout=60, user=None, sock=None):
        cmd = [FLOODCTL] + [args[0], "-s", sock or self.sock] + list(args[1:])
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def ctl_json(self, *args):
        rc, out, err = self.ctl(*args, "--json")
        check(rc in (0, 1), "floodctl %s --json: exit %d: %s" % (args, rc, err))
        try:
            return rc, json.loads(out if out.strip() else err)
        except ValueError:
            fail("floodctl %s --json: not JSON: %r" % (args, out))

    def writer(self, *args, name="w"):
        return Writer(self, args, name)

    def run_writer(self, *args, name="w", timeout=120):
        w = Writer(self, list(args) + ["--wait-commit"], name)
        rc = w.wait(timeout)
        check(rc == 0, "histwriter %s exit %d: %s" % (args, rc, open(w.err_path).read()))
        return w

    def missing(self, numbers, prefix="hw"):
        """The IDs of `numbers` not in history (histwriter --check)."""
        p = subprocess.run([HISTWRITER, "-c", self.conf, "--check", "--prefix", prefix],
                           input="\n".join(str(n) for n in numbers).encode(),
                           capture_output=True, timeout=120)
        out = p.stdout.decode().split("\n")
        check(any(l.startswith("checked %d " % len(numbers)) for l in out),
              "histwriter --check: %r %r" % (out[-3:], p.stderr))
        return [int(l.split()[1]) for l in out if l.startswith("missing ")]

    def powerloss(self, seed=None):
        """Drop everything not durable (run after every process is killed):
        the worst case, or with a seed one of the outcomes the shim draws."""
        e = dict(os.environ, FG_PL_DIR=self.data, FG_PL_STATE=self.state, FG_PL_REVERT="1",
                 LD_PRELOAD=POWERLOSS)
        if seed is not None:
            e["FG_PL_SEED"] = str(seed)
        p = subprocess.run(["/bin/true"], env=e, capture_output=True)
        err = p.stderr.decode()
        check("reverted to its durable state" in err, "power-loss revert did not run: %r" % err)
        return err

    def start_host(self, port, args=(), powerloss=False, env=None):
        """floodgate-host --floodctld on this world's configuration, once it
        listens on 127.0.0.1:port, optionally under the power-loss shim
        with `env` added; (process, its log's path)."""
        logp = os.path.join(self.dir, "host.%d.log" % len(self.procs))
        e = dict(os.environ, **(env or {}))
        if powerloss:
            os.makedirs(self.data, exist_ok=True)
            e.update(FG_PL_DIR=self.data, FG_PL_STATE=self.state, LD_PRELOAD=POWERLOSS)
        p = subprocess.Popen([HOST, "-c", self.conf, "--floodctld"] + list(args),
                             stdout=subprocess.DEVNULL, stderr=open(logp, "w"), env=e)
        self.procs.append(p)
        wait_until(lambda: p.poll() is not None or connectable(port), 30,
                   "floodgate-host to listen")
        check(p.poll() is None, "floodgate-host exited:\n" + open(logp).read())
        return p, logp

    def wipe_shm(self):
        for p in (self.shm,):
            if os.path.exists(p):
                os.unlink(p)

    def netns(self):
        """Move this process (and so every child) into a new network namespace."""
        self.ns = self.name
        fgkit.enter_netns(self.ns)

    def data_files(self, suffix):
        return sorted(f for f in os.listdir(self.data) if f.endswith(suffix))

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.wipe_shm()
        if self.ns:
            fgkit.del_netns(self.ns)
        if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
            log("kept %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def connectable(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def crash_round(c, prefix, until, rate=3000, env=None, args=(), timeout=120):
    """Run floodctld under the power-loss shim with a writer inserting at
    `rate`; once until(writer) holds (a state the crash must land in, not
    an amount of time), SIGKILL both at once, drop what was not durable,
    wipe the region (a reboot). Returns (ids, committed): every ID the
    writer journaled {n: seq} and the last committed count it saw."""
    c.start(powerloss=True, env=env, args=args)
    w = c.writer("--prefix", prefix, "--count", "0", "--rate", str(rate), name=prefix)

    def ready():
        if w.p.poll() is not None:
            fail("histwriter exited %s: %s" % (w.p.returncode, fgkit.slurp(w.err_path)))
        return until(w)
    wait_until(ready, timeout, lambda: "the crash point of round %s (committed %d; "
               "floodctld's log:\n%s)" % (prefix, w.committed(), c.log()[-2000:]))
    w.p.send_signal(signal.SIGKILL)
    c.d.send_signal(signal.SIGKILL)
    w.p.wait()
    c.d.wait()
    c.powerloss()
    c.wipe_shm()
    return w.ids(), w.committed()


def snapshots_logged(c):
    """How many snapshots the running floodctld has written (its log)."""
    return sum(1 for line in c.log().splitlines() if " snapshot " in line and
               "entries, covers journal" in line)


def committed_ids(ids, committed):
    return sorted(n for n, seq in ids.items() if seq < committed)


def http_get(url, timeout=10, method="GET"):
    """(status, body) of one request; status 0 when nothing answers."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, ConnectionError, OSError):
        return 0, ""


def prom_parse(text):
    """{(name, frozenset(labels)): value} of a Prometheus text scrape."""
    import re
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        if not m:
            fail("unparsable metrics line: %r" % line)
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def prom_value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def wait_for(fn, what, timeout=15):
    """Poll fn() until it is true; fail after `timeout` seconds."""
    wait_until(fn, timeout, what, step=0.1)
