#!/usr/bin/env python3
# timeout: 400
"""Faults at 1 % and 10 % on receive and on transmit (drop, duplicate,
reorder, from the module's own seeded knob): concurrent pipelined NNTP
sessions through the session engine still get exactly the right answers
(238 for every CHECK, 239 for every TAKETHIS), every article is accepted
once, and the module's own recovery counters moved — retransmissions for
transmit faults, the out-of-order queue and duplicate handling for
receive faults."""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, check, connect, log, nntp_session  # noqa: E402

SESSIONS = 4
CHECKS = 1000
ARTICLES = 24
ART_SIZE = 16384
MAX_ROUNDS = 6


def run_level(direction, pct, seed):
    spec = "%s-drop=%g,%s-dup=%g,%s-reorder=%g,seed=%d" % (
        direction, pct, direction, pct / 2, direction, pct / 2, seed)
    h = Harness("f%s%d" % (direction, int(pct)), "--fault", spec, "--rto-min-ms", "50")
    errors = []

    def client(k):
        try:
            ids = ["<f%s%g-%d-%d@test>" % (direction, pct, k, i) for i in range(CHECKS)]
            with connect(timeout=60) as s:
                nntp_session(s, ids, ids[:ARTICLES], art_size=ART_SIZE)
        except BaseException as e:  # noqa: B902 — reported below
            errors.append("session %d: %r" % (k, e))

    try:
        # rounds of concurrent sessions until the module's own recovery has
        # run (a 1 % fault may first hit only pure ACKs), at most MAX_ROUNDS
        for rnd in range(MAX_ROUNDS):
            th = [threading.Thread(target=client, args=(rnd * SESSIONS + k,))
                  for k in range(SESSIONS)]
            for t in th:
                t.start()
            for t in th:
                t.join()
            check(not errors, "; ".join(errors))
            st = h.stats()
            if direction == "tx":
                moved = st["tcp_retrans_segs"] + st["tcp_synack_retrans"]
            else:
                moved = st["tcp_rx_ooo"] + st["tcp_rx_dup_data"] + st["tcp_rx_out_of_window"]
            if moved:
                break
        injected = sum(st["net_fault_%s_%s" % (direction, k)] for k in ("drop", "dup", "reorder"))
        check(injected > 0, "no faults injected")
        check(moved > 0, "%s faults (%d) in %d rounds but the module's recovery never ran" % (
            direction, injected, MAX_ROUNDS))
        rounds = rnd + 1
        want = rounds * SESSIONS * ARTICLES
        check(st["nntp_articles_accepted"] == want and st["history_state:accepted"] == want,
              "articles accepted %d, in history %d, of %d" % (
                  st["nntp_articles_accepted"], st["history_state:accepted"], want))
        check(st["nntp_response:238"] == rounds * SESSIONS * CHECKS, "238s %d" % st["nntp_response:238"])
        check(st["nntp_articles_refused"] == 0 and st["nntp_articles_failed"] == 0,
              "articles refused %d, failed %d" % (st["nntp_articles_refused"],
                                                   st["nntp_articles_failed"]))
        # the kernel's client agrees to SACK: a bad block would be ours
        # misreading it (how often recovery ran is the fault knob's luck)
        check(st["tcp_sack_blocks_bad"] == 0, "SACK blocks refused: %d" % st["tcp_sack_blocks_bad"])
        log("ok %s %g%% (%d rounds): %d faults injected; retrans %d (rto %d, fast %d, SACK "
            "recoveries %d, their segments %d, lost again %d), ooo %d, dup data %d" % (
                direction, pct, rounds, injected, st["tcp_retrans_segs"], st["tcp_rto_expired"],
                st["tcp_fast_retrans"], st["tcp_sack_recoveries"], st["tcp_sack_rexmit_segs"],
                st["tcp_sack_rexmit_lost"], st["tcp_rx_ooo"], st["tcp_rx_dup_data"]))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")


def main():
    for i, (d, p) in enumerate((("rx", 1), ("tx", 1), ("rx", 10), ("tx", 10))):
        run_level(d, p, 1000 + i)
    log("PASS 61_tcp_faults")


main()
