# SPDX-License-Identifier: MIT
"""pagekit.py — the status page's test helpers (not a test): a world of
floodctld, floodgate-host and a downstream with three peers, the page
parsed with html.parser into its figures, and the figures /stats.json
says the page must show. Used by 49_ctl_status_page.py and
tests/long/50_status_page_chromium.py. Python stdlib only.
"""
import calendar
import html.parser
import json
import time

import hostlib
import relaykit
from ctlkit import Ctl, check, fail, http_get

PORT = hostlib.PORT
BASE = "http://127.0.0.1:9119"
VOID = {"meta", "link", "br", "img", "input", "hr", "area", "base", "col", "wbr"}
ROWS = ("peer", "downstream", "pause", "port")
NAN = "nan"


class Page(html.parser.HTMLParser):
    """{(context, key): {"text", attrs...}} of every data-k element; the
    context is the nearest data-peer/-downstream/-pause/-port (e.g.
    ("peer", "near")) or data-s section (("s", "history")) at or above it.
    The rows of each kind in `rows`, the alerts' keys in `alerts`."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.stack = []          # [(tag, context or None, collecting entry or None)]
        self.fig = {}
        self.rows = {k: [] for k in ROWS}
        self.alerts = []
        self.forms = []          # the values of the inputs named "id"
        self.tags = []
        self.feed(text)
        self.close()
        check(not self.stack, "unclosed elements: %r" % [t for t, _, _ in self.stack])

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "input" and a.get("name") == "id":
            self.forms.append(a.get("value"))
        ctx = None
        for kind in ROWS:
            if "data-" + kind in a:
                ctx = (kind, a["data-" + kind])
                self.rows[kind].append(a["data-" + kind])
        if not ctx and "data-s" in a:
            ctx = ("s", a["data-s"])
        entry = None
        if a.get("data-k") == "alert":
            self.alerts.append(a["data-v"])
        elif "data-k" in a:
            entry = dict(a, text="")
            where = ctx or next((x for _, x, _ in reversed(self.stack) if x), ("", ""))
            key = (where, a["data-k"])
            check(key not in self.fig, "figure %r twice on the page" % (key,))
            self.fig[key] = entry
        if tag not in VOID:
            self.stack.append((tag, ctx, entry))

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        check(self.stack and self.stack[-1][0] == tag,
              "</%s> closes <%s>" % (tag, self.stack[-1][0] if self.stack else None))
        self.stack.pop()

    def handle_data(self, data):
        for _, _, entry in self.stack:
            if entry is not None:
                entry["text"] += data


def stats():
    st, body = http_get(BASE + "/stats.json")
    check(st == 200, "GET /stats.json: %d" % st)
    return json.loads(body)


def page():
    st, body = http_get(BASE + "/")
    check(st == 200, "GET /: %d" % st)
    return body


def iso(t):
    return 0 if t is None else calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))


def num(entry, attr="data-v"):
    """A figure's number; None for "nan" (no rate yet)."""
    v = entry[attr]
    return None if v == NAN else float(v)


def twins(j):
    """{(context, key): (value, kind)} the JSON says the page must show;
    kind "c" a counter (never goes back), "g" a gauge that stays put while
    the feed runs, "t" one that churns with every article (judged only
    once the feed is over), "f" a ratio (a gauge, compared to 1e-6)."""
    out = {}
    tot = j["counters"]
    t = ("s", "totals")
    out[(t, "offers")] = (tot["nntp_offers"], "c")
    out[(t, "accepted")] = (tot["nntp_articles_accepted"], "c")
    out[(t, "refused")] = (sum(j["rejected"].values()), "c")
    out[(t, "history_entries")] = (j["history"]["entries"], "t")
    out[(t, "history_load")] = (j["history"]["load"], "t")
    check("queue" in j and "levers" in j and "downstreams" in j,
          "the JSON has the queue, the levers and the downstreams: %r" % sorted(j))
    lag = sum(d["lag_records"] for d in j["queue"]["downstreams"].values())
    out[(t, "queue_lag")] = (lag, "t")
    drops = sum(p["rx_missed"] + p["rx_nombuf"] + p["rx_errors"] + p["tx_dropped"]
                for p in j["nic"])
    out[(t, "nic_drops")] = (drops, "c")
    for name, p in j["peers"].items():
        ctx, c = ("peer", name), p["counters"]
        out[(ctx, "sessions")] = (p["sessions"], "g")
        out[(ctx, "offers")] = (c.get("nntp_offers", 0), "c")
        out[(ctx, "accepted")] = (c.get("nntp_articles_accepted", 0), "c")
        out[(ctx, "refused")] = (sum(p["rejected"].values()), "c")
        for reason, n in p["rejected"].items():
            out[(ctx, "rejected." + reason)] = (n, "c")
        share = p["offers_first_share"]
        out[(ctx, "first_share")] = (NAN if share is None else share, "f")
        for k in ("injection_delay", "propagation_delay"):
            h = p["histograms"][k + "_seconds"]
            out[(ctx, k + ".count")] = (h["count"], "c")
            out[(ctx, k + ".sum")] = (h["sum"], "c")
        out[(ctx, "last_seen")] = (iso(p["last_seen"]), "c")
    for d in j.get("downstreams", []):
        ctx = ("downstream", d["name"])
        out[(ctx, "state")] = (d["state"], "g")
        for k in ("parked", "backlog_bytes"):
            out[(ctx, k)] = (d[k], "g")
        for k in ("records", "bytes", "seconds"):
            out[(ctx, "lag_" + k)] = (d["lag"][k], "t")
        for k in ("sent", "accepted", "refused", "not_wanted", "reconnects"):
            out[(ctx, k)] = (d[k], "c")
    h, ctx = j["history"], ("s", "history")
    out[(ctx, "entries")] = (h["entries"], "t")
    out[(ctx, "capacity")] = (h["capacity"], "g")
    out[(ctx, "load")] = (h["load"], "t")
    out[(ctx, "alarm")] = (int(h["alarm"]), "g")
    for state, n in h["by_state"].items():
        # final states only grow here (no expiry runs); transient ones churn
        out[(ctx, "by_state." + state)] = (n, "t" if state in ("offered", "accepting") else "c")
    for k in ("records", "bytes", "segments", "oldest_age_seconds"):
        out[(("s", "queue"), k)] = (j["queue"][k], "t")
    lv = j["levers"]
    out[(("s", "levers"), "throttled")] = (lv["throttled"] or "no", "g")
    for pz in lv["paused"]:
        out[(("pause", pz["peer"]), "remaining_seconds")] = (pz["remaining_seconds"], "g")
    out[(("s", "clock"), "clock_suspect")] = (int(j["clock_suspect"]), "g")
    ks = j["kernel_clock"]["synchronized"]
    out[(("s", "clock"), "kernel_synchronized")] = ("" if ks is None else int(ks), "g")
    out[(("s", "floodctld"), "writers")] = (j["writers"], "g")
    return out


def shown(p, key):
    """The page's value of a twin's key: data-v, or the text, or a delay's
    count or sum."""
    ctx, k = key
    attr = "data-v"
    for suffix in (".count", ".sum"):
        if k.endswith(suffix) and k.split(".")[0] in ("injection_delay", "propagation_delay"):
            k, attr = k[:-len(suffix)], "data-" + suffix[1:]
    e = p.fig.get((ctx, k))
    if e is None:
        fail("the page has no %r (figures: %r)" % (key, sorted(p.fig)[:40]))
    if attr not in e:
        return e["text"].strip()
    v = e[attr]
    return v if v in ("", NAN) else float(v)


def same(a, b, kind):
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    if kind == "f":
        return abs(float(a) - float(b)) < 1e-6
    return float(a) == float(b)


def compare(before, p, after, exact=False):
    """Every twin of A and B on the page P: counters between, gauges equal
    where A and B agree. Returns (figures judged, figures moving)."""
    ta, tb = twins(before), twins(after)
    judged = moving = 0
    for key, (vb, kind) in tb.items():
        got = shown(p, key)
        va = ta.get(key, (None, kind))[0]
        if exact:
            check(same(va, vb, kind), "%r moved after the feed: %r then %r" % (key, va, vb))
        elif kind == "t":
            moving += 1
            continue
        if kind == "c" and va is not None and not exact:
            check(float(va) <= float(got) <= float(vb),
                  "%r: the page shows %r, the JSON %r before and %r after" % (key, got, va, vb))
            judged += 1
        elif va is not None and same(va, vb, kind):
            check(same(got, vb, kind), "%r: the page shows %r, the JSON %r" % (key, got, vb))
            judged += 1
        else:
            moving += 1
    # every row of the JSON on the page, and no other
    check(sorted(p.rows["peer"]) == sorted(after["peers"]), "peer rows %r" % p.rows["peer"])
    check(sorted(p.rows["downstream"]) == sorted(d["name"] for d in after["downstreams"]),
          "downstream rows %r" % p.rows["downstream"])
    return judged, moving


NIC_KEYS = ("rx_packets", "rx_missed", "rx_nombuf", "rx_errors", "tx_packets", "tx_errors",
            "tx_dropped")


def ports_agree(before, p, after):
    """The page's port rows against the JSON's "nic" fetched before and
    after it: every counter between, the link as both say when they agree.
    Returns the ports compared."""
    ports = {n["port"]: n for n in after["nic"]}
    was = {n["port"]: n for n in before["nic"]}
    check(sorted(p.rows["port"]) == sorted(ports), "port rows %r, the JSON's %r" %
          (p.rows["port"], sorted(ports)))
    for name, n in ports.items():
        ctx = ("port", name)
        for k in NIC_KEYS:
            got = num(p.fig[(ctx, k)])
            check(was[name][k] <= got <= n[k], "port %s %s: the page %r, the JSON %r then %r"
                  % (name, k, got, was[name][k], n[k]))
        if was[name]["link_up"] == n["link_up"]:
            check(num(p.fig[(ctx, "link_up")]) == n["link_up"], "port %s link" % name)
    return sorted(ports)


def rate(p, peer):
    """A peer's offers/s on the page; None before the trend has two rows."""
    return num(p.fig[(("peer", peer), "offers_rate")])


def world(name, args=()):
    """floodctld (stats endpoint on 127.0.0.1:9119) and floodgate-host with
    peers near (127.0.0.1), far (127.0.0.2), idle (127.0.0.3), a downstream
    (countd) on relaykit.DOWN_PORT, in a network namespace of its own:
    (ctl, countd, host process)."""
    c = Ctl(name)
    c.netns()
    countd = relaykit.Countd(c.dir, args=["--delay-ms", "1"])
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer near]\naddress 127.0.0.1\nnewsgroups *\n"
             "[peer far]\naddress 127.0.0.2\nnewsgroups *\n"
             "[peer idle]\naddress 127.0.0.3\nnewsgroups *\n"
             "[persistence]\nwarmup 0\n"
             "[downstream down]\naddress 127.0.0.1:%d\nwindow 8\n" % (PORT, relaykit.DOWN_PORT),
             http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"] + list(args))
    countd.start()
    host, _ = c.start_host(PORT)
    return c, countd, host


def far_articles(n=5, prefix="far"):
    """far's n articles, an hour on the way, fed on one connection (239 each)."""
    arts = [("<%s%d@page.test>" % (prefix, i),
             hostlib.article("<%s%d@page.test>" % (prefix, i), age=3700, inj_age=3600))
            for i in range(n)]
    got = relaykit.feed(arts, src="127.0.0.2", addr=("127.0.0.1", PORT))
    check([code for _, code in got] == [239] * n, "far's articles: %r" % got)


def near_articles(stop, every=None):
    """near's articles until stop is set, one in ten too old; every(i) is
    called before article i (a pacing hook)."""
    i = 0
    while not stop.is_set():
        if every:
            every(i)
        mid = "<near%d@page.test>" % i
        yield mid, relaykit.make_article(mid, age=20 * 86400 if i % 10 == 9 else 300, size=600)
        i += 1
