#!/usr/bin/env python3
# timeout: 120
"""A client resets its connection in the middle of an article: TCP tells
tcpsess (on_close, reason rst), the engine ends the session, discards
the article (nothing of it accepted, no answer) and releases the history
entry the session held (its CHECK's 238 offer): a CHECK of that ID on
another connection gets 431 before the RST and 238 after it. Every
segment held for the sink is freed; the ID is then accepted from the
other connection."""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, article, check, connect, log  # noqa: E402


def wait_for(h, cond, what):
    return h.wait_stats(cond, what)


def main():
    h = Harness("rst")
    try:
        art = article("<rst@test>", 200000)
        s = connect()
        r = Lines(s)
        check(r.line().startswith("200 "), "greeting")
        s.sendall(b"CHECK <rst@test>\r\n")
        check(r.line() == "238 <rst@test>", "first offer")
        s.sendall(b"TAKETHIS <rst@test>\r\n" + art[:len(art) // 2])
        # the article is with the sink, its segments held against the window
        st = wait_for(h, lambda st: st["sink_open"] == 1 and st["sink_holds"] > 0 and
                      st["history_state:offered"] == 1, "article never in flight")
        with connect() as o:
            ro = Lines(o)
            ro.line()
            o.sendall(b"CHECK <rst@test>\r\n")
            check(ro.line() == "431 <rst@test>", "ID offered to the other connection not deferred")
            # RST: SO_LINGER with a zero timeout
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            st = wait_for(h, lambda st: st["tcp_close_rst"] >= 1 and st["sessions_open"] == 1,
                          "no close by RST")
            check(st["tcp_close_rst"] == 1, "closes by RST %d" % st["tcp_close_rst"])
            check(st["nntp_eof_mid_article"] == 1, "the engine saw no drop mid-article")
            check(st["nntp_offers_released"] == 1, "offer not released")
            check(st["history_state:offered"] == 0 and st["history_state:accepting"] == 0,
                  "history entry not released")
            check(st["sink_open"] == 0 and st["sink_discarded"] == 1, "article not discarded")
            check(st["nntp_articles"] == 0 and st["nntp_articles_accepted"] == 0,
                  "part of an article accepted")
            check(st["dp_holds_orphaned"] == 0, "holds outlived the connection")
            check(st["taphost_segs_in_use"] == 0, "segments still held: %d" % st["taphost_segs_in_use"])
            check(st["connections"] == 1, "connection records in use %d" % st["connections"])
            o.sendall(b"CHECK <rst@test>\r\n")
            check(ro.line() == "238 <rst@test>", "ID not free again after the RST")
            o.sendall(b"TAKETHIS <rst@test>\r\n" + art + b"QUIT\r\n")
            check(ro.line() == "239 <rst@test>", "article not accepted from the other connection")
            check(ro.line() == "205 Bye", "QUIT")
        st = wait_for(h, lambda st: st["connections"] == 0, "connections left")
        check(st["history_state:accepted"] == 1 and st["nntp_articles_accepted"] == 1,
              "accepted %d" % st["nntp_articles_accepted"])
        log("ok: RST mid-article released the offer and every held segment; the ID was "
            "then accepted from another connection")
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 65_tcp_rst")


main()
