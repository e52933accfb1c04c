#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""78_dp_gro — 700 KB articles through the tap with [dataplane] gro on and off.

floodgate (DPDK, tap port) with its durable queue relaying to the counting
server (countd.py), run twice in one namespace, floodctld living on: with
`gro on`, then restarted with `gro off`. Each time feedgen sends 700 KB
articles by TAKETHIS (its model checks every answer), every one it saw
accepted (its model holds a few it must refuse) reaches countd once,
and a scripted feed of known 700 KB articles
arrives byte for byte. With gro on, GRO merged segments
(dp_gro_segs_merged and dp_gro_packets > 0); with it off, none; never a
merged packet refused (net_rx_merged_bad) nor a bad checksum. What the tap
delivers is logged: the kernel side's offload features (a DPDK 22.11 tap
is opened without a virtio-net header, so the kernel segments to the MTU
before the tap: 1514-octet frames at most) and the frames' mean size as
net counted them (a merged packet's headers once, so a little less with
gro on).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

DP = (fgdp.DP_ADDR, 119)
SRC = fgdp.KERNEL_ADDRS[0]
SIZE = 700 * 1000
ETH_FRAME_MAX = 1514


def extra(gro):
    return ("gro %s\n[persistence]\nwarmup 0\n[downstream down]\naddress 127.0.0.1:%d\n"
            % (gro, relaykit.DOWN_PORT))


def tap_offloads():
    """The kernel side's segmentation offloads, as ethtool says (or why not)."""
    r = subprocess.run(["ethtool", "-k", "fgd0"], capture_output=True, text=True)
    if r.returncode != 0:
        return "ethtool -k fgd0: %s" % (r.stderr.strip() or r.returncode)
    keep = ("tcp-segmentation-offload", "generic-segmentation-offload",
            "generic-receive-offload")
    return ", ".join(l.strip() for l in r.stdout.splitlines() if l.strip().startswith(keep))


def run(w, countd, gro):
    tag = "gro%s%d" % (gro, os.getpid())
    s0 = w.stats()
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                         "--articles", "40", "--dups", "1", "--mode", "takethis",
                         "--size", "700K", "--json", "--path-identity", "floodgate.test",
                         "--id-prefix", tag, "--timeout", "120"],
                        capture_output=True, text=True, timeout=200)
    check(fg.returncode == 0, "feedgen (gro %s):\n%s\n%s" % (gro, fg.stdout[-3000:],
                                                            fg.stderr[-2000:]))
    rep = json.loads(fg.stdout)
    accepted = rep["accepted"]
    # its model has old, future and broken articles among them: every one
    # it counts as wanted must be taken, no more, and no answer may differ
    # from the model's
    check(accepted == rep["expected_accepted"] and rep["mismatches"] == 0 and accepted > 0,
          "feedgen (gro %s): %d accepted, %d expected, mismatches %s"
          % (gro, accepted, rep["expected_accepted"], rep["first_mismatches"][:3]))
    known = [("<%s.k%d@dpgro.test>" % (tag, i),
              relaykit.make_article("<%s.k%d@dpgro.test>" % (tag, i), size=SIZE))
             for i in range(6)]
    answers = relaykit.first_answers(relaykit.feed(known, addr=DP, src=SRC))
    check(all(answers[m] == 239 for m, _ in known), "known 700 KB articles: %s" % answers)
    relaykit.wait_drained(w, timeout=120)
    counts = countd.counts()
    mine = {m: n for m, n in counts.items() if tag in m and "@dpgro.test" not in m}
    check(len(mine) == accepted and all(n == 1 for n in mine.values()),
          "gro %s: countd has %d distinct feedgen IDs (once each: %s), feedgen %d accepted"
          % (gro, len(mine), all(n == 1 for n in mine.values()), accepted))
    relaykit.expect_exactly_once(countd, answers, dict(known))
    s1 = w.stats()
    d = {k: s1.get(k, 0) - s0.get(k, 0) for k in (
        "dp_gro_segs_merged", "dp_gro_packets", "net_rx_frames", "net_rx_bytes",
        "net_rx_merged_bad", "tcp_rx_bad_csum", "net_ip_bad_csum")}
    check(d["net_rx_merged_bad"] == 0 and d["tcp_rx_bad_csum"] == 0 and
          d["net_ip_bad_csum"] == 0, "gro %s: refused or bad packets: %s" % (gro, d))
    if gro == "on":
        check(d["dp_gro_segs_merged"] > 0 and d["dp_gro_packets"] > 0,
              "gro on merged nothing: %s" % d)
    else:
        check(d["dp_gro_segs_merged"] == 0 and d["dp_gro_packets"] == 0,
              "gro off merged: %s" % d)
    frames = d["net_rx_frames"] + d["dp_gro_segs_merged"]	# as the tap delivered them
    mean = d["net_rx_bytes"] / frames
    check(mean <= ETH_FRAME_MAX, "gro %s: the tap's frames average %.0f octets" % (gro, mean))
    log("gro %s: %d + 6 articles of 700 KB intact; the tap delivered %d frames, %.0f octets "
        "each on average as net counted them; %d merged into %d packets (%.1f segments each)"
        % (gro, accepted, frames, mean, d["dp_gro_segs_merged"], d["dp_gro_packets"],
           (d["dp_gro_packets"] + d["dp_gro_segs_merged"]) / max(d["dp_gro_packets"], 1)))


def main():
    w = fgdp.World("gro", prefix="fg-dpg", extra=extra("on"))
    countd = relaykit.Countd(w.dir)
    countd.start()
    w.start_ctld()
    w.start_dp()
    log("the tap's kernel side: %s" % tap_offloads())
    run(w, countd, "on")
    w.stop_dp()
    w.write_config(extra=extra("off"))
    w.start_dp()
    run(w, countd, "off")
    w.stop_dp()
    countd.stop()
    w.check_logs()
    fgdp.passed("78_dp_gro")


main()
