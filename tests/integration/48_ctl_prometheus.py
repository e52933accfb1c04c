#!/usr/bin/env python3
# timeout: 300
"""48_ctl_prometheus — a real Prometheus server scrapes floodctld.

In a network namespace of its own: floodctld's stats endpoint on
127.0.0.1:9119, and /usr/bin/prometheus (Debian's package) with a
throwaway configuration and data directory, scraping it every second on
loopback. After a known workload (120 accepted, 30 rejected as
duplicates), Prometheus's query API returns the same counter values, and
the target is up.
"""
import os
import signal
import time

import promkit
from ctlkit import Ctl, check, log, passed


def main():
    c = Ctl("prom")
    c.netns()
    c.config(http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])
    prom = promkit.start(os.path.join(c.dir, "prometheus"))
    c.procs.append(prom)

    c.run_writer("--prefix", "p", "--count", "150", "--state", "rejected", "--reason",
                 "duplicate", "--start", "0", name="rej")
    c.run_writer("--prefix", "q", "--count", "120", name="acc")
    want = {"floodgate_rules_accepted_total": 120,
            'floodgate_rejected_total{reason="duplicate"}': 150,
            "floodgate_journal_records_total": 270,
            'up{job="floodgate"}': 1}
    got = {}
    end = time.time() + 90
    while time.time() < end:
        got = {q: promkit.value(q) for q in want}
        if got == want:
            break
        if prom.poll() is not None:
            break
        time.sleep(0.5)
    log("Prometheus query API: %r" % got)
    check(prom.poll() is None, "prometheus still running (log in %s)" % prom.logp)
    check(got == want, "Prometheus read back %r, want %r" % (got, want))
    prom.send_signal(signal.SIGTERM)
    prom.wait(timeout=30)
    c.stop()
    passed("48_ctl_prometheus")


main()
