#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""demo.py — `make run`: floodgate live, end to end, on one machine.

  tools/run-demo.sh [--once] [--articles N] [--rate N] [--keep]
  make run                       # the same; make run RUN_ARGS=--once
  FG_DEMO_ONCE=1 make run        # as --once

What it does, in order (each step undone at the end, in reverse):
 1. a scratch directory /tmp/fg-demo.XXXX (logs, data, control socket);
 2. floodgate.conf from `floodctl config --default` (the embedded default),
    with the scratch paths, a path identity, no warm-up (the downstream is
    as new as the history), the default's [peer tap] cut to
    10.99.0.0/25, and one [peer] per simulated feedgen peer (10.99.0.201 and
    up); checked with `floodctl config --check`;
 3. the network namespace fg-demo, which this process enters (every child
    follows);
 4. floodctld, then INN's innd on 127.0.0.1:11119 inside the namespace
    (tools/inn/innd.sh, its own directory, /etc/news untouched) as the
    downstream the default config names, then floodgate on the tap fg0
    (10.99.0.1); once floodgate says "ready" the kernel side of the tap gets
    10.99.0.2/24 and one address per simulated peer;
 5. feedgen pushes the demo feed — N peers, every article offered by 10 of
    them, old and future-dated articles, path loops, a few malformed IDs — at
    a modest rate, while `floodctl top` shows the figures live;
 6. once the feed is done and the relay has delivered everything, a summary
    whose numbers are checked against each other: feedgen's 239s, the
    dataplane's, the articles made safe, those relayed, and those innd
    stored (its history lines with a storage token, and its news log),
    and floodgate's CPU time over the feed (feedgen --server-pid);
 7. unless --once: how to point a real feed at it, then it keeps serving
    until Ctrl-C.
Ctrl-C (or SIGTERM, or an error) at any point: `floodctl shutdown`,
floodctld and innd stopped, the namespace and its tap removed, the region
unlinked. Exit 0 after Ctrl-C or a consistent --once run, 1 when the
summary's numbers disagree or a step failed (logs are then kept).
Daemons run in their own sessions, so a Ctrl-C reaches only this script
and `floodctl top`, and the shutdown happens in order.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
BIN = os.path.join(TOP, "build/release/bin")
INND_SH = os.path.join(TOP, "tools/inn/innd.sh")
NETNS = "fg-demo"
TAP = "fg0"
DP_ADDR = "10.99.0.1"
KERNEL_ADDR = "10.99.0.2"
PEER_BASE = 201                # simulated peer i is 10.99.0.(201 + i), outside [peer tap]
INN_PORT = 11119
PATH_ID = "floodgate.demo"
CLONE_NEWNET = 0x40000000


class DemoError(Exception):
    pass


class Stop(Exception):
    """SIGTERM (Ctrl-C is KeyboardInterrupt): clean up and exit 0."""


def say(*a):
    print(*a, flush=True)


def run(cmd, check=True, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    p = subprocess.run(cmd, **kw)
    if check and p.returncode != 0:
        raise DemoError("%s exited %d: %s" % (" ".join(cmd), p.returncode,
                                              (p.stderr or p.stdout or "").strip()[-2000:]))
    return p


def floodctl(demo, *args, check=True):
    return run([os.path.join(BIN, "floodctl"), args[0], "-s", demo.sock] + list(args[1:]),
               check=check)


def floodctl_json(demo, *args):
    return json.loads(floodctl(demo, *(list(args) + ["--json"])).stdout)


class Demo:
    def __init__(self, opts):
        self.o = opts
        self.dir = None
        self.procs = {}        # name -> Popen, in start order
        self.netns = False
        self.inn_dir = None
        self.shm = "/dev/shm/fg-demo-%d" % os.getpid()
        self.ok = False

    # ------------------------------------------------------------ set-up
    def preflight(self):
        if os.geteuid() != 0:
            raise DemoError("run as root (network namespace, tap, INN as user news)")
        for b in ("floodctld", "floodgate", "floodctl", "feedgen"):
            if not os.access(os.path.join(BIN, b), os.X_OK):
                raise DemoError("%s/%s is not built (make all)" % (BIN, b))
        if os.path.exists("/var/run/netns/" + NETNS):
            pids = run(["ip", "netns", "pids", NETNS], check=False).stdout.split()
            if pids:
                raise DemoError("network namespace %s is in use (pids %s): another demo "
                                "is running" % (NETNS, " ".join(pids)))
            say("removing the namespace %s a previous demo left" % NETNS)
            run(["ip", "netns", "del", NETNS])
        for region in glob.glob("/dev/shm/fg-demo-*"):     # a killed demo's
            pid = region.rsplit("-", 1)[1]
            if pid.isdigit() and not os.path.exists("/proc/" + pid):
                os.unlink(region)
        self.dir = tempfile.mkdtemp(prefix="fg-demo.", dir="/tmp")
        os.chmod(self.dir, 0o755)      # innd runs as news and must reach its directory
        self.sock = os.path.join(self.dir, "control.sock")
        self.conf = os.path.join(self.dir, "floodgate.conf")
        self.inn_dir = os.path.join(self.dir, "inn")

    def write_config(self):
        """The embedded default, with this run's paths and peers."""
        text = run([os.path.join(BIN, "floodctl"), "config", "--default"]).stdout
        subs = [
            (r"(?m)^#path-identity\s+\S+$", "path-identity    " + PATH_ID),
            (r"(?m)^shm-path\s+\S+$", "shm-path         " + self.shm),
            # warm-up asks the downstream about every unknown ID after a cold
            # start; the demo's innd starts as empty as the history, so there
            # is nothing to learn from it (docs/operations.md "The demo")
            (r"(?m)^data-dir\s+\S+$", "data-dir         " + os.path.join(self.dir, "data") +
             "\nwarmup           0"),
            (r"(?m)^control-socket\s+\S+$", "control-socket   " + self.sock),
            # the lower half of the tap's subnet stays [peer tap] (your own
            # clients); the simulated peers get addresses of their own above it
            (r"(?m)^(\[peer tap\]\naddress\s+)10\.99\.0\.0/24$", r"\g<1>10.99.0.0/25"),
        ]
        for pat, rep in subs:
            text, n = re.subn(pat, rep, text)
            if n != 1:
                raise DemoError("the embedded default config has no line %r to adapt" % pat)
        for what in (r"listen\s+%s:119" % DP_ADDR, r"port\s+net_tap0,iface=%s" % TAP,
                     r"address\s+127\.0\.0\.1:%d" % INN_PORT):
            if not re.search(r"(?m)^" + what, text):
                raise DemoError("the embedded default config no longer has %r" % what)
        text += "\n# make run: one peer per simulated feedgen peer\n"
        for i in range(self.o.peers):
            text += ("[peer feed-%02d]\naddress          10.99.0.%d/32\nnewsgroups       *\n"
                     % (i + 1, PEER_BASE + i))
        with open(self.conf, "w") as f:
            f.write(text)
        run([os.path.join(BIN, "floodctl"), "config", "--check", self.conf])
        os.makedirs(os.path.join(self.dir, "data"))

    def enter_netns(self):
        run(["ip", "netns", "add", NETNS])
        self.netns = True
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        fd = os.open("/var/run/netns/" + NETNS, os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                raise DemoError("setns %s: errno %d" % (NETNS, ctypes.get_errno()))
        finally:
            os.close(fd)
        run(["ip", "link", "set", "lo", "up"])

    def spawn(self, name, cmd, stdout=None):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        p = subprocess.Popen(cmd, stdout=stdout or log, stderr=log, stdin=subprocess.DEVNULL,
                             start_new_session=True, text=True)
        p.log = log.name
        self.procs[name] = p
        return p

    def wait_for(self, what, cond, timeout, proc=None):
        end = time.time() + timeout
        while time.time() < end:
            if proc is not None and proc.poll() is not None:
                raise DemoError("%s exited %s; its log %s:\n%s"
                                % (what, proc.returncode, proc.log, tail(proc.log)))
            if cond():
                return
            time.sleep(0.1)
        raise DemoError("%s: not ready after %d s" % (what, timeout))

    def start_floodctld(self):
        p = self.spawn("floodctld", [os.path.join(BIN, "floodctld"), "-c", self.conf])
        self.wait_for("floodctld", lambda: floodctl(self, "status", check=False).returncode == 0,
                      60, p)

    def start_innd(self):
        run([INND_SH, "start", self.inn_dir, str(INN_PORT), "--pathhost", "inn.fg.demo",
             "--history", "200000"], start_new_session=True)

    def start_floodgate(self):
        p = self.spawn("floodgate", [os.path.join(BIN, "floodgate"), "-c", self.conf],
                       stdout=subprocess.PIPE)
        line = p.stdout.readline()     # "ready" once it serves (or EOF if it failed)
        if line.strip() != "ready":
            p.wait(timeout=30)
            raise DemoError("floodgate did not start (exit %s); its log %s:\n%s"
                            % (p.returncode, p.log, tail(p.log)))
        # the tap exists only while floodgate has the port open: address it now
        run(["ip", "link", "set", TAP, "up"])
        run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % TAP], check=False)
        for a in [KERNEL_ADDR] + ["10.99.0.%d" % (PEER_BASE + i) for i in range(self.o.peers)]:
            run(["ip", "addr", "add", a + "/24", "dev", TAP])
        self.wait_for("floodgate on %s:119" % DP_ADDR, lambda: tcp_greets(DP_ADDR, 119), 30, p)

    def idle_setting(self):
        """How an idle worker waits, as this run has it: [dataplane]
        idle-backoff from the configuration (0: it spins) and what floodgate
        said at start about the port ("idle interrupts": it blocks on
        receive interrupts, "idle sleeps": it sleeps in steps up to it)."""
        section, backoff = None, None
        with open(self.conf) as f:
            for line in f:
                m = re.match(r"^\[(\w+)", line)
                if m:
                    section = m.group(1)
                m = re.match(r"^idle-backoff\s+(\S+)", line)
                if m and section == "dataplane":
                    backoff = m.group(1)
        if backoff is not None and re.fullmatch(r"0+(us|ms|s)?", backoff):
            return "spins (idle-backoff 0)"
        with open(self.procs["floodgate"].log, errors="replace") as f:
            m = re.search(r"idle (interrupts|sleeps)", f.read())
        how = {"interrupts": "blocks on receive interrupts",
               "sleeps": "sleeps"}.get(m.group(1) if m else "", "as floodgate's log says")
        return "%s, idle-backoff %s" % (how, backoff or "not set (the default)")

    def start(self):
        self.preflight()
        say("floodgate demo: scratch directory %s" % self.dir)
        self.write_config()
        self.enter_netns()
        say("  network namespace %s; floodgate.conf from `floodctl config --default`" % NETNS)
        self.start_floodctld()
        say("  floodctld ready (control socket %s)" % self.sock)
        self.start_innd()
        say("  innd ready on 127.0.0.1:%d (the [downstream inn]), directory %s"
            % (INN_PORT, self.inn_dir))
        self.start_floodgate()
        say("  floodgate ready on %s:119 (tap %s, namespace %s)" % (DP_ADDR, TAP, NETNS))

    # ------------------------------------------------------------ the feed
    def feed(self):
        """feedgen at a modest rate, `floodctl top` on the terminal meanwhile."""
        o = self.o
        total = o.articles * o.dups
        self.feed_json = os.path.join(self.dir, "feedgen.json")
        cmd = [os.path.join(BIN, "feedgen"), "--host", DP_ADDR, "--port", "119",
               "--peers", str(o.peers), "--dups", str(o.dups), "--articles", str(o.articles),
               "--rate", str(o.rate), "--source", "10.99.0.%d" % PEER_BASE,
               "--path-identity", PATH_ID, "--old", "0.04", "--future", "0.02",
               "--path-loop", "0.01", "--bad-id", "0.005", "--json", "--no-progress",
               # the copies of an article arrive together, so most peers get
               # 431 while one transfers it; they offer again after half a
               # second, as innfeed does later, and feedgen's cap on the
               # deferrals of one article (summed over its peers) must not
               # count a slow disk's fsync as a loss
               "--retry-delay", "0.5", "--max-retries", "255",
               "--server-pid", str(self.procs["floodgate"].pid),
               "--timeout", str(int(total / o.rate * 5 + 120))]
        say("\nfeedgen: %d articles, each offered by %d of %d peers (%d offers) at %d offers/s;"
            " old, future-dated, path-loop and malformed-ID articles among them\n"
            % (o.articles, o.dups, o.peers, total, o.rate))
        fg = self.spawn("feedgen", cmd, stdout=open(self.feed_json, "w"))
        top_cmd = [os.path.join(BIN, "floodctl"), "top", "-s", self.sock, "--total", str(total)]
        if not sys.stdout.isatty():
            top_cmd += ["--lines", "--interval", "2"]
        top = subprocess.Popen(top_cmd)        # the terminal's: Ctrl-C reaches it too
        self.procs["top"] = top
        try:
            while fg.poll() is None:
                time.sleep(0.2)
            self.wait_relayed()
            time.sleep(1.2)                    # one more sample with the final figures
        finally:
            if top.poll() is None:
                top.send_signal(signal.SIGTERM)
            top.wait()
        if fg.returncode not in (0, 1):
            raise DemoError("feedgen exited %d; its log %s:\n%s" % (fg.returncode, fg.log,
                                                                   tail(fg.log)))
        with open(self.feed_json) as f:
            self.fgres = json.load(f)

    def wait_relayed(self, stall=15):
        """Until the relay has settled every article made safe, or has made
        no progress for `stall` seconds (the summary then shows the gap)."""
        last, since = -1, time.time()
        while time.time() - since < stall:
            st = floodctl_json(self, "stats")
            c = st["counters"]
            done = (c["relay_accepted"] + c["relay_refused_439"] + c["relay_refused_437"] +
                    c["relay_not_wanted"] + c["relay_given_up"])
            lag = sum(d["lag_records"] for d in st.get("queue", {}).get("downstreams", {}).values())
            if done >= c["nntp_articles_accepted"] and lag == 0:
                return
            if done != last:
                last, since = done, time.time()
            time.sleep(0.5)

    # ------------------------------------------------------------ the summary
    def summary(self):
        st = floodctl_json(self, "stats")
        peers = floodctl_json(self, "peers")["peers"]
        c = st["counters"]
        dp = {k: sum(p[k] for p in peers) for k in
              ("check", "takethis", "ihave", "238", "431", "438", "239", "439")}
        hist_tok, log_plus = innd_landed(self.inn_dir)
        fr = self.fgres
        # as floodctl top counts them: the TAKETHIS after a 238 is that offer's article
        offers = dp["check"] + dp["ihave"] + max(0, dp["takethis"] - dp["238"])
        rows = [
            ("feedgen's 239s", fr["accepted"]),
            ("floodgate's 239s", dp["239"]),
            ("made safe in the queue", c["nntp_articles_accepted"]),
            ("relayed: innd said 239", c["relay_accepted"]),
            ("landed in innd's history", hist_tok),
            ("innd's news log, accepted", log_plus),
        ]
        say("\nsummary: %.1f s of feed from %d peers"
            % (fr["elapsed_s"], sum(1 for p in peers if p["check"] + p["takethis"] + p["ihave"])))
        say("  articles              %9d  (%s)" % (sum(fr["classes"].values()), ", ".join(
            "%s %d" % kv for kv in fr["classes"].items())))
        say("  offers                %9d  (CHECK %d, of them %d again after a 431)"
            % (offers, dp["check"], fr["retries"]))
        say("  answers to CHECK      238 %d, 431 %d, 438 %d" % (dp["238"], dp["431"], dp["438"]))
        say("  TAKETHIS after 238    %9d: 239 %d, 439 %d" % (dp["takethis"], dp["239"], dp["439"]))
        say("  refused, by reason    %9d" % sum(st["rejected"].values()))
        for reason, n in sorted(st["rejected"].items(), key=lambda kv: -kv[1]):
            if n:
                say("    %-20s %9d" % (reason, n))
        for label, n in rows:
            say("  %-25s %5d" % (label, n))
        say("  history               %9d entries of %d" % (st["history"]["entries"],
                                                          st["history"]["capacity"]))
        say("  floodgate's CPU       %9.1f s over the feed (%.0f %% of one core; idle: %s)"
            % (fr["cpu_server_s"], 100 * fr["cpu_server_s"] / max(fr["elapsed_s"], 0.001),
               self.idle_setting()))
        say("  feedgen's model       %9d mismatches (every answer checked)" % fr["mismatches"])
        self.consistent = (len({n for _, n in rows}) == 1 and fr["mismatches"] == 0 and
                           fr["accepted"] == fr["expected_accepted"] and not fr["timed_out"])
        say("  consistent            %9s  (every count of accepted articles agrees, "
            "the model holds)" % ("yes" if self.consistent else "NO"))
        return self.consistent

    # ------------------------------------------------------------ serving
    def how_to_feed(self):
        ctl = os.path.relpath(os.path.join(BIN, "floodctl"))
        say("""
floodgate keeps serving. To point a real feed at it:

  address     %(dp)s port 119: the tap %(tap)s in network namespace %(ns)s,
              whose kernel side is %(k)s/24. Run peers inside the namespace:
                ip netns exec %(ns)s nc %(dp)s 119        (200 greeting; MODE STREAM, CHECK <id>)
  peer        any address in 10.99.0.0/25 is [peer tap] of %(conf)s
              (the kernel side %(k)s among them); a peer of your own, in that file:
                [peer mysite]
                address          10.99.0.150
                newsgroups       *
              then:  ip netns exec %(ns)s ip addr add 10.99.0.150/24 dev %(tap)s
                     %(ctl)s reload -s %(sock)s
  INN         an innd/innfeed run in the namespace feeds it like any other site:
                newsfeeds:     innfeed!:!*:Tc,Wnm*:/usr/lib/news/bin/startinnfeed
                               floodgate/%(pid)s:*,!junk:Ap,Tm:innfeed!
                innfeed.conf:  peer floodgate {
                                   ip-name:         %(dp)s
                                   port-number:     119
                                   streaming:       true
                                   max-connections: 4
                               }
  downstream  accepted articles go to innd on 127.0.0.1:%(inn)d in the namespace
              (%(inndir)s); check one: ip netns exec %(ns)s sh -c \\
                'INNCONF=%(inndir)s/etc/inn.conf /usr/lib/news/bin/grephistory "<id>"'
  watch       %(ctl)s top -s %(sock)s
              %(ctl)s peers -s %(sock)s
              ip netns exec %(ns)s curl -s 127.0.0.1:9119/metrics

Ctrl-C stops floodgate, floodctld and innd and removes the namespace."""
            % {"dp": DP_ADDR, "tap": TAP, "ns": NETNS, "k": KERNEL_ADDR, "conf": self.conf,
               "ctl": ctl, "sock": self.sock, "pid": PATH_ID, "inn": INN_PORT,
               "inndir": self.inn_dir})

    def serve(self):
        """Until Ctrl-C or SIGTERM; a daemon that dies is an error."""
        while True:
            for name in ("floodctld", "floodgate"):
                p = self.procs[name]
                if p.poll() is not None:
                    raise DemoError("%s exited %s; its log %s:\n%s"
                                    % (name, p.returncode, p.log, tail(p.log)))
            time.sleep(1)

    # ------------------------------------------------------------ cleanup
    def stop_proc(self, name, timeout):
        p = self.procs.get(name)
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say("  %s did not stop in %d s: killed" % (name, timeout))
            p.kill()
            p.wait()

    def cleanup(self):
        """Every step undone, in reverse; each one tried whatever failed before."""
        say("\nstopping:")
        for name in ("top", "feedgen"):
            self.stop_proc(name, 5)
        fgp = self.procs.get("floodgate")
        if fgp is not None and fgp.poll() is None:
            if floodctl(self, "shutdown", "2", check=False).returncode == 0:
                try:
                    fgp.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            self.stop_proc("floodgate", 15)
            say("  floodgate stopped (exit %s)" % fgp.returncode)
        if "floodctld" in self.procs:
            self.stop_proc("floodctld", 30)
            say("  floodctld stopped")
        if self.inn_dir and os.path.exists(os.path.join(self.inn_dir, ".innd.sh")):
            run([INND_SH, "stop", self.inn_dir], check=False)
            say("  innd stopped")
        if self.netns:
            run(["ip", "netns", "del", NETNS], check=False)
            say("  namespace %s and its tap removed" % NETNS)
        if os.path.exists(self.shm):
            os.unlink(self.shm)
        if self.dir and (self.ok and not self.o.keep):
            shutil.rmtree(self.dir, ignore_errors=True)
        elif self.dir:
            say("  logs and data kept in %s" % self.dir)


# ---------------------------------------------------------------- helpers

def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def tcp_greets(addr, port):
    try:
        with socket.create_connection((addr, port), timeout=1) as s:
            return s.recv(512).startswith(b"200")
    except OSError:
        return False


def innd_landed(inn_dir):
    """(history lines with a storage token, news-log lines marked +).

    innd remembers refused articles too (remembertrash): those history lines
    have no token; only a stored article has one. The news log's third field
    is + for an accepted article (INN's newslog(5))."""
    tok = plus = 0
    with open(os.path.join(inn_dir, "db/history"), errors="replace") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            tok += len(fields) >= 3 and fields[2].startswith("@")
    try:
        with open(os.path.join(inn_dir, "log/news"), errors="replace") as f:
            for line in f:
                w = line.split()
                plus += len(w) > 3 and w[3] == "+"
    except FileNotFoundError:
        pass
    return tok, plus


def parse_args():
    ap = argparse.ArgumentParser(prog="run-demo.sh", description="floodgate live, end to end")
    ap.add_argument("--once", action="store_true",
                    default=os.environ.get("FG_DEMO_ONCE", "") not in ("", "0"),
                    help="end after the summary (also FG_DEMO_ONCE=1); exit 1 if inconsistent")
    ap.add_argument("--articles", type=int, default=6000, help="unique articles (6000)")
    ap.add_argument("--rate", type=int, default=1500, help="offers a second (1500)")
    ap.add_argument("--peers", type=int, default=10, help="simulated peers (10)")
    ap.add_argument("--dups", type=int, default=10, help="offers of each article (10)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    o = ap.parse_args()
    if not (1 <= o.dups <= o.peers <= 50) or o.articles < 1 or o.rate < 1:
        ap.error("want 1 <= dups <= peers <= 50, articles >= 1, rate >= 1")
    return o


def on_term(signum, frame):
    raise Stop()


def main():
    demo = Demo(parse_args())
    # explicitly: a shell starts background jobs with SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_term)
    rc = 1
    try:
        demo.start()
        demo.feed()
        consistent = demo.summary()
        if demo.o.once:
            rc = 0 if consistent else 1
            demo.ok = consistent
        else:
            demo.how_to_feed()
            demo.serve()
    except (KeyboardInterrupt, Stop):
        rc = 0
        demo.ok = getattr(demo, "consistent", True)     # keep the logs of a bad run
    except DemoError as e:
        say("\nrun-demo: %s" % e)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        demo.cleanup()
    return rc


if __name__ == "__main__":
    sys.exit(main())
