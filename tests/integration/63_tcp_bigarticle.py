#!/usr/bin/env python3
# timeout: 300
"""A 50 MB article through TAKETHIS: the engine streams it to the (null)
sink, its config allowing 60 MB articles, and answers 239; the same ID
again is drained without the sink and refused (439), and a 61 MB one is
drained past the limit and refused as oversize (439). Memory stays
bounded by the windows and the engine's header copy (not by the
articles), and the transfer rate is printed. The 50 MB runs use the null
sink (the in-memory one keeps the text). First, 600 KB articles into the
default sink, which holds segments: a connection holds at most half its
window and the rest is copied, so an article larger than the window
completes (docs/tcp.md, "Hold budget")."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, article, check, connect, log  # noqa: E402

SIZE = 50 * 1000 * 1000


def held_sink():
    h = Harness("held")
    try:
        with connect(timeout=60) as s:
            r = Lines(s)
            check(r.line().startswith("200 "), "greeting")
            for i in range(3):
                mid = "<held%d@test>" % i
                s.sendall(b"TAKETHIS " + mid.encode() + b"\r\n" + article(mid, 600 * 1000))
                check(r.line() == "239 " + mid, "600 KB article %d not accepted" % i)
        st = h.stats()
        check(st["sink_holds"] > 0 and st["sink_copies"] > 0,
              "holds %d, copies %d" % (st["sink_holds"], st["sink_copies"]))
        log("ok: three 600 KB articles through the holding sink (%d holds, %d copies)" % (
            st["sink_holds"], st["sink_copies"]))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")


def main():
    held_sink()
    h = Harness("big", "--sink", "null", rules="max-article-size 60000000")
    try:
        art = article("<big@test>", SIZE)
        rss0 = h.stats()["taphost_rss_kb"]
        with connect(timeout=120) as s:
            r = Lines(s)
            check(r.line().startswith("200 "), "greeting")
            t0 = time.time()
            s.sendall(b"TAKETHIS <big@test>\r\n" + art)
            check(r.line() == "239 <big@test>", "article not accepted")
            dt = time.time() - t0
            s.sendall(b"TAKETHIS <big@test>\r\n" + art)
            check(r.line() == "439 <big@test>", "second copy not refused")
            s.sendall(b"TAKETHIS <huge@test>\r\n" + article("<huge@test>", 61 * 1000 * 1000) +
                      b"QUIT\r\n")
            check(r.line() == "439 <huge@test>", "article over the limit not refused")
            check(r.line() == "205 Bye", "QUIT")
        st = h.stats()
        check(st["nntp_article_bytes"] >= 2 * SIZE, "article bytes %d" % st["nntp_article_bytes"])
        check(st["nntp_articles_accepted"] == 1 and st["nntp_drained_known"] == 1,
              "accepted %d, drained %d" % (st["nntp_articles_accepted"], st["nntp_drained_known"]))
        check(st["rejected:oversize"] == 1 and st["nntp_drained_oversize"] == 1,
              "oversize %d, drained %d" % (st["rejected:oversize"], st["nntp_drained_oversize"]))
        check(st["tcp_rx_bytes"] >= 2 * len(art), "rx bytes %d" % st["tcp_rx_bytes"])
        grew = st["taphost_rss_kb"] - rss0
        # the receive window (256 KiB) bounds what is held, not the articles
        check(grew < 32 * 1024, "memory grew by %d kB for 161 MB of articles" % grew)
        log("ok: %d-byte article in %.2f s (%.1f MB/s), rss grew %d kB" % (
            len(art), dt, len(art) / dt / 1e6, grew))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 63_tcp_bigarticle")


main()
