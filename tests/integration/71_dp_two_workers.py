#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""71_dp_two_workers — a tap with two queues, two worker lcores.

Two peers (feeder-a from 198.18.0.1, feeder-b from 198.18.0.3) connect
until each has a connection on a different worker (`peers` says where a
connection lives: the kernel's tun driver spreads flows over the queues).
Then both offer the same Message-IDs at the same moment: first as TAKETHIS
(innfeed's no-CHECK mode), then as CHECK followed by TAKETHIS of what was
wanted. The history is shared, the sessions are not: every ID must get
exactly one 239 between the two, the other copy 439 (or 431/438 to its
CHECK), and both workers must have done part of the work.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, fail, log  # noqa: E402

N = 400
CHUNK = 20	# articles per send in the TAKETHIS race


def conns_on_workers(w):
    """(sock_a, sock_b) from the two peers on different workers."""
    socks = {"198.18.0.1": [], "198.18.0.3": []}
    for _ in range(8):
        for src in socks:
            s = fgdp.connect(src)
            r = fgdp.Lines(s)
            check(r.line().startswith("200 "), "no greeting")
            socks[src].append((s, r))
        where = {}
        for c in w.dp_json("peers")["connections"]:
            where[(c["remote"].split(":")[0], int(c["remote"].split(":")[1]))] = c["worker"]
        for sa, ra in socks["198.18.0.1"]:
            for sb, rb in socks["198.18.0.3"]:
                wa = where.get(("198.18.0.1", sa.getsockname()[1]))
                wb = where.get(("198.18.0.3", sb.getsockname()[1]))
                if wa is not None and wb is not None and wa != wb:
                    for src in socks:
                        for s, _ in socks[src]:
                            if s not in (sa, sb):
                                s.sendall(b"QUIT\r\n")
                                s.close()
                    log("feeder-a on worker %d, feeder-b on worker %d" % (wa, wb))
                    return (sa, ra), (sb, rb)
    fail("16 connections all landed on one worker")


def race_takethis(conn, ids, answers, step=None):
    """The articles go in chunks of CHUNK, each sent as the other peer sends
    its own (step: a barrier of the two threads): the dataplane's receive
    window (2 MiB) takes all 400 of one peer at once, so unpaced sends would
    let whichever thread runs first deliver everything before the other
    begins, and there would be no race."""
    s, r = conn
    out = [b"MODE STREAM\r\n"]
    for i in ids:
        out += [b"TAKETHIS %s\r\n" % i.encode(), fgdp.article(i, body=1500)]
    for k in range(0, len(out), 2 * CHUNK):
        if step:
            step.wait(30)
        s.sendall(b"".join(out[k:k + 2 * CHUNK]))
    check(r.line().startswith("203"), "MODE STREAM")
    for _ in ids:
        code, _, arg = r.line().partition(" ")
        answers.append((code, arg))


def race_check(conn, ids, answers, step=None):
    s, r = conn
    s.sendall(b"".join(b"CHECK %s\r\n" % i.encode() for i in ids))
    wanted = []
    for _ in ids:
        code, _, arg = r.line().partition(" ")
        answers.append((code, arg))
        if code == "238":
            wanted.append(arg)
    s.sendall(b"".join(b"TAKETHIS %s\r\n" % i.encode() + fgdp.article(i, body=800)
                       for i in wanted))
    for _ in wanted:
        code, _, arg = r.line().partition(" ")
        answers.append((code, arg))


def race(fn, a, b, ids):
    ans_a, ans_b = [], []
    step = threading.Barrier(2)
    ta = threading.Thread(target=fn, args=(a, ids, ans_a, step))
    tb = threading.Thread(target=fn, args=(b, ids, ans_b, step))
    ta.start()
    tb.start()
    ta.join(60)
    tb.join(60)
    check(not ta.is_alive() and not tb.is_alive(), "a client hung")
    return ans_a + ans_b


def exactly_one_239(answers, ids, other):
    by_id = {i: [] for i in ids}
    for code, arg in answers:
        check(arg in by_id, "answer for an unknown ID: %s %s" % (code, arg))
        by_id[arg].append(code)
    for i, codes in by_id.items():
        check(codes.count("239") == 1, "%s got %s" % (i, codes))
        check(all(c == "239" or c in other for c in codes), "%s got %s" % (i, codes))


def main():
    w = fgdp.World("2w", workers=2, rx_queues=2)
    w.start_ctld()
    w.start_dp()
    a, b = conns_on_workers(w)
    pid = os.getpid()
    ids = ["<t%d.%d@race.test>" % (n, pid) for n in range(N)]
    exactly_one_239(race(race_takethis, a, b, ids), ids, {"439"})
    ids = ["<c%d.%d@race.test>" % (n, pid) for n in range(N)]
    exactly_one_239(race(race_check, a, b, ids), ids, {"238", "431", "438"})
    for s, r in (a, b):
        s.sendall(b"QUIT\r\n")
        check(r.line().startswith("205"), "QUIT")
        s.close()
    st = w.stats()
    check(st["nntp_articles_accepted"] == 2 * N, "accepted %d" % st["nntp_articles_accepted"])
    per_worker = [int(st.get("worker:%d:sessions" % i, 0)) for i in range(2)]
    peers = w.dp_json("peers")["peers"]
    pa = [p for p in peers if p["name"] == "feeder-a"][0]
    pb = [p for p in peers if p["name"] == "feeder-b"][0]
    check(pa["239"] > 0 and pb["239"] > 0 and pa["239"] + pb["239"] == 2 * N,
          "239s by peer: %d + %d" % (pa["239"], pb["239"]))
    log("239s: feeder-a %d, feeder-b %d (sessions now per worker %s)"
        % (pa["239"], pb["239"], per_worker))
    w.stop_dp()
    w.check_logs()
    fgdp.passed("71_dp_two_workers")


if __name__ == "__main__":
    main()
