#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 120
"""90_dp_tso — the userspace TCP sending by reference through net_tap with
TSO, and without: the kernel receives exactly the octets.

In a network namespace of its own, bench_tso (tools/bench/bench_tso.c)
opens a net_tap port, connects to a listener on the tap's kernel side and
sends a 1 MiB article held in 1448-octet mbufs by reference, 8 times, then
closes. The listener compares every octet with the article's pattern.
Run twice: `--tso on`: frames of many segments went to the port
(tcp_tx_tso_frames > 0, and more segments than frames) and the kernel got
the stream whole; `--tso off`: no TSO frame, the same stream. The sender's
CPU per MB of both runs is printed (noisy here: a figure, not a check).
"""
import os
import subprocess
import sys
import time

NS = "fgtso%d" % os.getpid()
IFACE = "fgtso0"
ADDR, PEER, PORT = "10.98.7.1", "10.98.7.2", 119
MB = 8
ART = 1 << 20
BIN = os.path.join(os.environ.get("FG_BUILD", "build/release"), "bench", "bench_tso")

LISTENER = r"""
import socket, sys
ART = %d
pat = bytes(((i * 7 + (i >> 11)) & 255) for i in range(ART))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", %d))
s.listen(1)
s.settimeout(60)
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(60)
got = 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    i = 0
    while i < len(b):
        at = (got + i) %% ART
        k = min(len(b) - i, ART - at)
        if b[i:i + k] != pat[at:at + k]:
            print("bad at %%d" %% (got + i), flush=True)
            sys.exit(1)
        i += k
    got += len(b)
c.close()
print("ok %%d" %% got, flush=True)
""" % (ART, PORT)


def log(msg):
    print(msg, flush=True)


def check(cond, msg):
    if not cond:
        log("FAIL: " + msg)
        sys.exit(1)


def ns(*cmd, **kw):
    return subprocess.run(["ip", "netns", "exec", NS] + list(cmd), check=True, **kw)


def wait_iface(timeout=30):
    """Until the tap exists in the namespace (the EAL made it)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = subprocess.run(["ip", "netns", "exec", NS, "ip", "link", "show", IFACE],
                           capture_output=True)
        if r.returncode == 0:
            return True
        time.sleep(0.05)
    return False


def one(tso):
    snd = subprocess.Popen(["ip", "netns", "exec", NS, BIN, "--iface", IFACE, "--addr", ADDR,
                            "--peer", PEER, "--port", str(PORT), "--mb", str(MB),
                            "--tso", tso],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    lst = None
    try:
        line = snd.stdout.readline().strip()
        check(line == "ready", "bench_tso (tso %s) did not start: %r %s"
              % (tso, line, snd.stderr.read() if snd.poll() is not None else ""))
        check(wait_iface(), "no %s in the namespace" % IFACE)
        ns("ip", "addr", "add", PEER + "/24", "dev", IFACE)
        ns("ip", "link", "set", IFACE, "up")
        lst = subprocess.Popen(["ip", "netns", "exec", NS, sys.executable, "-c", LISTENER],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(lst.stdout.readline().strip() == "listening", "listener did not start")
        snd.stdin.write("go\n")
        snd.stdin.flush()
        out, err = snd.communicate(timeout=90)
        check(snd.returncode == 0, "bench_tso (tso %s) failed: %s" % (tso, err[-2000:]))
        got = lst.communicate(timeout=30)[0].strip()
        check(lst.returncode == 0 and got == "ok %d" % (MB * ART),
              "tso %s: the kernel got %r, %d octets sent" % (tso, got, MB * ART))
    finally:
        for p in (snd, lst):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    kv = dict(l.split() for l in out.splitlines() if len(l.split()) == 2)
    return {k: float(v) for k, v in kv.items()}


def main():
    if not os.access(BIN, os.X_OK):
        log("FAIL: %s not built" % BIN)
        sys.exit(1)
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        ns("ip", "link", "set", "lo", "up")
        on = one("on")
        check(on["tcp_tx_referenced_octets"] >= MB * ART, "tso on: not sent by reference")
        check(on["tcp_tx_tso_frames"] > 0 and on["tcp_tx_tso_segs"] > on["tcp_tx_tso_frames"],
              "tso on: %d TSO frames, %d segments" % (on["tcp_tx_tso_frames"],
                                                      on["tcp_tx_tso_segs"]))
        log("ok: tso on: %d octets whole; %d TSO frames made %d segments, %d data frames "
            "in all, %d retransmitted"
            % (MB * ART, on["tcp_tx_tso_frames"], on["tcp_tx_tso_segs"],
               on["tcp_tx_data_segs"], on["tcp_retrans_segs"]))
        off = one("off")
        check(off["tcp_tx_tso_frames"] == 0, "tso off: %d TSO frames" % off["tcp_tx_tso_frames"])
        check(off["tcp_tx_data_segs"] >= MB * ART / 1460, "tso off: %d data frames"
              % off["tcp_tx_data_segs"])
        log("ok: tso off: %d octets whole in %d data frames" % (MB * ART, off["tcp_tx_data_segs"]))
        log("sender CPU per MB (one run each, noisy): tso on %.0f us, off %.0f us, ratio %.2f"
            % (on["cpu_s"] * 1e6 / MB, off["cpu_s"] * 1e6 / MB,
               on["cpu_s"] / off["cpu_s"] if off["cpu_s"] else 0))
    finally:
        subprocess.run(["ip", "netns", "del", NS])


if __name__ == "__main__":
    main()
