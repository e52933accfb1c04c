#!/usr/bin/env python3
# timeout: 400
"""49_ctl_status_page — the status page at / agrees with /stats.json, live.

In a network namespace of its own: floodctld (stats endpoint on
127.0.0.1:9119), floodgate-host --floodctld with peers "near"
(127.0.0.1), "far" (127.0.0.2) and "idle" (127.0.0.3, never connects),
one downstream (countd). far sends a few articles an hour late; then near
streams articles (one in ten too old, paced below the downstream's
pace) for as long as the test needs.

During the feed, again and again: /stats.json (A), the page (P),
/stats.json (B), the page parsed with html.parser. Every figure of the
page has its twin in the JSON: a counter must lie between A and B, a
gauge must equal A and B when they agree (and is not judged when it
moved between them); every peer and downstream of the JSON has its row.
near's offers/s is seen above 0 during the feed and idle's never. After
the feed, once the downstream has everything and the figures stand
still, every figure equals the JSON exactly, near's rate is 0, idle is
"never" seen (and has no last-seen series in /metrics while near's is
within the run).

Then the hostile part: a throttle reason of markup, quotes and
ampersands (through floodctl), and a pause of a peer named with HTML
metacharacters written into the levers journal (no configuration can
name such a peer, but the journal is a file floodctld reads): the page
shows both as text, exactly as /stats.json has them, and no markup of
theirs reaches the document. A Message-ID of quotes, ampersands and a
"<script" (in a no-fold-literal, RFC 5536 3.1.3), fed by near and
accepted, and one never seen, looked up with
the page's form (GET /?id=...): the page says what `floodctl lookup` says,
the form keeps the ID as text, and an overlong value is no ID. Last, the
host stopped: the page calls its downstreams' file stale.
"""
import os
import threading
import time
import urllib.parse

import relaykit
from ctlkit import check, http_get, log, passed, prom_parse, prom_value, wait_for
from fgkit import wait_progress, wait_until
from pagekit import BASE, Page, compare, far_articles, near_articles, num, page, rate, stats, \
    twins, world
from pagekit import PORT


def main():
    c, countd, host = world("statuspage", args=["--graph-period", "1"])
    t0 = time.time()
    far_articles()
    wait_for(lambda: "downstreams" in stats(), "the host's first downstreams.status",
             timeout=30)

    # near: streams until told to stop; one in ten too old (439)
    stop = threading.Event()
    answers = []

    def pace(i):
        time.sleep(0.002)
    # paced below the downstream's own pace (countd takes about 1 ms an
    # article), so that what the feed leaves behind drains in seconds
    feeder = threading.Thread(target=lambda: relaykit.feed(near_articles(stop, every=pace),
                                                           answers=answers,
                                                           src="127.0.0.1",
                                                           addr=("127.0.0.1", PORT)))
    feeder.start()
    triples = judged = moving = 0
    near_sessions = set()
    near_rate = 0.0
    end = time.time() + 150
    while time.time() < end and feeder.is_alive():
        a = stats()
        p = Page(page())
        b = stats()
        n_j, n_m = compare(a, p, b)
        judged += n_j
        moving += n_m
        triples += 1
        near_rate = max(near_rate, rate(p, "near") or 0)
        near_sessions.add(int(num(p.fig[(("peer", "near"), "sessions")])))
        check(rate(p, "idle") in (None, 0), "idle's offers/s %r" % rate(p, "idle"))
        if triples >= 6 and near_rate > 0 and len(answers) > 500:
            break
        time.sleep(0.1)         # pacing, so that the feed has the cores
    stop.set()
    feeder.join(60)
    check(not feeder.is_alive(), "the feed ended")
    log("live: %d triples, %d figures judged, %d moving between the fetches; near up to "
        "%.0f offers/s; %d answers" % (triples, judged, moving, near_rate, len(answers)))
    check(triples >= 6 and near_rate > 0, "near's offers/s seen above 0 in %d triples" % triples)
    check(1 in near_sessions and near_sessions <= {0, 1}, "near's one session: %r" % near_sessions)
    check(moving > 0 and judged > 10 * triples, "figures judged while the feed moved them")
    codes = {code for _, code in answers}
    check(codes == {239, 439}, "near's answers: %r" % codes)

    # quiet: the downstream has everything, two trend periods without offers
    accepted = sum(1 for _, code in answers if code == 239) + 5
    wait_progress(lambda: len(countd.counts()), lambda n: n >= accepted,
                  30, "countd to get all %d" % accepted)
    check(len(countd.counts()) == accepted, "countd got exactly the %d accepted" % accepted)
    wait_for(lambda: (lambda d: d and d[0]["lag"]["records"] == 0 and d[0]["state"] == "feeding")(
        stats().get("downstreams")), "the downstream caught up", timeout=60)
    wait_until(lambda: rate(Page(page()), "near") == 0, 60, "near's rate back to 0", step=1)
    for _ in range(20):
        a, p, b = stats(), Page(page()), stats()
        if twins(a) == twins(b):
            break
        time.sleep(0.5)
    judged_q, _ = compare(a, p, b, exact=True)
    log("quiet: %d figures equal to the JSON" % judged_q)
    near = p.fig[(("peer", "near"), "last_seen")]
    check(t0 - 1 <= num(near) <= time.time(), "near last seen %r, the run began at %d" %
          (near, t0))
    check(p.fig[(("peer", "idle"), "last_seen")]["text"] == "never", "idle never seen")
    check(p.fig[(("peer", "far"), "propagation_delay")]["text"] == "60 min",
          "far's propagation delay: %r" % p.fig[(("peer", "far"), "propagation_delay")])
    m = prom_parse(http_get(BASE + "/metrics")[1])
    seen = prom_value(m, "floodgate_peer_last_seen_seconds", peer="near")
    check(seen is not None and t0 - 1 <= seen <= time.time(), "near's last-seen gauge %r" % seen)
    check(prom_value(m, "floodgate_peer_last_seen_seconds", peer="idle") == 0,
          "idle's last-seen gauge is 0: never heard from")
    # healthy but for the machine's own clock, which the test does not own
    want = ["kernel-clock"] if b["kernel_clock"]["synchronized"] is False else ["none"]
    check(p.alerts == want, "alerts on a healthy run: %r, want %r" % (p.alerts, want))
    check(sum(1 for t in p.tags if t == "svg") == 6 + 3, "a sparkline per tile and per peer")

    # hostile text: a throttle reason, a paused peer no configuration names
    reason = "<script>alert(\"t\")</script> & 'co' &amp;"
    rc, out, err = c.ctl("throttle", reason)
    check(rc == 0, "floodctl throttle: %r %r" % (out, err))
    bad = "<img/src=x/onerror=alert(1)>\"&'"
    with open(os.path.join(c.data, "levers.journal"), "a") as f:
        f.write("%d pause %s %d\n" % (time.time(), bad, time.time() + 3600))
    body = page()
    p = Page(body)
    j = stats()
    check(j["levers"]["throttled"] == reason, "the JSON's reason %r" % j["levers"]["throttled"])
    check(p.fig[(("s", "levers"), "throttled")]["text"] == reason,
          "the page's reason %r" % p.fig[(("s", "levers"), "throttled")])
    check([z["peer"] for z in j["levers"]["paused"]] == [bad], "the JSON's pause %r" %
          j["levers"]["paused"])
    check(p.rows["pause"] == [bad], "the page's pause %r" % p.rows["pause"])
    check("script" not in p.tags and "img" not in p.tags, "no hostile element: %r" %
          sorted(set(p.tags)))
    check("<script" not in body and "<img" not in body, "no raw markup in the page")
    check("throttled" in p.alerts and "paused" in p.alerts, "the levers are alerts: %r" %
          p.alerts)
    rc, out, err = c.ctl("go")
    check(rc == 0, "floodctl go: %r" % err)

    # a Message-ID as hostile as RFC 5536 lets one be (a no-fold-literal
    # holds < " ' &), fed, then looked up with the page's form: the page
    # says what floodctl lookup says
    hid = "<it's&co@[\"<script'&]>"
    got = relaykit.feed([(hid, relaykit.make_article(hid))], src="127.0.0.1",
                        addr=("127.0.0.1", PORT))
    check(got == [(hid, 239)], "the hostile ID fed: %r" % got)
    for mid, state in ((hid, "accepted"), ("<never\"'&@page.test>", "absent")):
        body = http_get(BASE + "/?id=" + urllib.parse.quote(mid, safe=""))[1]
        p = Page(body)
        rc, said, err = c.ctl("lookup", mid)
        shown_ = p.fig[(("s", "lookup"), "lookup")]["text"]
        check(shown_.splitlines()[:2] == said.splitlines()[:2] == [mid, "  state          " + state],
              "lookup of %s on the page %r, floodctl %r" % (mid, shown_, said))
        check("script" not in p.tags and "<script" not in body, "no markup from the ID")
        check(p.forms == [mid], "the form keeps the ID asked: %r" % p.forms)
    p = Page(http_get(BASE + "/?id=" + "x" * 400)[1])
    check(p.fig[(("s", "lookup"), "lookup")]["text"].startswith("not a valid Message-ID"),
          "an overlong value is no ID")

    # the dataplane gone: its downstreams' file goes stale, the page says so
    host.terminate()
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    p = wait_until(lambda: (lambda p: p if "stale" in p.alerts else None)(Page(page())), 60,
                   "the page to call the dataplane's file stale", step=1)
    check(num(p.fig[(("s", "floodctld"), "writers")]) == 0, "no writer left")
    countd.stop()
    c.stop()
    passed("49_ctl_status_page")


main()
