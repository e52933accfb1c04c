#!/usr/bin/env python3
# timeout: 400
"""40_ctl_remember_bulk — floodctl remember --file and --inn-news-log: many
IDs put in history at once, each with its own time, journaled.

floodctld (ctlkit, a history of 5 M slots) is given:
  1. a file of 1,000,000 IDs, half with a time an hour ago, half without,
     plus a comment, a blank line, two malformed lines, an ID repeated and
     one whose time is 20 days ago (older than the cutoff + 1 day): the
     reply counts 1,000,000 remembered, 1 already, 1 too old, 2 malformed;
     the rate (lines a second) is printed. Sampled IDs are accepted, the
     too-old and malformed ones absent.
  2. an INN news log with '+', 'j', '-' (one "436 cant store article"), 'c'
     and '?' lines: only the '+' and 'j' IDs are remembered, the rest
     counted as not accepted (the cant store line among them) and absent.
  3. floodctld is stopped and its region wiped: the restore (snapshot, then
     journal) has every remembered ID again — the replies came after the
     journal's commit.
  4. status names no INN history; floodctl import-inn-history -c (the
     data directory from the configuration) of two hisv6 lines made here
     (MD5 of the ID with its domain lowercased, as INN's HashMessageID),
     one that arrived 12 days ago (skipped: older than the cutoff + 1 day)
     and a malformed one (skipped, shown with its line number); status
     then shows 2 IDs in force, in text and JSON.
"""
import hashlib
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctlkit import FLOODCTL, Ctl, check, log, passed  # noqa: E402

N = 1000000


def state(c, mid):
    rc, j = c.ctl_json("lookup", mid)
    return j.get("state") if rc == 0 else None


def main():
    c = Ctl("bulk")
    conf = c.config("[rules]\ncutoff 10d\n")
    with open(conf) as f:
        text = f.read().replace("capacity 200000", "capacity 5000000")
    with open(conf, "w") as f:
        f.write(text)
    c.start()
    now = int(time.time())

    # 1. a file of IDs
    ids = os.path.join(c.dir, "ids.txt")
    with open(ids, "w") as f:
        f.write("# IDs carried over\n\n")
        for i in range(N):
            if i % 2:
                f.write("<bulk%d@ids.test> %d\n" % (i, now - 3600))
            else:
                f.write("<bulk%d@ids.test>\n" % i)
        f.write("<bulk7@ids.test>\n")
        f.write("<old@ids.test> %d\n" % (now - 20 * 86400))
        f.write("not-an-id\n<bad@ids.test> soon\n")
    rc, j = c.ctl_json("remember", "--file", ids)
    check(rc == 0, "remember --file: %r" % j)
    check(j["remembered"] == N and j["already"] == 1 and j["older_than_cutoff"] == 1
          and j["malformed"] == 2 and j["journaled"] is True, "counts: %r" % j)
    log("remember --file: %d lines in %.3f s, %.3f s of CPU: %.2f M lines per CPU second "
        "(goal 1 M/s)" % (j["lines"], j["seconds"], j["cpu_seconds"], j["lines_per_second"] / 1e6))
    for i in (0, 1, 7, N // 2, N - 1):
        check(state(c, "<bulk%d@ids.test>" % i) == "accepted", "bulk%d accepted" % i)
    check(state(c, "<old@ids.test>") is None, "the too-old ID is not remembered")
    check(state(c, "<bad@ids.test>") is None, "the malformed line's ID is not remembered")

    # 2. INN's news log
    stamp = time.strftime("%b %e %H:%M:%S", time.localtime(now - 600))
    newslog = os.path.join(c.dir, "news")
    with open(newslog, "w") as f:
        f.write("%s.100 + peer.a <log.plus@inn.test> 1658 site.b\n" % stamp)
        f.write("%s.200 j peer.a <log.junk@inn.test> site.b\n" % stamp)
        f.write("%s.300 - peer.a <log.minus@inn.test> 437 Poison newsgroup\n" % stamp)
        f.write("%s.400 - peer.a <log.store@inn.test> 436 cant store article\n" % stamp)
        f.write("%s.500 c peer.a <log.cancel@inn.test> Cancelling <x@inn.test>\n" % stamp)
        f.write("%s.600 ? peer.a <log.what@inn.test> reason\n" % stamp)
        f.write("garbage\n")
    rc, j = c.ctl_json("remember", "--inn-news-log", newslog)
    check(rc == 0, "remember --inn-news-log: %r" % j)
    check(j["remembered"] == 2 and j["not_accepted"] == 4 and j["cant_store"] == 1
          and j["malformed"] == 1, "news log counts: %r" % j)
    check(state(c, "<log.plus@inn.test>") == "accepted", "+ line remembered")
    check(state(c, "<log.junk@inn.test>") == "accepted", "j line remembered")
    for mid in ("<log.minus@inn.test>", "<log.store@inn.test>", "<log.cancel@inn.test>",
                "<log.what@inn.test>"):
        check(state(c, mid) is None, "%s not remembered" % mid)

    # 3. journaled: a restore from the data directory has them all
    c.stop()
    c.wipe_shm()
    c.start()
    for mid in ("<bulk0@ids.test>", "<bulk%d@ids.test>" % (N - 1), "<log.plus@inn.test>",
                "<log.junk@inn.test>"):
        check(state(c, mid) == "accepted", "%s after the restore" % mid)
    check(state(c, "<log.store@inn.test>") is None, "cant store: still absent")

    # 4. INN's history in status
    rc, j = c.ctl_json("status")
    check(rc == 0 and j.get("inn_history", "missing") is None, "no INN history: %r"
          % j.get("inn_history", "missing"))
    hist = os.path.join(c.dir, "history")
    with open(hist, "w") as f:
        for mid in ("<h1@Origin.Test>", "<h2@origin.test>"):
            local, domain = mid.split("@")
            h = hashlib.md5((local + "@" + domain.lower()).encode()).hexdigest().upper()
            f.write("[%s]\t%d~-~%d\t@0%035d@\n" % (h, now - 60, now - 120, 1))
        f.write("[0123456789ABCDEF0123456789ABCDEF]\t%d~-\n" % (now - 12 * 86400))
        f.write("[0123456789ABCDEF0123456789ABCDEF] broken\n")
    r = subprocess.run([FLOODCTL, "import-inn-history", "-c", c.conf, hist],
                       capture_output=True, text=True)
    check(r.returncode == 0 and "imported 2 IDs" in r.stdout and
          "1 older than the cutoff + 1 day skipped, 1 malformed skipped" in r.stdout and
          ":4: tab missing after the hash" in r.stderr, "import: %r %r" % (r.stdout, r.stderr))
    rc, j = c.ctl_json("status")
    ih = j.get("inn_history") or {}
    check(ih.get("ids") == 2 and ih.get("in_force") is True, "status inn_history: %r" % ih)
    rc, out, err = c.ctl("status")
    check("inn history 2 IDs imported" in out, "status text: %r" % out)
    c.stop()
    passed("40_ctl_remember_bulk (%d IDs from a file, 2 from a news log, all restored)" % N)


main()
