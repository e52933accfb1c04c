#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tso_tap.py — the userspace TCP sending by reference through net_tap to
the box's kernel, with TSO and without (tools/bench/bench_tso.c does the
sending). Python stdlib only.

  tso_tap.py --quick|--full --md FILE
        make bench's fragment: runs alternating `--tso on` and `--tso off`
        (3 each, or 5), each 8 MiB (or 32), every octet checked by the
        kernel-side listener; the sender's CPU per MB, medians, and the
        ratio TSO over none, from this one invocation.

One run (`run(tso, mb)`, what tests/integration/90_dp_tso.py uses): in a
network namespace of its own, bench_tso opens a net_tap port; the tap's
kernel side gets an address and a listener, which compares every octet
it receives with the article's pattern; bench_tso connects, sends a 1 MiB
article held in 1448-octet mbufs by reference N times, closes, and prints
its counters, returned as a dict. The namespace goes at the end.
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


def run(tso, mb=MB):
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        ns("ip", "link", "set", "lo", "up")
        return _run(tso, mb)
    finally:
        subprocess.run(["ip", "netns", "del", NS])


def _run(tso, mb):
    snd = subprocess.Popen(["ip", "netns", "exec", NS, BIN, "--iface", IFACE, "--addr", ADDR,
                            "--peer", PEER, "--port", str(PORT), "--mb", str(mb),
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
        check(lst.returncode == 0 and got == "ok %d" % (mb * ART),
              "tso %s: the kernel got %r, %d octets sent" % (tso, got, mb * ART))
    finally:
        for p in (snd, lst):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    kv = dict(l.split() for l in out.splitlines() if len(l.split()) == 2)
    return {k: float(v) for k, v in kv.items()}


def main():
    quick = "--full" not in sys.argv
    md = sys.argv[sys.argv.index("--md") + 1] if "--md" in sys.argv else None
    runs, mb = (3, 8) if quick else (5, 32)
    cpu = {"on": [], "off": []}
    frames = {}
    for _ in range(runs):
        for tso in ("on", "off"):
            r = run(tso, mb)
            cpu[tso].append(r["cpu_s"] * 1e6 / mb)
            frames[tso] = r["tcp_tx_data_segs"]
    med = {k: sorted(v)[len(v) // 2] for k, v in cpu.items()}
    text = ("### Userspace TCP through net_tap to the kernel: TSO against one segment a frame\n\n"
            "| way (bench_tso, one core, tap to the kernel) | sender CPU µs per MB | data frames "
            "per %d MiB | CPU vs no TSO |\n|---|---:|---:|---:|\n" % mb)
    for tso, name in (("off", "one segment a frame (baseline)"), ("on", "TSO (net_tap's GSO)")):
        text += "| %s | %.0f | %d | %.3f |\n" % (name, med[tso], frames[tso], med[tso] / med["off"])
    text += ("\nMedians of %d runs each, alternated; the article (1 MiB in 1448-octet mbufs) sent "
             "by reference %d times a run, every octet checked by the kernel's listener. The "
             "sender's CPU includes the tap PMD's work in the same thread (its software "
             "segmentation and checksums, the writes to the tun device).\n" % (runs, mb))
    if md:
        with open(md, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
