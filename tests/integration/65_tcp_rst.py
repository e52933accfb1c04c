#!/usr/bin/env python3
# timeout: 120
"""A client resets its connection in the middle of an article: the module
tells the app (on_close, reason rst), the app releases the article's
in-flight history entry, every held segment is freed, and another
session may then offer the same ID again (238, not 431)."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, article, check, connect, log  # noqa: E402


def main():
    h = Harness("rst")
    try:
        art = article("<rst@test>", 200000)
        s = connect()
        r = Lines(s)
        check(r.line().startswith("200 "), "greeting")
        s.sendall(b"TAKETHIS <rst@test>\r\n" + art[:len(art) // 2])
        for _ in range(100):
            st = h.stats()
            if st["app_inflight_ids"] == 1 and st["app_article_bytes"] > 0:
                break
            time.sleep(0.05)
        check(st["app_inflight_ids"] == 1, "article never in flight")
        with connect() as o:
            ro = Lines(o)
            ro.line()
            o.sendall(b"CHECK <rst@test>\r\n")
            check(ro.line() == "431 <rst@test>", "in-flight ID not deferred")
            # RST: SO_LINGER with a zero timeout
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            for _ in range(100):
                st = h.stats()
                if st["tcp_close_rst"] >= 1:
                    break
                time.sleep(0.05)
            check(st["tcp_close_rst"] == 1, "no close by RST")
            check(st["app_close_rst"] == 1, "app not told about the RST")
            check(st["app_inflight_ids"] == 0, "in-flight entry not released")
            check(st["app_released_on_close"] == 1, "release not counted")
            check(st["taphost_segs_in_use"] == 0, "segments still held: %d" % st["taphost_segs_in_use"])
            o.sendall(b"CHECK <rst@test>\r\nQUIT\r\n")
            check(ro.line() == "238 <rst@test>", "ID not free again after the RST")
            check(ro.line() == "205 Bye", "QUIT")
        log("ok: RST mid-article released the in-flight entry and every segment")
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 65_tcp_rst")


main()
