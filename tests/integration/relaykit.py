# SPDX-License-Identifier: MIT
"""relaykit.py — shared helpers for the relay integration tests (5N_relay_*),
not a test.

Each test runs inside a network namespace of its own (fg-relay-<pid>), so
its loopback ports are private. Countd runs tests/integration/countd.py (a
counting downstream); feed() sends articles with pipelined TAKETHIS over
hostlib's client and returns each ID's answer; relay_state() reads
floodgate-host's stats file (the downstream:<name>:* lines). Python stdlib
only.
"""
import email.utils
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time

import fgkit
import hostlib
from fgkit import check, fail, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTD = os.path.join(HERE, "countd.py")
DOWN_PORT = 1190


def in_netns():
    """Re-run this script inside a fresh namespace fg-relay-<pid>."""
    hostlib.in_netns("fg-relay")


class Countd:
    """The counting downstream, as a process that can be stopped and started."""

    def __init__(self, workdir, port=DOWN_PORT, args=()):
        self.port = port
        self.record_path = os.path.join(workdir, "countd.record")
        self.log = os.path.join(workdir, "countd.log")
        self.args = list(args)
        self.proc = None

    def start(self):
        self.proc = fgkit.spawn(
            [sys.executable, COUNTD, "--port", str(self.port), "--record", self.record_path]
            + self.args, self.log, append=True)

        def listening():
            if self.proc.poll() is not None:
                fail("countd exited at start:\n" + fgkit.slurp(self.log))
            return "listening" in fgkit.slurp(self.log)
        wait_until(listening, 30, "countd to listen", step=0.02)

    def stop(self):
        if self.proc:
            fgkit.stop(self.proc, signal.SIGTERM, timeout=10)
        self.proc = None

    def restart(self, args=()):
        self.stop()
        self.args = list(args)
        self.start()

    def wait_mid_relay(self, arts, timeout=30):
        """Until some of arts [(mid, wire)] arrived (the relay may be in a
        reconnect backoff first); checks that not all did: a kill now
        lands mid-relay."""
        def arrived():
            got = self.counts()
            return got if any(m in got for m, _ in arts) else None
        got = wait_until(arrived, timeout, "the first of the articles to reach countd")
        check(0 < sum(1 for m, _ in arts if m in got) < len(arts), "the kill lands mid-relay")

    def records(self):
        out = []
        if os.path.exists(self.record_path):
            with open(self.record_path) as f:
                for line in f:
                    p = line.split()
                    if len(p) == 5:
                        out.append((p[0], p[1], int(p[2]), p[3], p[4]))
        return out

    def counts(self):
        """{message-id: transfers received}"""
        n = {}
        for r in self.records():
            n[r[1]] = n.get(r[1], 0) + 1
        return n


INNSH = os.path.join(hostlib.TOP, "tools", "inn", "innd.sh")


def innd(*args):
    """tools/inn/innd.sh with these arguments; fails the test if it fails."""
    r = subprocess.run([INNSH] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        fail("innd.sh %s: %s%s" % (" ".join(args), r.stdout, r.stderr))


def ctlinnd(innd_dir, *args):
    """ctlinnd -s ARGS to the innd of innd_dir (as news); fails the test if
    it fails."""
    env = dict(os.environ, INNCONF=os.path.join(innd_dir, "etc", "inn.conf"))
    r = subprocess.run(["setpriv", "--reuid=news", "--regid=news", "--init-groups",
                        "/usr/lib/news/bin/ctlinnd", "-s"] + list(args),
                       env=env, capture_output=True, text=True)
    check(r.returncode == 0, "ctlinnd %s: %s%s" % (" ".join(args), r.stdout, r.stderr))


def wait_ack_ready(stats, tag, addr=None, src=None):
    """Feed probe articles until one was acknowledged end-to-end
    (relay_ack_accepted of stats() above 0): the #ack connections are up."""
    probe = [0]

    def acked():
        probe[0] += 1
        mid = "<probe%d.%s@ack.test>" % (probe[0], tag)
        got = feed([(mid, hostlib.article(mid, groups="fg.test.text"))], addr=addr, src=src)
        check(got == [(mid, 239)], "probe: %s" % got)
        return stats().get("relay_ack_accepted", 0) > 0
    wait_until(acked, 60, "an article acknowledged end-to-end", step=0.1)


GREP = "/usr/lib/news/bin/grephistory"


def not_in_history(innd_dir, ids):
    """The IDs innd's history does not have (grephistory -i)."""
    env = dict(os.environ, INNCONF=os.path.join(innd_dir, "etc", "inn.conf"))
    r = subprocess.run([GREP, "-i"], input="".join(i + "\n" for i in ids), env=env,
                       capture_output=True, text=True)
    check(r.returncode == 0, "grephistory: %s" % r.stderr)
    return set(r.stdout.split())


def with_innd(work, port, run):
    """A throwaway innd in work/innd on port for the length of run(work, dir)."""
    d = os.path.join(work, "innd")
    innd("start", d, str(port))
    try:
        run(work, d)
    finally:
        innd("stop", d)


def main_with_innd(prefix, port, run):
    """A test's main: skip without INN, else run(work, innd_dir) with a
    throwaway innd on port and a work directory kept when the test fails."""
    fgkit.need_inn()
    work = fgkit.mkdtemp(prefix)
    hostlib.KEEP.append(work)
    with_innd(work, port, run)


def host_config(data_dir, down_port=DOWN_PORT, downstream_extra="", persistence=""):
    """The [persistence] and [downstream] text hostlib.Host appends."""
    return ("[persistence]\ndata-dir %s\n%s[downstream down]\naddress 127.0.0.1:%d\n%s"
            % (data_dir, persistence, down_port, downstream_extra))


def make_article(mid, age=300, size=0):
    """An article (wire form, terminated) of about `size` octets."""
    body = ["Hello from %s." % mid, ".a dot-stuffed line", "bye"]
    while size and sum(len(b) + 2 for b in body) < size:
        body.append("%070d" % len(body))
    return hostlib.article(mid, age=age, inj_age=max(age - 60, 0), body=body)


def feed(articles, window=32, answers=None, until_eof=False, addr=None, src=None):
    """TAKETHIS each (mid, wire) pipelined on one connection (to
    floodgate-host, or to addr from src); the answers [(mid, code)] in
    order (appended to `answers` as they come, when given). until_eof: the
    server may die mid-feed (a crash test): stop there, with the answers
    that came before."""
    c = hostlib.Client(timeout=60, addr=addr, src=src)
    got = c.line()
    check(got.startswith(b"200"), "greeting: %r" % got)
    answers = [] if answers is None else answers
    pending = []
    try:
        for mid, wire in articles:
            c.send(b"TAKETHIS " + mid.encode() + b"\r\n" + wire)
            pending.append(mid)
            if len(pending) >= window and not read_answer(c, pending.pop(0), answers,
                                                          until_eof):
                return answers
        while pending:
            if not read_answer(c, pending.pop(0), answers, until_eof):
                return answers
        c.send(b"QUIT\r\n")
    except OSError:
        if not until_eof:
            raise
    c.close()
    return answers


def read_answer(c, mid, answers, until_eof=False):
    line = c.line().decode("latin-1").rstrip("\r\n")
    if not line and until_eof:
        return False
    parts = line.split()
    check(len(parts) >= 2 and parts[1] == mid, "answer %r for %s" % (line, mid))
    answers.append((mid, int(parts[0])))
    return True


def first_answers(answers, into=None):
    """{mid: code of its first transfer} (a second transfer gets 439)."""
    out = into if into is not None else {}
    for mid, code in answers:
        out.setdefault(mid, code)
    return out


def expect_exactly_once(countd, answers, wires, allow_twice=()):
    """Each ID that got 239 (answers: {mid: first code}) reached countd once
    (twice for those in allow_twice), byte for byte as in wires; no other."""
    counts = countd.counts()
    sums = {r[1]: r[3] for r in countd.records()}
    for mid, code in answers.items():
        if code == 239:
            n = counts.get(mid, 0)
            check(n == 1 or (n == 2 and mid in allow_twice),
                  "%s got 239 and was relayed %d times" % (mid, n))
            want = hashlib.sha256(wire_payload(wires[mid])).hexdigest()
            check(sums.get(mid) == want, "%s relayed with other octets" % mid)
        else:
            check(mid not in counts, "%s got %d and was relayed" % (mid, code))


def stats_line(stats, name, key):
    return stats.get("downstream:%s:%s" % (name, key), -1)


POWERLOSS = os.path.join(hostlib.BUILD, "tests", "preload", "powerloss.so")


def powerloss_env(data, state):
    """Run a process under the power-loss shim watching the data directory."""
    os.makedirs(data, exist_ok=True)
    return dict(FG_PL_DIR=data, FG_PL_STATE=state, LD_PRELOAD=POWERLOSS)


def powerloss(data, state):
    """Drop every write that was not made durable (after the kill)."""
    env = dict(os.environ, FG_PL_DIR=data, FG_PL_STATE=state, FG_PL_REVERT="1",
               LD_PRELOAD=POWERLOSS)
    p = subprocess.run(["/bin/true"], env=env, capture_output=True)
    check("reverted to its durable state" in p.stderr.decode(),
          "power-loss revert did not run: %r" % p.stderr)


def wait_drained(host, name="down", timeout=60):
    """Until the downstream has acknowledged everything queued."""
    return fgkit.wait_counters(host.stats, lambda st: stats_line(st, name, "lag_records") == 0,
                               timeout, "downstream %s to drain" % name)


def wire_payload(wire):
    """What the relay must send on: the article without its terminator."""
    check(wire.endswith(b"\r\n.\r\n"), "a terminated article")
    return wire[:-3]


def old_date(days):
    return email.utils.formatdate(time.time() - days * 86400, usegmt=True)


def known_batch_to_innd(prefix, domain, feed, server, innd_dir):
    """150 new and 20 too-old articles through `feed` (a function taking
    the [(mid, wire)] list and returning relaykit.feed's answers), then,
    once `server` (floodgate-host or a floodgate World) has drained: innd
    accepted and streamed the 150 and has every 239'd ID in its history,
    none of the 439'd ones. Returns {mid: first answer}."""
    arts = []
    for i in range(150):
        mid = "<%s%d@%s>" % (prefix, i, domain)
        arts.append((mid, hostlib.article(mid, groups="fg.test.text")))
    for i in range(20):
        mid = "<%sold%d@%s>" % (prefix, i, domain)
        arts.append((mid, hostlib.article(mid, age=15 * 86400, inj_age=15 * 86400,
                                          groups="fg.test.text")))
    answers = first_answers(feed(arts))
    acc = [m for m, c in answers.items() if c == 239]
    ref = [m for m, c in answers.items() if c == 439]
    check(len(acc) == 150 and len(ref) == 20, "150 accepted, 20 refused: %s" % answers)
    st = wait_drained(server)
    check(stats_line(st, "down", "accepted") == 150,
          "innd accepted the 150: %s" % stats_line(st, "down", "accepted"))
    check(stats_line(st, "down", "streaming") == 1, "innd streams")
    missing = not_in_history(innd_dir, acc)
    check(not missing, "239'd but not in innd's history: %s" % sorted(missing)[:5])
    check(not_in_history(innd_dir, ref) == set(ref), "439'd articles reached innd")
    return answers


def wait_acked(stats, feed_fn, tag, timeout=60):
    """Feed one small probe article at a time (feed_fn([(mid, wire)])) until
    stats() counts one acknowledged end-to-end: the downstream's
    acknowledging connections are up."""
    probe = [0]

    def acked():
        probe[0] += 1
        mid = "<%sprobe%d@%s.test>" % (tag, probe[0], tag)
        feed_fn([(mid, hostlib.article(mid, groups="fg.test.text"))])
        return stats().get("relay_ack_accepted", 0) > 0
    wait_until(acked, timeout, "an article acknowledged end-to-end", step=0.1)
