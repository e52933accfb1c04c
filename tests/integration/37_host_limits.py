#!/usr/bin/env python3
# timeout: 300
"""A peer's limits hold for the box: floodgate-host with two threads
(-t 2, SO_REUSEPORT spreads one peer's connections over both), in its own
network namespace (docs/operations.md, "Limits per box").

1. max-connections 4: four connections of one peer held, on both threads
   (worker:N:sessions); every further connection is greeted 400 and
   closed, though the thread it lands on holds fewer than 4 (per thread,
   it would have been let in).
2. max-offer-rate 50 over those four connections: the answers never come
   faster than the box's 50 a second (a second's worth as burst, and the
   batching's bound of one offer per thread), every one comes, and the
   sessions stalled on the rate.
3. A reload (SIGHUP) to max-connections 5: the four open ones stay counted:
   one more is greeted, the next refused.
4. max-connection-rate 5 for another peer: of 30 connections made at once,
   no more than 5 and 5 a second are greeted; the others are greeted
   `400 Connecting too often from this peer, try again later`, counted
   as nntp_sessions_too_fast, on both threads.
"""
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from hostlib import GREETING, Client, Host, check, in_netns, log  # noqa: E402

in_netns("fg-lim")

TOO_MANY = b"400 Too many connections from this peer, try again later\r\n"
TOO_FAST = b"400 Connecting too often from this peer, try again later\r\n"
LIM = "127.0.0.3"
CHURN = "127.0.0.4"
PEERS = """[peer lim]
address %s
max-connections %d
max-offer-rate 50
[peer churn]
address %s
max-connection-rate 5
"""


def worker_sessions(st):
    return [st.get("worker:%d:sessions" % i, 0) for i in (0, 1)]


def hold_four_on_both(host):
    """Four of lim's connections open and greeted, on both threads: a
    connection is closed and another made until SO_REUSEPORT has put them
    on both."""
    held = []
    for attempt in range(400):
        while len(held) < 4:
            c = Client(src=LIM)
            c.expect(GREETING)
            held.append(c)
        st = host.wait_stats(lambda st: st["sessions_open"] == 4, "4 sessions open")
        per = worker_sessions(st)
        if per[0] and per[1]:
            log("lim's four connections: %d and %d on the two threads (try %d)" %
                (per[0], per[1], attempt + 1))
            return held, per
        held.pop().close()
        host.wait_stats(lambda st: st["sessions_open"] == 3, "the closed one gone")
    check(False, "400 tries and SO_REUSEPORT never spread 4 connections over 2 threads")


def refused_on_both(host, per):
    """More connections of lim: each refused, until refusals came on both
    threads (each holds fewer than 4 of lim's)."""
    for n in range(1, 201):
        c = Client(src=LIM)
        check(c.line() == TOO_MANY, "connection %d over max-connections refused" % n)
        check(c.eof(), "the refused connection is closed")
        c.close()
        st = host.wait_stats(lambda st: st["nntp_sessions_too_many"] == n,
                             "%d refusals counted" % n)
        by = [st.get("worker:%d:nntp_sessions_too_many" % i, 0) for i in (0, 1)]
        if by[0] and by[1]:
            check(st["peer:lim:nntp_sessions_too_many"] == n, "counted for the peer")
            check(worker_sessions(st) == per, "the held ones are still open")
            log("%d connections over the box's 4 refused: %d and %d on the threads, "
                "which held %d and %d" % (n, by[0], by[1], per[0], per[1]))
            return
    check(False, "200 refusals and never on both threads")


def offer_rate(host, held):
    """30 CHECKs on each of the four: the answers' times against the box's
    budget."""
    times = []
    lock = threading.Lock()

    def reader(i, c):
        for k in range(30):
            line = c.line()
            check(line == b"238 <r%d.%d@lim.test>\r\n" % (i, k), "answer %r" % line)
            with lock:
                times.append(time.monotonic())

    ths = [threading.Thread(target=reader, args=(i, c)) for i, c in enumerate(held)]
    for t in ths:
        t.start()
    t0 = time.monotonic()
    for i, c in enumerate(held):
        c.send("".join("CHECK <r%d.%d@lim.test>\r\n" % (i, k) for k in range(30)))
    for t in ths:
        t.join()
    # a second's worth, 50 a second after, one more per thread (the batch)
    fgkit.check_rate(times, t0, 50, 50, 2, "answer")
    st = host.stats()
    check(st["peer:lim:nntp_stall_rate"] > 0, "the sessions stalled on the rate")
    log("120 offers over 4 connections answered in %.2f s (50 a second, 50 burst)" %
        (max(times) - t0))


def reload_to_five(host, held):
    with open(host.conf) as f:
        text = f.read()
    with open(host.conf, "w") as f:
        f.write(text.replace("max-connections 4", "max-connections 5"))
    host.proc.send_signal(signal.SIGHUP)
    fgkit.wait_until(lambda: "SIGHUP reload: 2 workers switched" in fgkit.slurp(host.log),
                     30, "the host reloaded on SIGHUP")
    fifth = Client(src=LIM)
    fifth.expect(GREETING)
    sixth = Client(src=LIM)
    check(sixth.line() == TOO_MANY, "the sixth refused: the four open ones still count")
    sixth.close()
    held.append(fifth)
    log("reloaded to max-connections 5: the fifth greeted, the sixth refused")


def connection_rate(host):
    before = host.stats()
    t0 = time.monotonic()
    conns = [Client(src=CHURN) for _ in range(30)]
    t1 = time.monotonic()
    greeted = refused = 0
    for c in conns:
        line = c.line()
        if line == GREETING:
            greeted += 1
        else:
            check(line == TOO_FAST, "a connection over the rate: %r" % line)
            check(c.eof(), "and closed")
            refused += 1
        c.close()
    # the server greeted each after its connect began (>= t0) and before
    # the last connect returned plus its reading: bounded by t1 + the reads
    t2 = time.monotonic()
    check(greeted <= 5 + 5 * (t2 - t0) + 1, "%d greeted in %.2f s: over 5 a second on the box"
          % (greeted, t2 - t0))
    check(greeted >= 5, "the burst of 5 greeted (%d)" % greeted)
    check(refused > 0, "connections over the rate refused (30 made in %.2f s)" % (t1 - t0))
    st = host.wait_stats(lambda st: st["nntp_sessions_too_fast"] - before.get(
        "nntp_sessions_too_fast", 0) == refused, "the refusals counted")
    check(st["peer:churn:nntp_sessions_too_fast"] == refused, "counted for the peer")
    seen = [st.get("worker:%d:nntp_sessions_too_fast" % i, 0) +
            st.get("worker:%d:nntp_sessions_opened" % i, 0) for i in (0, 1)]
    check(seen[0] and seen[1], "the connections landed on both threads: %s" % seen)
    log("connection rate 5/s: %d of 30 greeted, %d refused in %.2f s" % (greeted, refused,
                                                                     t2 - t0))


def main():
    host = Host(args=["-t", "2"], extra=PEERS % (LIM, 4, CHURN))
    held, per = hold_four_on_both(host)
    refused_on_both(host, per)
    offer_rate(host, held)
    reload_to_five(host, held)
    connection_rate(host)
    for c in held:
        c.close()
    final = host.stop()
    check(final["sessions_open"] == 0, "nothing left open")
    fgkit.passed("37_host_limits")


main()
