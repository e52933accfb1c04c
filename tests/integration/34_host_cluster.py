#!/usr/bin/env python3
# timeout: 600
"""Several boxes as one (docs/scale.md, "Several boxes"): three
floodgate-host boxes, each fed the same articles by feedgen peers of its
own, with and without a shared Redis Cluster (three masters on loopback,
started here).

  alone      no [cluster]: every box accepts every wanted article, so the
             site's downstream would get each one three times (asserted:
             the cross-box duplicates are there to be removed)
  shared     [cluster] on every box: every wanted article is accepted
             exactly once across the three, and no claim fell back to a
             local decision
  away       the cluster stopped entirely: every box keeps serving from its
             own history (each feed completes; fallbacks counted), and
  back       once the cluster is back, shared decisions again: exactly once
             across the boxes, and the boxes say the cluster answers
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from hostlib import check, fail, in_netns, log  # noqa: E402

in_netns("fg-clu")
import clusterkit  # noqa: E402

BOXES = 3
BASE_PORT = 1119
ARTICLES = 600

CONFIG = """[site]
server-name box{n}.test.example
path-identity filter.test.example
listen 127.0.0.1:{port}
[rules]
cutoff 10d
retention 11d
[session]
offer-timeout 5s
[history]
capacity 100000
[peer local]
address 127.0.0.1
{cluster}
"""

CLUSTER = """[cluster]
seeds {seeds}
secret site-secret-1
box box{n}
timeout 2s
window 10m
"""


def box(n, seeds):
    return clusterkit.Box(n, BASE_PORT + n, CONFIG.format(
        n=n, port=BASE_PORT + n, cluster=CLUSTER.format(seeds=seeds, n=n) if seeds else ""),
        "fg-clu-box", args=["-t", "2"])


def feed_all(boxes, seed):
    """The same articles to every box at once, two peers each; feedgen's
    reports. Its model judges one server alone, so its verdict is not
    asked: the sums across the boxes are."""
    feeds = clusterkit.Feeds(boxes, [
        "--mode", "check", "--peers", "2", "--dups", "2", "--articles", str(ARTICLES),
        "--size", "2K", "--window", "16", "--seed", str(seed), "--cutoff", "10d",
        "--path-identity", "filter.test.example", "--retry-delay", "0.05",
        "--max-retries", "200", "--timeout", "240", "--no-progress", "--json"])
    out = feeds.check_finished()
    wanted = out[0]["expected_accepted"]
    check(wanted > ARTICLES // 2, "feedgen wants %d of %d" % (wanted, ARTICLES))
    accepted = sum(r["accepted"] for r in out)
    log("seed %d: %d wanted; accepted per box %s" % (seed, wanted, [r["accepted"] for r in out]))
    # the sets behind the counts: one lost and one doubled ID cancel out in
    # a sum, not here
    per_box = [feeds.outcomes(i) for i in range(len(boxes))]
    want = {m for m, (cls, _) in per_box[0].items() if cls == "wanted"}
    check(len(want) == wanted and all(
        {m for m, (cls, _) in o.items() if cls == "wanted"} == want for o in per_box),
        "every box's feed has the same %d wanted IDs" % wanted)
    took = []
    for i, o in enumerate(per_box):
        twice = [m for m, (_, n) in o.items() if n > 1]
        check(not twice, "box %d took an ID twice: %s" % (i, twice[:3]))
        took.append({m for m, (_, n) in o.items() if n >= 1})
    return wanted, accepted, took, want


def exactly_once_across(took, want, what):
    union = set().union(*took)
    check(union == want, "%s: the boxes took %d IDs, %d wanted; missing %s, unwanted %s"
          % (what, len(union), len(want), sorted(want - union)[:3], sorted(union - want)[:3]))
    both = sorted(m for m in union if sum(m in t for t in took) > 1)
    check(not both, "%s: %d IDs taken by two boxes or more, e.g. %s" % (what, len(both), both[:3]))


def every_box_all(took, want, what):
    for i, t in enumerate(took):
        check(t == want, "%s: box %d took %d of the %d wanted IDs (missing %s, unwanted %s)"
              % (what, i, len(t & want), len(want), sorted(want - t)[:3], sorted(t - want)[:3]))


def counters(boxes, name):
    return sum(b.stats().get(name, 0) for b in boxes)


def main():
    if not os.path.exists(clusterkit.FEEDGEN):
        fail("%s not built" % clusterkit.FEEDGEN)
    # alone: each box its own history
    boxes = [box(n, None) for n in range(BOXES)]
    wanted, accepted, took, want = feed_all(boxes, 101)
    every_box_all(took, want, "alone")
    check(accepted == BOXES * wanted,
          "without a cluster every box accepts every article: %d, want %d"
          % (accepted, BOXES * wanted))
    for b in boxes:
        b.stop()

    rc = clusterkit.RedisCluster(masters=3, replicas=0, base_port=7000)
    try:
        boxes = [box(n, rc.seeds()) for n in range(BOXES)]
        # shared: exactly once across the boxes, no fallback
        wanted, accepted, took, want = feed_all(boxes, 202)
        exactly_once_across(took, want, "shared")
        check(accepted == wanted, "with the cluster: accepted %d across the boxes, want "
              "exactly %d" % (accepted, wanted))
        st = [b.stats() for b in boxes]
        check(sum(s["nntp_cluster_fallbacks"] for s in st) == 0,
              "fallbacks while the cluster was up: %s" % [s["nntp_cluster_fallbacks"] for s in st])
        check(sum(s["nntp_cluster_wins"] for s in st) >= wanted, "wins below the articles")
        check(sum(s["nntp_cluster_losses"] for s in st) > 0, "no claim lost to another box")
        check(sum(s["cluster_settles"] for s in st) >= wanted, "outcomes not settled")
        check(all(s["cluster_answering"] == 1 and s["cluster_masters"] == 3 for s in st),
              "status: the cluster not answering or not mapped")
        check(all(s["cluster_digest_mismatch"] == 0 for s in st), "a digest mismatch")

        # away: the boxes decide alone, and keep serving
        rc.stop()
        wanted, accepted, took, want = feed_all(boxes, 303)
        every_box_all(took, want, "cluster away")
        check(accepted == BOXES * wanted,
              "cluster away: every box serves from its own history: %d, want %d"
              % (accepted, BOXES * wanted))
        st = [b.stats() for b in boxes]
        check(all(s["nntp_cluster_fallbacks"] > 0 for s in st), "no fallback counted")
        check(all(s["cluster_answering"] == 0 for s in st), "status still says answering")

        # back: shared decisions again
        rc.start_again()
        fgkit.wait_until(lambda: all(b.stats()["cluster_nodes_up"] == 3 for b in boxes), 60,
                         "every box to reconnect to the three nodes")
        fb = [b.stats()["nntp_cluster_fallbacks"] for b in boxes]
        wanted, accepted, took, want = feed_all(boxes, 404)
        exactly_once_across(took, want, "cluster back")
        check(accepted == wanted, "cluster back: accepted %d across the boxes, want %d"
              % (accepted, wanted))
        st = [b.stats() for b in boxes]
        check([s["nntp_cluster_fallbacks"] for s in st] == fb,
              "fallbacks after the cluster came back")
        check(all(s["cluster_answering"] == 1 for s in st), "status: not answering again")
        for b in boxes:
            b.stop()
    finally:
        rc.close()
    fgkit.passed("34_host_cluster")


main()
