#!/usr/bin/env python3
# timeout: 300
"""INN's innfeed feeds floodgate-host: streaming (CHECK/TAKETHIS), then IHAVE.

innfeed runs as user news from a throwaway directory (INNCONF points at an
inn.conf whose paths all lie inside it; /etc/news is never read), in
funnel mode from stdin: each line "/path/to/article <msgid> peer", the
article a plain file that innfeed turns into wire form (CRLF, dot-stuffed)
itself. A batch mixes new articles, IDs the host already has (refused),
articles too old (rejected, and remembered), articles whose Message-ID
header differs from the offer (rejected, not remembered) and bodies with
dot lines. innfeed's own status file must then count exactly those
answers, the host's counters must agree, and the history must hold what
each answer promised.
"""
import email.utils
import os
import atexit
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from fgkit import file_identity, poll_until, wait_until  # noqa: E402
from hostlib import (GREETING, KEEP, PORT, PROCS, Client, Host, article, check,  # noqa: E402
                     fail, in_netns)

INNBIN = "/usr/lib/news/bin"
in_netns()

if not os.path.exists(INNBIN + "/innfeed"):
    fail("INN's innfeed is not installed (make deps)")
NEWS = pwd.getpwnam("news")


def innfeed_dir(streaming):
    d = fgkit.mkdtemp("fg-eng-innfeed-")
    KEEP.append(d)
    atexit.register(shutil.rmtree, d, True)
    for sub in ("etc", "run", "log", "spool", "tmp", "backlog", "arts", "db"):
        os.mkdir(os.path.join(d, sub))
    with open(os.path.join(d, "etc", "inn.conf"), "w") as f:
        f.write("pathhost: innfeed.fg.test\ndomain: fg.test\n"
                "mta: \"/bin/false %s\"\nhismethod: hisv6\nenableoverview: false\n"
                "ovmethod: tradindexed\npathbin: " + INNBIN + "\n"
                "pathcontrol: " + INNBIN + "/control\n")
        for key, sub in (("pathnews", ""), ("pathetc", "etc"), ("pathdb", "db"),
                         ("pathrun", "run"), ("pathlog", "log"), ("pathspool", "spool"),
                         ("pathtmp", "tmp"), ("patharticles", "arts"),
                         ("pathoutgoing", "spool"), ("pathincoming", "spool"),
                         ("pathoverview", "spool"), ("patharchive", "spool"),
                         ("pathhttp", "tmp"), ("pathfilter", "tmp")):
            f.write("%s: %s\n" % (key, os.path.join(d, sub).rstrip("/")))
    with open(os.path.join(d, "etc", "storage.conf"), "w") as f:
        f.write("method trash {\n    newsgroups: *\n    class: 0\n}\n")
    with open(os.path.join(d, "etc", "innfeed.conf"), "w") as f:
        f.write("backlog-directory: %s/backlog\npid-file: %s/run/innfeed.pid\n"
                "log-file: %s/log/innfeed.log\nstatus-file: %s/log/innfeed.status\n"
                "initial-sleep: 1\nuse-mmap: false\nstats-period: 1\n"
                "backlog-highwater: 1000\n"
                "peer local {\n    ip-name: 127.0.0.1\n    port-number: %d\n"
                "    max-connections: 1\n    streaming: %s\n"
                "    max-queue-size: 500\n"
                "    no-check-high: 100.0\n    no-check-low: 100.0\n}\n"
                % (d, d, d, d, PORT, "true" if streaming else "false"))
    return d


def plain_article(mid, hdr_mid=None, age=300, body=("Hello from innfeed.",)):
    """As a spool file: LF lines, no dot-stuffing (innfeed does that)."""
    date = email.utils.formatdate(time.time() - age, usegmt=True)
    return ("Path: inn.example!not-for-mail\nFrom: Poster <poster@example.com>\n"
            "Newsgroups: test.inn\nSubject: via innfeed\nMessage-ID: %s\nDate: %s\n"
            "Injection-Date: %s\n\n%s\n" % (hdr_mid or mid, date, date, "\n".join(body)))


def chown_tree(d):
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            os.chown(os.path.join(root, n), NEWS.pw_uid, NEWS.pw_gid)
    os.chown(d, NEWS.pw_uid, NEWS.pw_gid)


def peer_text(d):
    """The peer "local" section of innfeed's status file ('' before it)."""
    try:
        text = open(os.path.join(d, "log", "innfeed.status")).read()
    except OSError:
        return ""
    sect = text.split("\nlocal\n", 1)
    return sect[1] if len(sect) == 2 else ""


STATUS_KEYS = ("offered", "accepted", "refused", "rejected", "missing", "deferred")


def complete(st):
    """st if it holds every counter of a peer's status section, else None."""
    return st if all(k in st for k in STATUS_KEYS) else None


def peer_status(d):
    """innfeed's counters for peer "local" from its status file."""
    out = {}
    for line in peer_text(d).splitlines():
        parts = line.split()
        key = parts[0].rstrip(":") if parts else ""
        if (len(parts) >= 2 and key not in out and parts[1].isdigit() and
                key in STATUS_KEYS):
            out[key] = int(parts[1])
    return out


def run_innfeed(host, streaming, batch, want_answers):
    """Feed `batch` [(mid, text)] through innfeed; wait for the answers."""
    d = innfeed_dir(streaming)
    lines = []
    for n, (mid, text) in enumerate(batch):
        path = os.path.join(d, "arts", "a%d" % n)
        with open(path, "w") as f:
            f.write(text)
        lines.append("%s %s local\n" % (path, mid))
    funnel = os.path.join(d, "funnel")
    open(funnel, "w").close()
    chown_tree(d)
    env = dict(os.environ, INNCONF=os.path.join(d, "etc", "inn.conf"))
    # funnel-file mode: innfeed follows the file as innd would write it.
    # The batch goes in once innfeed is connected: what arrives before it
    # has a connection is spooled to its backlog, retried only minutes later.
    before = host.stats()["nntp_sessions_opened"]
    p = subprocess.Popen(["setpriv", "--reuid=news", "--regid=news", "--init-groups",
                          INNBIN + "/innfeed", "-c", os.path.join(d, "etc", "innfeed.conf"),
                          funnel], stdin=subprocess.DEVNULL, env=env, stderr=subprocess.PIPE)
    PROCS.append(p)
    host.wait_stats(lambda st: st["nntp_sessions_opened"] > before, "innfeed's session")
    # innfeed's own word that its connection is up (its status file, every
    # stats-period): "active cxns: 1", and "is streaming: yes" if streaming
    def connected():
        text = peer_text(d)
        m = re.search(r"active cxns: (\d+)", text)
        return m and int(m.group(1)) >= 1 and (
            not streaming or re.search(r"is streaming: yes", text))
    wait_until(connected, 60, lambda: "innfeed to report its connection up:\n" + peer_text(d))
    # streaming takes the batch at once; lock-step IHAVE queues little, so
    # the lines come as innd would write them, one at a time
    for n in range(0, len(lines), len(lines) if streaming else 1):
        with open(funnel, "a") as f:
            f.write("".join(lines[n:n + (len(lines) if streaming else 1)]))
        if not streaming:
            time.sleep(0.2)     # pacing only, as innd's writes; nothing waits on it

    def answered():
        st = peer_status(d)
        return p.poll() is not None or \
            sum(st.get(k, 0) for k in ("accepted", "refused", "rejected")) >= want_answers
    poll_until(answered, 60, step=0.2)
    # the counters of one more status period written after that, so that
    # offered, deferred and missing are complete too
    status = os.path.join(d, "log", "innfeed.status")
    seen = file_identity(status)
    poll_until(lambda: p.poll() is not None or file_identity(status) != seen, 30, step=0.1)
    # innfeed rewrites the file in place (truncate, then write): a read
    # can catch it empty or cut, so the counters are those of a read that
    # holds every one of them
    st = wait_until(lambda: complete(peer_status(d)), 30,
                    lambda: "a whole status file from innfeed:\n" + peer_text(d))
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
    err = p.stderr.read().decode(errors="replace")
    return st, d, err


def main():
    host = Host()
    # the host already has five of the IDs innfeed will offer
    known = ["<known%d@inn.example>" % i for i in range(5)]
    c = Client()
    c.expect(GREETING)
    for m in known:
        c.send(b"TAKETHIS " + m.encode() + b"\r\n" + article(m))
        c.expect("239 %s\r\n" % m)
    c.close()

    new = ["<new%d@inn.example>" % i for i in range(40)]
    old = ["<old%d@inn.example>" % i for i in range(3)]
    mism = ["<mis%d@inn.example>" % i for i in range(2)]
    batch = [(m, plain_article(m)) for m in new]
    batch.append(("<dots@inn.example>", plain_article(
        "<dots@inn.example>", body=(".", "..", ".leading dot", "end"))))
    batch += [(m, plain_article(m)) for m in known]
    batch += [(m, plain_article(m, age=30 * 86400)) for m in old]
    batch += [(m, plain_article(m, hdr_mid="<other%s" % m[4:])) for m in mism]
    st, d, err = run_innfeed(host, True, batch, len(batch))
    check(st.get("offered") == len(batch), "innfeed offered %r (%s)" % (st, err))
    check(st.get("accepted") == 41, "innfeed accepted %r" % st)
    check(st.get("refused") == 5, "innfeed refused %r" % st)
    check(st.get("rejected") == 5, "innfeed rejected %r" % st)
    check(st.get("deferred", 0) == 0 and st.get("missing", 0) == 0, "innfeed deferred %r" % st)
    hs = host.stats()
    check(hs["nntp_command:check"] == len(batch), "host CHECKs %d" % hs["nntp_command:check"])
    check(hs["nntp_response:239"] == 5 + 41, "host 239s %d" % hs["nntp_response:239"])
    check(hs["nntp_response:438"] == 5, "host 438s")
    check(hs["nntp_response:439"] == 5, "host 439s")
    check(hs["rejected:too-old"] == 3 and hs["rejected:message-id-mismatch"] == 2,
          "reasons %r" % {k: v for k, v in hs.items() if k.startswith("rejected:")})
    # what history promises now: accepted and too-old are known; mismatches not
    c = Client()
    c.expect(GREETING)
    c.send("".join("CHECK %s\r\n" % m for m in new + old + mism))
    for m in new + old:
        c.expect("438 %s\r\n" % m)
    for m in mism:
        c.expect("238 %s\r\n" % m)
    c.close()

    # IHAVE: innfeed without streaming
    ih_new = ["<ihave%d@inn.example>" % i for i in range(10)]
    batch = [(m, plain_article(m)) for m in ih_new] + [(m, plain_article(m)) for m in known[:2]]
    st, d, err = run_innfeed(host, False, batch, len(batch))
    check(st.get("accepted") == 10 and st.get("refused") == 2,
          "innfeed IHAVE %r (%s)" % (st, err))
    hs = host.stats()
    check(hs["nntp_command:ihave"] == 12, "host IHAVEs %d" % hs["nntp_command:ihave"])
    check(hs["nntp_response:235"] == 10 and hs["nntp_response:435"] == 2, "IHAVE answers")
    final = host.stop()
    check(final["history_state:accepted"] == 5 + 41 + 10, "history %d" %
          final["history_state:accepted"])
    print("PASS: 31_host_innfeed (streaming: 41 accepted, 5 refused, 5 rejected; IHAVE: 10/2)")


main()
