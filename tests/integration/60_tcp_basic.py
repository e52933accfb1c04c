#!/usr/bin/env python3
# timeout: 120
"""Userspace TCP against Linux: a full NNTP session from Python, one from
nc, a refused port (RST), ICMP echo, a peer half-close, and the counters
that must move (handshake, states, orderly close)."""
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, MODULE_ADDR, check, connect, log, nntp_session  # noqa: E402


def icmp_echo():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(3)
    payload = b"floodgate-ping" * 4
    hdr = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1)
    csum = 0
    data = hdr + payload
    for i in range(0, len(data), 2):
        csum += (data[i] << 8) + data[i + 1]
    csum = (csum & 0xffff) + (csum >> 16)
    csum = ~(csum + (csum >> 16)) & 0xffff
    s.sendto(struct.pack("!BBHHH", 8, 0, csum, 0x1234, 1) + payload, (MODULE_ADDR, 0))
    while True:
        pkt, addr = s.recvfrom(2048)
        ihl = (pkt[0] & 15) * 4
        if addr[0] == MODULE_ADDR and pkt[ihl] == 0:
            check(pkt[ihl + 8:] == payload, "echo payload differs")
            return


def main():
    h = Harness("basic")
    try:
        ids = ["<basic%d@test>" % i for i in range(50)]
        with connect() as s:
            nntp_session(s, ids, ids[:5])
        # again: the same IDs are now known (438) — the app's history
        with connect() as s:
            r = Lines(s)
            r.line()
            s.sendall(b"CHECK <basic1@test>\r\nCHECK <new@test>\r\nBOGUS\r\nQUIT\r\n")
            got = [r.line() for _ in range(4)]
            check(got == ["438 <basic1@test>", "238 <new@test>", "500 Unknown command", "205 Bye"],
                  "second session %r" % got)
        # nc, a kernel client that is not Python
        out = subprocess.run(["nc", "-q", "2", MODULE_ADDR, "119"], input=b"MODE STREAM\r\nQUIT\r\n",
                             capture_output=True, timeout=20).stdout
        check(out.endswith(b"203 Streaming permitted\r\n205 Bye\r\n"), "nc got %r" % out)
        # a port nobody listens on: RST -> connection refused
        try:
            socket.create_connection((MODULE_ADDR, 120), timeout=3)
            check(False, "port 120 accepted a connection")
        except ConnectionRefusedError:
            pass
        icmp_echo()
        # the peer half-closes first: the app sees EOF and closes (CLOSE-WAIT, LAST-ACK)
        with connect() as s:
            r = Lines(s)
            r.line()
            s.sendall(b"CHECK <half@test>\r\n")
            s.shutdown(socket.SHUT_WR)
            check(r.line() == "238 <half@test>", "answer after half-close")
            check(s.recv(10) == b"", "no FIN after half-close")
        time.sleep(0.3)
        st = h.stats()
        for k in ("tcp_to_established", "tcp_close_fin", "tcp_to_time_wait", "tcp_to_close_wait",
                  "tcp_to_last_ack", "tcp_rx_no_conn", "tcp_tx_rst", "net_icmp_echo",
                  "net_arp_replies", "tcp_rtt_samples"):
            check(st.get(k, 0) > 0, "counter %s did not move: %s" % (k, st.get(k)))
        check(st["tcp_accepted"] == 4, "accepted %d" % st["tcp_accepted"])
        check(st["app_sessions_open"] == 0, "sessions still open")
        check(st["tcp_rx_bad_csum"] == 0 and st["net_ip_bad_csum"] == 0, "checksum errors")
        check(st["taphost_segs_in_use"] == 0, "segments still held")
        log("ok: sessions, nc, RST, ICMP echo, half-close; counters moved")
    finally:
        final = h.close()
    check(final is not None and final["taphost_bufs_in_use"] == 0,
          "buffers leaked at exit: %s" % (final or {}).get("taphost_bufs_in_use"))
    log("PASS 60_tcp_basic")


main()
