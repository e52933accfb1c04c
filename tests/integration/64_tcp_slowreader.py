#!/usr/bin/env python3
# timeout: 300
"""A client that pipelines CHECKs and stops reading the answers: the
module's send buffer fills, the engine's response queue fills and it
stops reading (nntp_stall_responses, transport pause), the module's
receive window closes (zero-window ACKs) and the client's sends block;
nothing grows while it waits (segments held, buffers, bytes received,
commands decided); our persist timer probes the client's own zero
window. Then the client reads, gets every answer in order, and
finishes."""
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import MODULE_ADDR, Harness, Lines, check, log  # noqa: E402

N = 60000


def main():
    # the answers are read only after the stall: all N offers outstanding
    # at once (max-outstanding-offers, default 1024)
    h = Harness("slow", peer="max-outstanding-offers %d\n" % N)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # our side sees a small window
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)  # so the client's sends block
        s.settimeout(120)
        s.connect((MODULE_ADDR, 119))
        r = Lines(s)
        check(r.line().startswith("200 "), "greeting")
        payload = b"".join(b"CHECK <slow%06d@test>\r\n" % i for i in range(N)) + b"QUIT\r\n"
        done = threading.Event()

        def sender():
            s.sendall(payload)
            done.set()

        th = threading.Thread(target=sender)
        th.start()
        # the stall, as the counters show it: the engine stopped reading,
        # a zero window went out, and the bytes received stand still
        # between two looks
        last = {}

        def stalled(st):
            still = last.get("rx") == st["tcp_rx_bytes"]
            last["rx"] = st["tcp_rx_bytes"]
            return (st["tcp_tx_zero_window"] > 0 and st["nntp_stall_responses"] > 0 and still) \
                or done.is_set()
        a = h.wait_stats(stalled, "the window to close and the engine to stop reading",
                         timeout=120)
        # the positive sign that the client had its chance to send more:
        # another zero-window segment (an answer to the client's probe, or
        # our own persist probe) after the first look
        b = h.wait_stats(lambda st: st["tcp_tx_zero_window"] > a["tcp_tx_zero_window"] or
                         done.is_set(), "another zero-window segment", timeout=180)
        check(not done.is_set(), "the whole pipeline was taken: the window never closed")
        check(b["tcp_tx_zero_window"] > 0, "no zero window advertised")
        check(b["nntp_stall_responses"] > 0, "the engine never stopped reading")
        check(b["nntp_command:check"] == a["nntp_command:check"] < N,
              "commands kept being decided: %d -> %d" % (a["nntp_command:check"],
                                                         b["nntp_command:check"]))
        check(b["tcp_rx_bytes"] == a["tcp_rx_bytes"], "bytes kept arriving: %d -> %d" % (
            a["tcp_rx_bytes"], b["tcp_rx_bytes"]))
        check(b["taphost_segs_in_use"] <= 256, "segments held %d" % b["taphost_segs_in_use"])
        check(b["taphost_bufs_in_use"] <= 300, "buffers held %d" % b["taphost_bufs_in_use"])
        check(b["tcp_persist_probes"] > a["tcp_persist_probes"] or b["tcp_persist_probes"] > 0,
              "no persist probe while the client's window was closed")
        stalled = b["tcp_rx_bytes"]
        for i in range(N):
            line = r.line()
            if line != "238 <slow%06d@test>" % i:
                # say which deferral it was before failing
                st = h.stats()
                log("deferrals: " + ", ".join("%s=%d" % (k, v) for k, v in sorted(st.items())
                                              if k.startswith(("nntp_defer", "nntp_history",
                                                               "history_"))))
            check(line == "238 <slow%06d@test>" % i, "answer %d: %r" % (i, line))
        check(r.line() == "205 Bye", "QUIT")
        th.join(60)
        check(done.is_set(), "sender never finished")
        check(s.recv(10) == b"", "no FIN after QUIT")
        s.close()
        c = h.stats()
        check(c["nntp_response:238"] == N, "238s %d" % c["nntp_response:238"])
        log("ok: window closed at %d of %d bytes; %d zero-window ACKs, %d persist probes, "
            "%d window updates; all %d answers in order" % (
                stalled, len(payload), c["tcp_tx_zero_window"], c["tcp_persist_probes"],
                c["tcp_tx_window_updates"], N))
    finally:
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 64_tcp_slowreader")


main()
