#!/usr/bin/env python3
# timeout: 120
"""Userspace TCP and the NNTP session engine against Linux: a full
streaming session from Python, the engine's answers across connections
(438 for an accepted ID, 431 while another connection holds the offer,
439 for a duplicate TAKETHIS and for a too-old article, then 438 for the
remembered reject), 502 for a client that is no peer, a session from nc,
a refused port (RST), ICMP echo, a peer half-close, and the counters that
must move (handshake, states, orderly close, the engine's responses);
a session still open when the harness stops gets the engine's 400."""
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from fgtcp import (NOT_PEER, Harness, Lines, MODULE_ADDR, article, check, connect, log,  # noqa: E402
                   nntp_session)


def across_connections():
    """Two connections of the same peer share the history."""
    a, b = connect(), connect()
    ra, rb = Lines(a), Lines(b)
    ra.line()
    rb.line()
    a.sendall(b"CHECK <two@test>\r\n")
    check(ra.line() == "238 <two@test>", "first offer")
    b.sendall(b"CHECK <two@test>\r\nTAKETHIS <basic2@test>\r\n" + article("<basic2@test>", 2000))
    check(rb.line() == "431 <two@test>", "offer held by the other connection not deferred")
    check(rb.line() == "439 <basic2@test>", "duplicate TAKETHIS not refused")
    b.sendall(b"TAKETHIS <old@test>\r\n" +
              article("<old@test>", 2000, date="Mon, 02 Jan 2006 15:04:05 +0000"))
    check(rb.line() == "439 <old@test>", "too-old article not refused")
    a.sendall(b"TAKETHIS <two@test>\r\n" + article("<two@test>", 3000))
    check(ra.line() == "239 <two@test>", "offered article not accepted")
    b.sendall(b"CHECK <two@test>\r\nCHECK <old@test>\r\nQUIT\r\n")
    got = [rb.line() for _ in range(3)]
    check(got == ["438 <two@test>", "438 <old@test>", "205 Bye"], "after accept/reject %r" % got)
    a.sendall(b"QUIT\r\n")
    check(ra.line() == "205 Bye", "QUIT")
    a.close()
    b.close()


def main():
    h = Harness("basic")
    try:
        ids = ["<basic%d@test>" % i for i in range(50)]
        with connect() as s:
            nntp_session(s, ids, ids[:5])
        # again: the IDs accepted are known (438), the 45 only offered were
        # released when the first session ended (238)
        with connect() as s:
            r = Lines(s)
            r.line()
            s.sendall(b"CHECK <basic1@test>\r\nCHECK <basic40@test>\r\nBOGUS\r\nQUIT\r\n")
            got = [r.line() for _ in range(4)]
            check(got == ["438 <basic1@test>", "238 <basic40@test>", "500 Unknown command",
                          "205 Bye"], "second session %r" % got)
        across_connections()
        # a client address that no [peer] has: 502 and close
        with connect(source=NOT_PEER) as s:
            r = Lines(s)
            line = r.line()
            check(line == "502 Not a configured peer of this transit-only server",
                  "not a peer got %r" % line)
            check(s.recv(10) == b"", "no close after 502")
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
        fgkit.icmp_echo(MODULE_ADDR)
        # the peer half-closes first: the app sees EOF and closes (CLOSE-WAIT, LAST-ACK)
        with connect() as s:
            r = Lines(s)
            r.line()
            s.sendall(b"CHECK <half@test>\r\n")
            s.shutdown(socket.SHUT_WR)
            check(r.line() == "238 <half@test>", "answer after half-close")
            check(s.recv(10) == b"", "no FIN after half-close")
        moved = ("tcp_to_established", "tcp_close_fin", "tcp_to_time_wait", "tcp_to_close_wait",
                 "tcp_to_last_ack", "tcp_rx_no_conn", "tcp_tx_rst", "net_icmp_echo",
                 "net_arp_replies", "tcp_rtt_samples")
        # the last close runs to its end (LAST-ACK, every record freed)
        st = h.wait_stats(lambda st: all(st.get(k, 0) > 0 for k in moved) and
                          st["sessions_open"] == 0 and st["connections"] == 0,
                          "the counters to move and the last connection to close")
        for k in moved:
            check(st.get(k, 0) > 0, "counter %s did not move: %s" % (k, st.get(k)))
        check(st["tcp_accepted"] == 7, "accepted %d" % st["tcp_accepted"])
        check(st["sessions_open"] == 0 and st["connections"] == 0,
              "sessions %d, connections %d still open" % (st["sessions_open"], st["connections"]))
        check(st["transfers_open"] == 0 and st["sink_open"] == 0, "transfers still open")
        want = {"nntp_articles_accepted": 6, "nntp_sessions_not_peer": 1, "rejected:too-old": 1,
                "rejected:duplicate": 4, "nntp_response:431": 1, "nntp_response:502": 1,
                "nntp_response:439": 2, "nntp_response:239": 6, "nntp_response:203": 2,
                "nntp_response:238": 53, "nntp_response:438": 3, "history_state:accepted": 6,
                "history_state:rejected": 1, "history_state:offered": 0}
        for k, v in want.items():
            check(st[k] == v, "%s is %d, not %d" % (k, st[k], v))
        check(st["nntp_offers_released"] >= 45, "offers released %d" % st["nntp_offers_released"])
        check(st["tcp_rx_bad_csum"] == 0 and st["net_ip_bad_csum"] == 0, "checksum errors")
        check(st["taphost_segs_in_use"] == 0, "segments still held")
        log("ok: sessions, nc, RST, ICMP echo, half-close; counters moved")
        # a session still open when the harness stops: the engine's 400
        late = connect()
        r = Lines(late)
        r.line()
    finally:
        final = h.close()
    check(r.line() == "400 Server shutting down, try again later", "no 400 at shutdown")
    check(late.recv(10) == b"", "no close at shutdown")
    check(final is not None and final["taphost_bufs_in_use"] == 0,
          "buffers leaked at exit: %s" % (final or {}).get("taphost_bufs_in_use"))
    check(final["sessions_open"] == 0 and final["connections"] == 0, "sessions left at exit")
    log("PASS 60_tcp_basic")


main()
