#!/usr/bin/env python3
# timeout: 600
"""51_relay_innd — a feed through floodgate-host, its durable queue and the
relay lands in INN's innd (tools/inn/innd.sh, a throwaway instance on
loopback in this test's namespace): innd's history (grephistory) holds
every article that got 239 and none that got 439; then a feedgen feed (its
answers checked against its own model) is relayed whole: every article
feedgen had accepted is acknowledged by innd."""
import json
import os
import subprocess

import hostlib
import relaykit
from hostlib import check

relaykit.in_netns()

INND_PORT = 11190
FEEDGEN = os.path.join(hostlib.BUILD, "bin", "feedgen")


def main():
    relaykit.main_with_innd("fg-relay-51-", INND_PORT, run)


def run(work, innd_dir):
    data = os.path.join(work, "data")
    host = hostlib.Host(extra=relaykit.host_config(data, down_port=INND_PORT,
                                                   downstream_extra="connections 2\n"))
    relaykit.known_batch_to_innd("inn", "relay.test", relaykit.feed, host, innd_dir)

    # feedgen through the filter, relayed to innd
    r = subprocess.run([FEEDGEN, "--host", "127.0.0.1", "--port", str(hostlib.PORT),
                        "--mode", "takethis", "--peers", "2", "--dups", "2", "--articles",
                        "3000", "--size", "2K", "--window", "16", "--seed", "5",
                        "--id-prefix", "fg51", "--cutoff", "10d", "--no-progress", "--json",
                        "--timeout", "300"], capture_output=True, text=True)
    check(r.returncode == 0, "feedgen: %s %s" % (r.stdout[-500:], r.stderr[-500:]))
    fg = json.loads(r.stdout)
    check(fg["mismatches"] == 0 and fg["accepted"] > 2500, "feedgen: %d accepted, %d mismatches"
          % (fg["accepted"], fg["mismatches"]))
    st = relaykit.wait_drained(host, timeout=120)
    got = (relaykit.stats_line(st, "down", "accepted") +
           relaykit.stats_line(st, "down", "refused"))
    check(got == 150 + fg["accepted"], "innd acknowledged %d of %d" % (got, 150 + fg["accepted"]))
    check(relaykit.stats_line(st, "down", "accepted") >= 150 + fg["accepted"] * 0.95,
          "innd accepted nearly all of feedgen's")
    with open(os.path.join(innd_dir, "db", "history")) as f:
        lines = sum(1 for _ in f)
    check(lines >= 150 + fg["accepted"], "innd's history has %d lines" % lines)
    host.stop()
    print("PASS: 51_relay_innd (150 + %d articles relayed to innd)" % fg["accepted"])


main()
