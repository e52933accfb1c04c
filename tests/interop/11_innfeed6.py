#!/usr/bin/env python3
# timeout: 240
"""11_innfeed6 — INN's innfeed feeding floodgate over IPv6.

The world of 10_innfeed with the dataplane on both families: an origin
innd takes articles through rnews (new ones, and some 15 days old: past
floodgate's 10-day cutoff) and writes innfeed's batch; innfeed's peer
block names floodgate by its IPv6 address (ip-name fd00:fd::2,
bindaddress6 fd00:fd::3, so it is feeder-b by its IPv6 prefix), streaming
with CHECK. Every new article must be answered 238 then 239, every old
one 238 then 439; innfeed ends with an empty backlog; floodgate relays
the new ones to the downstream innd exactly once; `floodctl peers` showed
the connection as [fd00:fd::3]:port of feeder-b; the logs are clean.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402
import innkit  # noqa: E402

DOWN_PORT, ORIGIN_PORT = 11192, 11193
N_NEW, N_OLD = 150, 20
CONFIG = "[downstream inn]\naddress 127.0.0.1:%d\n" % DOWN_PORT


def posts():
    now = fgdp.rfc5322(time.time() - 600)
    old = fgdp.rfc5322(time.time() - 15 * 86400)
    body = ["Over IPv6 through innfeed.", ".a line with a leading dot", "..two dots"]
    return ([innkit.plain_article("<v6new%d@iop6.test>" % i, now, body * (1 + i % 7))
             for i in range(N_NEW)],
            [innkit.plain_article("<v6old%d@iop6.test>" % i, old, body) for i in range(N_OLD)])


def main():
    w = fgdp.World("innfeed6", prefix="fg-iop", extra=CONFIG, v6=True)
    work = fgkit.mkdtemp("fg-iop6-")
    new, old = posts()
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "floodgate", 30)
    try:
        origin.rnews(new + old)
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == N_NEW + N_OLD, "origin's batch: %d lines" % len(batch))
    innkit.with_downstream(work, DOWN_PORT, lambda down: scenario(w, work, batch, down))


def scenario(w, work, batch, down):
    w.start_ctld()
    w.start_dp()
    feed = innkit.Innfeed(os.path.join(work, "innfeed"),
                          os.path.join(work, "origin", "etc", "inn.conf"),
                          "floodgate", fgdp.DP_ADDR6, fgdp.KERNEL_ADDRS6[1])
    feed.start(batch)
    seen = {}

    def v6_conn():
        for c in w.dp_json("peers")["connections"]:
            if c["remote"].startswith("[%s]:" % fgdp.KERNEL_ADDRS6[1]):
                seen["c"] = c
        return "c" in seen
    # innfeed keeps its connections while it works: see one of them listed
    fgkit.wait_until(lambda: v6_conn() or feed.proc.poll() is not None, 60,
                     "innfeed's IPv6 connection in `peers`")
    rc = feed.wait(120)
    check(rc == 0, "innfeed exited %s (log %s)" % (rc, feed.log))
    check("c" in seen and seen["c"]["peer"] == "feeder-b",
          "peers never showed innfeed's IPv6 connection as feeder-b: %s" % seen)
    answers = feed.answers()
    for _, mid in batch:
        want = [238, 239] if mid.startswith("<v6new") else [238, 439]
        check(answers.get(mid) == want, "%s: %s, not %s" % (mid, answers.get(mid), want))
    check(feed.backlog() == [], "innfeed's backlog: %s" % feed.backlog()[:5])
    news = innkit.NewsLog(os.path.join(down, "log", "news"))
    fgkit.wait_counters(w.stats, lambda st: st.get("downstream:inn:lag_records") == 0,
                        120, "floodgate's relay to innd to drain")
    fgkit.wait_until(lambda: len(news.accepted()) >= N_NEW, 60,
                     "the downstream innd to log the new articles")
    got = sorted(news.accepted())
    check(got == sorted(m for _, m in batch if m.startswith("<v6new")),
          "downstream innd accepted %d (%s...)" % (len(got), got[:3]))
    log("innfeed over IPv6: %d offers, %d 239, %d 439; downstream has %d" % (
        len(batch), sum(a[-1] == 239 for a in answers.values()),
        sum(a[-1] == 439 for a in answers.values()), len(got)))
    w.stop_dp()
    w.check_logs()
    fgdp.passed("11_innfeed6")


if __name__ == "__main__":
    main()
