#!/usr/bin/env python3
"""report.py — benchmark results to Markdown and PNG (stdlib + gnuplot).

  report.py summary FILE.json          one line about one feedgen run
  report.py annotate FILE.json KEY VALUE [KEY VALUE...]
                                       add numbers or strings to a run's JSON
                                       (run.sh: the load average as the run
                                       began, the command, the run's mode,
                                       commit and date, innd's news log)
  report.py docs --mode M --commit C --date D --load "L1 L5 L15" --commands C
                 --common ARGS [--machine TEXT] [--note TEXT] SYS=LABEL...
                                       tables, plots, docs/benchmarks.md

Every figure carries the run that made it: module fragments start with
run.sh's stamp (<!-- fg-bench mode=M commit=C date=D load=L -->), end-to-end
JSON has the same keys. The report shows each section's own run, and its
head lists every section that an earlier run made (run.sh keeps them when
told to run only part: FG_BENCH_MODULES=0, FG_BENCH_SYSTEMS).

End-to-end results are feedgen's --json objects in docs/bench/
e2e_<system>_<workload>.json. A second system (floodgate) appears as a
second table and, for every workload both ran, in the ratio table — no
change here is needed to add it. The whole path (floodgate relaying to
innd, sys_fgpath.sh) carries a "path" object (tools/bench/path_settle.py)
and gets its own table beside INN, a ratio table and a CPU plot.
"""
import glob
import json
import os
import platform
import re
import subprocess
import sys

BENCH = "docs/bench"
IMG = "docs/img"
# module fragments first in this order, then any others by name
MODULE_ORDER = ["parsers", "msgid", "date", "rules", "history", "session", "nntp", "tcp", "tcp_loss"]
# fragments shown in the method section, not among the modules
METHOD_FRAGMENTS = ["path_profile", "path_profile_veth", "path_profile_memif", "path_profile_memif_2k", "port_profile",
                    "gro_profile", "innd_paced"]
# fragments with a section of their own, right after the commands: the
# whole path with a realistic feed and issue 33's goals (feed_path.sh)
FEED_FRAGMENTS = ["feed_path"]
# headings for fragments written without one
FRAGMENT_TITLES = {"tcp": "Userspace TCP, frames from memory",
                   "tcp_loss": "Userspace TCP as a bulk sender at 1 % loss: SACK against NewReno",
                   "dataplane": "Dataplane: one worker core, passive mode, frames from memory"}
# feedgen (kernel sockets, on the same 2 cores) above this share of one
# core may be what limits the rate: such a run is marked client-bound
CLIENT_BOUND_SHARE = 0.60
STAMP = re.compile(r"^<!-- fg-bench ((?:\w+=\S+ ?)+)-->\n")
WORKLOAD_TEXT = {
    "check": "CHECK-heavy: 10 peers offer every article (10 offers per article), 2 KB",
    "takethis_2k": "TAKETHIS only, one offer per article, 2 KB articles",
    "takethis_700k": "TAKETHIS only, one offer per article, 700 KB articles",
}


def main_latency(r):
    return r["latency"]["offer" if r["params"]["mode"] in ("check", "ihave") else "article"]


def summary(path):
    r = json.load(open(path))
    lat = main_latency(r)
    print("   %.0f offers/s, %.0f accepted/s, %.1f MB/s, server %.2f / feedgen %.2f CPU s per M offers, "
          "p50 %.2f p99 %.2f ms, mismatches %d"
          % (r["offers_per_s"], r["accepted_per_s"], r["bytes_per_s"] / 1e6,
             r["cpu_server_per_m_offers"], r["cpu_self_per_m_offers"],
             lat["p50_us"] / 1e3, lat["p99_us"] / 1e3, r["mismatches"]))
    if "busy" in r:
        print("   worker busy %.3f CPU s per M offers (%.0f ns per offer), %.0f %% of its loop"
              % (r["busy"]["per_m_offers"], r["busy"]["ns_per_offer"], 100 * r["busy"]["share"]))
    if client_bound(r):
        print("   client-bound: feedgen used %.0f %% of a core (over %.0f %%)"
              % (100 * r["cpu_self_share"], 100 * CLIENT_BOUND_SHARE))


def load_runs():
    runs = {}
    for path in sorted(glob.glob(os.path.join(BENCH, "e2e_*.json"))):
        m = re.match(r"e2e_([a-z0-9]+)_(.+)\.json$", os.path.basename(path))
        if m:
            runs.setdefault(m.group(1), {})[m.group(2)] = json.load(open(path))
    return runs


def system_table(sysname, label, runs):
    out = ["### %s\n" % label, "",
           "| workload | offers | offers/s | articles/s (accepted) | MB/s | server CPU s / M offers "
           "| worker busy s / M offers (ns per offer, per article) "
           "| feedgen CPU s / M offers | feedgen CPU share | latency p50 / p90 / p99 / max (ms) | mismatches "
           "| load |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for w, r in sorted(runs.items()):
        lat = main_latency(r)
        out.append("| %s | %d | %.0f | %.0f | %.1f | %.2f | %s | %.2f | %s | %.2f / %.2f / %.2f / %.2f | %d | %s |" % (
            w, r["offers"], r["offers_per_s"], r["accepted_per_s"], r["bytes_per_s"] / 1e6,
            r["cpu_server_per_m_offers"], busy_text(r), r["cpu_self_per_m_offers"], share_text(r),
            lat["p50_us"] / 1e3, lat["p90_us"] / 1e3, lat["p99_us"] / 1e3, lat["max_us"] / 1e3,
            r["mismatches"], load_text(r)))
    notes = innd_log_notes(runs)
    if notes:
        out += ["", notes]
    return "\n".join(out) + "\n"


def busy_text(r):
    """A polling worker's busy cycles per offer (tools/bench/busy.py); "-"
    for a system that does not poll (innd, floodgate-host)."""
    b = r.get("busy")
    if not b:
        return "-"
    per = "%.0f ns" % b["ns_per_offer"]
    if b.get("ns_per_article") and r["params"]["mode"] != "check":
        per += ", %.0f ns" % b["ns_per_article"]
    return "%.3f (%s)" % (b["per_m_offers"], per)


def client_bound(r):
    return r.get("cpu_self_share", 0) > CLIENT_BOUND_SHARE


def share_text(r):
    """feedgen's share of one core; past CLIENT_BOUND_SHARE the rate may be
    feedgen's, not the server's, and the cell says so."""
    text = "%.0f %%" % (100 * r["cpu_self_share"])
    return text + " **client-bound**" if client_bound(r) else text


def bound_mark(*rs):
    """A workload cell's mark when a run behind a ratio was client-bound."""
    return " (client-bound)" if any(client_bound(r) for r in rs) else ""


def innd_log_notes(runs):
    """How innd kept its news log, for the runs that had an innd in them;
    "" when none had."""
    how = {"buffered": "buffered, as a production innd keeps it",
           "unbuffered": "unbuffered (innd -u: one write per article, charged to innd)"}
    by = {}
    for w, r in sorted(runs.items()):
        if "innd_news_log" in r:
            by.setdefault(r["innd_news_log"], []).append("`%s`" % w)
    return "; ".join("innd's news log %s: %s" % (how.get(m, m), ", ".join(ws))
                     for m, ws in sorted(by.items())) + ("." if by else "")


def load_text(r):
    return "%.1f" % r["load_avg_1m"] if "load_avg_1m" in r else "?"


def path_row(w, name, r):
    """One whole-path row: INN alone (no "path") or floodgate -> innd."""
    lat = main_latency(r)
    p = r.get("path")
    if p:
        c = p["cpu_per_m_offers"]
        rates = (p["delivered_per_s"], p["bytes_in_per_s"] / 1e6)
        cpu = "%.2f | %.2f | %.2f | **%.2f**" % (c["floodgate"], c["floodctld"], c["innd"], c["total"])
    else:
        rates = (r["accepted_per_s"], r["bytes_per_s"] / 1e6)
        c = r["cpu_server_per_m_offers"]
        cpu = "- | - | %.2f | **%.2f**" % (c, c)
    return "| %s%s | %s | %.0f | %.0f | %.1f | %.2f / %.2f | %s | %s |" % (
        w, bound_mark(r), name, r["offers_per_s"], rates[0], rates[1], lat["p50_us"] / 1e3,
        lat["p99_us"] / 1e3, cpu, load_text(r))


def path_cpu(r):
    """CPU s per M offers of the whole path: floodgate + floodctld + innd,
    or innd alone."""
    return r["path"]["cpu_per_m_offers"]["total"] if "path" in r else r["cpu_server_per_m_offers"]


def path_rate(r):
    return r["path"]["delivered_per_s"] if "path" in r else r["accepted_per_s"]


def path_tables(runs, labels, a="fgpath", b="inn", title="floodgate relaying to innd"):
    """The whole path (floodgate relaying to innd) beside innd alone."""
    if a not in runs:
        return ""
    out = ["### The whole path: %s, beside innd alone\n" % title,
           "`%s`: %s. `%s`: %s. Articles/s is what reached innd (for floodgate, the "
           "articles innd logged, over the time from the start to the last delivery; MB/s the "
           "article octets feedgen sent over that time); latency is the answer to the peer. "
           "CPU seconds per million offers from /proc/PID/stat (utime + stime of every "
           "thread): floodgate's process (worker lcore, main lcore, queue writer, relay), "
           "floodctld, and the innd behind it, from the start to the last delivery.\n"
           % (a, labels.get(a, a), b, labels.get(b, b)), "",
           "| workload | system | offers/s | articles/s to innd | MB/s | latency p50 / p99 (ms) "
           "| CPU s/M: floodgate | floodctld | innd | together | load |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for w in sorted(set(runs[a]) | set(runs.get(b, {}))):
        for s in (b, a):
            if w in runs.get(s, {}):
                out.append(path_row(w, s, runs[s][w]))
    out.append("")
    notes = innd_log_notes({"%s %s" % (w, s): r for s in (a, b) for w, r in runs.get(s, {}).items()})
    if notes:
        out += [notes, ""]
    if b not in runs:
        return "\n".join(out) + "\n"
    out += ["#### whole path / innd alone\n", "",
            "| workload | offers/s | articles/s to innd | CPU per M offers, together | innd's own CPU "
            "per M offers | p99 latency |", "|---|---:|---:|---:|---:|---:|"]
    for w in sorted(set(runs[a]) & set(runs[b])):
        f, i = runs[a][w], runs[b][w]
        why = incomparable(run_stamp(f), run_stamp(i))
        if why:
            out.append("| %s | no ratio: %s | | | | |" % (w, why))
            continue
        out.append("| %s%s | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |" % (
            w, bound_mark(f, i), f["offers_per_s"] / i["offers_per_s"], path_rate(f) / path_rate(i),
            path_cpu(f) / path_cpu(i),
            f["path"]["cpu_per_m_offers"]["innd"] / i["cpu_server_per_m_offers"],
            main_latency(f)["p99_us"] / main_latency(i)["p99_us"]))
    out.append("")
    for w in sorted(set(runs[a]) & set(runs[b])):
        out.append(path_reading(w, runs[a][w], runs[b][w]))
    return "\n".join(out) + "\n"


def path_reading(w, f, i):
    """What one workload's whole-path figures say, in words, from the figures."""
    why = incomparable(run_stamp(f), run_stamp(i))
    if why:
        return "- `%s`: not read against innd alone: %s." % (w, why)
    p = f["path"]
    share = 100.0 * p["delivered"] / f["offers"] if f["offers"] else 0
    text = ("- `%s`: innd behind floodgate saw %d articles for %d offers (%.0f %%), and "
            "spent %.2f CPU s per million offers against %.2f alone; floodgate itself spent "
            "%.2f (+ %.2f floodctld), so the path took %.2f, %.2fx innd alone. "
            % (w, p["delivered"], f["offers"], share, p["cpu_per_m_offers"]["innd"],
               i["cpu_server_per_m_offers"], p["cpu_per_m_offers"]["floodgate"],
               p["cpu_per_m_offers"]["floodctld"], p["cpu_per_m_offers"]["total"],
               path_cpu(f) / path_cpu(i)))
    if share > 50:
        text += ("Nearly every offer is a new article, so the filter spares innd nothing and "
                 "its own work (the durable queue's write and fdatasync, the relay) comes on top; "
                 "the last delivery came %.1f s after feedgen's last answer."
                 % (p["drain_s"] - f["elapsed_s"]))
    else:
        text += ("The filter answers the duplicate offers itself, and innd only takes the "
                 "new articles; the last delivery came %.1f s after feedgen's last answer."
                 % (p["drain_s"] - f["elapsed_s"]))
    return text


# goals of issue 20 for one memif worker, null sink: offers (articles) per
# busy second, or Gbit/s of article octets per busy second
BUSY_GOALS = {"check": ("offers", 2e6), "takethis_2k": ("offers", 1e6),
              "takethis_700k": ("gbit", 10.0)}
BUSY_GOAL_SYSTEM = "fgmemif"


FIGURE = re.compile(r"<!-- fg-figure ((?:\w+=\S+ ?)+)-->")


def fragment_figures(name):
    """{key: float} a module fragment left for the report (`<!-- fg-figure
    k=v ... -->`: bench_relay's queue writer bound), {} when it has none."""
    path = os.path.join(BENCH, name + ".md")
    m = FIGURE.search(open(path).read()) if os.path.exists(path) else None
    return {k: float(v) for k, v in (kv.split("=", 1) for kv in m.group(1).split())} if m else {}


def writer_bound(runs):
    """The queue writer's own bound (bench_relay: 700 KB records with
    fdatasync at the default group commit) beside the 700 KB memif worker
    with the null sink: issue 20 asks for the two side by side."""
    fig = fragment_figures("relay")
    r = runs.get(BUSY_GOAL_SYSTEM, {}).get("takethis_700k")
    if not fig or not r or not r.get("busy") or not r["busy"]["seconds"]:
        return ""
    worker = 8 * r["article_bytes"] / r["busy"]["seconds"] / 1e9
    writer = 8 * fig["queue_write_700k_gbps"]
    return ("\nThe queue writer's own bound beside it: bench_relay's queue write of 700 KB "
            "articles (records checksummed, appended and made durable by fdatasync at the "
            "default 10 ms group commit, on this machine's disk) reached %.2f GB/s = %.1f Gbit/s "
            "(the disk alone, sequential writes and one fdatasync: %.2f GB/s), against %.1f "
            "Gbit/s per busy second for the memif worker with the null sink above: the writer's "
            "bound is %.3fx the worker's null-sink rate, so with the durable queue on this disk "
            "the writer, not the worker, sets a 700 KB feed's pace whenever that is below 1 "
            "(two benchmarks, each under its own stamp: bench_relay's fragment and the memif run above).\n"
            % (fig["queue_write_700k_gbps"], writer, fig.get("disk_gbps", 0), worker,
               writer / worker))


def busy_table(runs, b="inn"):
    """What an offer and an article cost a polling worker, in its busy
    cycles (tools/bench/busy.py), beside innd's CPU per offer."""
    rows = []
    for s in sorted(runs):
        for w, r in sorted(runs[s].items()):
            bz = r.get("busy")
            if not bz:
                continue
            alone = runs.get(b, {}).get(w)
            innd = ("%.2fx" % (bz["per_m_offers"] / alone["cpu_server_per_m_offers"])
                    if alone and alone["cpu_server_per_m_offers"] else "-")
            art = r.get("articles_sent") or 0
            per_art = bz["seconds"] / art if art else 0
            gbit = 8 * r["article_bytes"] / bz["seconds"] / 1e9 if bz["seconds"] else 0
            kind, goal = BUSY_GOALS.get(w, (None, 0)) if s == BUSY_GOAL_SYSTEM else (None, 0)
            reached = bz["offers_per_busy_s"] if kind == "offers" else gbit
            rows.append("| %s | %s | %.0f | %.0f | %s | %.1f | %s | %.0f %% | %s | %s |" % (
                w, s, bz["ns_per_offer"], bz["offers_per_busy_s"],
                "%.0f" % (1e9 * per_art) if art else "-",
                gbit, innd, 100 * bz["share"],
                ("%.0f %%" % (100 * reached / goal)) if goal else "-",
                load_text(r)))
    if not rows:
        return ""
    return "\n".join([
        "### What an offer costs a worker: busy cycles\n",
        "A polling worker's CPU time counts its spinning; its busy cycles (TSC cycles of "
        "loop passes that had work, docs/dataplane.md \"Busy and idle cycles\") do not. "
        "Offers per busy second is what one fully busy worker would decide at this cost; "
        "Gbit/s is the article octets over the busy time. \"vs innd\" divides busy seconds "
        "per offer by innd's CPU seconds per offer in the same workload. \"goal\" is issue "
        "20's aim for one memif worker with the null sink (2 M CHECK offers, 1 M 2 KB "
        "TAKETHIS articles per busy second, 10 Gbit/s of 700 KB articles), reached in %. The cycles are wall-clock TSC: on this shared, loaded machine a "
        "worker preempted inside a busy pass counts that time as busy (see the load). "
        "feedgen --dpdk polls, so its CPU share is near a whole core whatever the rate and "
        "its runs are always marked client-bound; the busy share says more: a worker far "
        "from 100 % busy was waiting for feedgen, which was then the bound.\n", "",
        "| workload | system | busy ns / offer | offers per busy s | busy ns / article "
        "| Gbit/s per busy s | vs innd CPU / offer | busy share | goal | load |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows) + "\n" + writer_bound(runs)


def ratio_table(runs, a="floodgate", b="inn", title="floodgate / INN"):
    if a not in runs or b not in runs:
        return ("### %s\n\nNot both run: the ratio table appears once both systems have "
                "run (tools/bench/sys_%s.sh, sys_%s.sh).\n" % (title, a, b))
    out = ["### %s\n" % title, "",
           "| workload | offers/s | articles/s | MB/s | server CPU per M offers | p99 latency |",
           "|---|---:|---:|---:|---:|---:|"]
    for w in sorted(set(runs[a]) & set(runs[b])):
        f, i = runs[a][w], runs[b][w]
        why = incomparable(run_stamp(f), run_stamp(i))
        if why:
            out.append("| %s | no ratio: %s | | | | |" % (w, why))
            continue

        def q(a, b):
            return "%.2fx" % (a / b) if b else "n/a"
        out.append("| %s%s | %s | %s | %s | %s | %s |" % (
            w, bound_mark(f, i), q(f["offers_per_s"], i["offers_per_s"]), q(f["accepted_per_s"], i["accepted_per_s"]),
            q(f["bytes_per_s"], i["bytes_per_s"]),
            q(f["cpu_server_per_m_offers"], i["cpu_server_per_m_offers"]),
            q(main_latency(f)["p99_us"], main_latency(i)["p99_us"])))
    return "\n".join(out) + "\n"


def plots(runs):
    """Two PNGs with gnuplot's libgd `png` terminal (gnuplot-nox has it)."""
    systems = sorted(runs)
    workloads = sorted({w for s in systems for w in runs[s]})
    dat = os.path.join(BENCH, "e2e_plot.dat")
    with open(dat, "w") as f:
        f.write("# workload " + " ".join("%s_offers %s_p50 %s_p90 %s_p99" % (s, s, s, s) for s in systems) + "\n")
        for w in workloads:
            row = [w]
            for s in systems:
                r = runs[s].get(w)
                if r:
                    lat = main_latency(r)
                    row += ["%.1f" % r["offers_per_s"], "%.3f" % (lat["p50_us"] / 1e3),
                            "%.3f" % (lat["p90_us"] / 1e3), "%.3f" % (lat["p99_us"] / 1e3)]
                else:
                    row += ["NaN"] * 4
            f.write(" ".join(row) + "\n")
    thr = ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, 2 + 4 * k, s) for k, s in enumerate(systems))
    lat = ", ".join("'%s' using %d:xtic(1) title '%s %s'" % (dat, 3 + 4 * k + j, s, p)
                    for k, s in enumerate(systems) for j, p in enumerate(("p50", "p90", "p99")))
    gnuplot_histograms("top right", """
set output '{img}/e2e_offers.png'
set title 'offers per second (feedgen, 2 cores shared by client and server)'
set ylabel 'offers/s'
set yrange [0:*]
plot {thr}
set output '{img}/e2e_latency.png'
set title 'response latency percentiles'
set ylabel 'ms (log scale)'
set logscale y
set yrange [*:*]
plot {lat}
""".format(img=IMG, thr=thr, lat=lat))
    return ["e2e_offers.png", "e2e_latency.png"]


def gnuplot_histograms(key, plots_text):
    """Clustered bar charts with gnuplot's libgd `png` terminal."""
    script = ("set terminal png size 900,500 noenhanced\nset style data histograms\n"
              "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
              "set key %s\nset grid ytics\n" % key) + plots_text
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def run_commands(runs):
    """The commands behind every end-to-end figure, as run.sh ran them."""
    out = ["### The command behind every run\n",
           "Each system is started by `sys_<system>_start` in tools/bench/sys_<system>.sh "
           "(and settled by `sys_<system>_after` where it has one); then:\n", "```sh"]
    for s in sorted(runs):
        for w, r in sorted(runs[s].items()):
            out.append("# %s %s (%s)\n%s" % (s, w, stamp_text(run_stamp(r)),
                                              r.get("command", "(not recorded)")))
    out.append("```\n")
    return "\n".join(out)


def path_plot(runs, a="fgpath", b="inn"):
    """CPU seconds per million offers: innd alone against the whole path."""
    if a not in runs:
        return []
    dat = os.path.join(BENCH, "e2e_path_cpu.dat")
    with open(dat, "w") as f:
        f.write("# workload innd_alone path_floodgate path_floodctld path_innd path_together\n")
        for w in sorted(runs[a]):
            c = runs[a][w]["path"]["cpu_per_m_offers"]
            alone = runs.get(b, {}).get(w)
            f.write("%s %s %.3f %.3f %.3f %.3f\n" % (
                w, "%.3f" % alone["cpu_server_per_m_offers"] if alone else "NaN",
                c["floodgate"], c["floodctld"], c["innd"], c["total"]))
    cols = [(2, "innd alone"), (3, "path: floodgate"), (4, "path: floodctld"),
            (5, "path: innd behind it"), (6, "path: together")]
    plot = ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, c, t) for c, t in cols)
    gnuplot_histograms("top left", """
set yrange [0:*]
set output '{img}/e2e_path_cpu.png'
set title 'CPU seconds per million offers: innd alone, and floodgate relaying to innd'
set ylabel 'CPU s / M offers'
plot {plot}
""".format(img=IMG, plot=plot))
    return ["e2e_path_cpu.png"]


def annotate(path, pairs):
    with open(path) as f:
        r = json.load(f)
    for key, value in zip(pairs[::2], pairs[1::2]):
        try:
            r[key] = float(value)
        except ValueError:
            r[key] = value
    with open(path, "w") as f:
        json.dump(r, f)


# ------------------------------------------------------------ provenance

def run_stamp(r):
    """The run that made an end-to-end result: mode, commit, date, the
    processor, the load as it began."""
    st = {k: r.get(k) for k in ("mode", "commit", "date", "cpu")}
    st["load"] = r.get("load_avg_1m")
    return st


def this_cpu():
    """This machine's processor, as run.sh writes it in a stamp."""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return "_".join(line.split(":", 1)[1].split())
    return "unknown"


def incomparable(x, y):
    """Why two results must not be divided by each other ("" when they
    may): other processors or commits, or loads more than 2x apart (a
    shared machine's load is part of the figure). A result with no cpu in
    its stamp predates the processor stamp and is refused as well."""
    why = []
    if not x.get("cpu") or not y.get("cpu") or x["cpu"] != y["cpu"]:
        why.append("processors %s / %s" % (x.get("cpu") or "not recorded",
                                           y.get("cpu") or "not recorded"))
    if x.get("commit") != y.get("commit"):
        why.append("commits %s / %s" % (x.get("commit"), y.get("commit")))
    try:
        lx, ly = float(x.get("load")), float(y.get("load"))
        if max(lx, ly) > 2 * max(min(lx, ly), 0.5):
            why.append("loads %.2f / %.2f as they began" % (lx, ly))
    except (TypeError, ValueError):
        pass
    return ", ".join(why)


def fragment_stamp(text):
    """A module fragment's stamp (run.sh's first line) and the text after it."""
    m = STAMP.match(text)
    if not m:
        return {"mode": None, "commit": None, "date": None}, text
    kv = dict(p.split("=", 1) for p in m.group(1).split())
    return kv, text[m.end():]


def stamp_text(st):
    if not st.get("commit"):
        return "run not recorded"
    text = "%s, commit %s, %s" % (st.get("mode"), st["commit"], st.get("date"))
    text += ", %s" % (st["cpu"].replace("_", " ") if st.get("cpu") else "processor not recorded")
    if st.get("load"):
        text += ", load %s as it began" % st["load"]
    return text


def same_run(st, opts):
    return (st.get("commit"), st.get("date"), st.get("mode")) == \
        (opts.get("commit"), opts.get("date"), opts.get("mode"))


def machine(opts, earlier):
    """The report's head; --machine gives the machine's line when the
    figures are rendered again away from the machine that made them."""
    cpu = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) / 1024 / 1024
    commit = opts.get("commit", "unknown")
    load = opts.get("load", "?")
    here = "%s, %d cores, %.0f GiB RAM, Linux %s" % (cpu, os.cpu_count(), mem, platform.release())
    text = ("- machine: %s\n- run: %s, %s\n- commit: %s%s\n"
            "- load average (1, 5, 15 min) as the run ended: %s; the machine is "
            "shared, so every module fragment and every end-to-end table gives each run's "
            "1-minute load as it began (`load`)\n"
            % (opts.get("machine", here), opts.get("mode", "?"),
               opts.get("date", "?"), commit.rstrip("+"),
               " (with uncommitted changes)" if commit.endswith("+") else "", load))
    if opts.get("note"):
        text += "- note: %s\n" % opts["note"]
    if earlier:
        text += ("- made by an earlier run, not this one (kept by a partial run: "
                 "FG_BENCH_MODULES=0, FG_BENCH_FRAGMENTS or FG_BENCH_SYSTEMS; each says its own run): "
                 "%s\n"
                 % ", ".join(earlier))
    return text


def module_fragments(opts, earlier):
    names = [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(BENCH, "*.md"))
             if not os.path.basename(p).startswith("e2e")]
    names = [n for n in names if n not in METHOD_FRAGMENTS and n not in FEED_FRAGMENTS]
    order = [n for n in MODULE_ORDER if n in names] + sorted(n for n in names if n not in MODULE_ORDER)
    if not order:
        return "No module benchmark (tools/bench/bench_*.c) exists yet.\n"
    return "\n".join(fragment(n, opts, earlier) for n in order)


def fragment(name, opts, earlier):
    """A module's fragment under its heading (one that has none gets one,
    so it does not read as part of the fragment before it), and the run
    that made it right below the heading."""
    st, text = fragment_stamp(open(os.path.join(BENCH, name + ".md")).read())
    text = text.rstrip() + "\n"
    if not text.startswith("#"):
        text = "### %s (`bench_%s`)\n\n%s" % (FRAGMENT_TITLES.get(name, name), name, text)
    if not same_run(st, opts):
        earlier.append("module %s" % name)
    # a fragment's relative links start from docs/bench/, the report's
    # from docs/
    text = re.sub(r"\]\((?![a-z]+:|#|/)([^)\s]+)\)",
                  lambda m: "](%s)" % os.path.normpath(os.path.join("bench", m.group(1))), text)
    head, _, body = text.partition("\n")
    return "%s\n\nMeasured by: %s.\n%s" % (head, stamp_text(st), body)


def docs(args):
    opts, labels = {}, {}
    i = 0
    while i < len(args):
        if args[i].startswith("--"):
            opts[args[i][2:]] = args[i + 1]
            i += 2
        else:
            k, _, v = args[i].partition("=")
            labels[k] = v
            i += 1
    runs = load_runs()
    earlier = ["end to end %s %s" % (sy, w) for sy in sorted(runs) for w, r in sorted(runs[sy].items())
               if not same_run(run_stamp(r), opts)]
    modules = module_fragments(opts, earlier)
    e2e = ["## End to end: feedgen against each system\n",
           "Workloads (%s):\n" % opts.get("mode", "?")]
    for w in sorted({w for s in runs for w in runs[s]}):
        r = next(runs[s][w] for s in runs if w in runs[s])
        e2e.append("- `%s`: %s; %d articles, %d offers" % (
            w, WORKLOAD_TEXT.get(w, w), r["params"]["articles"], r["offers"]))
    e2e.append("")
    for s in sorted(runs):
        e2e.append(system_table(s, labels.get(s, s), runs[s]))
    e2e.append(ratio_table(runs))
    if "host" in runs:
        e2e.append(ratio_table(runs, "floodgate", "host", "floodgate / floodgate-host"))
    if "fgveth" in runs:
        e2e.append(ratio_table(runs, "fgveth", "inn", "floodgate on a veth (af_packet) / INN"))
    if "fgmemif" in runs:
        e2e.append(ratio_table(runs, "fgmemif", "inn", "floodgate kernel-free (memif) / INN"))
    e2e.append(busy_table(runs))
    e2e.append(path_tables(runs, labels))
    e2e.append(path_tables(runs, labels, "fgvpath", "inn",
                           "floodgate on af_packet relaying to innd"))
    e2e.append(path_tables(runs, labels, "fgmpath", "inn",
                           "floodgate kernel-free (memif) relaying to innd"))
    imgs = (plots(runs) + path_plot(runs)) if runs else []
    for p in imgs:
        e2e.append("![%s](img/%s)\n" % (p[:-4], p))
    skipped = sorted(glob.glob(os.path.join(BENCH, "e2e_*.skip")))
    if skipped:
        e2e.append("Not run:\n")
        for p in skipped:
            e2e.append("- `%s`: %s" % (os.path.basename(p)[4:-5], open(p).read().strip()))
        e2e.append("")
    e2e.append("Raw feedgen JSON of every run: `docs/bench/e2e_<system>_<workload>.json`.\n")
    e2e.append(run_commands(runs))
    with open(os.path.join(BENCH, "e2e.md"), "w") as f:
        f.write("\n".join(e2e))
    method = open("tools/bench/method.md").read()
    # a method fragment goes where method.md marks it (or at its end)
    for name in METHOD_FRAGMENTS:
        mark = "<!-- fragment: %s -->" % name
        text = fragment(name, opts, earlier).rstrip() if os.path.exists(
            os.path.join(BENCH, name + ".md")) else "(`%s` has not run yet.)" % name
        if mark not in method:
            method = method.rstrip() + "\n\n" + mark + "\n"
        method = method.replace(mark, text)
    doc = ["# Benchmarks\n",
           "Generated by `tools/bench/run.sh` — do not edit by hand (the method section lives in "
           "tools/bench/method.md).\n",
           machine(opts, earlier),
           "## Commands\n",
           "```sh\n%s\n```\n" % opts.get("commands", ""),
           "Every end-to-end run is `feedgen --host H --port P --server-pid PID <workload> %s "
           "--id-prefix <system><workload>` against a freshly started server; the exact line is "
           "printed by run.sh and the parameters are in each JSON file.\n" % opts.get("common", ""),
           "## The whole path with a realistic feed, and the goals\n",
           "\n".join(fragment(n, opts, earlier) if os.path.exists(os.path.join(BENCH, n + ".md"))
                     else "(`%s` has not run yet.)\n" % n for n in FEED_FRAGMENTS),
           method.rstrip() + "\n",
           "## Module benchmarks\n",
           modules,
           "\n".join(e2e)]
    with open("docs/benchmarks.md", "w") as f:
        f.write("\n".join(doc))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2])
    elif len(sys.argv) >= 5 and len(sys.argv) % 2 == 1 and sys.argv[1] == "annotate":
        annotate(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "docs":
        docs(sys.argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
