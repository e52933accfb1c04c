#!/usr/bin/env python3
# timeout: 300
"""A peer's unanswered offers must not fill the table (issue 32).

Two peers of one floodgate-host, in a network namespace of its own:
`flood` (127.0.0.3) sends CHECKs of new IDs and never an article; `local`
(127.0.0.1) offers new IDs and sends each article after its 238. The
history holds 20,000 entries, the flood is 30,000 CHECKs on one
connection, and offer-timeout is an hour, so that nothing lapses while the
test runs, however loaded the machine.

1. Without the bound (`max-outstanding-offers` at its maximum) the
   flood's unanswered 238s pin the table full: local's new offers get 431
   and nntp_history_full counts them. The sign that the flood is big
   enough to hurt.
2. With `max-outstanding-offers 500`: the flood gets exactly its first 500
   CHECKs answered 238, then 431 for every other new ID, each counted as
   nntp_defer_outstanding (the peer's own counter, not local's); local's
   new offers, before, between and after the flood's batches, all get
   238 and their articles 239; nntp_history_full stays 0 and the table
   holds 500 offers. A TAKETHIS of one of the flood's IDs frees exactly
   one place, and its close releases them all.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import GREETING, Client, Host, article, check, in_netns, log  # noqa: E402

in_netns()

CAPACITY = 20000
FLOOD = 30000
BOUND = 500
MAX_BOUND = 16777216     # the key's maximum: no bound in practice
FLOOD_PEER = "[peer flood]\naddress 127.0.0.3\nmax-outstanding-offers %d\n"


def pipelined(c, data, n):
    """Send data from a thread while reading n answer lines here."""
    w = threading.Thread(target=c.send, args=(data,))
    w.start()
    got = c.lines(n)
    w.join()
    return got


def checks(c, ids):
    return pipelined(c, "".join("CHECK %s\r\n" % i for i in ids).encode(), len(ids))


def codes(answers, ids):
    """The answer codes, each checked to echo its ID."""
    out = []
    for a, i in zip(answers, ids):
        check(a.endswith((" %s\r\n" % i).encode()), "answer %r to CHECK %s" % (a, i))
        out.append(int(a[:3]))
    return out


def local_round(c, tag, n=300):
    """n new IDs offered by local: every CHECK 238, every article 239."""
    ids = ["<%s.%d@local.test>" % (tag, k) for k in range(n)]
    got = codes(checks(c, ids), ids)
    check(got == [238] * n, "local's new offers (%s): %d of %d got 238, the others %s" % (
        tag, got.count(238), n, sorted(set(got) - {238})))
    data = b"".join(b"TAKETHIS " + i.encode() + b"\r\n" + article(i) for i in ids)
    got = pipelined(c, data, n)
    check(got == [("239 %s\r\n" % i).encode() for i in ids], "local's articles (%s)" % tag)


def flood_ids(lo, hi):
    return ["<f%d@flood.test>" % k for k in range(lo, hi)]


def connect(src):
    c = Client(src=src, timeout=60)
    c.expect(GREETING)
    return c


def unbounded():
    host = Host(session="offer-timeout 1h", extra=FLOOD_PEER % MAX_BOUND, capacity=CAPACITY)
    f, loc = connect("127.0.0.3"), connect("127.0.0.1")
    ids = flood_ids(0, FLOOD)
    got = codes(checks(f, ids), ids)
    ids = ["<u%d@local.test>" % k for k in range(300)]
    lgot = codes(checks(loc, ids), ids)
    st = host.stats()
    log("unbounded: the flood got %d 238s; local %d 431s of %d; nntp_history_full %d" % (
        got.count(238), lgot.count(431), len(lgot), st["nntp_history_full"]))
    check(st["nntp_defer_outstanding"] == 0, "no bound in the way")
    check(got.count(238) < FLOOD and
          st["history_state:offered"] == got.count(238) + lgot.count(238),
          "the flood's 238s pin the table: %d" % st["history_state:offered"])
    check(lgot.count(431) > 0 and st["nntp_history_full"] > 0,
          "without the bound the flood keeps local's offers out of a full table")
    f.close()
    loc.close()
    host.stop()


def bounded():
    host = Host(session="offer-timeout 1h", extra=FLOOD_PEER % BOUND, capacity=CAPACITY)
    f, loc = connect("127.0.0.3"), connect("127.0.0.1")
    local_round(loc, "a")
    first = 10000
    ids = flood_ids(0, first)
    got = codes(checks(f, ids), ids)
    check(got == [238] * BOUND + [431] * (first - BOUND),
          "the flood's first batch: exactly %d 238s, then 431 (238s: %d)" % (
              BOUND, got.count(238)))
    local_round(loc, "b")
    ids = flood_ids(first, FLOOD)
    got = codes(checks(f, ids), ids)
    check(got == [431] * (FLOOD - first), "the flood's second batch: all 431")
    local_round(loc, "c")
    st = host.stats()
    check(st["nntp_defer_outstanding"] == FLOOD - BOUND,
          "nntp_defer_outstanding %d, want %d" % (st["nntp_defer_outstanding"], FLOOD - BOUND))
    check(st["peer:flood:nntp_defer_outstanding"] == FLOOD - BOUND and
          st.get("peer:local:nntp_defer_outstanding", 0) == 0, "counted for the flooding peer")
    check(st["nntp_history_full"] == 0, "nntp_history_full %d" % st["nntp_history_full"])
    check(st["history_state:offered"] == BOUND, "offered %d" % st["history_state:offered"])
    # an article for one of its offers frees one place
    f.send(b"TAKETHIS <f7@flood.test>\r\n" + article("<f7@flood.test>"))
    f.expect("239 <f7@flood.test>\r\n")
    ids = ["<g1@flood.test>", "<g2@flood.test>"]
    check(codes(checks(f, ids), ids) == [238, 431], "one place freed by the article")
    local_round(loc, "d")
    st = host.stats()
    check(st["nntp_defer_outstanding"] == FLOOD - BOUND + 1, "one more deferred")
    check(st["history_state:offered"] == BOUND, "offered %d" % st["history_state:offered"])
    f.send("QUIT\r\n")
    f.expect("205 Bye\r\n")
    f.close()
    host.wait_stats(lambda s: s["history_state:offered"] == 0,
                    "the flood's offers released at its close")
    loc.close()
    st = host.stop()
    check(st["nntp_history_full"] == 0 and st["nntp_response:239"] == 4 * 300 + 1,
          "239s %d" % st["nntp_response:239"])


def main():
    unbounded()
    bounded()
    print("PASS: 37_host_offer_flood")


main()
