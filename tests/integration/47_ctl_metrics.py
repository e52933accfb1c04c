#!/usr/bin/env python3
# timeout: 300
"""47_ctl_metrics — the stats export after a known workload.

In a network namespace of its own, floodctld serves /metrics and
/stats.json on 127.0.0.1:9119. Two writers, labelled as peers alpha and
beta, make a workload whose every count is known: 200 accepted and 100
rejected (too-old) for alpha with an Injection-Date 5 s after Date and
arrival 10 s after Injection-Date, 50 accepted for beta with no delays.
`promtool check metrics` passes on the scrape; the counters, the per-peer
and per-reason series, both delay histograms (bucket by bucket), the
history gauges, the journal and verdict-log counters have exactly the
expected values, in /metrics, in /stats.json and in `floodctl stats`.
The verdict log holds one JSON line per decision; rotated by size, it
keeps the configured number of files and counts every line it wrote or
dropped.
"""
import json
import os
import re
import subprocess

from ctlkit import TOP, Ctl, check, http_get, log, passed, prom_parse, prom_value, wait_for

BASE = "http://127.0.0.1:9119"


def scrape(c):
    st, body = http_get(BASE + "/metrics")
    check(st == 200, "GET /metrics: %d" % st)
    return body



def main():
    c = Ctl("metrics")
    c.netns()
    vlog = os.path.join(c.dir, "verdict.log")
    c.config("[peer alpha]\naddress 192.0.2.1\n[peer beta]\naddress 192.0.2.2\n"
             "[stats]\nverdict-log %s\n" % vlog, http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])
    c.run_writer("--prefix", "a", "--count", "300", "--state", "mixed", "--peer", "alpha",
                 "--injection-delay", "5", "--date-age", "10", "--vlog", name="a")
    c.run_writer("--prefix", "b", "--count", "50", "--peer", "beta", "--vlog", name="b")
    wait_for(lambda: prom_value(prom_parse(scrape(c)), "floodgate_writers") == 0 and
             prom_value(prom_parse(scrape(c)), "floodgate_verdict_log_lines_total") == 350,
             "both writers reaped and their lines written")

    body = scrape(c)
    p = subprocess.run(["promtool", "check", "metrics"], input=body.encode(), capture_output=True)
    check(p.returncode == 0, "promtool check metrics: %s %s" % (p.stdout, p.stderr))
    m = prom_parse(body)
    want = {
        ("floodgate_rules_accepted_total", ()): 250,
        ("floodgate_rules_rejected_total", ()): 100,
        ("floodgate_rejected_total", (("reason", "too-old"),)): 100,
        ("floodgate_rejected_total", (("reason", "duplicate"),)): 0,
        ("floodgate_peer_rules_accepted_total", (("peer", "alpha"),)): 200,
        ("floodgate_peer_rules_accepted_total", (("peer", "beta"),)): 50,
        ("floodgate_peer_rules_rejected_total", (("peer", "beta"),)): 0,
        ("floodgate_peer_rejected_total", (("peer", "alpha"), ("reason", "too-old"))): 100,
        ("floodgate_journal_records_total", ()): 350,
        ("floodgate_journal_ring_full_total", ()): 0,
        ("floodgate_verdict_log_lines_total", ()): 350,
        ("floodgate_verdict_log_dropped_total", ()): 0,
        ("floodgate_writers_reaped_total", ()): 2,
        ("floodgate_history_entries", ()): 350,
        ("floodgate_history_state_entries", (("state", "accepted"),)): 250,
        ("floodgate_history_state_entries", (("state", "rejected"),)): 100,
        ("floodgate_history_full_alarm", ()): 0,
        ("floodgate_clock_suspect", ()): 0,
        ("floodgate_journal_lag_records", ()): 0,
        ("floodgate_verdict_log_enabled", ()): 1,
        ("floodgate_injection_delay_seconds_bucket", (("le", "-1"),)): 0,
        ("floodgate_injection_delay_seconds_bucket", (("le", "0"),)): 50,
        ("floodgate_injection_delay_seconds_bucket", (("le", "3"),)): 50,
        ("floodgate_injection_delay_seconds_bucket", (("le", "7"),)): 350,
        ("floodgate_injection_delay_seconds_bucket", (("le", "+Inf"),)): 350,
        ("floodgate_injection_delay_seconds_sum", ()): 1500,
        ("floodgate_injection_delay_seconds_count", ()): 350,
        ("floodgate_propagation_delay_seconds_bucket", (("le", "7"),)): 50,
        ("floodgate_propagation_delay_seconds_bucket", (("le", "15"),)): 350,
        ("floodgate_propagation_delay_seconds_sum", ()): 3000,
        ("floodgate_startup_info", (("source", "empty"),)): 1,
    }
    for (name, labels), v in want.items():
        got = prom_value(m, name, **dict(labels))
        check(got == v, "%s%s = %r, want %r" % (name, dict(labels), got, v))
    # docs/operations.md lists every metric family floodctld exports itself
    # (counters of other modules' sections are theirs to list)
    doc = open(os.path.join(TOP, "docs/operations.md")).read()
    mine = ("journal_", "snapshot", "expiry_", "verdict_log_", "writers_", "control_",
            "http_", "config_")
    table = set(json.loads(http_get(BASE + "/stats.json")[1])["counters"])
    for fam in re.findall(r"^# HELP (\S+) ", body, re.M):
        stem = fam[len("floodgate_"):-len("_total")] if fam.endswith("_total") else None
        if fam.startswith("floodgate_peer_") or (stem in table and not stem.startswith(mine)):
            continue
        check("`" + fam in doc, "docs/operations.md lists %s" % fam)
    check(prom_value(m, "floodgate_history_capacity") >= 200000, "capacity gauge")
    check(0 < prom_value(m, "floodgate_history_load_ratio") < 0.01, "load ratio gauge")
    check(prom_value(m, "floodgate_snapshot_age_seconds") < 60, "snapshot age gauge")

    st, body = http_get(BASE + "/stats.json")
    j = json.loads(body)
    check(st == 200 and j["counters"]["rules_accepted"] == 250 and
          j["peers"]["alpha"]["rejected"]["too-old"] == 100 and
          j["peers"]["beta"]["counters"]["rules_accepted"] == 50 and
          j["histograms"]["injection_delay_seconds"]["count"] == 350 and
          j["history"]["entries"] == 350, "/stats.json agrees: %r" % j["counters"])
    check(http_get(BASE + "/nope")[0] == 404, "404 for an unknown path")
    check(http_get(BASE + "/metrics", method="POST")[0] == 405, "405 for POST")
    rc, out, _ = c.ctl("stats")
    check(rc == 0 and "rules_accepted" in out and "peer alpha" in out, "floodctl stats table")
    rc, out, _ = c.ctl("stats", "--prom")
    check(rc == 0 and "# TYPE floodgate_rejected_total counter" in out, "floodctl stats --prom")

    lines = [json.loads(l) for l in open(vlog)]
    check(len(lines) == 350, "verdict log: %d lines" % len(lines))
    rej = [l for l in lines if l["verdict"] == "reject"]
    check(len(rej) == 100 and all(l["reason"] == "too-old" and l["peer"] == "alpha" for l in rej),
          "reject lines: %r" % rej[:1])
    one = lines[0]
    check(list(one) == ["time", "peer", "addr", "cmd", "id", "verdict", "reason", "article_date",
                        "date", "injection_date", "arrival"], "line fields: %r" % list(one))
    # histwriter's records come from no session: no address
    check(all(l["addr"] is None for l in lines), "addr on a sessionless line: %r" % lines[:1])

    # rotation: 1 MiB files, 2 kept
    with open(c.conf, "a") as f:
        f.write("[stats]\nverdict-log-rotate 1M\nverdict-log-keep 2\n")
    rc, out, err = c.ctl("reload")
    check(rc == 0, "reload for rotation: %r" % err)
    c.run_writer("--prefix", "r", "--count", "12000", "--rate", "20000", "--vlog", name="r")
    wait_for(lambda: (lambda s: s["verdict_log_lines"] + s["verdict_log_dropped"] == 12350)(
        c.ctl_json("stats")[1]["counters"]), "12000 more lines written or dropped")
    files = sorted(f for f in os.listdir(c.dir) if f.startswith("verdict.log"))
    check(files == ["verdict.log", "verdict.log.1"], "two files kept: %r" % files)
    for f in files:
        check(os.path.getsize(os.path.join(c.dir, f)) <= (1 << 20), "%s within 1 MiB" % f)
    _, st = c.ctl_json("stats")
    check(st["counters"]["verdict_log_rotations"] >= 2, "rotations counted: %r" % st["counters"])
    log("verdict log: %d lines written, %d dropped, %d rotations" % (
        st["counters"]["verdict_log_lines"], st["counters"]["verdict_log_dropped"],
        st["counters"]["verdict_log_rotations"]))
    c.stop()
    passed("47_ctl_metrics")


main()
