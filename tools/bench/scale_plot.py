#!/usr/bin/env python3
"""scale_plot.py FIGURES.json — bench_scale's curve to Markdown and a plot.

Reads the JSON lines tools/bench/scale_curve.sh collected (one line a run
of tools/bench/bench_scale), writes docs/bench/scale.md (every figure of
every run, and the sharded/single ratios at equal size) and
docs/img/scale.png (times and rates against entries, both axes log
scale) with gnuplot's libgd `png` terminal, as tools/bench/report.py
does. Nothing is retyped: the tables and the plot are made from the file.
"""
import json
import os
import subprocess
import sys
import tempfile

MD = "docs/bench/scale.md"
PNG = "docs/img/scale.png"


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def m(n):
    return "%d M" % (n // 1000000) if n < 10**9 else "%g G" % (n / 1e9)


def rows(runs):
    out = ["| entries | shards | table (bytes/entry) | fill ns/insert | hit / miss ns, 2M pages "
           "| bound ns (ratio) | 2 threads hit / miss M/s | hit / miss ns, 4K pages (ratio) "
           "| snapshot s (GB/s) | worker p99 burst µs idle / snapshot (x) "
           "| cold restore: table s + journal s (records) | restore s per G entries "
           "| full sweep s | load |",
           "| " + " | ".join(["---"] * 14) + " |"]
    for r in runs:
        n = r["entries"]
        out.append(
            "| %s | %d | %.2f GB (%.1f) | %.0f | %.0f / %.0f | %.0f (%.2f) | %.1f / %.1f "
            "| %.0f / %.0f (%.2f) | %.1f (%.2f) | %.1f / %.1f (%.2fx) | %.1f + %.1f (%s) "
            "| %.1f | %.2f | %.1f |" % (
                m(n), r["shards"], r["region_gb"], r["region_gb"] * 1e9 / n, r["fill_ns"],
                r["hit_ns"], r["miss_ns"], r["bound_ns"], r["bound_ns"] / r["hit_ns"],
                r["hit2_mps"], r["miss2_mps"], r["hit_ns_4k"], r["miss_ns_4k"],
                r["bound_ns_4k"] / r["hit_ns_4k"], r["snap_s"], r["snap_gbps"],
                r["p99_idle_us"], r["p99_snap_us"], r["p99_snap_us"] / r["p99_idle_us"],
                r["restore_table_s"], r["restore_journal_s"], m(r["tail"]),
                (r["restore_table_s"] + r["restore_journal_s"]) * 1e9 / n,
                r["sweep_s"], r["load_avg"]))
    return out


def ratios(runs):
    by = {}
    for r in runs:
        by.setdefault(r["entries"], {})[r["shards"]] = r
    out = ["| entries | restore table, single / sharded | sweep, single / sharded "
           "| hit ns, single / sharded | snapshot p99 x, single / sharded |",
           "| --- | --- | --- | --- | --- |"]
    for n in sorted(by):
        if 1 not in by[n] or len(by[n]) < 2:
            continue
        one = by[n][1]
        sh = [v for k, v in by[n].items() if k != 1][0]
        out.append("| %s | %.2f / %.2f s | %.2f / %.2f s | %.0f / %.0f | %.2f / %.2f |" % (
            m(n), one["restore_table_s"], sh["restore_table_s"], one["sweep_s"], sh["sweep_s"],
            one["hit_ns"], sh["hit_ns"], one["p99_snap_us"] / one["p99_idle_us"],
            sh["p99_snap_us"] / sh["p99_idle_us"]))
    return out


def plot(runs):
    sharded = sorted((r for r in runs if r["shards"] > 1), key=lambda r: r["entries"])
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as d:
        for r in sharded:
            d.write("%d %f %f %f %f %f %f %f\n" % (
                r["entries"], r["fill_ns"], r["hit_ns"], r["miss_ns"], r["bound_ns"],
                r["restore_table_s"] + r["restore_journal_s"], r["snap_s"], r["sweep_s"]))
        dat = d.name
    script = """set terminal png size 1000,480 noenhanced
set output '%s'
set multiplot layout 1,2 title 'floodgate history at scale (bench_scale, sharded)'
set logscale xy
set grid
set key top left
set xlabel 'entries'
set ylabel 'ns per operation'
set title 'per operation'
plot '%s' using 1:2 with linespoints title 'fill (insert)', \\
     '' using 1:3 with linespoints title 'lookup hit', \\
     '' using 1:4 with linespoints title 'lookup miss', \\
     '' using 1:5 with linespoints title 'bound: hash + one random read'
set ylabel 'seconds'
set title 'whole table'
plot '%s' using 1:6 with linespoints title 'cold restore (table + journal hour)', \\
     '' using 1:7 with linespoints title 'snapshot (fsync included)', \\
     '' using 1:8 with linespoints title 'full expiry sweep'
unset multiplot
""" % (PNG, dat, dat)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.unlink(dat)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scale_plot.py FIGURES.json")
    runs = load(sys.argv[1])
    runs.sort(key=lambda r: (r["entries"], -r["shards"]))
    plot(runs)
    text = ["<!-- written by tools/bench/scale_plot.py from %s: do not edit -->" % sys.argv[1],
            "### History at scale: the curve (`bench_scale`, `tools/bench/scale_curve.sh`)",
            "",
            "Each row one run of tools/bench/bench_scale (method in its file-head comment): "
            "fill in anonymous memory with 2M pages where THP gives them, lookups against "
            "the same run's bound, a snapshot while a pinned worker answers CHECK bursts, "
            "an hour of a full feed's journal, a restore from a cold page cache into a "
            "new region in /dev/shm (4K pages here), lookups again, a full expiry sweep. "
            "A shared 2-core machine: the load column is the 1-minute load average as "
            "each run began.",
            ""] + rows(runs) + [
            "",
            "Sharded against the single table at the same size:",
            ""] + ratios(runs) + [
            "",
            "![times and rates against entries, log scale](../img/scale.png)",
            ""]
    with open(MD, "w") as f:
        f.write("\n".join(text))


if __name__ == "__main__":
    main()
