#!/usr/bin/env python3
# timeout: 180
"""INN's innfeed (batch mode, -x) feeds the module and its session engine:
it connects from the kernel, negotiates MODE STREAM, pipelines
CHECK/TAKETHIS for a backlog of articles (dot-stuffed lines, sizes from
300 B to 200 KB) over up to two connections, has every one accepted by
the engine's rules (239) and exits cleanly; a second run offers the same
IDs and has them all refused from history (438, or 439 when innfeed has
stopped sending CHECK). Then the same feed through 1 % faults on receive
and transmit."""
import email.utils
import os
import pwd
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import MODULE_ADDR, Harness, check, log  # noqa: E402

INNFEED = "/usr/lib/news/bin/innfeed"
N = 200


def prepare(work, tag):
    spool = os.path.join(work, "spool")
    backlog = os.path.join(work, "backlog")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(spool)
    os.makedirs(backlog)
    lines = []
    date = email.utils.formatdate(usegmt=True)
    for i in range(N):
        mid = "<innfeed-%s-%d@test>" % (tag, i)
        body = "".join(".dotted line %d of article %d\n" % (k, i) if k % 7 == 0 else
                       "line %d of article %d, some text to make it longer\n" % (k, i)
                       for k in range(5 + (i * 97) % 4000))
        path = os.path.join(spool, "a%d" % i)
        with open(path, "w") as f:
            f.write("Path: test!not-for-mail\nFrom: t@example.net\nNewsgroups: test\n"
                    "Subject: innfeed %d\nMessage-ID: %s\nDate: %s\n"
                    "\n%s" % (i, mid, date, body))
        lines.append("%s %s\n" % (path, mid))
    with open(os.path.join(work, "innfeed.conf"), "w") as f:
        f.write("backlog-directory: %s\ninitial-sleep: 0\nuse-mmap: false\n"
                "peer fgtest {\n  ip-name: %s\n  port-number: 119\n  max-connections: 2\n"
                "  initial-connections: 1\n  streaming: true\n}\n" % (backlog, MODULE_ADDR))
    news = pwd.getpwnam("news")
    for root, dirs, files in os.walk(work):
        for n in dirs + files:
            os.chown(os.path.join(root, n), news.pw_uid, news.pw_gid)
    os.chown(work, news.pw_uid, news.pw_gid)
    return lines


def run_innfeed(work, lines):
    backlog = os.path.join(work, "backlog")
    with open(os.path.join(backlog, "fgtest"), "w") as f:
        f.writelines(lines)
    r = subprocess.run([INNFEED, "-x", "-c", os.path.join(work, "innfeed.conf"),
                        "-l", os.path.join(work, "innfeed.log"),
                        "-S", os.path.join(work, "innfeed.status"),
                        "-p", os.path.join(work, "innfeed.pid"), "-b", backlog],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "innfeed exited %d: %s" % (r.returncode, r.stderr))
    left = []
    for n in os.listdir(backlog):
        if n.startswith("fgtest"):
            with open(os.path.join(backlog, n)) as f:
                left += [ln for ln in f if ln.strip()]
    check(not left, "innfeed left %d articles in its backlog: %s" % (len(left), left[:3]))


def feed(name, *args):
    h = Harness(name, *args)
    try:
        work = os.path.join(h.dir, "inn")
        lines = prepare(work, name)
        run_innfeed(work, lines)
        st = h.stats()
        check(st["nntp_articles_accepted"] == N and st["history_state:accepted"] == N,
              "%d of %d articles accepted" % (st["nntp_articles_accepted"], N))
        check(st["nntp_articles_refused"] == 0, "%d refused" % st["nntp_articles_refused"])
        check(st["history_state:offered"] == 0 and st["transfers_open"] == 0,
              "offers or transfers left")
        # the same IDs again: each is offered once and refused from history
        # (CHECK -> 438, or TAKETHIS -> 439 once innfeed has switched to
        # no-CHECK mode), none reaches the sink
        first = st
        run_innfeed(work, lines)
        st = h.stats()
        check(st["nntp_articles_accepted"] == N, "re-offered articles accepted again")
        refused = (st["nntp_response:438"] - first["nntp_response:438"]) + \
            (st["nntp_response:439"] - first["nntp_response:439"])
        check(refused == N, "second run: %d of %d refused" % (refused, N))
        check(st["rejected:duplicate"] - first["rejected:duplicate"] == N, "not as duplicates")
        log("ok %s: innfeed delivered %d articles (%d bytes) over %d sessions, then had "
            "them refused; retransmissions %d, ooo %d" % (
                name, st["nntp_articles_accepted"], st["nntp_article_bytes"],
                st["nntp_sessions_opened"], st["tcp_retrans_segs"], st["tcp_rx_ooo"]))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")


def main():
    if not os.access(INNFEED, os.X_OK):
        check(False, "innfeed missing (tools/deps.sh installs inn2)")
    feed("innfeed")
    feed("innfeedf", "--fault", "rx-drop=1,rx-reorder=0.5,tx-drop=1,tx-dup=0.5,seed=9")
    log("PASS 67_tcp_innfeed")


main()
