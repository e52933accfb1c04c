#!/usr/bin/env python3
# timeout: 60
"""12_bench_report — tools/bench/report.py refuses a ratio it cannot stand
behind: two results of other processors, other commits, or loads more
than 2x apart (a shared machine's load is part of a figure), and a result
whose stamp has no processor (made before the stamp carried one). A
fragment's stamp carries the processor and the report shows it."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("FG_TOP", "."), "tools", "bench"))
import report  # noqa: E402

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def run(cpu="AMD_EPYC_7B13", commit="abc1234", load=0.8, offers=1000.0):
    lat = {"p50_us": 100.0, "p90_us": 200.0, "p99_us": 300.0}
    return {"cpu": cpu, "commit": commit, "load_avg_1m": load, "mode": "quick",
            "date": "2026-12-07T21:00Z", "offers_per_s": offers, "accepted_per_s": offers / 2,
            "bytes_per_s": offers * 1000, "cpu_server_per_m_offers": 2.0,
            "latency": {"check": lat}, "params": {"mode": "check"}}


same = report.incomparable(report.run_stamp(run()), report.run_stamp(run(load=1.5)))
check(same == "", "one processor, one commit, loads 0.8 and 1.5: comparable, got %r" % same)
for other, word in ((run(cpu="Intel_Xeon_Platinum_8375C"), "processors"),
                    (run(commit="def5678"), "commits"), (run(load=2.0), "loads"),
                    (dict(run(), cpu=None), "not recorded")):
    why = report.incomparable(report.run_stamp(run()), report.run_stamp(other))
    check(word in why, "%s: refused with a reason naming it, got %r" % (word, why))

# the table: a row of comparable runs has its ratio, another processor's none
orig_latency = getattr(report, "main_latency", None)
report.main_latency = lambda r: r["latency"]["check"]
try:
    t = report.ratio_table({"floodgate": {"w1": run(offers=3000.0), "w2": run(offers=3000.0)},
                            "inn": {"w1": run(), "w2": run(cpu="Intel_Xeon")}})
finally:
    if orig_latency:
        report.main_latency = orig_latency
check("| w1 | 3.00x |" in t.replace("| w1 (client-bound) |", "| w1 |"),
      "w1's ratio 3.00x in:\n%s" % t)
check("| w2 | no ratio: processors AMD_EPYC_7B13 / Intel_Xeon" in t,
      "w2 refused for its processors in:\n%s" % t)

st, body = report.fragment_stamp(
    "<!-- fg-bench mode=quick commit=abc1234 date=D load=0.5 cpu=AMD_EPYC_7B13 -->\nrest")
check(st.get("cpu") == "AMD_EPYC_7B13" and body.strip() == "rest", "fragment stamp: %r %r" % (st, body))
check("AMD EPYC 7B13" in report.stamp_text(st), "stamp text: %s" % report.stamp_text(st))
check(report.this_cpu() != "" and " " not in report.this_cpu(), "this_cpu: %r" % report.this_cpu())

if fails:
    print("FAIL 12_bench_report:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("PASS 12_bench_report: 10 checks")
