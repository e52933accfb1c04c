#!/usr/bin/env python3
# timeout: 300
"""49_ctl_report — the daily report from a known feed (issue 35, item 3).

In a network namespace of its own: floodctld, with [stats]
report-interval 1s, and floodgate-host --floodctld with two peers told
apart by their source address. Once floodctld has taken a sample, a
scripted feed whose every outcome is known:
  "near" (127.0.0.1): CHECKs 10 new IDs (238) and sends them (239);
     TAKETHIS 2 articles 20 days old (439 too-old); CHECKs the 8 IDs far
     sent (438 duplicate): 20 offers, 10 accepted, 2 too-old, 8 duplicate;
  "far" (127.0.0.2): TAKETHIS 8 new IDs (239); TAKETHIS 3 dated 3 days
     ahead (439 too-far-future); CHECKs 5 of near's IDs (438) and sends
     one of them again (439 duplicate): 17 offers, 8 accepted,
     3 too-far-future, 6 duplicate.
After the host has published those counts and floodctld has sampled
them twice more, `floodctl report --since 1h --json` must give exactly
those figures per peer and their totals, with the article octets the
export counts, the 18 accepted articles delivered to the one downstream
(a counting server, countd), and no gap, no damaged sample; the text and the HTML
(parsed with html.parser: its tables) say the same; a bad --since
is refused; the day file is the format report.h states. Then floodctld
stops for more than two intervals and starts again on the region: the
report lists the gap, meets no reset and counts nothing twice.
"""
import calendar
import html.parser
import os
import time

import relaykit
from ctlkit import Ctl, check, log, passed, wait_for, wait_until
from hostlib import article, streaming

PORT = 1119
DAY = 86400


def nntp(source):
    return streaming(source, PORT)


def cmd(cl, line, data=b""):
    return cl.cmd(line, data)


def expect(cl, line, data, want):
    r = cmd(cl, line, data)
    check(r == want, "%s: %r, want %r" % (line, r, want))


class Tables(html.parser.HTMLParser):
    """Every <table id=...>'s rows as lists of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.row = {}, None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.cur = self.tables.setdefault(dict(attrs).get("id"), [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
            self.cur.append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.row.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.cur = self.row = None
        elif tag == "tr":
            self.row = None

    def handle_data(self, data):
        if self.row:
            self.row[-1] += data


def report(c):
    rc, j = c.ctl_json("report", "--since", "1h")
    check(rc == 0, "report --json: %r" % j)
    return j


def main():
    c = Ctl("report")
    c.netns()
    countd = relaykit.Countd(c.dir)
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer near]\naddress 127.0.0.1\nnewsgroups *\n"
             "[peer far]\naddress 127.0.0.2\nnewsgroups *\n"
             "[downstream down]\naddress 127.0.0.1:%d\n"
             "[stats]\nreport-interval 1s\n" % (PORT, relaykit.DOWN_PORT))
    c.start(args=["--expire-interval", "3600"])
    countd.start()
    host, _ = c.start_host(PORT)
    # the base: a sample before the feed
    wait_for(lambda: report(c)["samples"] >= 1, "floodctld's first sample")

    near, far = nntp("127.0.0.1"), nntp("127.0.0.2")
    nids = ["<n%d@report.test>" % i for i in range(10)]
    fids = ["<f%d@report.test>" % i for i in range(8)]
    sent = {"near": 0, "far": 0}    # article octets, wire form without ".\r\n"

    def takethis(peer, cl, mid, a, want):
        sent[peer] += len(a) - 3
        expect(cl, "TAKETHIS " + mid, a, want + " " + mid)

    for mid in nids:
        expect(near, "CHECK " + mid, b"", "238 " + mid)
    for mid in nids:
        takethis("near", near, mid, article(mid, age=20, inj_age=20), "239")
    for i in range(2):
        mid = "<old%d@report.test>" % i
        takethis("near", near, mid, article(mid, age=20 * DAY, inj_age=20 * DAY), "439")
    for mid in fids:
        takethis("far", far, mid, article(mid), "239")
    for i in range(3):
        mid = "<future%d@report.test>" % i
        takethis("far", far, mid, article(mid, age=-3 * DAY, inj_age=-3 * DAY), "439")
    for mid in fids:
        expect(near, "CHECK " + mid, b"", "438 " + mid)
    for mid in nids[:5]:
        expect(far, "CHECK " + mid, b"", "438 " + mid)
    # a complete article is counted in octets whatever its answer
    takethis("far", far, nids[0], article(nids[0]), "439")
    for cl in (near, far):
        check(cmd(cl, "QUIT").startswith("205"), "QUIT")
        cl.close()

    # published (the host: about once a second), then sampled twice more
    def published():
        rc, st = c.ctl_json("stats")
        p = st["peers"]
        return rc == 0 and p["near"]["counters"].get("nntp_offers") == 20 and \
            p["far"]["counters"].get("nntp_offers") == 17 and \
            p["far"]["rejected"].get("duplicate") == 6
    wait_for(published, "the feed's counts published")

    def delivered():
        rc, j = c.ctl_json("downstreams")
        return rc == 0 and [d["accepted"] for d in j["downstreams"]] == [18]
    wait_for(delivered, "the 18 accepted articles delivered downstream", timeout=60)
    rc, st = c.ctl_json("stats")
    after = report(c)["samples"]
    wait_for(lambda: report(c)["samples"] >= after + 2, "two samples after the feed")

    j = report(c)
    peers = {p["peer"]: p for p in j["peers"]}
    want = {
        "near": dict(offers=20, accepted=10, refused=10,
                     refused_by_reason={"too-old": 2, "duplicate": 8}),
        "far": dict(offers=17, accepted=8, refused=9,
                    refused_by_reason={"too-far-future": 3, "duplicate": 6}),
    }
    for name, w in want.items():
        got = {k: peers[name][k] for k in w}
        check(got == w, "%s in the report: %r, want %r" % (name, got, w))
    for name in want:
        check(peers[name]["octets"] == sent[name], "%s's article octets %d, it sent %d" % (
            name, peers[name]["octets"], sent[name]))
    for name in want:
        check(peers[name]["octets"] == st["peers"][name]["counters"]["nntp_article_bytes"],
              "%s's octets as the export counts them" % name)
    t = j["total"]
    check((t["offers"], t["accepted"], t["refused"], t["octets"]) == (37, 18, 19,
                                                                    sent["near"] + sent["far"]),
          "totals: %r" % t)
    # near's 10 new articles took 16..31 s to arrive (20 s old), its 2 old
    # ones 20 days (2^20..2^21-1 s): p50 in the first bucket, p90 in the
    # last; none waited offline
    d = peers["near"]["propagation_delay_seconds"]
    check(d["count"] == 12 and d["p50"] == 31 and d["p90"] == 2 ** 21 - 1,
          "near's propagation: %r" % d)
    check(peers["near"]["injection_delay_seconds"]["p90"] == 0, "near's injection delay")
    check(j["gaps"] == [] and j["damaged_samples"] == 0 and j["counter_resets"] == 0,
          "no gap, damage or reset: %r" % {k: j[k] for k in ("gaps", "damaged_samples",
                                                              "counter_resets")})

    ds = j["downstreams"]
    check(len(ds) == 1 and ds[0]["downstream"] == "down" and ds[0]["delivered"] == 18 and
          ds[0]["sent"] >= 18 and ds[0]["refused"] == 0, "the downstream in the report: %r" % ds)

    rc, out, err = c.ctl("report", "--since", "1h")
    check(rc == 0, "report text: %r" % err)
    rows = {}
    for l in out.splitlines():      # the peers table: each name's first row
        w = l.split()
        if w[:1] in (["near"], ["far"], ["TOTAL"]):
            rows.setdefault(w[0], w[1:5])
    check(rows["near"] == ["20", "10", "10", str(sent["near"])] and
          rows["far"][:3] == ["17", "8", "9"] and rows["TOTAL"][:3] == ["37", "18", "19"],
          "the text table: %r\n%s" % (rows, out))
    rc, out, err = c.ctl("report", "--since", "1h", "--html")
    check(rc == 0 and "<script" not in out, "report --html: %r" % err)
    p = Tables()
    p.feed(out)
    cells = {r[0]: r[1:5] for r in p.tables["peers"][1:]}
    check(cells["near"] == ["20", "10", "10", str(sent["near"])] and
          cells["far"][:3] == ["17", "8", "9"] and cells["TOTAL"][:3] == ["37", "18", "19"],
          "the HTML peers table: %r" % cells)
    reasons = {(r[0], r[1]): r[2] for r in p.tables["refused"][1:]}
    check(reasons == {("near", "too-old"): "2", ("near", "duplicate"): "8",
                      ("far", "too-far-future"): "3", ("far", "duplicate"): "6"},
          "the HTML refusals: %r" % reasons)
    down = {r[0]: r[1:4] for r in p.tables["downstreams"][1:]}
    check(list(down) == ["down"] and down["down"][1:] == ["18", "0"],
          "the HTML downstreams table: %r" % down)
    rc, out, err = c.ctl("report", "--since", "soon")
    check(rc == 2 and "--since" in err, "a bad --since refused: %r %r" % (rc, err))
    rc, out, err = c.ctl("report", "--json", "--html")
    check(rc != 0, "--json with --html refused: %r" % out)

    rdir = os.path.join(c.data, "report")
    files = os.listdir(rdir)
    check(len(files) >= 1, "a day file: %r" % files)
    text = open(os.path.join(rdir, sorted(files)[-1])).read()
    check(text.startswith("floodgate-report 1\nS ") and "\nP near " in text and
          text.endswith("\n") and text.splitlines()[-1].startswith("E "),
          "the day file's shape: %r" % text[:200])

    host.terminate()
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    countd.stop()

    # floodctld away for more than two intervals: a gap; started again it
    # adopts the region, whose counters went on: nothing counted twice, no reset
    last = report(c)["last_sample"]
    c.stop()
    wait_until(lambda: time.time() > calendar.timegm(time.strptime(last, "%Y-%m-%dT%H:%M:%SZ"))
               + 4, 30, "the clock past the gap's bound")
    c.start(args=["--expire-interval", "3600"])
    wait_for(lambda: report(c)["gaps_total"] == 1, "the gap in the report")
    g = report(c)
    peers = {p["peer"]: p for p in g["peers"]}
    check(g["gaps"][0]["from"] == last and g["counter_resets"] == 0 and
          (peers["near"]["offers"], peers["far"]["offers"], g["total"]["refused"]) ==
          (20, 17, 19), "after the gap: %r" % {k: g[k] for k in ("gaps", "counter_resets",
                                                                  "total")})
    rc, out, _ = c.ctl("report", "--since", "1h")
    check(rc == 0 and "gaps 1\n  gap: no samples between " in out, "the gap in the text: %r" % out)
    c.stop()
    log("report: %d samples, near %d/%d, far %d/%d offers/accepted, %d octets" % (
        j["samples"], 20, 10, 17, 8, sent["near"] + sent["far"]))
    passed("49_ctl_report")


main()
