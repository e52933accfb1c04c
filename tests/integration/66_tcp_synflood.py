#!/usr/bin/env python3
# timeout: 300
"""SYN flood from a raw socket (spoofed sources across a /16, then one
source): the SYN backlog fills to its bound, the rest is answered with SYN
cookies (or counted against the per-peer bound), memory does not grow,
and real clients connect and complete NNTP sessions with the engine while
the flood runs — through a cookie when the backlog is full; no flooded
SYN ever becomes a session."""
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from fgtcp import MODULE_ADDR, Harness, check, connect, log, nntp_session  # noqa: E402

FLOOD = 30000


def syn(src, sport, seq):
    dst = socket.inet_aton(MODULE_ADDR)
    tcp = struct.pack("!HHIIBBHHH", sport, 119, seq, 0, 6 << 4, 0x02, 65535, 0, 0)
    opts = struct.pack("!BBH", 2, 4, 1460) + b"\x01\x03\x03\x07"
    tcp = tcp[:12] + bytes([(20 + len(opts)) // 4 << 4]) + tcp[13:]
    seg = tcp + opts
    ph = src + dst + struct.pack("!BBH", 0, 6, len(seg))
    c = fgkit.inet_csum(ph + seg)
    seg = seg[:16] + struct.pack("!H", c) + seg[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), 0, 0, 64, 6, 0, src, dst)
    return ip + seg


def flood(n, sources, stop):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    rnd = random.Random(7)
    sent = 0
    while sent < n and not stop.is_set():
        src = socket.inet_aton(rnd.choice(sources))
        try:
            s.sendto(syn(src, rnd.randrange(1024, 65535), rnd.getrandbits(32)), (MODULE_ADDR, 0))
            sent += 1
        except OSError:
            time.sleep(0.001)   # the tap queue is full: let the harness drain it
    s.close()
    return sent


def main():
    h = Harness("flood", "--syn-backlog", "128", "--syn-backlog-per-peer", "8",
                "--time-wait-ms", "100")
    try:
        rss0 = h.stats()["taphost_rss_kb"]
        # a ring as long as both floods on the tap: the kernel queues every
        # SYN until the harness reads it, so all that were sent arrive (at
        # the default 500 the tun drops what a loaded machine does not read)
        subprocess.run(["ip", "link", "set", "fgt0", "txqueuelen", str(FLOOD + 4000)],
                       check=True)
        # one source first: the per-peer bound (8) holds, the rest are cookies
        flood(2000, ["198.19.77.77"], threading.Event())
        one = h.wait_stats(lambda st: st["tcp_syn_peer_full"] > 0, "the per-peer bound to be hit")
        check(one["taphost_conns_in_use"] <= 8, "one peer holds %d blocks" % one["taphost_conns_in_use"])
        sources = ["198.19.%d.%d" % (random.Random(i).randrange(256), 1 + i % 250)
                   for i in range(2000)]
        stop = threading.Event()
        result = {}
        th = threading.Thread(target=lambda: result.update(n=flood(FLOOD, sources, stop)))
        th.start()
        # the real clients come once the flood is under way
        h.wait_stats(lambda st: st["tcp_syn_rx"] >= one["tcp_syn_rx"] + 500 or not th.is_alive(),
                     "the flood to be under way")
        ok = 0
        while th.is_alive() or ok < 3:
            with connect(timeout=30) as s:
                ids = ["<flood%d-%d@test>" % (ok, i) for i in range(20)]
                nntp_session(s, ids, ids[:2])
            ok += 1
            time.sleep(0.05)
        th.join()
        # the positive sign that the flood had its chance: every SYN of both
        # floods was seen (the real sessions' SYNs come on top)
        mid = h.wait_stats(lambda st: st["tcp_syn_rx"] >= 2000 + result["n"],
                           "every SYN of the flood to reach the harness")
        check(ok >= 3, "only %d real sessions during the flood" % ok)
        check(result["n"] == FLOOD, "the flood sent %d of %d SYNs" % (result["n"], FLOOD))
        check(mid["tcp_syn_backlog_full"] > 0, "backlog never full")
        check(mid["tcp_syncookies_sent"] > 0, "no SYN cookie sent")
        # the claim of the head comment: a real client came in through a
        # cookie (only a real client answers a SYN-ACK: a spoofed source
        # never returns one), so the backlog was full as it connected
        check(mid["tcp_syncookies_ok"] > 0, "no real client came through a cookie "
              "(%d real sessions during the flood, %d cookies sent)"
              % (ok, mid["tcp_syncookies_sent"]))
        check(mid["taphost_conns_in_use"] <= 128 + 16, "blocks in use %d" % mid["taphost_conns_in_use"])
        st = mid
        grew = st["taphost_rss_kb"] - rss0
        check(st["tcp_syn_peer_full"] > 0, "per-peer bound never hit")
        check(grew < 8 * 1024, "memory grew by %d kB under the flood" % grew)
        with connect() as s:
            nntp_session(s, ["<after@test>"])
        # every real session closed (the last one's FIN was seen by the
        # client in nntp_session; the engine's side closes with it)
        st = h.wait_stats(lambda st: st["sessions_open"] == 0 and
                          st["nntp_sessions_opened"] >= ok + 1, "the sessions to close")
        check(st["nntp_sessions_opened"] == ok + 1, "sessions %d for %d real clients" % (
            st["nntp_sessions_opened"], ok + 1))
        check(st["nntp_articles_accepted"] == 2 * ok, "articles %d" % st["nntp_articles_accepted"])
        check(st["sessions_open"] == 0, "sessions open %d" % st["sessions_open"])
        log("ok: %d SYNs sent, %d seen; backlog full %d, per-peer full %d, cookies %d (%d came "
            "back valid); %d real sessions during the flood; rss grew %d kB" % (
                result.get("n", 0) + 2000, st["tcp_syn_rx"], st["tcp_syn_backlog_full"],
                st["tcp_syn_peer_full"], st["tcp_syncookies_sent"], st["tcp_syncookies_ok"], ok,
                grew))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 66_tcp_synflood")


main()
