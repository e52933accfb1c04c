#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""72_dp_synflood6 — 300 idle IPv6 connections and a SYN flood from spoofed
IPv6 sources, while a healthy IPv6 peer feeds.

feeder-b (fd00:fd::3) opens 300 connections and leaves them idle. A raw
socket then sends SYNs from random addresses in a thousand /64s (the SYN
backlog fills, the rest is answered with SYN cookies) while feeder-a
(fd00:fd::1) runs a feedgen feed over IPv6 whose every answer must match
its model. Afterwards each of the 300 idle connections still answers a
CHECK, no flooded SYN became a session, and the log is clean.
"""
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

IDLE = 300
FLOOD = 20000


def syn6(src, dst, sport, seq):
    """An IPv6 header and a SYN with MSS and window scale, checksummed."""
    opts = struct.pack("!BBH", 2, 4, 1440) + b"\x01\x03\x03\x07"
    seg = struct.pack("!HHIIBBHHH", sport, 119, seq, 0, (20 + len(opts)) // 4 << 4, 0x02,
                      65535, 0, 0) + opts
    ph = src + dst + struct.pack("!IxxxB", len(seg), 6)
    seg = seg[:16] + struct.pack("!H", fgkit.inet_csum(ph + seg)) + seg[18:]
    return struct.pack("!IHBB", 6 << 28, len(seg), 6, 64) + src + dst + seg


def flood(n, stop, result):
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    dst = socket.inet_pton(socket.AF_INET6, fgdp.DP_ADDR6)
    rnd = random.Random(17)
    nets = [b"\xfd\x00\x00\xfd" + struct.pack("!I", rnd.getrandbits(32)) for _ in range(1000)]
    sent = 0
    while sent < n and not stop.is_set():
        src = rnd.choice(nets) + struct.pack("!Q", rnd.getrandbits(64))
        try:
            s.sendto(syn6(src, dst, rnd.randrange(1024, 65535), rnd.getrandbits(32)),
                     (fgdp.DP_ADDR6, 0))
            sent += 1
        except OSError:
            time.sleep(0.001)   # the tap's queue is full: let the dataplane drain it
    s.close()
    result["sent"] = sent


def main():
    w = fgdp.World("flood6", v6=True)
    w.start_ctld()
    w.start_dp()
    idle = []
    for _ in range(IDLE):
        s = fgdp.connect(fgdp.KERNEL_ADDRS6[1], dst=fgdp.DP_ADDR6)
        r = fgdp.Lines(s)
        check(r.line().startswith("200 "), "no greeting on idle connection %d" % len(idle))
        idle.append((s, r))
    # a ring as long as the flood on the tap: the kernel queues every SYN
    # until floodgate reads it, so all that were sent arrive (at the
    # default 500 the tun drops what a loaded machine does not read in time)
    subprocess.run(["ip", "link", "set", "fgd0", "txqueuelen", str(FLOOD + 1000)], check=True)
    st0 = w.stats()
    stop, result = threading.Event(), {}
    th = threading.Thread(target=flood, args=(FLOOD, stop, result))
    th.start()
    w.wait_stats(lambda st: st["tcp_syn_rx"] >= st0["tcp_syn_rx"] + 500 or not th.is_alive(),
                 "the flood to be under way")
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR6,
                         "--source", fgdp.KERNEL_ADDRS6[0], "--peers", "1", "--conns", "2",
                         "--articles", "2000", "--path-identity", "floodgate.test",
                         "--id-prefix", "fl6%d" % os.getpid(), "--timeout", "120"],
                        capture_output=True, text=True, timeout=200)
    flooding = th.is_alive()
    th.join()
    # the positive sign that the flood had its chance: every SYN sent was seen
    w.wait_stats(lambda st: st["tcp_syn_rx"] - st0["tcp_syn_rx"] >= result.get("sent", 0),
                 "every SYN of the flood to reach floodgate")
    check(fg.returncode == 0, "feedgen during the flood:\n%s\n%s" % (fg.stdout[-3000:],
                                                                  fg.stderr[-2000:]))
    log("healthy peer: %s (flood still running at its end: %s)"
        % (fg.stdout.strip().splitlines()[-1], flooding))
    # every idle connection is still there and answers
    for i, (s, r) in enumerate(idle):
        s.sendall(b"CHECK <idle%d.%d@flood6.test>\r\n" % (i, os.getpid()))
    for i, (s, r) in enumerate(idle):
        got = r.line()
        check(got.startswith("238 "), "idle connection %d answered %r" % (i, got))
        s.sendall(b"QUIT\r\n")
        s.close()
    st = w.stats()
    log("flood: %d SYNs sent, %d seen; backlog full %d, per-peer full %d, cookies sent %d, "
        "back valid %d; accepted %d" % (
            result.get("sent", 0), st["tcp_syn_rx"] - st0["tcp_syn_rx"],
            st["tcp_syn_backlog_full"], st["tcp_syn_peer_full"], st["tcp_syncookies_sent"],
            st["tcp_syncookies_ok"], st["tcp_accepted"]))
    check(result.get("sent", 0) == FLOOD and st["tcp_syn_rx"] - st0["tcp_syn_rx"] >= FLOOD,
          "the flood did not arrive")
    check(st["tcp_syn_backlog_full"] > 0 and st["tcp_syncookies_sent"] > 0,
          "the backlog never filled: no cookies")
    # no flooded SYN became a connection: only feedgen's two (and its
    # reconnects, at most 5 each) were accepted
    got = st["tcp_accepted"] - st0["tcp_accepted"]
    check(2 <= got <= 2 + 2 * 5, "accepted %d connections for feedgen's 2" % got)
    w.stop_dp()
    w.check_logs()
    fgdp.passed("72_dp_synflood6")


if __name__ == "__main__":
    main()
