#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""79_dp_relay_innd_port — end-to-end acknowledgement through the DPDK
port (docs/relay.md, "Two paths"): floodgate on net_af_packet over a veth
pair, a real innd listening on the kernel's side (198.18.0.1, on
floodgate's subnet: `path auto` takes the port), fed by the worker's own
TCP, the article's octets by reference to the receive mbufs that brought
them in. (Not net_tap: DPDK 22.11's tap gets the TCP checksum of chained
frames wrong when it computes it for the port, TcpInCsumErrors.)

  1. A peer sends 700 KB articles with TAKETHIS: every one answered 239,
     every 239'd ID in innd's history; floodgate's disk gets 0 octets
     (queue_bytes), the relay thread sends nothing (relay_offered), the
     worker's portack sent them all, by reference: article octets
     referenced grew by at least the articles' size, none copied.
  2. An article innd refuses (older than its cutoff, younger than
     floodgate's): the peer gets 439, remembered only on innd's 438 to the
     CHECK that follows.
  3. innd stopped (SIGSTOP): an article spills after ack-timeout and is
     answered 239 after the queue's sync; after SIGCONT it reaches innd
     (through the queue's relay).
  4. innd killed while a 700 KB article is on its way: the peer still gets
     239 (spilled: eof or timeout), and once innd is back the article is in
     its history.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import hostlib  # noqa: E402
import nickit  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

INND_PORT = 11197
INND_ADDR = fgdp.KERNEL_ADDRS[0]
BIG = 700 * 1000


def feed(arts, window=32):
    return relaykit.first_answers(relaykit.feed(arts, window=window,
                                                addr=(fgdp.DP_ADDR, 119),
                                                src=fgdp.KERNEL_ADDRS[1]))


def big(mid):
    body = ["%070d" % i for i in range(BIG // 72)]
    return (mid, hostlib.article(mid, groups="fg.test.binaries", body=body))


def innd_start(w):
    # floodgate's worker connects from the port's address, its relay
    # thread (the queue's path) from the kernel's; innd's cutoff is shorter
    # than floodgate's: an article of 5 days passes floodgate's rules and
    # gets innd's 439
    relaykit.innd("start", os.path.join(w.dir, "innd"), str(INND_PORT), "--bind", INND_ADDR,
                  "--peer", fgdp.DP_ADDR, "--peer", INND_ADDR, "--cutoff", "3")


def innd_pid(w):
    with open(os.path.join(w.dir, "innd", "run", "innd.pid")) as f:
        return int(f.read().strip())


def delta(a, b, key):
    return b.get(key, 0) - a.get(key, 0)


def by_reference(w, innd_dir):
    before = w.stats()
    arts = [big("<dpport%d@dpport.test>" % i) for i in range(20)]
    # one at a time: a connection holds at most half its window of
    # buffers for the sink, beyond which the engine copies (tcpsess.h)
    answers = feed(arts, window=1)
    acc = [m for m, c in answers.items() if c == 239]
    check(len(acc) == 20, "20 accepted: %s" % answers)
    after = w.wait_stats(lambda st: delta(before, st, "relay_ack_accepted") >= 20,
                         "the 20 acknowledged end-to-end")
    size = sum(len(a) for _, a in arts)
    ref = delta(before, after, "portack_article_octets_referenced")
    check(delta(before, after, "relay_ack_accepted") == 20, "relay_ack_accepted: %s"
          % delta(before, after, "relay_ack_accepted"))
    check(delta(before, after, "queue_bytes") == 0, "%d octets written to floodgate's disk"
          % delta(before, after, "queue_bytes"))
    check(delta(before, after, "relay_offered") == 0, "the relay thread sent %d"
          % delta(before, after, "relay_offered"))
    check(delta(before, after, "portack_offered") == 20, "portack_offered %d"
          % delta(before, after, "portack_offered"))
    check(ref >= size - 20 * 5, "article octets referenced %d of %d" % (ref, size))
    check(delta(before, after, "portack_article_octets_copied") == 0, "article octets copied")
    missing = relaykit.not_in_history(innd_dir, acc)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    log("20 x 700 KB acknowledged by innd through the port: %d octets by reference, 0 "
        "copied by portack; TCP: %d referenced, %d copied into frames (this port)"
        % (ref, delta(before, after, "tcp_tx_referenced_octets"),
           delta(before, after, "tcp_tx_copied_octets")))


def refused(w):
    mid = "<dpportold@dpport.test>"
    before = w.stats()
    answers = feed([(mid, hostlib.article(mid, age=5 * 86400, inj_age=5 * 86400,
                                          groups="fg.test.text"))])
    check(answers.get(mid) == 439, "too old for innd: %s" % answers)
    after = w.stats()
    check(delta(before, after, "relay_refused_439") == 1, "innd's 439 not counted")
    check(delta(before, after, "relay_ack_refused") == 1, "not passed on as 439")
    log("innd's 439 passed on (%s)" % ("remembered: innd answered 438 to the CHECK"
                                       if delta(before, after, "relay_ack_remembered")
                                       else "forgotten: no 438 to the CHECK"))


def stopped(w, innd_dir):
    pid = innd_pid(w)
    before = w.stats()
    os.kill(pid, signal.SIGSTOP)
    try:
        mid = "<dpportstop@dpport.test>"
        t0 = time.monotonic()
        answers = feed([big(mid)])
        took = time.monotonic() - t0
        check(answers.get(mid) == 239, "stopped innd: %s" % answers)
        after = w.stats()
        check(delta(before, after, "relay_ack_spill_timeout") == 1, "not spilled on timeout")
        check(delta(before, after, "queue_bytes") > 0, "the spill wrote nothing")
        log("innd stopped: 239 after %.2f s (spilled, synced)" % took)
    finally:
        os.kill(pid, signal.SIGCONT)
    fgkit.wait_until(lambda: not relaykit.not_in_history(innd_dir, [mid]), 60,
                     "the spilled article in innd's history")


def killed(w, innd_dir):
    before = w.stats()
    os.kill(innd_pid(w), signal.SIGKILL)
    mid = "<dpportkill@dpport.test>"
    answers = feed([big(mid)])
    check(answers.get(mid) == 239, "killed innd: %s" % answers)
    after = w.stats()
    check(delta(before, after, "relay_ack_spill_timeout") +
          delta(before, after, "relay_ack_spill_eof") +
          delta(before, after, "relay_ack_queued") >= 1, "the article was not spilled")
    relaykit.innd("stop", innd_dir)
    innd_start(w)
    fgkit.wait_until(lambda: not relaykit.not_in_history(innd_dir, [mid]), 60,
                     "the article in innd's history after its restart")


def start_veth(w):
    """floodgate on net_af_packet over a veth pair: fgv1 the port, fgv0
    the kernel's side with the peers' and innd's addresses. The kernel
    neither segments nor checksums for the other side (offloads off), so
    what floodgate's TCP sends is what the kernel checks."""
    with open(w.conf) as f:
        text = f.read()
    with open(w.conf, "w") as f:
        f.write(text.replace("port net_tap0,iface=fgd0", "port net_af_packet0,iface=fgv1"))
    nickit.sh("ip", "link", "add", "fgv0", "type", "veth", "peer", "name", "fgv1")
    for dev in ("fgv0", "fgv1"):
        subprocess.run(["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", "tx",
                        "off"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        nickit.quiet(dev)
    for a in fgdp.KERNEL_ADDRS:
        nickit.sh("ip", "addr", "add", a + "/24", "dev", "fgv0")
    innd_start(w)
    w.start_ctld()
    nickit.start_dp(w)
    w.wait_tcp()


def run(w):
    innd_dir = os.path.join(w.dir, "innd")
    start_veth(w)
    try:
        relaykit.wait_acked(w.stats, feed, "dpport")
        st = w.stats()
        check(st.get("portack_ready", 0) >= 1, "no portack connection: %s"
              % {k: v for k, v in st.items() if k.startswith("portack")})
        by_reference(w, innd_dir)
        refused(w)
        stopped(w, innd_dir)
        killed(w, innd_dir)
        w.stop_dp()
        # innd killed: its connections ended, new ones refused until it is back
        w.check_logs(allow=r"warn (relay: down#\S+: connection closed by the server|"
                           r"portack: downstream down: connection \d: "
                           r"(the downstream closed|closed by TCP))")
    finally:
        relaykit.innd("stop", innd_dir)
    log("end-to-end through the port: by reference, refused, stopped, killed")


def main():
    fgkit.need_inn()
    w = fgdp.World("inndp", prefix="fg-dpp",
                   extra="[downstream down]\naddress %s:%d\nconnections 2\n"
                         "acknowledges on\n" % (INND_ADDR, INND_PORT))
    os.chmod(w.dir, 0o755)
    run(w)
    fgdp.passed("79_dp_relay_innd_port")


if __name__ == "__main__":
    main()
