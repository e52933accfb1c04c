#!/usr/bin/env python3
# timeout: 120
"""22_feedgen_sink — feedgen's downstream sink (--sink), its run of fixed
length (--duration), its 239 stamps (--accept-times, --sink-times) and the
offer multiplicity (--dups K:W,...) end to end, on loopback (stdlib only).

  1. peers and sink in one process, every article wanted and offered once:
     exit 0; the sink took exactly the accepted articles and exactly the
     octets the peers sent; the two stamp files name the same IDs, and
     each sink stamp precedes the peer's (the sink sends its 239 before
     the peer can read it: one clock, one process);
  2. the sink is no filter: offered by several peers (a multiplicity), its
     239 for every copy is a duplicate the checker names (exit 1), and it
     took every copy (sink articles = offers);
  3. --duration with --rate: the run ends after its seconds, judges only
     what it offered (exit 0, fewer offered than the model's articles, each
     offered one accepted);
  4. a multiplicity that cannot be is refused at the command line (exit 2).
"""
import json
import os
import socket
import subprocess
import sys

TOP = os.environ.get("FG_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
FEEDGEN = os.path.join(os.environ.get("FG_BUILD", os.path.join(TOP, "build/release")),
                       "bin/feedgen")
TMP = os.environ.get("FG_TEST_TMP", "/tmp")
fails = []


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        fails.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def feedgen(*args, timeout=90):
    port = free_port()
    cmd = [FEEDGEN, "--sink", "127.0.0.1:%d" % port, "--port", str(port), "--mode", "takethis",
           "--old", "0", "--future", "0", "--bad-id", "0", "--no-progress", "--json",
           "--sink-drain", "5"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stdout + p.stderr


def stamps(path):
    out = {}
    for line in open(path):
        mid, ns = line.split()
        out[mid] = int(ns)
    return out


def main():
    if not os.access(FEEDGEN, os.X_OK):
        print("FAIL: %s not built" % FEEDGEN)
        return 1
    d = os.path.join(TMP, "fg-sink-%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    down, peer = os.path.join(d, "down.times"), os.path.join(d, "peer.times")

    # 1. one copy of each article: the sink's counts are the peers'
    rc, r, err = feedgen("--peers", "3", "--dups", "1", "--articles", "300", "--size", "mix",
                         "--window", "4", "--sink-times", down, "--accept-times", peer)
    check(rc == 0 and r is not None, "one copy each: exit 0 (%s)" % (rc if r else err[-300:]))
    if r:
        s = r.get("sink", {})
        check(r["accepted"] == 300 == r["expected_accepted"], "every article accepted: %d"
              % r["accepted"])
        check(s.get("articles") == r["accepted"] and s.get("drained") is True,
              "the sink took the accepted articles: %s" % s)
        check(s.get("octets") == r["article_bytes"] > 0,
              "the sink took the octets the peers sent: %s / %d" % (s.get("octets"),
                                                                    r["article_bytes"]))
        check(r["accepted_bytes"] == r["article_bytes"], "accepted octets = sent octets")
        check(s.get("connections") == 3, "one sink connection per peer: %s" % s.get("connections"))
        ds, ps = stamps(down), stamps(peer)
        check(len(ds) == len(ps) == 300 and set(ds) == set(ps),
              "the stamp files name the same 300 IDs: %d / %d" % (len(ds), len(ps)))
        late = [m for m in ds if m in ps and ds[m] > ps[m]]
        check(not late, "every sink 239 stamped before the peer read it (%d not)" % len(late))

    # 2. a multiplicity against a server that takes every copy
    rc, r, err = feedgen("--peers", "4", "--dups", "1:0.5,4:0.5", "--articles", "200",
                         "--window", "4")
    check(rc == 1 and r is not None, "copies all taken: exit 1 (%s)" % rc)
    if r:
        check(any("duplicate" in m for m in r["first_mismatches"]),
              "the second 239 named as a duplicate")
        check(r["sink"]["articles"] == r["offers"] > 200,
              "the sink took every copy: %d of %d offers" % (r["sink"]["articles"], r["offers"]))
        check(r["params"]["dups_dist"] == "1:0.5000,4:0.5000", "the distribution is reported: %s"
              % r["params"]["dups_dist"])

    # 3. a run of fixed length: judged on what it offered
    rc, r, err = feedgen("--peers", "2", "--dups", "1", "--articles", "100000", "--rate", "40",
                         "--duration", "1")
    check(rc == 0 and r is not None, "--duration 1 at 40 offers/s: exit 0 (%s)"
          % (rc if r else err[-300:]))
    if r:
        check(0 < r["articles_offered"] < 1000 and r["accepted"] == r["articles_offered"],
              "%d of 100000 articles offered, each accepted" % r["articles_offered"])
        check(r["elapsed_s"] < 30, "ended after its duration: %.1f s" % r["elapsed_s"])

    # 4. refused at the command line
    for bad in ("1:1,1:2", "0", "2,3:1", "3:0"):
        p = subprocess.run([FEEDGEN, "--dups", bad, "--port", "1"], capture_output=True,
                           text=True, timeout=30)
        check(p.returncode == 2 and "--dups" in p.stderr, "--dups %s refused (exit %d)"
              % (bad, p.returncode))
    for f in (down, peer):
        if os.path.exists(f):
            os.unlink(f)
    os.rmdir(d)
    print("%s: %d failed" % ("PASS 22_feedgen_sink" if not fails else "FAIL 22_feedgen_sink",
                            len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
