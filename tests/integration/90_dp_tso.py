#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 120
"""90_dp_tso — the userspace TCP sending by reference through net_tap with
TSO, and without: the kernel receives exactly the octets.

tools/bench/tso_tap.py runs bench_tso (tools/bench/bench_tso.c) in a
network namespace of its own: a net_tap port, a listener on the tap's
kernel side that compares every octet with the article's pattern, a 1 MiB
article held in 1448-octet mbufs sent by reference 8 times, then a close.
`--tso on`: frames of many segments went to the port (tcp_tx_tso_frames
> 0, more segments than frames, far fewer data frames than segments) and
the kernel got the stream whole; `--tso off`: no TSO frame, a frame a
segment, the same stream. The sender's CPU per MB of both is printed
(one run each: a figure, not a check; make bench has the medians).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("FG_TOP", "."), "tools", "bench"))
import tso_tap  # noqa: E402
from tso_tap import ART, MB, check, log  # noqa: E402


def main():
    if not os.access(tso_tap.BIN, os.X_OK):
        check(False, "%s not built" % tso_tap.BIN)
    on = tso_tap.run("on")
    check(on["tcp_tx_referenced_octets"] >= MB * ART, "tso on: not sent by reference")
    check(on["tcp_tx_tso_frames"] > 0 and on["tcp_tx_tso_segs"] > on["tcp_tx_tso_frames"],
          "tso on: %d TSO frames, %d segments" % (on["tcp_tx_tso_frames"],
                                                  on["tcp_tx_tso_segs"]))
    check(on["tcp_tx_data_segs"] < MB * ART / 1460 / 2,
          "tso on: %d data frames for %d octets" % (on["tcp_tx_data_segs"], MB * ART))
    log("ok: tso on: %d octets whole; %d TSO frames of %d segments, %d data frames in all, "
        "%d retransmitted" % (MB * ART, on["tcp_tx_tso_frames"], on["tcp_tx_tso_segs"],
                              on["tcp_tx_data_segs"], on["tcp_retrans_segs"]))
    off = tso_tap.run("off")
    check(off["tcp_tx_tso_frames"] == 0, "tso off: %d TSO frames" % off["tcp_tx_tso_frames"])
    check(off["tcp_tx_data_segs"] >= MB * ART / 1460,
          "tso off: %d data frames" % off["tcp_tx_data_segs"])
    log("ok: tso off: %d octets whole in %d data frames" % (MB * ART, off["tcp_tx_data_segs"]))
    log("sender CPU per MB (one run each, noisy): tso on %.0f us, off %.0f us, ratio %.2f"
        % (on["cpu_s"] * 1e6 / MB, off["cpu_s"] * 1e6 / MB,
           on["cpu_s"] / off["cpu_s"] if off["cpu_s"] else 0))
    log("PASS 90_dp_tso")


if __name__ == "__main__":
    main()
