#!/usr/bin/env python3
# timeout: 300
"""1,000 concurrent connections: all open at once (the module holds 1,000
established blocks), each gets its greeting and answers to its own CHECKs,
then every one QUITs; the pool drains to TIME-WAIT blocks only, no buffer
or segment descriptor is left held."""
import os
import resource
import sys
import time

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
        for i, s in enumerate(socks):
            s.sendall(b"CHECK <many%d@test>\r\nCHECK <many%d-b@test>\r\n" % (i, i))
        for i, r in enumerate(readers):
            check(r.line() == "238 <many%d@test>" % i, "answer on connection %d" % i)
            check(r.line() == "238 <many%d-b@test>" % i, "second answer on connection %d" % i)
        for s in socks:
            s.sendall(b"QUIT\r\n")
        for i, r in enumerate(readers):
            check(r.line() == "205 Bye", "QUIT on connection %d" % i)
            check(socks[i].recv(10) == b"", "FIN on connection %d" % i)
        for s in socks:
            s.close()
        for _ in range(100):
            st = h.stats()
            if st["app_sessions_open"] == 0:
                break
            time.sleep(0.1)
        check(st["app_sessions_open"] == 0, "sessions open: %d" % st["app_sessions_open"])
        check(st["tcp_close_fin"] == N, "orderly closes %d" % st["tcp_close_fin"])
        check(st["taphost_segs_in_use"] == 0, "segments held")
        check(st["taphost_conns_in_use"] == st["tcp_to_time_wait"] - st.get("tcp_tw_reused", 0),
              "blocks in use %d are not all TIME-WAIT" % st["taphost_conns_in_use"])
        log("ok: %d concurrent connections, %d answers, rss %d kB" % (N, 2 * N, st["taphost_rss_kb"]))
    finally:
        for s in socks:
            s.close()
        final = h.close()
    check(final["taphost_bufs_in_use"] == 0, "buffers leaked")
    log("PASS 62_tcp_many")


main()
