#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""79_dp_relay_innd — floodgate (DPDK, tap port) relays to a real innd.

A throwaway innd (tools/inn/innd.sh) listens on the namespace's loopback;
floodgate's [downstream] points at it, so its sink is the durable queue
and the relay. A scripted feed of known articles through the tap: innd's
history (grephistory) holds every article that got 239 and none that got
439. Then feedgen through the tap (its answers checked against its own
model): innd acknowledges every article feedgen had accepted, and its
history has them.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

INND_PORT = 11190


def run(w, innd_dir):
    w.start_ctld()
    w.start_dp()
    relaykit.known_batch_to_innd(
        "dpinn", "dprelay.test",
        lambda arts: relaykit.feed(arts, addr=(fgdp.DP_ADDR, 119), src=fgdp.KERNEL_ADDRS[0]),
        w, innd_dir)

    r = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                        "--mode", "takethis", "--peers", "2", "--dups", "2", "--articles",
                        "3000", "--size", "2K", "--window", "16", "--seed", "7",
                        "--id-prefix", "fg79", "--path-identity", "floodgate.test",
                        "--no-progress", "--json", "--timeout", "120"],
                       capture_output=True, text=True, timeout=200)
    check(r.returncode == 0, "feedgen: %s %s" % (r.stdout[-500:], r.stderr[-500:]))
    fg = json.loads(r.stdout)
    check(fg["mismatches"] == 0 and fg["accepted"] > 2500, "feedgen: %d accepted, %d mismatches"
          % (fg["accepted"], fg["mismatches"]))
    st = relaykit.wait_drained(w, timeout=120)
    got = (relaykit.stats_line(st, "down", "accepted") +
           relaykit.stats_line(st, "down", "refused"))
    check(got == 150 + fg["accepted"], "innd acknowledged %d of %d" % (got, 150 + fg["accepted"]))
    check(relaykit.stats_line(st, "down", "accepted") >= 150 + fg["accepted"] * 0.95,
          "innd accepted nearly all of feedgen's")
    check(st["nntp_response:239"] == 150 + fg["accepted"], "floodgate's 239s: %d"
          % st["nntp_response:239"])
    with open(os.path.join(innd_dir, "db", "history")) as f:
        lines = sum(1 for _ in f)
    check(lines >= 150 + fg["accepted"], "innd's history has %d lines" % lines)
    w.stop_dp()
    w.check_logs()
    log("150 + %d articles relayed to innd" % fg["accepted"])


def main():
    fgkit.need_inn()
    w = fgdp.World("innd", prefix="fg-dpr",
                   extra="[downstream down]\naddress 127.0.0.1:%d\nconnections 2\n" % INND_PORT)
    os.chmod(w.dir, 0o755)
    relaykit.with_innd(w.dir, INND_PORT, lambda work, d: run(w, d))
    fgdp.passed("79_dp_relay_innd")


if __name__ == "__main__":
    main()
