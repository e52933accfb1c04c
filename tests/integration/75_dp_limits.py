#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""75_dp_limits — a peer's limits hold for the box on the DPDK dataplane
with two workers (a tap with two queues; the kernel's tun driver spreads
one peer's flows over them). docs/operations.md, "Limits per box".

1. feeder-a, max-connections 3: three of its connections held, on both
   workers (`peers` says where each lives); every further one is greeted
   `400 Too many connections from this peer, try again later`, though each
   worker holds fewer than 3 (per worker, it would have been let in);
   counted as nntp_sessions_too_many.
2. feeder-a, max-offer-rate 50, over those three: the answers never come
   faster than the box's 50 a second (a second's worth as burst, one offer
   per worker for the batching); every one comes; the sessions stalled.
3. `floodctl reload` to max-connections 4: the three open ones stay
   counted: one more greeted, the next refused.
4. feeder-c, max-connection-rate 5: of 30 connections made at once, no
   more than 5 and 5 a second are greeted, the rest refused with
   `400 Connecting too often from this peer, try again later`, counted
   (nntp_sessions_too_fast), and both workers saw feeder-c's connections.
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, fail, log  # noqa: E402

TOO_MANY = "400 Too many connections from this peer, try again later"
TOO_FAST = "400 Connecting too often from this peer, try again later"
A = "198.18.0.1"
C = "198.18.0.4"


def limit_config(w, max_conns):
    with open(w.conf) as f:
        text = f.read()
    text = text.replace("[peer feeder-a]\naddress 198.18.0.1\n",
                        "[peer feeder-a]\naddress 198.18.0.1\nmax-connections %d\n"
                        "max-offer-rate 50\n" % max_conns, 1)
    text = text.replace("[peer feeder-c]\naddress 198.18.0.4\n",
                        "[peer feeder-c]\naddress 198.18.0.4\nmax-connection-rate 5\n", 1)
    check("max-connections %d" % max_conns in text and "max-connection-rate" in text,
          "the limits written into the configuration")
    with open(w.conf, "w") as f:
        f.write(text)


def where(w):
    """{local port of a feeder-a connection: its worker}"""
    out = {}
    for c in w.dp_json("peers")["connections"]:
        addr, port = c["remote"].rsplit(":", 1)
        if addr == A:
            out[int(port)] = c["worker"]
    return out


def hold_three_on_both(w):
    held = []
    for attempt in range(200):
        while len(held) < 3:
            s = fgdp.connect(A)
            r = fgdp.Lines(s)
            got = r.line()
            check(got.startswith("200 "), "greeting of a held connection: %r" % got)
            held.append((s, r))
        fgdp.wait_until(lambda: len(where(w)) == 3, 30, "3 of feeder-a's connections listed")
        on = where(w)
        workers = [on[s.getsockname()[1]] for s, _ in held]
        if len(set(workers)) == 2:
            log("feeder-a's three connections on workers %s (try %d)" % (workers, attempt + 1))
            return held
        s, _ = held.pop()
        s.close()
        fgdp.wait_until(lambda: len(where(w)) == 2, 30, "the closed one gone")
    fail("200 tries and the tap never spread 3 connections over 2 workers")


def refused(w, n):
    for k in range(n):
        s = fgdp.connect(A)
        got = fgdp.Lines(s).line()
        check(got == TOO_MANY, "connection over max-connections: %r" % got)
        s.close()
    st = w.wait_stats(lambda st: st["nntp_sessions_too_many"] == n, "%d refusals counted" % n)
    check(st["peer:feeder-a:nntp_sessions_too_many"] == n, "counted for the peer")
    by = [st["worker:%d:nntp_sessions_too_many" % i] for i in (0, 1)]
    check(sum(by) == n, "refusals by worker %s" % by)
    log("%d connections over the box's 3 refused (by worker %s), each worker holding "
        "fewer than 3" % (n, by))


def offer_rate(w, held):
    times = []
    lock = threading.Lock()
    pid = os.getpid()

    def reader(i, r):
        for k in range(30):
            got = r.line()
            check(got == "238 <r%d.%d.%d@lim.test>" % (i, k, pid), "answer %r" % got)
            with lock:
                times.append(time.monotonic())

    ths = [threading.Thread(target=reader, args=(i, r)) for i, (_, r) in enumerate(held)]
    for t in ths:
        t.start()
    t0 = time.monotonic()
    for i, (s, _) in enumerate(held):
        s.sendall("".join("CHECK <r%d.%d.%d@lim.test>\r\n" % (i, k, pid)
                          for k in range(30)).encode())
    for t in ths:
        t.join()
    fgkit.check_rate(times, t0, 50, 50, 2, "answer")
    st = w.stats()
    check(st["peer:feeder-a:nntp_stall_rate"] > 0, "the sessions stalled on the rate")
    log("90 offers over 3 connections on 2 workers answered in %.2f s" % (max(times) - t0))


def reload_to_four(w, held):
    with open(w.conf) as f:
        text = f.read()
    path = os.path.join(w.dir, "four.conf")
    with open(path, "w") as f:
        f.write(text.replace("max-connections 3", "max-connections 4"))
    rc, out, err = w.ctl("reload", path)
    check(rc == 0, "floodctl reload: %s%s" % (out, err))
    s = fgdp.connect(A)
    got = fgdp.Lines(s).line()
    check(got.startswith("200 "), "the fourth greeted after the reload: %r" % got)
    held.append((s, None))
    s5 = fgdp.connect(A)
    got = fgdp.Lines(s5).line()
    check(got == TOO_MANY, "the fifth refused: the three open ones still count (%r)" % got)
    s5.close()
    log("reloaded to max-connections 4: the fourth greeted, the fifth refused")


def connection_rate(w):
    before = w.stats()
    t0 = time.monotonic()
    socks = [fgdp.connect(C) for _ in range(30)]
    greeted = refusals = 0
    for s in socks:
        got = fgdp.Lines(s).line()
        if got.startswith("200 "):
            greeted += 1
        else:
            check(got == TOO_FAST, "a connection over the rate: %r" % got)
            refusals += 1
        s.close()
    t2 = time.monotonic()
    check(greeted <= 5 + 5 * (t2 - t0) + 1, "%d greeted in %.2f s: over 5 a second on the box"
          % (greeted, t2 - t0))
    check(greeted >= 5, "the burst of 5 greeted (%d)" % greeted)
    check(refusals > 0, "connections over the rate refused")
    st = w.wait_stats(lambda st: st["nntp_sessions_too_fast"] - before["nntp_sessions_too_fast"]
                      == refusals, "the refusals counted")
    check(st["peer:feeder-c:nntp_sessions_too_fast"] == refusals, "counted for the peer")
    seen = [st["worker:%d:nntp_sessions_too_fast" % i] + st["worker:%d:nntp_sessions_opened" % i]
            - before["worker:%d:nntp_sessions_too_fast" % i]
            - before["worker:%d:nntp_sessions_opened" % i] for i in (0, 1)]
    check(seen[0] > 0 and seen[1] > 0, "feeder-c's connections on both workers: %s" % seen)
    log("connection rate 5/s: %d of 30 greeted, %d refused in %.2f s (by worker %s)"
        % (greeted, refusals, t2 - t0, seen))


def main():
    w = fgdp.World("lim", workers=2, rx_queues=2)
    limit_config(w, 3)
    w.start_ctld()
    w.start_dp()
    held = hold_three_on_both(w)
    refused(w, 6)
    offer_rate(w, held)
    reload_to_four(w, held)
    connection_rate(w)
    for s, _ in held:
        s.close()
    w.stop_dp()
    w.check_logs()
    fgdp.passed("75_dp_limits")


if __name__ == "__main__":
    main()
