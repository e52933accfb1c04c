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
import json
import os
import signal
import subprocess
import time
import urllib.parse

from ctlkit import Ctl, check, http_get, log, passed

PROM = "http://127.0.0.1:9090"


def query(q):
    st, body = http_get(PROM + "/api/v1/query?query=" + urllib.parse.quote(q), timeout=5)
    if st != 200:
        return None
    res = json.loads(body)["data"]["result"]
    return float(res[0]["value"][1]) if res else None


def main():
    c = Ctl("prom")
    c.netns()
    c.config(http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])
    pdir = os.path.join(c.dir, "prometheus")
    os.makedirs(pdir)
    pconf = os.path.join(pdir, "prometheus.yml")
    with open(pconf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: floodctld\n"
                "    static_configs:\n      - targets: ['127.0.0.1:9119']\n")
    plog = open(os.path.join(pdir, "prometheus.log"), "w")
    prom = subprocess.Popen(["prometheus", "--config.file=" + pconf,
                             "--storage.tsdb.path=" + os.path.join(pdir, "data"),
                             "--web.listen-address=127.0.0.1:9090"],
                            stdout=plog, stderr=subprocess.STDOUT)
    c.procs.append(prom)

    c.run_writer("--prefix", "p", "--count", "150", "--state", "rejected", "--reason",
                 "duplicate", "--start", "0", name="rej")
    c.run_writer("--prefix", "q", "--count", "120", name="acc")
    want = {"floodgate_rules_accepted_total": 120,
            'floodgate_rejected_total{reason="duplicate"}': 150,
            "floodgate_journal_records_total": 270,
            'up{job="floodctld"}': 1}
    got = {}
    end = time.time() + 90
    while time.time() < end:
        got = {q: query(q) for q in want}
        if got == want:
            break
        if prom.poll() is not None:
            break
        time.sleep(0.5)
    log("Prometheus query API: %r" % got)
    check(prom.poll() is None, "prometheus still running (log in %s)" % pdir)
    check(got == want, "Prometheus read back %r, want %r" % (got, want))
    prom.send_signal(signal.SIGTERM)
    prom.wait(timeout=30)
    c.stop()
    passed("48_ctl_prometheus")


main()
