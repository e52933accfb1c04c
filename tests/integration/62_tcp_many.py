#!/usr/bin/env python3
# timeout: 300
"""1,000 concurrent connections of one peer: all open at once (the module
holds 1,000 established blocks and the engine 1,000 sessions), each gets
its greeting and the engine's answers to its own CHECKs — and 431 for the
ID its neighbour holds an offer for, which every connection released at
its close — then every one QUITs; the pool drains to TIME-WAIT blocks
only, no session, connection record, buffer or segment descriptor is
left."""
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fgtcp import Harness, Lines, check, connect, log  # noqa: E402

N = 1000


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = N + 200
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
    h = Harness("many", "--max-conns", "2048", "--syn-backlog", "512")
    socks = []
    try:
        for i in range(N):
            socks.append(connect(timeout=60))
        readers = [Lines(s) for s in socks]
        for r in readers:
            check(r.line().startswith("200 "), "greeting")
        st = h.stats()
        check(st["taphost_conns_in_use"] >= N, "only %d blocks in use" % st["taphost_conns_in_use"])
        check(st["tcp_accepted"] == N, "accepted %d" % st["tcp_accepted"])
        check(st["sessions_open"] == N and st["nntp_sessions_opened"] == N,
              "sessions open %d" % st["sessions_open"])
        for i, s in enumerate(socks):
            s.sendall(b"CHECK <many%d@test>\r\n" % i)
        for i, r in enumerate(readers):
            check(r.line() == "238 <many%d@test>" % i, "answer on connection %d" % i)
        for i, s in enumerate(socks):
            s.sendall(b"CHECK <many%d@test>\r\n" % ((i + 1) % N))
        for i, r in enumerate(readers):
            check(r.line() == "431 <many%d@test>" % ((i + 1) % N),
                  "the neighbour's offer on connection %d" % i)
        for s in socks:
            s.sendall(b"QUIT\r\n")
        for i, r in enumerate(readers):
            check(r.line() == "205 Bye", "QUIT on connection %d" % i)
            check(socks[i].recv(10) == b"", "FIN on connection %d" % i)
        for s in socks:
            s.close()
        st = h.wait_stats(lambda st: st["sessions_open"] == 0 and st["connections"] == 0,
                          "every session and connection to close", timeout=60)
        check(st["sessions_open"] == 0, "sessions open: %d" % st["sessions_open"])
        check(st["connections"] == 0, "connection records in use: %d" % st["connections"])
        check(st["history_state:offered"] == 0 and st["nntp_offers_released"] == N,
              "offers left %d, released %d" % (st["history_state:offered"],
                                               st["nntp_offers_released"]))
        check(st["tcp_close_fin"] == N, "orderly closes %d" % st["tcp_close_fin"])
        check(st["taphost_segs_in_use"] == 0, "segments held")
        check(st["taphost_conns_in_use"] == st["tcp_to_time_wait"] - st.get("tcp_tw_reused", 0),
              "blocks in use %d are not all TIME-WAIT" % st["taphost_conns_in_use"])
        log("ok: %d concurrent sessions, %d answers, rss %d kB" % (N, 2 * N, st["taphost_rss_kb"]))
    finally:
        for s in socks:
            s.close()
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 62_tcp_many")


main()
