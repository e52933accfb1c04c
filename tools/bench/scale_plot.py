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
SCALE = "docs/scale.md"
DATAPLANE = "docs/bench/dataplane.md"

# The feed docs/scale.md sizes for (issue 21): new IDs a day, days kept.
IDS_A_DAY = 600e6
RETENTION_DAYS = 11
LOAD = 0.8
JOURNAL_HOUR = 25e6


def load(path):
    """The runs, the last of each (entries, shards) winning (a rerun)."""
    runs = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                runs[(r["entries"], r["shards"])] = r
    return list(runs.values())


def m(n):
    return "%d M" % (n // 1000000) if n < 10**9 else "%g G" % (n / 1e9)


def p99(r):
    """The worker's p99 burst, idle and during the snapshot: only from runs
    that timed bursts in thread CPU time (a dedicated lcore's view); wall
    time on this shared machine measures the other tenants."""
    if r.get("lat_clock") != "thread_cpu":
        return "— (wall clock: not comparable)"
    out = "%.1f / %.1f (%.2fx)" % (r["p99_idle_us"], r["p99_snap_us"],
                                  r["p99_snap_us"] / r["p99_idle_us"])
    if "p99_paced_us" in r:
        out += "; paced at %.0f MB/s: %.1f (%.2fx)" % (
            r["paced_mbps"], r["p99_paced_us"], r["p99_paced_us"] / r["p99_idle_us"])
    if r.get("worker") != "process":
        out += " [worker a thread of the writer's process]"
    return out


def per_entry(r):
    """Bytes an entry from the memory the filled table really held (smaps
    Rss of its mapping, rss_gb), or None for a run made before that was
    measured."""
    return r["rss_gb"] * 1e9 / r["entries"] if r.get("rss_gb") else None


def per_entry_text(r):
    b = per_entry(r)
    return "%.1f" % b if b is not None else "not measured in this run"


def provenance(r):
    """The run behind a row: commit, date, processor; rows written before
    the tool stamped them say so."""
    if not r.get("commit"):
        return "run not recorded (written before scale_curve.sh stamped its rows)"
    return "commit %s, %s, %s" % (r["commit"], r.get("date", "?"), r.get("cpu", "?"))


def rows(runs):
    out = ["| entries | shards | table (bytes an entry: in memory, measured) | fill ns/insert | hit / miss ns, 2M pages "
           "| bound ns (ratio) | 2 threads hit / miss M/s | hit / miss ns, 4K pages (ratio) "
           "| snapshot s (GB/s) | worker p99 burst µs idle / snapshot (x) "
           "| cold restore: table s + journal s (records) | table restore s per G entries "
           "| full sweep s | load | run |",
           "| " + " | ".join(["---"] * 15) + " |"]
    for r in runs:
        n = r["entries"]
        out.append(
            "| %s | %d | %.2f GB (%s) | %.0f | %.0f / %.0f | %.0f (%.2f) | %.1f / %.1f "
            "| %.0f / %.0f (%.2f) | %.1f (%.2f) | %s | %.1f + %.1f (%s) "
            "| %.1f | %.2f | %.1f | %s |" % (
                m(n), r["shards"], r["region_gb"], per_entry_text(r),
                r["fill_ns"],
                r["hit_ns"], r["miss_ns"], r["bound_ns"], r["bound_ns"] / r["hit_ns"],
                r["hit2_mps"], r["miss2_mps"], r["hit_ns_4k"], r["miss_ns_4k"],
                r["bound_ns_4k"] / r["hit_ns_4k"], r["snap_s"], r["snap_gbps"],
                p99(r), r["restore_table_s"], r["restore_journal_s"], m(r["tail"]),
                r["restore_table_s"] * 1e9 / n,
                r["sweep_s"], r["load_avg"], provenance(r)))
    return out


def ratios(runs):
    by = {}
    for r in runs:
        by.setdefault(r["entries"], {})[r["shards"]] = r
    out = ["| entries | restore table, single / sharded | sweep, single / sharded "
           "| hit ns, single / sharded | worker p99 during a snapshot, single / sharded |",
           "| --- | --- | --- | --- | --- |"]
    for n in sorted(by):
        if 1 not in by[n] or len(by[n]) < 2:
            continue
        one = by[n][1]
        sh = [v for k, v in by[n].items() if k != 1][0]
        out.append("| %s | %.2f / %.2f s | %.2f / %.2f s | %.0f / %.0f | %s / %s |" % (
            m(n), one["restore_table_s"], sh["restore_table_s"], one["sweep_s"], sh["sweep_s"],
            one["hit_ns"], sh["hit_ns"], p99(one), p99(sh)))
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


def replace_block(text, name, body):
    begin = "<!-- %s:begin" % name
    a = text.index(begin)
    a = text.index("\n", a) + 1
    b = text.index("<!-- %s:end -->" % name)
    return text[:a] + body + "\n" + text[b:]


def sizing(runs):
    big = max((r for r in runs if r["shards"] > 1), key=lambda r: r["entries"])
    n = big["entries"]
    g = n / 1e9
    measured = per_entry(big)
    bpe = measured if measured is not None else big["region_gb"] * 1e9 / (big["capacity"] * LOAD)
    bpe_from = ("%.1f bytes an entry, the memory the filled table held (smaps Rss)" % bpe
                if measured is not None else
                "%.1f bytes an entry from the table's layout at 80 %% load: this run predates "
                "the in-memory measurement" % bpe)
    entries = IDS_A_DAY * RETENTION_DAYS
    ram = entries * bpe / 1e9
    restore_g = (big["restore_table_s"] / g)
    journal_s = big["restore_journal_s"] / big["tail"] * JOURNAL_HOUR
    snap_s = ram / big["snap_gbps"]
    sweep_s = big["sweep_s"] / n * entries
    note = ""
    if n < 10**9:
        note = (" 1 G entries were not run: the table alone would be %.1f GB (docs/scale.md "
                "says why and what was run instead)." % ((1e9 + JOURNAL_HOUR) * 1.25 * 12.8 / 1e9))
    out = ["From the run at %s entries, %d shards (load average %.1f as it began; %s).%s" % (
               m(n), big["shards"], big["load_avg"], provenance(big), note), "",
           "| for %.0f M new IDs a day, %d days | figure | from |" % (IDS_A_DAY / 1e6,
                                                                   RETENTION_DAYS),
           "| --- | --- | --- |",
           "| history entries | %.2f G | 11 days of the feed |" % (entries / 1e9),
           "| RAM for the history | %.0f GB | %s |" % (ram, bpe_from),
           "| snapshot on disk | %.0f GB each, %.0f GB with snapshot-keep 2 | the table's size |" % (
               ram, 2 * ram),
           "| snapshot write | %.0f s at %.2f GB/s measured; %.1f MB/s averaged with one an hour | fsync included |" % (
               snap_s, big["snap_gbps"], ram * 1e3 / 3600),
           "| a worker's p99 answer during a snapshot | %s | µs a burst of 32, idle / during; snapshot-rate: docs/history.md |" % p99(big),
           "| restore, cold disk | %.1f s per G entries (table) + %.1f s for an hour of journal = %.0f s for the whole history | %d threads, this machine |" % (
               restore_g, journal_s, restore_g * entries / 1e9 + journal_s, 2),
           "| full expiry sweep | %.0f s a pass; floodctld's --expire-share 1 %% (the default) starts the next %.1f h after one, so an entry leaves up to that long after its retention (%.1f %% more entries held than the retention's own) | measured pass, scaled; expiry.h |" % (
               sweep_s, sweep_s * 99 / 3600, sweep_s * 99 / (RETENTION_DAYS * 86400) * 100),
           "| a box's RAM, less 32 GB for the rest, holds | 256 GB: %.1f G entries (%.1f days of the feed); 512 GB: %.1f G (%.1f days) | %.1f bytes an entry, as above |" % (
               (256 - 32) / bpe, (256 - 32) * 1e9 / bpe / IDS_A_DAY,
               (512 - 32) / bpe, (512 - 32) * 1e9 / bpe / IDS_A_DAY, bpe)]
    return "\n".join(out)


def lcores():
    gbit = check = None
    for line in open(DATAPLANE):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[1] == "takethis":
            gbit = float(cells[5])
        if len(cells) > 6 and cells[1] == "check":
            check = float(cells[3])
    if not gbit or not check:
        return "(docs/bench/dataplane.md has no takethis/check rows to size from)"
    out = ["Per worker core (docs/bench/dataplane.md): %.2f Gbit/s of article payload "
           "(TAKETHIS), %.2f M CHECKs a second." % (gbit, check / 1e6), "",
           "| feed | worker lcores at the measured rate | with 50 % headroom | CHECKs: cores for 500 k/s bursts |",
           "| --- | --- | --- | --- |"]
    for link in (10, 40, 100):
        need = link / gbit
        out.append("| %d Gbit/s | %.1f | %d | %.2f |" % (
            link, need, int(-(-need * 1.5 // 1)), 500e3 / check))
    return "\n".join(out)


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
            "the same run's bound, a snapshot (unpaced, then paced) while a pinned worker "
            "process answers CHECK bursts, "
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
    doc = open(SCALE).read()
    doc = replace_block(doc, "sizing", sizing(runs))
    doc = replace_block(doc, "lcores", lcores())
    with open(SCALE, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
