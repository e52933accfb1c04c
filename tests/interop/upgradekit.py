# SPDX-License-Identifier: MIT
"""upgradekit.py — what a real innfeed sees of an upgrade of floodgate
(docs/operations.md, "Upgrading"), shared by tests/interop/50_innfeed_upgrade
(the recommended innfeed.conf) and tests/long/45_innfeed_upgrade_defaults
(innfeed's defaults); not a test.

One round (run):
  1. an origin innd stores ARTICLES articles (feedgen's TAKETHIS into it)
     and writes their batch for site floodgate: innfeed's input;
  2. floodgate (DPDK, tap port, with floodctld) relays to a downstream
     innd; `[peer] max-offer-rate` paces innfeed (two connections from
     198.18.0.3) as a live feed is paced, so that it is still feeding at
     the upgrade;
  3. once innfeed has had DRAIN_AT 239s: `floodctl drain`, `floodctl
     shutdown GRACE` (innfeed's sessions end with 400 after the grace),
     floodgate started again at once (the new binary, in a real upgrade);
  4. innfeed comes back by itself and finishes its batch (it exits in
     batch mode once its backlog is empty).
The outage: from the drain to innfeed's first article accepted by the
restarted floodgate, taken from floodgate's verdict log (milliseconds; the
first accept from innfeed's address after the restart) and checked
against the same 239 in innfeed's own debug log (whole seconds; lines
"MARK <step> <epoch>" are appended to it at each step so that its lines
between the drain and that 239 — innfeed's sleeps and reconnects — are
logged with the figures). Asserted only for sanity: at least min_outage
(innfeed sleeps initial-reconnect-time after any close it did not ask
for — in whole seconds of its clock, so up to one less, and the close
comes a second's grace after the drain) and below SANITY_S.
Checks (nothing lost): every article's last answer is 239 or 438, the
backlog is empty, the downstream innd stores every article exactly once.
"""
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import BIN, check, fail, log  # noqa: E402
import innkit  # noqa: E402

DOWN_PORT, ORIGIN_PORT = 11192, 11193
ARTICLES = 2500
DRAIN_AT = 300
OFFER_RATE = 600		# CHECK and TAKETHIS: ARTICLES take about 8 s
INNFEED_ADDR = "198.18.0.3"
SANITY_S = 600
# innfeed.conf's global scope as docs/operations.md recommends behind
# floodgate: back within two seconds of a close, never more than a minute
RECOMMENDED = "initial-reconnect-time: 2\nmax-reconnect-time: 60\n"
CONFIG = ("[downstream inn]\naddress 127.0.0.1:%d\n" % DOWN_PORT)

# innfeed -d 5: "PEER:CXN Response 239: 239 <id>", and its reconnects
RESPONSE = re.compile(r"(\S+):\d+ Response (\d{3}): \d{3} (<[^> ]+>)")
# innfeed's lines about its connections: closes, sleeps, reconnects
INTERESTING = re.compile(r"cxnsleep|remote cannot accept|reopen|connect|[Ss]treaming|"
                         r"[Bb]anner|sleep|defer|Response 400")
MARK = re.compile(r"^MARK (\S+) ([0-9.]+)$")


def load_origin(work):
    """The origin innd takes ARTICLES; its batch (token, id) is returned."""
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "floodgate", 30)
    try:
        r = subprocess.run(
            [os.path.join(BIN, "feedgen"), "--host", "127.0.0.1", "--port", str(ORIGIN_PORT),
             "--id-prefix", "upg", "--articles", str(ARTICLES), "--seed", "45", "--mode",
             "takethis", "--peers", "1", "--dups", "1", "--old", "0", "--future", "0",
             "--bad-id", "0", "--offline", "0", "--versions", "0", "--near-future", "0",
             "--size", "2K", "--cutoff", "10d", "--no-progress", "--json", "--timeout", "120"],
            capture_output=True, text=True, timeout=180)
        check(r.returncode == 0, "feedgen into the origin: %s" % r.stderr[-800:])
        check(json.loads(r.stdout)["accepted"] == ARTICLES, "the origin took every article")
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == ARTICLES, "origin's batch has %d lines" % len(batch))
    return batch


def mark(feed, what):
    """A line of our own in innfeed's log (appended), with the time."""
    t = time.time()
    with open(feed.log, "a") as f:
        f.write("MARK %s %.3f\n" % (what, t))
    return t


def first_accept(vlog, addr, after):
    """The time of the first accept of a session from addr at or after
    `after` in a verdict log (epoch seconds)."""
    import restartkit
    for r in restartkit.vlog_lines(vlog, strict=True):
        if r.get("verdict") == "accept" and (r.get("addr") or "").startswith(addr + ":"):
            t = datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
            if t >= after:
                return t
    fail("no accept from %s after the restart in %s" % (addr, vlog))


def log_time(line):
    """The time of an innfeed log line, "Dec 08 00:26:47 innfeed[..]: ..."
    (INN 2.7's stderr lines: local time, whole seconds, no year)."""
    stamp = time.strptime("%d %s" % (time.localtime().tm_year, " ".join(line.split()[:3])),
                          "%Y %b %d %H:%M:%S")
    return time.mktime(stamp)


def innfeed_first_239(feed):
    """innfeed's first 239 after our "MARK ready" line: (its time, whole
    seconds; the log's lines from MARK drain up to it, its sleeps and
    reconnects, shortened)."""
    around, state = [], None
    with open(feed.log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = MARK.match(line)
            if m:
                state = m.group(1) if state != "ready" else state
                around.append(line)
                continue
            if state is None:
                continue
            r = RESPONSE.search(line)
            if state == "ready" and r and r.group(1) == feed.peer and r.group(2) == "239":
                around.append(line[:120])
                return log_time(line), around
            if INTERESTING.search(line):
                around.append(line[:160])
    fail("no 239 in innfeed's log after the restart (%s)" % feed.log)


def run(name, settings, min_outage):
    """One round; innfeed.conf's global scope gets `settings` ("" for its
    defaults). Returns the outage in seconds."""
    # a paced feed, as a live one is: floodgate reads innfeed's offers at
    # OFFER_RATE a second (TCP pushes back; every answer the same)
    w = fgdp.World(name, prefix="fg-iop", peer_keys="max-offer-rate %d\n" % OFFER_RATE)
    w.vlog = os.path.join(w.dir, "verdicts.log")
    w.write_config(extra=CONFIG + "[stats]\nverdict-log %s\n" % w.vlog)
    work = fgkit.mkdtemp("fg-iop-")
    batch = load_origin(work)
    res = {}
    innkit.with_downstream(work, DOWN_PORT, lambda down: scenario(w, work, batch, down,
                                                                  settings, min_outage, res))
    return res["outage"]


def scenario(w, work, batch, down, settings, min_outage, res):
    w.start_ctld()
    w.start_dp()
    feed = innkit.Innfeed(os.path.join(work, "innfeed"),
                          os.path.join(work, "origin", "etc", "inn.conf"),
                          "floodgate", fgdp.DP_ADDR, INNFEED_ADDR, settings=settings)
    feed.start(batch)

    def accepted():
        check(feed.proc.poll() is None, "innfeed ended before the upgrade (exit %s)"
              % feed.proc.returncode)
        return sum(239 in c for c in feed.answers().values())
    fgkit.wait_until(lambda: accepted() >= DRAIN_AT, 120,
                     lambda: "innfeed's first %d 239s (%d)" % (DRAIN_AT, accepted()))
    t_drain = mark(feed, "drain")
    w.drain()
    w.shutdown(1)
    t_exit = mark(feed, "exited")
    w.start_dp()
    t_ready = mark(feed, "ready")
    rc = feed.wait(SANITY_S)
    check(rc == 0, "innfeed exited %s (its log: %s)" % (rc, feed.log))

    # the outage: from the drain to innfeed's first article accepted by
    # the restarted floodgate (its verdict log, to the millisecond), and
    # the same 239 in innfeed's own log (whole seconds)
    t_first = first_accept(w.vlog, INNFEED_ADDR, t_ready)
    t_feed, around = innfeed_first_239(feed)
    outage = res["outage"] = t_first - t_drain
    log("%s (innfeed.conf: %s): floodgate stopped %.2f s and answered again %.2f s after "
        "the drain; innfeed's first article accepted after the restart %.2f s after the "
        "drain (verdict log; innfeed's own log: %.0f s)"
        % (w.name, settings.replace("\n", " ").strip() or "the defaults", t_exit - t_drain,
           t_ready - t_drain, outage, t_feed - t_drain))
    log("innfeed's log from the drain to that 239:\n  " + "\n  ".join(around))
    check(abs(t_feed - t_first) < 2.5, "innfeed's log says %.0f, the verdict log %.3f"
          % (t_feed, t_first))
    check(min_outage <= outage < SANITY_S, "outage %.2f s, want at least %d s (innfeed's "
          "sleep after a close it did not ask for)" % (outage, min_outage))

    # nothing lost: what innfeed had in flight at the close went to its
    # backlog (a live innfeed reads it back; in batch mode a second run)
    answers = feed.answers()
    left = feed.backlog()
    if left:
        feed.start()
        rc = feed.wait(SANITY_S)
        check(rc == 0, "innfeed's run for its backlog exited %s" % rc)
        for m, c in feed.answers().items():
            answers.setdefault(m, []).extend(c)
    log("%d articles went to innfeed's backlog at the close, sent by a second run"
        % len(left))
    bad = {m: c for _, m in batch for c in [answers.get(m, [0])] if c[-1] not in (239, 438)}
    check(not bad, "articles without a final 239 or 438: %s" % list(bad.items())[:5])
    check(feed.backlog() == [], "innfeed's backlog: %s" % feed.backlog()[:5])
    want = sorted(m for _, m in batch)
    news = innkit.NewsLog(os.path.join(down, "log", "news"))
    fgkit.wait_counters(w.stats, lambda st: st.get("downstream:inn:lag_records") == 0,
                        120, "floodgate's relay to innd to drain")
    fgkit.wait_until(lambda: len(news.accepted()) >= len(want), 60,
                     lambda: "innd to store the %d articles (%d)" % (len(want),
                                                                    len(news.accepted())))
    got = news.accepted()
    check(sorted(got) == want, "downstream stored %d (%d distinct) of %d" %
          (len(got), len(set(got)), len(want)))
    w.stop_dp()
    w.check_logs()
