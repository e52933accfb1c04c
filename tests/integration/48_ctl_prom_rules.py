#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""48_ctl_prom_rules — the alert rules shipped in contrib/monitoring, checked
by Prometheus's own tool.

1. `promtool check rules` accepts floodgate.rules.yml and counts as many
   rules as the file has alerts.
2. Every alert has a test group of its own name in floodgate.rules.test.yml,
   and every group tests an alert of the file.
3. `promtool test rules` passes: each alert fires on the series that should
   fire it, and stays quiet on the healthy ones beside them (each test lists
   exactly the alerts expected).
4. The tests can fail, for every alert: with every expression replaced by
   one that never fires, each group fails (its firing case); replaced by
   one that fires on every instance, each group fails (its healthy case).
   promtool names the failing groups: each alert's name must be among them.
5. promkit's PromQL tokenizer (which 79_dp_prom_live uses to find the
   metric names of the rules and the dashboard) on expressions of every
   shape it must read, and on every expression shipped: each selects at
   least one metric, and each metric is floodgate's or Prometheus's `up`.

The same tests run from the installed examples
(/usr/share/doc/floodgate/examples/monitoring/), so an operator who changes
a bound can check the change the same way.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
import promkit  # noqa: E402
from fgkit import TOP, check, log, passed  # noqa: E402

MON = promkit.MON
RULES = "floodgate.rules.yml"
TESTS = "floodgate.rules.test.yml"
NEVER = "vector(1) == 0"
# true for every instance of every test (each series has job="floodgate")
ALWAYS = 'count by (instance, job) ({job="floodgate"})'


def promtool(*args, cwd):
    return subprocess.run(["promtool"] + list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def alerts_of(text):
    return re.findall(r"^\s*- alert:\s*(\S+)\s*$", text, re.M)


def groups_of(text):
    return re.findall(r"^\s*- name:\s*(\S+)\s*$", text, re.M)


def with_exprs(text, expr):
    """The rules file with every alert's expr (one line, or a folded block
    below `expr: >-`) replaced by `expr`."""
    out, skip = [], None
    for line in text.splitlines():
        if skip is not None:
            if line.strip() and len(line) - len(line.lstrip()) > skip:
                continue
            skip = None
        m = re.match(r"^(\s*)expr:", line)
        if m:
            out.append("%sexpr: %s" % (m.group(1), expr))
            skip = len(m.group(1))
            continue
        out.append(line)
    return "\n".join(out) + "\n"


# expression: the metric names it selects
TOKENIZER_CASES = {
    'up{job="floodgate"} == 0': ["up"],
    'sum by (peer, reason) (rate(floodgate_peer_rejected_total{instance=~"$instance",'
    'peer=~"a(b)[c]"}[$__rate_interval])) > 0': ["floodgate_peer_rejected_total"],
    "time() - floodgate_peer_last_seen_seconds > 1800 unless on (instance, job, peer) "
    "floodgate_peer_paused_seconds > 0": ["floodgate_peer_last_seen_seconds",
                                          "floodgate_peer_paused_seconds"],
    "rate(a_total[5m] offset 1h) + 1e3 * b / ignoring(le) group_left(peer) c": ["a_total", "b", "c"],
    "histogram_quantile(0.5, sum by (le) (rate(h_bucket{x='}'}[1m]))) * .5": ["h_bucket"],
    "sum without (port) (x) and bool y or z": ["x", "y", "z"],
    "floodgate_queue_oldest_age_seconds > 0.8 * (floodgate_queue_max_age_seconds > 0)":
        ["floodgate_queue_oldest_age_seconds", "floodgate_queue_max_age_seconds"],
    "${var} + $var + m": ["m"],
}


def check_tokenizer():
    for expr, want in TOKENIZER_CASES.items():
        got = promkit.metric_names(expr)
        check(got == want, "metric_names(%r) = %r, want %r" % (expr, got, want))
    exprs = list(promkit.rule_exprs().items()) + promkit.dashboard_exprs()
    check(len(promkit.rule_exprs()) == len(alerts_of(open(promkit.RULES).read())),
          "an expression for every alert")
    names = set()
    for where, expr in exprs:
        got = promkit.metric_names(expr)
        check(got, "%s: no metric in %r" % (where, expr))
        bad = [n for n in got if not (n.startswith("floodgate_") or n == "up")]
        check(not bad, "%s: %r are no metrics of floodgate's (%r)" % (where, bad, expr))
        names.update(got)
    log("tokenizer: %d cases; %d expressions of the rules and the dashboard select %d metrics"
        % (len(TOKENIZER_CASES), len(exprs), len(names)))


def failing_groups(output):
    return set(re.findall(r"^\s*name:\s*(\S+?),?\s*$", output, re.M))


def main():
    if not shutil.which("promtool"):
        fgkit.skip("promtool is not installed (Debian's prometheus package)", deps=True)
    with open(os.path.join(MON, RULES)) as f:
        rules = f.read()
    with open(os.path.join(MON, TESTS)) as f:
        tests = f.read()
    alerts = alerts_of(rules)
    check(len(alerts) >= 8 and len(set(alerts)) == len(alerts), "alerts: %r" % alerts)

    p = promtool("check", "rules", RULES, cwd=MON)
    check(p.returncode == 0, "promtool check rules:\n%s%s" % (p.stdout, p.stderr))
    m = re.search(r"SUCCESS: (\d+) rules found", p.stdout)
    check(m and int(m.group(1)) == len(alerts), "promtool counted: %s" % p.stdout.strip())
    log("promtool check rules: %d rules" % len(alerts))

    groups = groups_of(tests)
    check(sorted(groups) == sorted(alerts),
          "test groups %r, alerts %r: one group per alert, named for it" % (groups, alerts))

    p = promtool("test", "rules", TESTS, cwd=MON)
    check(p.returncode == 0 and "SUCCESS" in p.stdout,
          "promtool test rules:\n%s%s" % (p.stdout, p.stderr))
    log("promtool test rules: %d test groups pass" % len(groups))

    work = tempfile.mkdtemp(prefix="fg-promrules-%d-" % os.getpid(),
                            dir=os.path.join(TOP, "build"))
    try:
        shutil.copy(os.path.join(MON, TESTS), work)
        for what, expr in (("never fires", NEVER), ("fires on every instance", ALWAYS)):
            with open(os.path.join(work, RULES), "w") as f:
                f.write(with_exprs(rules, expr))
            c = promtool("check", "rules", RULES, cwd=work)
            check(c.returncode == 0, "the mutated rules are valid:\n%s%s" % (c.stdout, c.stderr))
            p = promtool("test", "rules", TESTS, cwd=work)
            failed = failing_groups(p.stdout + p.stderr)
            check(p.returncode != 0, "every expression %s, yet the tests pass" % what)
            missed = sorted(set(alerts) - failed)
            check(not missed, "every expression %s, yet the tests of %s pass:\n%s"
                  % (what, missed, p.stdout[-3000:]))
            log("every expression %s: all %d test groups fail" % (what, len(failed)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    check_tokenizer()
    passed("48_ctl_prom_rules")


main()
