# SPDX-License-Identifier: MIT
"""ackcrashkit.py — the crash rounds of end-to-end mode, killed at each
failpoint (include/floodgate/failpoint.h), shared by
51_relay_innd_ack_crash (floodgate-host) and 79_dp_relay_innd_ack_crash
(floodgate, DPDK); not a test.

Each round: two peers stream TAKETHIS (24 in flight each) until the
process dies; its log must say "failpoint NAME fired" and it must have died
of SIGKILL (the proof the point was reached). Then, with the process
started again:
  1. every ID in flight at the kill is answered within the offer timeout,
     239 or 439, when the peers offer it again;
  2. every ID the peers got 239 for before the kill is answered 439 by
     floodgate itself, and innd sees none of them again: innd's news log
     has one '+' for each and nothing after it (after innd's 239 was
     recorded, nothing is relayed again; the '-' of innd's refusals while
     throttled come before it);
  3. every ID that got 239 (before or after) reaches innd's history, each
     stored exactly once ('+' once in its news log); so does every other
     one (each got 439 for an article innd or floodgate's queue had).
"""
import os
import signal
import subprocess

import fgdp
import fgkit
import relaykit
import restartkit as rk
from fgdp import check, log

INND_PORT = 11193
OFFER_TIMEOUT = 10
PER_CLIENT = 300
ROUNDS = (
    ("ack-before-forward", 150, False),
    ("ack-forwarded", 150, False),
    ("ack-answered", 150, False),
    ("ack-spilled", 60, True),
)


def world(tag):
    w = fgdp.World(tag, prefix="fg-akc")
    w.write_config(extra="[session]\noffer-timeout %ds\n" % OFFER_TIMEOUT +
                   "[persistence]\nack-timeout 250ms\n"
                   "[peer local]\naddress 127.0.0.1\n"
                   "[downstream down]\naddress 127.0.0.1:%d\nconnections 2\n"
                   "acknowledges on\n" % INND_PORT +
                   "[stats]\nverdict-log %s\n" % os.path.join(w.dir, "verdicts.log"))
    os.chmod(w.dir, 0o755)		# innd runs as news
    return w


class HostTarget:
    """floodgate-host --floodctld on 127.0.0.1:1119."""
    name = "floodgate-host"
    addr = ("127.0.0.1", 1119)
    src = "127.0.0.1"

    def start(self, w, env=None):
        return rk.spawn_host(w, ["--floodctld"], env)

    def stats(self, w, p):
        return fgkit.fresh_stats_file(p, os.path.join(w.dir, "host.stats"), "host stats")


class DpTarget:
    """floodgate (DPDK) on its tap port, the peers on the kernel's side."""
    name = "floodgate"
    addr = (fgdp.DP_ADDR, fgdp.CLIENT_PORT)
    src = fgdp.KERNEL_ADDRS[0]

    def start(self, w, env=None):
        return w.start_dp(env=env)

    def stats(self, w, p):
        return w.stats()


def one_round(target, point, count, throttle):
    w = world(point)
    innd_dir = os.path.join(w.dir, "innd")
    relaykit.innd("start", innd_dir, str(INND_PORT))
    try:
        run_round(target, w, innd_dir, point, count, throttle)
    finally:
        relaykit.innd("stop", innd_dir)
    w.cleanup()


def run_round(tg, w, innd_dir, point, count, throttle):
    w.start_ctld()
    rk.PER_CLIENT = PER_CLIENT
    clients = [rk.Client("%s%d" % (point, k), tg.addr, tg.src)
               for k in range(2)]
    p = tg.start(w, {"FG_FAILPOINT": "%s:%d" % (point, count)})
    # the #ack connections are up once an article was acknowledged
    # end-to-end: from then on every article goes straight (none is queued
    # and relayed by the queue, whose re-send bound after a crash is
    # another promise, docs/relay.md "Cursors and the re-send bound")
    relaykit.wait_ack_ready(lambda: tg.stats(w, p), point, addr=tg.addr, src=tg.src)
    if throttle:
        # the #ack connections are open; throttled, innd closes them and
        # refuses new ones: every article is spilled (never 439, never late)
        relaykit.ctlinnd(innd_dir, "throttle", "fg crash test")
    threads = rk.start_clients(clients, [c.mids for c in clients])
    try:
        rc = p.wait(120)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == -signal.SIGKILL, "%s killed by its failpoint: exit %s" % (tg.name, rc))
    fired = "failpoint %s fired" % point
    check(fired in fgdp.slurp(p.logp), "the log says %r:\n%s" % (fired, fgdp.slurp(p.logp)))
    w.logs.remove(p.logp)		# a killed process's log ends anywhere
    for t in threads:
        t.join(60)
        check(not t.is_alive(), "a client hung after the kill")
    if throttle:
        relaykit.ctlinnd(innd_dir, "go", "fg crash test")
    inflight = [c.pending() for c in clients]
    if throttle:
        refused = [(m, cs) for c in clients for m, cs in c.codes.items() if cs != [239]]
        check(not refused, "answers other than 239 with innd throttled: %s" % refused[:5])
    before = {m for c in clients for m, cs in c.codes.items() if 239 in cs}
    check(any(inflight), "TAKETHIS in flight at the kill")
    if count >= 50:
        check(before, "some articles got 239 before the kill")
    log("%s: killed with %d answered 239, %d in flight" % (point, len(before),
                                                          sum(len(i) for i in inflight)))

    p = tg.start(w)
    # 1. the in-flight ones first, then what was never sent
    worst = rk.reoffer(clients, inflight, OFFER_TIMEOUT)

    # 2. what got 239 before the kill is floodgate's: 439 from it, innd never asked
    again = rk.Client(point + "x", tg.addr, tg.src)
    again.wire = {m: c.wire[m] for c in clients for m in c.mids}
    again.feed(sorted(before))
    check(again.error is None, "the second offer: %s" % again.error)
    codes = {again.codes[m][-1] for m in before}
    check(codes <= {439}, "IDs that got 239 before the kill, offered again: %s" % codes)

    # 3. exactly once, end to end
    all_mids = [m for c in clients for m in c.mids]
    rk.check_settled(clients)
    acc = [m for c in clients for m, cs in c.codes.items() if 239 in cs]
    # the rest got 439 for an article innd or floodgate's queue already had
    rk.wait_innd(all_mids, innd_dir)
    news = rk.innd_news(innd_dir)
    # innd's own refusals while throttled ('-') may come before its '+'
    again_seen = [(m, news.get(m)) for m in before
                  if news.get(m, []).count("+") != 1 or news[m][-1] != "+"]
    check(not again_seen, "IDs relayed again after innd's 239 was recorded: %s"
          % again_seen[:5])
    missing = relaykit.not_in_history(innd_dir, all_mids)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    p.terminate()
    check(p.wait(30) == 0, "%s stopped cleanly" % tg.name)
    log("%s: in-flight %d answered within %.2fs; %d got 239 before the kill, none relayed "
        "again; %d of the %d IDs 239'd, all in innd once"
        % (point, sum(len(i) for i in inflight), worst, len(before), len(acc), len(all_mids)))


def main(test, target, rounds=ROUNDS, innd_port=INND_PORT, per_client=PER_CLIENT):
    """Each round of rounds with target; FG_FAILPOINT_ROUNDS=P1,P2 runs only
    the rounds of those points (to replay one)."""
    global INND_PORT, PER_CLIENT
    INND_PORT, PER_CLIENT = innd_port, per_client
    rk.require_inn()
    only = os.environ.get("FG_FAILPOINT_ROUNDS")
    for point, count, throttle in rounds:
        if only and point not in only.split(","):
            continue
        one_round(target, point, count, throttle)
    fgdp.passed(test)
