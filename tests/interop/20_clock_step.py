#!/usr/bin/env python3
# timeout: 300
"""20_clock_step — the filter's clock stepped 3 h ahead and back under a
CHECK-first feed from INN's innfeed: nothing is deferred, nothing wanted is
refused, and the alarm clears by itself once the clock is right again.

The world: namespace fg-clk-<pid>; floodgate-host on 127.0.0.1:1119 (one
worker, clock-skew-limit 1 h; the ASan+UBSan build, as libfaketime and the
release build's jemalloc clash at start) under libfaketime (Debian's
faketime, its MT library preloaded): its wall clock is the real one plus the
offset in a file the test rewrites (re-read every second; CLOCK_MONOTONIC
untouched). The system clock is never touched. An origin innd (innkit.Origin) holds the
articles, posted through rnews; innfeed (innkit.Innfeed, no-check-high 100:
it CHECKs every article first) reads them back by storage token and feeds
the host, in three runs:

  1. clock +3 h: 1,100 fresh articles (Injection-Date two minutes ago).
     Every one arrives "3 h old": once 1,024 of them are in, the engine's
     clock view suspects its clock (the host's stats: clock_suspect 1).
  2. still +3 h, alarm on: 20 articles injected 10 d - 1 h ago (too old by
     the host's clock, 10 d + 2 h; inside the 10 d cutoff at the time the
     view estimates) and 100 fresh ones. The edge articles are passed on.
  3. the clock set right (+0): 60 fresh articles. The first clears the view.

Checks: every offer of every run is answered 238 and then 239 (no 431, no
438, no 439: nothing deferred, nothing wanted refused); the host counted no
431 and no reject but its probes'; nntp_clock_passed is exactly the 20 edge
articles; the alarm was raised once and cleared once, within a minute of
the correction; the host's log has the warning and the notice and no error.

When each step has taken effect is not guessed: a probe article with only a
Date (no Injection-Date, so no clock sample) 24 h 30 min ahead of the real
clock is too far in the future at +0 and fine at +3 h; the test sends fresh
probes until the host's answer shows the new clock.
"""
import email.utils
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgkit  # noqa: E402
import hostlib  # noqa: E402
from hostlib import GREETING, KEEP, PORT, Client, Host, check, in_netns  # noqa: E402
import innkit  # noqa: E402

# libfaketime and jemalloc (the release build's allocator) recurse into each
# other's clock_gettime at start; the ASan+UBSan build has its own allocator
ASAN_BUILD = os.environ.get("FG_BUILD_ASAN") or os.path.join(hostlib.TOP, "build", "asan")
hostlib.HOST_BIN = os.path.join(ASAN_BUILD, "bin", "floodgate-host")

in_netns("fg-clk")

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
ORIGIN_PORT = 11192
N_FRESH1, N_EDGE, N_FRESH2, N_FRESH3 = 1100, 20, 100, 60
CUTOFF = 10 * 86400
probes = {"sent": 0, "refused": 0}


def log(msg):
    print(msg, flush=True)


def rfc5322(t):
    return email.utils.formatdate(t, usegmt=True)


def posts():
    """[(group, plain article)]: the three runs' articles."""
    now = time.time()
    fresh, edge = rfc5322(now - 120), rfc5322(now - CUTOFF + 3600)
    out = []
    for group, n, date in (("fresh1", N_FRESH1, fresh), ("edge", N_EDGE, edge),
                           ("fresh2", N_FRESH2, fresh), ("fresh3", N_FRESH3, fresh)):
        out += [(group, innkit.plain_article("<%s.%d@clk.test>" % (group, i), date,
                                             ["clock step, %s %d" % (group, i)]))
                for i in range(n)]
    return out


def origin_batch(work, arts):
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "clk", 30)
    try:
        origin.rnews([a for _, a in arts])
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == len(arts), "origin's batch: %d lines for %d articles"
          % (len(batch), len(arts)))
    return batch


def probe():
    """A Date-only article 24 h 30 min ahead of the real clock: 239 when the
    host's clock is +3 h, 439 (too far in the future) at +0."""
    probes["sent"] += 1
    mid = "<probe.%d@clk.test>" % probes["sent"]
    art = ("Path: probe.example!not-for-mail\r\nFrom: P <p@clk.test>\r\n"
           "Newsgroups: fg.test.text\r\nSubject: probe\r\nMessage-ID: %s\r\nDate: %s\r\n"
           "\r\nprobe\r\n.\r\n" % (mid, rfc5322(time.time() + 24 * 3600 + 1800)))
    c = Client()
    c.expect(GREETING)
    c.send("TAKETHIS %s\r\n%s" % (mid, art))
    got = c.line()
    c.close()
    check(got in (("239 %s\r\n" % mid).encode(), ("439 %s\r\n" % mid).encode()),
          "probe answered %r" % got)
    probes["refused"] += got.startswith(b"439")
    return got.startswith(b"239")


def step(clock_file, offset, ahead):
    """Set the host's clock offset; return once a probe shows it."""
    with open(clock_file, "w") as f:
        f.write(offset + "\n")
    t0 = time.time()
    ok = innkit.wait_for(lambda: probe() == ahead, 30, step=0.2)
    check(ok, "the host's clock did not move to %s in 30 s" % offset)
    return t0


def feed_run(feed, batch, groups):
    lines = [(t, m) for t, m in batch if m.split(".")[0][1:] in groups]
    feed.start(lines)
    rc = feed.wait(120)
    check(rc == 0, "innfeed run %d exited %s" % (feed.runs, rc))
    got = feed.answers()
    bad = {m: got.get(m) for _, m in lines if got.get(m) != [238, 239]}
    check(not bad, "run %d: %d offers not answered 238 then 239: %s"
          % (feed.runs, len(bad), sorted(bad.items())[:5]))
    check(feed.backlog() == [], "run %d left a backlog: %s" % (feed.runs, feed.backlog()[:5]))
    return len(lines)


def main():
    for path in (FAKETIME_LIB, innkit.INNBIN + "/innfeed"):
        check(os.path.exists(path), "%s is missing (tools/deps.sh installs it)" % path)
    check(os.access(hostlib.HOST_BIN, os.X_OK), "%s is not built (make SANITIZE=1 all)"
          % hostlib.HOST_BIN)
    work = fgkit.mkdtemp("fg-clk-")
    KEEP.append(work)
    try:
        scenario(work)
    finally:
        if not os.environ.get("FG_KEEP_TMP"):
            shutil.rmtree(work, ignore_errors=True)


def scenario(work):
    batch = origin_batch(work, posts())
    clock = os.path.join(work, "faketime")
    with open(clock, "w") as f:
        f.write("+0\n")
    host = Host(session="clock-skew-limit 1h\noffer-timeout 60s",
                env={"LD_PRELOAD": FAKETIME_LIB, "FAKETIME_TIMESTAMP_FILE": clock,
                     "ASAN_OPTIONS": "verify_asan_link_order=0:detect_leaks=1:abort_on_error=1",
                     "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"})
    check(not probe(), "at +0 the probe is too far in the future")
    feed = innkit.Innfeed(os.path.join(work, "innfeed"),
                          os.path.join(work, "origin", "etc", "inn.conf"),
                          "clk", "127.0.0.1", "127.0.0.1", port=PORT)

    step(clock, "+3h", True)
    n = feed_run(feed, batch, ("fresh1",))
    st = host.stats()
    check(st["clock_suspect"] == 1 and st["nntp_clock_suspect_entered"] == 1,
          "after %d articles 3 h old: clock_suspect %d, entered %d"
          % (n, st["clock_suspect"], st["nntp_clock_suspect_entered"]))
    log("run 1 (+3 h): %d offers, 238+239 each; the clock view suspects the clock" % n)

    n = feed_run(feed, batch, ("edge", "fresh2"))
    st = host.stats()
    check(st["nntp_clock_passed"] == N_EDGE, "passed on: %d, want %d"
          % (st["nntp_clock_passed"], N_EDGE))
    log("run 2 (+3 h, alarm on): %d offers, 238+239 each; %d edge articles passed on"
        % (n, st["nntp_clock_passed"]))

    t_fix = step(clock, "+0", False)
    n = feed_run(feed, batch, ("fresh3",))
    cleared = innkit.wait_for(lambda: host.stats()["clock_suspect"] == 0, 60 - (time.time() - t_fix),
                              step=0.2)
    took = time.time() - t_fix
    check(cleared, "the alarm did not clear within a minute of the correction")
    log("run 3 (+0): %d offers, 238+239 each; the alarm cleared %.1f s after the correction"
        % (n, took))

    st = host.stop()
    total = N_FRESH1 + N_EDGE + N_FRESH2 + N_FRESH3
    check(st.get("nntp_response:431", 0) == 0, "431s: %d" % st.get("nntp_response:431", 0))
    check(st["nntp_response:238"] == total, "238s: %d of %d" % (st["nntp_response:238"], total))
    check(st["nntp_response:239"] == total + probes["sent"] - probes["refused"],
          "239s: %d" % st["nntp_response:239"])
    rejects = {k: v for k, v in st.items() if k.startswith("rejected:") and v}
    check(rejects == {"rejected:too-far-future": probes["refused"]},
          "rejects beyond the probes': %r (probes refused %d)" % (rejects, probes["refused"]))
    check(st["nntp_clock_suspect_entered"] == 1 and st["nntp_clock_suspect_cleared"] == 1,
          "alarm raised %d, cleared %d" % (st["nntp_clock_suspect_entered"],
                                          st["nntp_clock_suspect_cleared"]))
    text = open(host.log).read()
    check("local clock looks off by" in text and "local clock looks right again" in text,
          "the host's log lacks the alarm's warning or notice:\n" + text[-2000:])
    print("PASS 20_clock_step: %d articles from innfeed at +3 h and back, no 431, "
          "no wanted article refused, %d passed on, the alarm cleared in %.1f s"
          % (total, N_EDGE, took))


main()
