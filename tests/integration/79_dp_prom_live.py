#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 400
"""79_dp_prom_live — the dashboard and the alert rules of contrib/monitoring
against a live run, read through a real Prometheus.

In a network namespace of its own: floodctld (stats on 127.0.0.1:9119),
floodgate on a tap port with a downstream (countd.py) and a [cluster]
whose only seed nobody answers, and /usr/bin/prometheus (Debian's
package) scraping floodctld every second as job "floodgate" (the scrape
configuration of docs/operations.md) and evaluating
contrib/monitoring/floodgate.rules.yml every second.

1. A feed: feedgen from feeder-a (duplicates, old and future articles,
   so refusals by reason and by peer), a second from feeder-b; feeder-c
   stays silent. countd receives what was accepted.
2. Every metric name that an expression of the dashboard (panels and
   variables) or of the rules selects (promkit.metric_names) returns at
   least one series from Prometheus's query API: a renamed or dropped
   metric fails here. Each dashboard expression, with Grafana's variables
   filled in, and each rule's expression is then a query Prometheus
   accepts.
3. The rules, as Prometheus evaluated them after every series was there:
   each healthy (no evaluation error); FloodgateClusterUnreachable active
   (nobody answers the seed); FloodgatePeerSilent active for feeder-c and
   only for it (feeder-a and feeder-b sent commands: last seen now); every
   other alert inactive.
4. floodgate stops (cleanly): FloodgateDataplaneDown turns active.

Why every metric is there: floodctld exports its counters (the counter
table's, zeros included), the rejects by reason and the per-peer gauges
from the start; the per-peer counters once a peer has moved them (the
feed does); the queue's, the downstreams' and the cluster's figures once
the dataplane has written their files (a [downstream] and a [cluster]
here); the port's once a DPDK dataplane runs (floodgate-host has no port).
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import promkit  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

CLUSTER_SEED = "127.0.0.1:7999"         # nothing listens there in this namespace
# what the unanswered seed makes floodgate say (and nothing else)
LOG_ALLOW = (r"^warn cluster: (node %s unreachable: |claims unanswered \()"
             % CLUSTER_SEED.replace(".", r"\."))


def rules():
    """{alert name: rule} as Prometheus evaluates them now."""
    r = promkit.api("/api/v1/rules", type="alert")
    if not r or r["status"] != "success":
        return {}
    return {x["name"]: x for g in r["data"]["groups"] for x in g["rules"]}


def feed(source=None, prefix="pl"):
    args = [os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR, "--articles", "300",
            "--peers", "1", "--dups", "2", "--old", "0.05", "--future", "0.05", "--json",
            "--no-progress", "--path-identity", "floodgate.test",
            "--id-prefix", "%s%d" % (prefix, os.getpid()), "--timeout", "120"]
    if source:
        args += ["--source", source]
    r = subprocess.run(args, capture_output=True, text=True, timeout=180)
    check(r.returncode == 0, "feedgen %s:\n%s\n%s" % (source, r.stdout[-2000:], r.stderr[-2000:]))
    out = json.loads(r.stdout)
    check(out["accepted"] > 0, "feedgen %s: nothing accepted: %s" % (source, r.stdout[-1000:]))
    return out


def selected_metrics():
    """{metric name: [where it is used]} over the dashboard and the rules."""
    uses = {}
    for where, expr in promkit.dashboard_exprs():
        for n in promkit.metric_names(expr):
            uses.setdefault(n, []).append("dashboard " + where)
    for alert, expr in promkit.rule_exprs().items():
        for n in promkit.metric_names(expr):
            uses.setdefault(n, []).append("rule " + alert)
    return uses


def check_selectors():
    uses = selected_metrics()
    check(len(uses) > 40, "the dashboard and the rules select %d metrics" % len(uses))
    missing = {}

    def all_there():
        missing.clear()
        for name in sorted(uses):
            st, err, res = promkit.query(name)
            check(st == "success", "query %s: %s %s" % (name, st, err))
            if not res:
                missing[name] = uses[name]
        return not missing
    fgdp.wait_until(all_there, 60, lambda: "every selected metric to return series; none for:\n"
                    + "\n".join("  %s (used by %s)" % (n, "; ".join(w[:3]))
                                 for n, w in sorted(missing.items())))
    log("all %d metric names of the dashboard and the rules return series" % len(uses))
    # every expression as Prometheus takes it
    exprs = [(w, promkit.grafana_to_promql(e)) for w, e in promkit.dashboard_exprs()]
    exprs += [("rule " + a, e) for a, e in promkit.rule_exprs().items()]
    for where, e in exprs:
        st, err, _ = promkit.query(e)
        check(st == "success", "%s: Prometheus refuses %r: %s" % (where, e, err))
    log("Prometheus accepts all %d expressions" % len(exprs))


def active(rule):
    return [a for a in rule.get("alerts", []) if a["state"] in ("pending", "firing")]


def check_rules(after):
    """The rules' verdicts on this run, from evaluations after `after`
    (when every series was there): a quiet rule had its series to judge."""
    names = set(promkit.rule_exprs())

    def evaluated():
        rs = rules()
        if set(rs) != names:
            return None
        for r in rs.values():
            t = r.get("lastEvaluation", "")
            if not t or t.startswith("0001") or epoch(t) <= after:
                return None
        return rs
    rs = fgdp.wait_until(evaluated, 60, "Prometheus to evaluate every rule after the feed")
    for name, r in rs.items():
        check(r["health"] == "ok", "rule %s: health %s (%s)" % (name, r["health"], r.get("lastError")))

    def clustered():
        rs = rules()
        return rs if active(rs.get("FloodgateClusterUnreachable", {})) and all(
            epoch(r["lastEvaluation"]) > after for r in rs.values()) else None
    rs = fgdp.wait_until(clustered, 60, "FloodgateClusterUnreachable to turn active")
    silent = sorted(a["labels"].get("peer") for a in active(rs["FloodgatePeerSilent"]))
    check(silent == ["feeder-c"], "FloodgatePeerSilent active for %r, want feeder-c alone" % silent)
    quiet = sorted(names - {"FloodgateClusterUnreachable", "FloodgatePeerSilent"})
    loud = {n: [a["labels"] for a in active(rs[n])] for n in quiet if active(rs[n])}
    check(not loud, "alerts active on a healthy run: %r" % loud)
    log("rules: all %d healthy; cluster unreachable and feeder-c silent active, %d others quiet"
        % (len(names), len(quiet)))


def epoch(t):
    """Seconds since the epoch of Prometheus's RFC 3339 time
    (2026-12-07T21:40:01.123456789Z, or with an offset), to the microsecond."""
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", t)
    check(m, "a time of Prometheus's: %r" % t)
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    frac = ((m.group(2) or "") + "000000")[:6]
    return datetime.datetime.fromisoformat("%s.%s%s" % (m.group(1), frac, zone)).timestamp()


def main():
    if not shutil.which("prometheus"):
        fgkit.skip("prometheus is not installed (Debian's prometheus package)", deps=True)
    w = fgdp.World("pl", prefix="fg-pl",
                   extra="[persistence]\nwarmup 0\n"
                         "[downstream down]\naddress 127.0.0.1:%d\n"
                         "[cluster]\nseeds %s\nsecret s3cret\nbox dp\ntimeout 50ms\n"
                         % (relaykit.DOWN_PORT, CLUSTER_SEED))
    with open(w.conf) as f:
        text = f.read()
    with open(w.conf, "w") as f:
        f.write(text.replace("[stats]\n", "[stats]\nhttp 127.0.0.1:9119\n"))
    countd = relaykit.Countd(w.dir)
    countd.start()
    w.start_ctld()
    w.start_dp()
    prom = promkit.start(os.path.join(w.dir, "prometheus"), rule_files=[promkit.RULES])
    w.procs.append(prom)

    a = feed(prefix="pla")
    b = feed(source=fgdp.KERNEL_ADDRS[1], prefix="plb")
    log("feed: feeder-a %d accepted of %d offered, feeder-b %d"
        % (a["accepted"], a.get("offers", 0), b["accepted"]))
    relaykit.wait_drained(w, timeout=90)

    check_selectors()
    # every series is in Prometheus now: the verdicts that count are of
    # evaluations from here on
    check_rules(time.time())

    w.stop_dp()

    def dp_down():
        return active(rules().get("FloodgateDataplaneDown", {}))
    fgdp.wait_until(dp_down, 90, "FloodgateDataplaneDown to turn active once floodgate stopped")
    log("floodgate stopped: FloodgateDataplaneDown active")

    prom.send_signal(signal.SIGTERM)
    check(prom.wait(timeout=60) == 0, "prometheus exited cleanly")
    countd.stop()
    w.check_logs(allow=LOG_ALLOW)
    fgkit.passed("79_dp_prom_live")


main()
