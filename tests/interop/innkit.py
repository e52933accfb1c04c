# SPDX-License-Identifier: MIT
"""innkit.py — INN's side of the interop tests (tests/interop/NN_*), not a test.

Origin: an innd that stores articles (tools/inn/innd.sh --store) and feeds
one site through a batch file (--batch-site), as a site that runs innfeed
does; rnews() posts articles to it with INN's rnews, feedgen can feed it
too, and once it is stopped (which flushes the batch) batch() gives the
"@token@ <message-id>" lines innfeed reads back from its storage.

Innfeed: INN's innfeed with an innfeed.conf of one peer, its own backlog,
log, status and pid files in a scratch directory, run as user news with
the origin's inn.conf (so tokens resolve into the origin's spool; /etc/news
is never read). run() hands it a batch as a backlog file and starts it in
batch mode (-x) at debug level 5, where it logs every response it gets:
`PEER:CXN Response 238: 238 <id> ...`. answers() reads them back per
Message-ID; backlog() lists what innfeed left in its backlog files.

NewsLog reads an innd's news log: `+` lines are articles accepted, `-`
lines articles refused after transfer.
"""
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgkit  # noqa: E402
from fgkit import INNBIN, TOP  # noqa: E402,F401

INNSH = os.path.join(TOP, "tools", "inn", "innd.sh")
fgkit.need_inn("innfeed")
NEWS = pwd.getpwnam("news")

RESPONSE = re.compile(r"innfeed\[\d+\]: (\S+):\d+ Response (\d{3}): \d{3} (<[^> ]+>)")


def as_news(inn_conf):
    """The command prefix and environment of an INN program run as news."""
    return (["setpriv", "--reuid=news", "--regid=news", "--init-groups"],
            dict(os.environ, INNCONF=inn_conf))


def innd_sh(*args):
    """tools/inn/innd.sh; raises with its output when it fails."""
    r = subprocess.run([INNSH] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("innd.sh %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
    return r.stdout


def chown_news(path):
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.chown(os.path.join(root, n), NEWS.pw_uid, NEWS.pw_gid)
    os.chown(path, NEWS.pw_uid, NEWS.pw_gid)


def plain_article(mid, date, body_lines, groups="fg.test.text"):
    """An article as a poster writes it: LF lines, not dot-stuffed."""
    return ("Path: poster.example!not-for-mail\nFrom: Poster <poster@example.net>\n"
            "Newsgroups: %s\nSubject: interop %s\nMessage-ID: %s\nDate: %s\n"
            "Injection-Date: %s\n\n%s\n" % (groups, mid, mid, date, date,
                                            "\n".join(body_lines)))


def wire(text):
    """A plain article in wire form (CRLF, dot-stuffed, terminated)."""
    lines = text.rstrip("\n").split("\n")
    return "".join(("." + ln if ln.startswith(".") else ln) + "\r\n"
                   for ln in lines).encode() + b".\r\n"


class Origin:
    """An innd that stores articles and writes a batch file for `site`."""

    def __init__(self, path, port, site, cutoff_days):
        self.dir, self.port, self.site = path, port, site
        innd_sh("start", path, str(port), "--store", "--batch-site", site,
                "--cutoff", str(cutoff_days), "--pathhost", "origin.fg.test")
        self.conf = os.path.join(path, "etc", "inn.conf")

    def rnews(self, articles):
        """Post plain articles through rnews (an rnews batch on stdin)."""
        batch = "".join("#! rnews %d\n%s" % (len(a.encode()), a) for a in articles)
        pre, env = as_news(self.conf)
        r = subprocess.run(pre + [INNBIN + "/rnews", "-r", "127.0.0.1", "-P", str(self.port)],
                           input=batch.encode(), env=env, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError("rnews: %s" % r.stderr.decode(errors="replace"))

    def stop(self):
        innd_sh("stop", self.dir)

    def batch(self):
        """innd's batch for the site: [(token, message-id)] in arrival order."""
        with open(os.path.join(self.dir, "spool", "outgoing", self.site)) as f:
            return [tuple(line.split()[:2]) for line in f if line.strip()]

    def accepted(self):
        return NewsLog(os.path.join(self.dir, "log", "news")).accepted()


class NewsLog:
    def __init__(self, path):
        self.path = path

    def _lines(self, mark):
        out = []
        if os.path.exists(self.path):
            with open(self.path, errors="replace") as f:
                for line in f:
                    p = line.split()
                    # "Nov 29 19:37:08.395 + peer <id> ...": the mark is field 4
                    if len(p) >= 6 and p[3] == mark:
                        out.append(p[5])
        return out

    def accepted(self):
        """Message-IDs of the `+` lines, one per acceptance, in order."""
        return self._lines("+")

    def refused(self):
        return self._lines("-")


def quoted(value):
    """innfeed.conf's value: an IPv6 address (with its colons) in quotes."""
    return '"%s"' % value if ":" in value else value


class Innfeed:
    """innfeed feeding one peer, with its own scratch directory; an IPv6
    `bind` address goes into bindaddress6. `auth` (username, password):
    the peer block's username and password, which innfeed sends with
    AUTHINFO USER/PASS right after the greeting. settings: lines of the
    global scope (`initial-reconnect-time: 2`)."""

    def __init__(self, path, inn_conf, peer, addr, bind, port=119, auth=None, settings=""):
        self.dir, self.inn_conf, self.peer = path, inn_conf, peer
        self.backlog_dir = os.path.join(path, "backlog")
        os.makedirs(self.backlog_dir)
        self.conf = os.path.join(path, "innfeed.conf")
        with open(self.conf, "w") as f:
            # a site's peer block; initial-sleep 0 and stats-period 1 only
            # make a test of seconds possible. no-check-high 100: innfeed
            # always asks (CHECK) first, never switches to no-CHECK mode,
            # so every article has the answers this test examines.
            f.write(settings +
                    "backlog-directory: %s\ninitial-sleep: 0\nstats-period: 1\n"
                    "peer %s {\n    ip-name: %s\n    port-number: %d\n"
                    "    %s: %s\n    streaming: true\n"
                    "    initial-connections: 2\n    max-connections: 2\n"
                    "    no-check-high: 100.0\n    no-check-low: 95.0\n%s}\n"
                    % (self.backlog_dir, peer, quoted(addr), port,
                       "bindaddress6" if ":" in bind else "bindaddress", quoted(bind),
                       '    username: "%s"\n    password: "%s"\n' % auth if auth else ""))
        self.runs = 0
        self.proc = None
        self.log = None
        chown_news(path)

    def start(self, lines=None):
        """Start a run in batch mode (-x); `lines` [(token, mid)] become the
        peer's batch file (innfeed renames it to PEER.input and reads it)."""
        if lines is not None:
            p = os.path.join(self.backlog_dir, self.peer)
            with open(p, "w") as f:
                f.writelines("%s %s\n" % tl for tl in lines)
            os.chown(p, NEWS.pw_uid, NEWS.pw_gid)
        self.runs += 1
        self.log = os.path.join(self.dir, "innfeed.%d.log" % self.runs)
        pre, env = as_news(self.inn_conf)
        d = self.dir
        self.proc = fgkit.spawn(
            pre + [INNBIN + "/innfeed", "-x", "-d", "5", "-c", self.conf, "-l", self.log,
                   "-S", os.path.join(d, "innfeed.status"), "-p", os.path.join(d, "innfeed.pid"),
                   "-b", self.backlog_dir],
            env=env, stdout=open(os.path.join(d, "innfeed.%d.out" % self.runs), "w"),
            stderr=subprocess.STDOUT)
        return self.proc

    def stop(self, timeout=30):
        """An orderly shutdown (SIGTERM): what is unsent goes to the backlog."""
        return fgkit.stop(self.proc, signal.SIGTERM, timeout)

    def wait(self, timeout=60):
        """Its exit status once it ends by itself; None if it had to be
        killed after timeout s."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def answers(self):
        """{message-id: [codes in order]} from this run's debug log."""
        out = {}
        if self.log and os.path.exists(self.log):
            with open(self.log, errors="replace") as f:
                for line in f:
                    m = RESPONSE.search(line)
                    if m and m.group(1) == self.peer:
                        out.setdefault(m.group(3), []).append(int(m.group(2)))
        return out

    def backlog(self):
        """Message-IDs innfeed left to send: its PEER, PEER.input (from the
        checkpoint offset in its first line) and PEER.output files."""
        ids = []
        for suffix in ("", ".input", ".output"):
            p = os.path.join(self.backlog_dir, self.peer + suffix)
            if not os.path.exists(p):
                continue
            with open(p, errors="replace") as f:
                text = f.read()
            if suffix == ".input":
                first, _, rest = text.partition("\n")
                if first.strip().isdigit():
                    text = text[int(first.strip()):]
            ids += [ln.split()[1] for ln in text.splitlines()
                    if len(ln.split()) >= 2 and ln.split()[1].startswith("<")]
        return ids


wait_for = fgkit.poll_until


def with_downstream(work, port, fn):
    """fn(down) with a downstream innd in work/down on `port`, stopped
    after; the scratch directory `work` is removed unless the test failed
    (or FG_KEEP_TMP is set)."""
    down = os.path.join(work, "down")
    innd_sh("start", down, str(port))
    try:
        fn(down)
    finally:
        innd_sh("stop", down)
        if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
            fgkit.log("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
