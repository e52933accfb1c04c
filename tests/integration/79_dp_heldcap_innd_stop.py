#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 400
"""79_dp_heldcap_innd_stop — memory that cannot deadlock (docs/relay.md
"Memory"): floodgate (DPDK, tap port) end-to-end to a real innd, with a
small [persistence] held-limit (8M). feedgen streams 700 KB articles with
TAKETHIS on 50 connections; once innd has acknowledged some, innd is
stopped (SIGSTOP). While it is stopped the held-octets cap is reached
(relay_ack_spill_cap or queue_held_cap grows: the positive sign), an
article waits out ack-timeout and is spilled, and the box still answers ARP (a request sent by hand on the tap's kernel side)
and a CHECK on a fresh connection within 20 s. Then innd goes on (SIGCONT): feedgen's every connection ends with no
mismatch (nothing stuck, no 400/439 for a spill), the relay's backlog
drains (the downstream's answers are read), and every ID feedgen got 239
for is in innd's history (nothing lost).
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

INND_PORT = 11193
CONNS = 50
ARTICLES = 250


def innd_pid(innd_dir):
    with open(os.path.join(innd_dir, "run", "innd.pid")) as f:
        return int(f.read().split()[0])


def capped(st):
    return st.get("relay_ack_spill_cap", 0) + st.get("queue_held_cap", 0)


def check_on_fresh_connection():
    """A CHECK of a new ID on a new connection: its answer's first line."""
    t0 = time.monotonic()
    s = fgdp.connect(src=fgdp.KERNEL_ADDRS[1], timeout=20)
    f = s.makefile("rb")
    greet = f.readline()
    check(greet.startswith(b"200"), "greeting during the stop: %r" % greet)
    s.sendall(b"MODE STREAM\r\n")
    f.readline()
    s.sendall(b"CHECK <heldcap-fresh-%d@dp.test>\r\n" % os.getpid())
    line = f.readline()
    s.close()
    return line, time.monotonic() - t0


def arp_answered(timeout=10):
    """An ARP request for the port address, sent on the tap's kernel side
    by hand (a raw socket): True once floodgate's reply is seen."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
    s.bind(("fgd0", 0))
    mac = s.getsockname()[4]
    want = socket.inet_aton(fgdp.DP_ADDR)
    s.send(b"\xff" * 6 + mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) +
           mac + socket.inet_aton(fgdp.KERNEL_ADDRS[2]) + b"\0" * 6 + want)
    until = time.monotonic() + timeout
    try:
        while time.monotonic() < until:
            s.settimeout(max(0.01, until - time.monotonic()))
            try:
                fr = s.recv(2048)
            except socket.timeout:
                break
            if len(fr) >= 42 and fr[12:14] == b"\x08\x06" and fr[20:22] == b"\x00\x02" \
                    and fr[28:32] == want:
                return True
    finally:
        s.close()
    return False


def dump(w):
    st = w.stats()
    log("stats: %s" % {k: v for k, v in st.items() if v and k.startswith((
        "nntp_response", "relay_ack", "tcp_", "port_", "dp_", "queue_held", "nntp_sink", "arp",
        "nntp_stall", "nntp_defer", "net_"))})


def run(w, innd_dir):
    w.start_ctld()
    w.start_dp()
    outcomes = os.path.join(w.dir, "outcomes")
    fg = subprocess.Popen([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                           "--mode", "takethis", "--peers", "1", "--conns", str(CONNS),
                           "--source", fgdp.KERNEL_ADDRS[0], "--dups", "1",
                           "--articles", str(ARTICLES), "--size", "700K", "--window", "4",
                           "--seed", "33", "--id-prefix", "fgheld%d" % os.getpid(),
                           "--path-identity", "floodgate.test", "--no-progress", "--json",
                           "--outcomes", outcomes, "--timeout", "120"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = innd_pid(innd_dir)
    stopped = False
    try:
        fgkit.wait_until(lambda: w.stats().get("relay_ack_accepted", 0) >= 5 or
                         fg.poll() is not None, 120, "innd to acknowledge 5 articles",
                         step=0.05)
        check(fg.poll() is None, "feedgen ended before innd was stopped")
        before = w.stats()
        os.kill(pid, signal.SIGSTOP)
        stopped = True
        # the cap is reached while innd is stopped
        during = w.wait_stats(lambda st: capped(st) > capped(before) or
                              fg.poll() is not None, "the held-octets cap reached", timeout=120)
        check(capped(during) > capped(before),
              "the cap was never reached (spill_cap %d, held_cap %d)"
              % (during.get("relay_ack_spill_cap", 0), during.get("queue_held_cap", 0)))
        if not arp_answered():
            dump(w)
            check(False, "no ARP reply from the port while innd is stopped")
        line, took = check_on_fresh_connection()
        check(line[:3] in (b"238", b"431"), "CHECK during the stop answered %r" % line)
        check(took < 20, "CHECK answered after %.1f s" % took)
        # stopped long enough that articles waited out ack-timeout
        late = w.wait_stats(lambda st: st.get("relay_ack_spill_timeout", 0) >
                            before.get("relay_ack_spill_timeout", 0) or fg.poll() is not None,
                            "an article spilled at ack-timeout", timeout=120)
        check(late.get("relay_ack_spill_timeout", 0) > before.get("relay_ack_spill_timeout", 0),
              "no article waited out ack-timeout while innd was stopped")
        os.kill(pid, signal.SIGCONT)
        stopped = False
    finally:
        if stopped:
            os.kill(pid, signal.SIGCONT)
    out, err = fg.communicate(timeout=320)
    if fg.returncode != 0:
        dump(w)
    check(fg.returncode == 0, "feedgen (stuck or a mismatch): %s %s" % (out[-800:], err[-800:]))
    res = json.loads(out)
    check(res["mismatches"] == 0, "feedgen: %d mismatches" % res["mismatches"])
    st = relaykit.wait_drained(w, timeout=180)
    acc = []
    with open(outcomes) as f:
        for ln in f:
            mid, _cls, n239 = ln.split()[:3]
            if int(n239) > 0:
                acc.append(mid)
    check(len(acc) >= ARTICLES // 2, "only %d articles got 239" % len(acc))
    missing = relaykit.not_in_history(innd_dir, acc)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    w.stop_dp()
    w.check_logs()
    log("%d x 700 KB on %d connections, innd stopped and resumed: all %d 239'd in innd's "
        "history; spill_cap %d, held_cap %d, spill_timeout %d, queued %d, ack_accepted %d; "
        "CHECK answered in %.2f s during the stop"
        % (ARTICLES, CONNS, len(acc), st.get("relay_ack_spill_cap", 0),
           st.get("queue_held_cap", 0), st.get("relay_ack_spill_timeout", 0),
           st.get("relay_ack_queued", 0), st.get("relay_ack_accepted", 0), took))


def main():
    fgkit.need_inn()
    w = fgdp.World("heldcap", prefix="fg-dph",
                   extra="[downstream down]\naddress 127.0.0.1:%d\nconnections 2\n"
                         "acknowledges on\n" % INND_PORT)
    with open(w.conf) as f:
        text = f.read()
    with open(w.conf, "w") as f:
        f.write(text.replace("[persistence]\n", "[persistence]\nheld-limit 8M\n", 1))
    os.chmod(w.dir, 0o755)
    relaykit.with_innd(w.dir, INND_PORT, lambda work, d: run(w, d))
    fgdp.passed("79_dp_heldcap_innd_stop")


if __name__ == "__main__":
    main()
