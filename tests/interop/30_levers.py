#!/usr/bin/env python3
# timeout: 300
"""30_levers — the operator's pause and throttle, with INN's innfeed as the
peer, through floodctl and floodctld to the DPDK dataplane.

The world: namespace fg-iop-levers-<pid>; floodgate (DPDK, net_tap port,
198.18.0.2) with floodctld; an origin innd (innkit.Origin) holding 60
articles posted through rnews, whose batch innfeed (innkit.Innfeed, from
198.18.0.3: peer feeder-b; CHECK first) reads back by storage token.

  1. floodctl pause --for 1h feeder-b. innfeed offers batch A (30): every
     CHECK is answered 431 (innfeed keeps them to send later). A TAKETHIS
     from feeder-b is read and answered 400, the session closed; feeder-a
     (198.18.0.1) is served as ever (238).
  2. The dataplane restarts: the pause is still there (levers.journal).
  3. floodctl resume feeder-b: innfeed's next run, given batch A again,
     gets each article in: 238 then 239.
  4. floodctl throttle maintenance window: an open session of feeder-a is
     answered "400 maintenance window" and closed; innfeed, offering batch
     B (30), is greeted so and keeps it all in its backlog.
  5. floodctl go: innfeed's next run sends batch B, each 238 then 239.

Checks: innfeed's answers per ID; the
dataplane's counters (nntp_defer_paused, nntp_throttle_closed, 431 and 400
answers); status and peers in JSON name the throttle and the pause; every
change in the dataplane's log; the levers journal names its version and holds the changes;
the logs are otherwise clean.
"""
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import DP_ADDR, check, log  # noqa: E402
import innkit  # noqa: E402

ORIGIN_PORT = 11193
INNFEED_ADDR = "198.18.0.3"    # peer feeder-b
OTHER_ADDR = "198.18.0.1"      # peer feeder-a
N_A = N_B = 30


def posts():
    date = fgdp.rfc5322(time.time() - 300)
    return {g: [innkit.plain_article("<%s%d@levers.test>" % (g, i), date,
                                     ["lever test %s %d" % (g, i)]) for i in range(n)]
            for g, n in (("a", N_A), ("b", N_B))}


def origin_batch(work, arts):
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "floodgate", 30)
    try:
        origin.rnews(arts["a"] + arts["b"])
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == N_A + N_B, "origin's batch: %d lines" % len(batch))
    return [(t, m) for t, m in batch if m.startswith("<a")], \
        [(t, m) for t, m in batch if m.startswith("<b")]


def session(src):
    s = fgdp.connect(src)
    r = fgdp.Lines(s)
    return s, r, r.line()


def closed(r):
    """The peer closed the connection after what was read."""
    try:
        r.line()
    except (EOFError, OSError):
        return True
    return False


def ctl(w, *args):
    rc, out, err = w.ctl(*args)
    check(rc == 0, "floodctl %s: exit %d %r %r" % (" ".join(args), rc, out, err))
    return out


def run_until(feed, batch, done, what, timeout=60):
    feed.start(batch)
    ok = innkit.wait_for(done, timeout, step=0.1)
    rc = feed.stop()
    check(ok, "innfeed %s: not done in %d s: %r" % (what, timeout, dict(list(feed.answers().items())[:5])))
    return rc


def paused(w, feed, batch_a):
    ctl(w, "pause", "--for", "1h", "feeder-b")
    st = w.dp_json("status")
    check(st.get("throttled") is None and [p["peer"] for p in st.get("paused", [])] == ["feeder-b"],
          "status after pause: %r" % st)
    run_until(feed, batch_a, lambda: all(feed.answers().get(m) for _, m in batch_a), "paused run")
    got = feed.answers()
    check(all(got[m] == [431] for _, m in batch_a), "paused: %r" % list(got.items())[:5])
    # innfeed keeps deferred articles in its backlog, but may drop the last
    # one when it closes an idle host in batch mode: the next run is given
    # the whole batch again, and must get each article in
    log("paused run: %d x 431; innfeed's backlog holds %d" % (len(got), len(feed.backlog())))
    # a TAKETHIS of the paused peer: read, 400, closed; another peer as ever
    s, r, greet = session(INNFEED_ADDR)
    check(greet.startswith("200 "), "paused peer greeted: %r" % greet)
    art = innkit.wire(innkit.plain_article("<tt@levers.test>", fgdp.rfc5322(time.time()), ["x"]))
    s.sendall(b"TAKETHIS <tt@levers.test>\r\n" + art + b"CHECK <after@levers.test>\r\n")
    got = r.line()
    check(got.startswith("400 Feed paused"), "paused TAKETHIS: %r" % got)
    check(closed(r), "the session is closed after the 400")
    s.close()
    s, r, greet = session(OTHER_ADDR)
    s.sendall(b"CHECK <other@levers.test>\r\n")
    check(r.line().startswith("238 <other@levers.test>"), "another peer is not paused")
    s.close()
    st = w.stats()
    check(st["nntp_defer_paused"] == N_A + 1 and st["nntp_response:431"] == N_A,
          "paused: %d deferred, %d x 431" % (st["nntp_defer_paused"], st["nntp_response:431"]))


def restart_keeps(w):
    w.stop_dp()
    w.start_dp()
    st = w.dp_json("status")
    check([p["peer"] for p in st.get("paused", [])] == ["feeder-b"],
          "the pause after a restart: %r" % st)
    s, r, greet = session(INNFEED_ADDR)
    s.sendall(b"CHECK <still@levers.test>\r\n")
    check(r.line().startswith("431 <still@levers.test>"), "still paused after the restart")
    s.close()


def resumed(w, feed, batch_a):
    ctl(w, "resume", "feeder-b")
    feed.start(batch_a)
    rc = feed.wait(60)
    check(rc == 0, "innfeed's run after resume exited %s" % rc)
    got = feed.answers()
    check(all(got.get(m) == [238, 239] for _, m in batch_a), "after resume: %r" % list(got.items())[:5])


def throttled(w, feed, batch_b):
    s, r, greet = session(OTHER_ADDR)
    check(greet.startswith("200 "), "greeting before the throttle: %r" % greet)
    ctl(w, "throttle", "maintenance", "window")
    check(r.line() == "400 maintenance window", "an open session under the throttle")
    check(closed(r), "... and closed")
    s.close()
    s, r, greet = session(OTHER_ADDR)
    check(greet == "400 maintenance window", "a new session under the throttle: %r" % greet)
    s.close()
    st = w.dp_json("peers")
    check(st.get("throttled") == "maintenance window", "peers --json: %r" % st.get("throttled"))
    before = w.stats()["nntp_throttle_closed"]
    run_until(feed, batch_b, lambda: w.stats()["nntp_throttle_closed"] > before, "throttled run")
    check(feed.answers() == {}, "innfeed got answers while throttled: %r" % feed.answers())
    log("throttled run: innfeed greeted 400, no answer; its backlog holds %d"
        % len(feed.backlog()))


def going(w, feed, batch_b):
    ctl(w, "go")
    rc, out, err = w.ctl("go")
    check(rc == 1 and "not throttled" in out + err, "go twice: %d %r %r" % (rc, out, err))
    # the backlog (what innfeed kept of batch B) and the batch again:
    # already sent IDs would be 438, but none is
    with open(os.path.join(feed.backlog_dir, feed.peer), "a") as f:
        f.writelines("%s %s\n" % tl for tl in batch_b if tl[1] not in feed.backlog())
    innkit.chown_news(feed.backlog_dir)
    feed.start()
    rc = feed.wait(60)
    check(rc == 0, "innfeed's run after go exited %s" % rc)
    got = feed.answers()
    check(all(got.get(m) == [238, 239] for _, m in batch_b), "after go: %r" % list(got.items())[:5])


def main():
    check(os.access(innkit.INNBIN + "/innfeed", os.X_OK), "INN's innfeed is missing")
    w = fgdp.World("levers", prefix="fg-iop")
    work = fgkit.mkdtemp("fg-iop-levers-")
    try:
        batch_a, batch_b = origin_batch(work, posts())
        w.start_ctld()
        w.start_dp()
        feed = innkit.Innfeed(os.path.join(work, "innfeed"),
                              os.path.join(work, "origin", "etc", "inn.conf"),
                              "floodgate", DP_ADDR, INNFEED_ADDR)
        paused(w, feed, batch_a)
        restart_keeps(w)
        resumed(w, feed, batch_a)
        throttled(w, feed, batch_b)
        going(w, feed, batch_b)
        st = w.stats()      # since the restart
        check(st["nntp_defer_paused"] == 1 and st["nntp_throttle_closed"] >= 3,
              "counters: paused %d, throttle %d" % (st["nntp_defer_paused"],
                                                    st["nntp_throttle_closed"]))
        journal = open(os.path.join(w.data, "levers.journal")).read().splitlines()
        check(journal and journal[0] == "floodgate-levers 1",
              "levers.journal names its format's version first: %r" % journal[:1])
        verbs = [ln.split()[1] for ln in journal[1:]]
        check(verbs == ["pause", "resume", "throttle", "go"], "levers.journal: %r" % journal)
        text = "".join(fgdp.slurp(p) for p in w.logs)
        for want in ("peer feeder-b paused until", "(from the levers journal)",
                     "peer feeder-b resumed (journaled)", "throttled: maintenance window",
                     "throttle ended (journaled)"):
            check(want in text, "the dataplane's log lacks %r" % want)
        w.stop_dp()
        w.check_logs(allow=r"(peer feeder-b paused until \d+|throttled: maintenance window) "
                           r"\((journaled|from the levers journal)\)")
    finally:
        if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
            log("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    fgdp.passed("30_levers")


main()
