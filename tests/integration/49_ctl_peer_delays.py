#!/usr/bin/env python3
# timeout: 300
"""49_ctl_peer_delays — seed 002 per peer, from a known feed (issue 16).

In a network namespace of its own: floodctld and floodgate-host
--floodctld with two peers, told apart by their source address:
  "near" (127.0.0.1) CHECKs 10 new IDs (238), sends their articles
     (Injection-Date 20 s old, Date 20 s old: no offline time), then
     CHECKs the 8 IDs "far" sent first (438);
  "far" (127.0.0.2) TAKETHISes 8 new IDs without a CHECK: each
     Injection-Date an hour old, each Date five minutes before it (a feed
     an hour behind, of articles that sat offline), then CHECKs 5 of
     near's IDs (438).
So near made 18 offers, 10 first (0.556); far 13, 8 first (0.615); near's
articles took 16..31 s to arrive, far's 2048..4095 s, and far's waited
exactly 300 s before injection. /metrics (promtool checks it), the JSON
export, `floodctl stats --peer NAME` (table and --json) show exactly that
per peer, while the site-wide histograms hold both.
"""
import json
import subprocess

from ctlkit import Ctl, check, http_get, log, passed, prom_parse, prom_value, wait_for
from hostlib import article, streaming

PORT = 1119
BASE = "http://127.0.0.1:9119"


def nntp(source):
    return streaming(source, PORT)


def cmd(cl, line, data=b""):
    return cl.cmd(line, data)


def scrape():
    st, body = http_get(BASE + "/metrics")
    check(st == 200, "GET /metrics: %d" % st)
    return body


def main():
    c = Ctl("peerdelays")
    c.netns()
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer near]\naddress 127.0.0.1\nnewsgroups *\n"
             "[peer far]\naddress 127.0.0.2\nnewsgroups *\n" % PORT, http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])
    host, _ = c.start_host(PORT)

    near, far = nntp("127.0.0.1"), nntp("127.0.0.2")
    nids = ["<n%d@delays.test>" % i for i in range(10)]
    fids = ["<f%d@delays.test>" % i for i in range(8)]
    for mid in nids:
        check(cmd(near, "CHECK " + mid) == "238 " + mid, "238 for near's " + mid)
    for mid in nids:
        r = cmd(near, "TAKETHIS " + mid, article(mid, age=20, inj_age=20))
        check(r == "239 " + mid, "239 for near's %s: %r" % (mid, r))
    for mid in fids:
        r = cmd(far, "TAKETHIS " + mid, article(mid, age=3900, inj_age=3600))
        check(r == "239 " + mid, "239 for far's %s: %r" % (mid, r))
    for mid in fids:
        check(cmd(near, "CHECK " + mid) == "438 " + mid, "438 to near for far's " + mid)
    for mid in nids[:5]:
        check(cmd(far, "CHECK " + mid) == "438 " + mid, "438 to far for near's " + mid)
    for cl in (near, far):
        check(cmd(cl, "QUIT").startswith("205"), "QUIT")
        cl.close()

    # the host publishes its counters about once a second
    wait_for(lambda: prom_value(prom_parse(scrape()), "floodgate_peer_nntp_offers_total",
                                peer="far") == 13, "far's offers published")
    body = scrape()
    p = subprocess.run(["promtool", "check", "metrics"], input=body.encode(), capture_output=True)
    check(p.returncode == 0, "promtool check metrics: %s %s" % (p.stdout, p.stderr))
    m = prom_parse(body)
    want = {
        ("floodgate_peer_nntp_offers_total", "near"): 18,
        ("floodgate_peer_nntp_offers_first_total", "near"): 10,
        ("floodgate_peer_nntp_offers_first_total", "far"): 8,
        # near: 20 s old at the send, arrival a moment later: 16..31 s
        ("floodgate_peer_propagation_delay_seconds_bucket", "near", "15"): 0,
        ("floodgate_peer_propagation_delay_seconds_bucket", "near", "31"): 10,
        ("floodgate_peer_propagation_delay_seconds_count", "near"): 10,
        ("floodgate_peer_injection_delay_seconds_bucket", "near", "0"): 10,
        ("floodgate_peer_injection_delay_seconds_sum", "near"): 0,
        # far: an hour behind, 300 s offline
        ("floodgate_peer_propagation_delay_seconds_bucket", "far", "2047"): 0,
        ("floodgate_peer_propagation_delay_seconds_bucket", "far", "4095"): 8,
        ("floodgate_peer_injection_delay_seconds_bucket", "far", "255"): 0,
        ("floodgate_peer_injection_delay_seconds_bucket", "far", "511"): 8,
        ("floodgate_peer_injection_delay_seconds_sum", "far"): 2400,
        # site-wide: both
        ("floodgate_propagation_delay_seconds_count",): 18,
        ("floodgate_injection_delay_seconds_sum",): 2400,
    }
    for key, v in want.items():
        labels = {}
        if len(key) > 1:
            labels["peer"] = key[1]
        if len(key) > 2:
            labels["le"] = key[2]
        got = prom_value(m, key[0], **labels)
        check(got == v, "%s%r = %r, want %r" % (key[0], labels, got, v))
    far_sum = prom_value(m, "floodgate_peer_propagation_delay_seconds_sum", peer="far")
    check(8 * 3600 <= far_sum <= 8 * 3660, "far's propagation sum %r" % far_sum)
    for peer, share in (("near", 10 / 18), ("far", 8 / 13)):
        got = prom_value(m, "floodgate_peer_offers_first_ratio", peer=peer)
        check(abs(got - share) < 1e-5, "%s's first share %r, want %r" % (peer, got, share))

    # floodctl stats --peer: the same figures, table and JSON
    rc, out, err = c.ctl("stats", "--peer", "far")
    check(rc == 0 and out.startswith("peer far\n") and "peer near" not in out,
          "stats --peer far: %r %r" % (out, err))
    check("  offered first: 61.5 % of its offers\n" in out, "far's share in the table: %r" % out)
    check("injection delay (Injection-Date - Date) count 8, negative 0, mean 300.0 s" in out,
          "far's injection delay in the table: %r" % out)
    rc, j = c.ctl_json("stats", "--peer", "near")
    check(rc == 0 and j["peer"] == "near" and j["counters"]["nntp_offers"] == 18 and
          j["histograms"]["propagation_delay_seconds"]["buckets"] == [[31, 10]] and
          abs(j["offers_first_share"] - 10 / 18) < 1e-5, "stats --peer near --json: %r" % j)
    rc, out, err = c.ctl("stats", "--peer", "nobody")
    check(rc == 1 and "no peer of that name" in out + err, "an unknown peer: %r %r" % (rc, out + err))
    rc, out, err = c.ctl("stats", "--peer", "far", "--prom")
    check(rc == 1 and "--prom" in err, "--peer with --prom refused: %r %r" % (rc, err))
    st, body = http_get(BASE + "/stats.json")
    j = json.loads(body)["peers"]["far"]
    check(j["histograms"]["injection_delay_seconds"]["sum"] == 2400 and
          j["counters"]["nntp_offers_first"] == 8, "/stats.json per peer: %r" % j)

    host.terminate()
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    c.stop()
    log("per peer: near %d offers, %d first; far %d offers, %d first, %.0f s behind" % (
        18, 10, 13, 8, far_sum / 8))
    passed("49_ctl_peer_delays")


main()
