#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 1800
"""20_big_articles — 700 KB articles through the whole path with a slow
downstream.

floodgate on a tap port takes TAKETHIS of 700 KB binaries from feedgen (two
peers, each article offered by both) into its durable queue; the relay
hands them to a downstream that takes 50 ms per article (countd
--delay-ms), so the queue grows while the peers are fed — observed, not
assumed — and drains after. Every article feedgen saw accepted reaches
the downstream exactly once; floodgate's 239s equal feedgen's; feedgen saw
no wrong answer.
"""
import json
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgdp  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

ARTICLES = int(os.environ.get("FG_BIG_ARTICLES", "1500"))
DELAY_MS = 50


def main():
    w = fgdp.World("big", prefix="fg-big",
                   extra="[persistence]\nwarmup 0\nqueue-limit 4G\n"
                         "[downstream down]\naddress 127.0.0.1:%d\nwindow 4\nconnections 2\n"
                         % relaykit.DOWN_PORT)
    countd = relaykit.Countd(w.dir, args=["--delay-ms", str(DELAY_MS)])
    countd.start()
    w.start_ctld()
    w.start_dp()
    prefix = "big%d" % os.getpid()
    peak = {"records": 0}
    done = threading.Event()

    def watch():
        while not done.wait(0.5):
            peak["records"] = max(peak["records"], w.stats().get("queue_records_on_disk", 0))

    t = threading.Thread(target=watch)
    t.start()
    try:
        r = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                            "--source", fgdp.KERNEL_ADDRS[1], "--peers", "2", "--dups", "2",
                            "--mode", "takethis", "--size", "700K", "--articles", str(ARTICLES),
                            "--window", "8", "--id-prefix", prefix, "--path-identity",
                            "floodgate.test", "--timeout", "1200", "--json", "--no-progress"],
                           capture_output=True, text=True, timeout=1500)
    finally:
        done.set()
        t.join()
    check(r.stdout.strip(), "feedgen printed nothing: %s" % r.stderr[-800:])
    fg = json.loads(r.stdout)
    check(r.returncode == 0 and fg["mismatches"] == 0, "feedgen: exit %d, mismatches %s"
          % (r.returncode, fg["first_mismatches"][:3]))
    check(fg["accepted"] == fg["expected_accepted"] and fg["accepted"] > 0,
          "feedgen: %d of %d articles accepted, its model expects %d"
          % (fg["accepted"], ARTICLES, fg["expected_accepted"]))
    check(peak["records"] > 0, "the queue never held a record: the downstream was not the "
          "slower side")
    st = relaykit.wait_drained(w, timeout=ARTICLES * DELAY_MS / 1000 + 600)
    mine = {m: n for m, n in countd.counts().items() if prefix in m}
    check(len(mine) == fg["accepted"], "the downstream has %d distinct IDs, feedgen %d accepted"
          % (len(mine), fg["accepted"]))
    twice = [m for m, n in mine.items() if n > 1]
    check(not twice, "relayed twice: %s" % twice[:5])
    check(st["nntp_response:239"] == fg["accepted"], "floodgate's 239s %d, feedgen's %d"
          % (st["nntp_response:239"], fg["accepted"]))
    log("%d articles of 700 KB: %.0f MB/s into floodgate, the queue peaked at %d records, "
        "each delivered once" % (fg["accepted"], fg["bytes_per_s"] / 1e6, peak["records"]))
    w.stop_dp()
    countd.stop()
    w.check_logs()
    fgdp.passed("20_big_articles")


if __name__ == "__main__":
    main()
