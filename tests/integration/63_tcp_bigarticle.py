#!/usr/bin/env python3
# timeout: 300
"""A 50 MB article through TAKETHIS: read to its terminating dot by the
app, answered 239; the module's memory stays bounded by its windows (not
by the article), and the transfer rate is printed."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, article, check, connect, log  # noqa: E402

SIZE = 50 * 1000 * 1000


def main():
    h = Harness("big")
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
            s.sendall(b"QUIT\r\n")
            check(r.line() == "205 Bye", "QUIT")
        st = h.stats()
        check(st["app_article_bytes"] >= SIZE, "article bytes %d" % st["app_article_bytes"])
        check(st["tcp_rx_bytes"] >= len(art), "rx bytes %d" % st["tcp_rx_bytes"])
        grew = st["taphost_rss_kb"] - rss0
        # the receive window (256 KiB) bounds what is held, not the article
        check(grew < 32 * 1024, "memory grew by %d kB for a 50 MB article" % grew)
        log("ok: %d-byte article in %.2f s (%.1f MB/s), rss grew %d kB" % (
            len(art), dt, len(art) / dt / 1e6, grew))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 63_tcp_bigarticle")


main()
