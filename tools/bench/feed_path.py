#!/usr/bin/env python3
"""feed_path.py — the figures of tools/bench/feed_path.sh (stdlib only).

  feed_path.py start DIR            just before feedgen starts: the clock, CPU
                                    ticks of floodgate (every thread apart),
                                    floodctld and innd, the worker's busy
                                    cycles, floodgate's counters -> DIR/start.json
  feed_path.py mark DIR NAME        floodgate's counters and the clock now ->
                                    DIR/NAME.json (the perf window's edges)
  feed_path.py after DIR JSON       wait until the downstream has answered every
                                    article floodgate accepted (the relay's
                                    counters), take the same readings, and add
                                    "feed" to feedgen's JSON
  feed_path.py report MD SECS DIR.. the fragment: per run and port the figures,
                                    the ratios against the same run's
                                    baselines (refused for loads more than 2x
                                    apart, report.py's rule), the goals of
                                    issue 33, the sizing for one full feed,
                                    the stage table; MD.json: every run's
                                    figures

DIR holds floodgate.pid, floodctld.pid, innd.pid (those that run),
run.conf (name, kind, sink, ack, down, path: kernel or port), peer.times (feedgen --accept-times)
and down.times (the sink's --sink-times) or inn/log/news (innd's news log,
its lines stamped to the millisecond).

CPU per article, "polling idle excluded": floodgate's process CPU (every
thread, /proc) with the worker lcore's own CPU time replaced by its busy
cycles when those are less (a polling worker spins between bursts; its
busy cycles leave that out, docs/dataplane.md "Busy and idle cycles"), per
article the downstream accepted. The 239 beyond the downstream: for each
article, the moment the peer read its 239 less the moment the downstream
sent (the sink) or logged (innd) its own, both CLOCK_REALTIME on this
machine; the median over the articles of the run.
"""
import calendar
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import busy  # noqa: E402
import path_profile  # noqa: E402
import report as bench_report  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
PROCS = ("floodgate", "floodctld", "innd")
WORKER = re.compile(path_profile.WORKER)
SETTLE_TIMEOUT = 600
POLL_S = 0.1
ANSWERED = ("relay_accepted", "relay_refused_439", "relay_refused_437", "relay_not_wanted",
            "relay_given_up")
ACK_COUNTERS = ("relay_ack_accepted", "relay_ack_spill_timeout", "relay_ack_spill_refused",
                "relay_ack_spill_eof", "relay_ack_queued", "relay_ack_spill_cap",
                "relay_ack_refused")
# the goals of issue 33 ("Goals"), as this benchmark can measure them
GOAL_CPU_RATIO = 1.7
GOAL_INTAKE_RATIO = 0.9
GOAL_LATENCY_US = 1000
GOAL_SIZE = 700000	# "per 700 KB article": CPU per received octet times this
SENDMSG_STAGE = "relay: sendmsg of held buffers to the downstream (end to end; loopback TCP)"
# floodgate's copies of article octets, counted (issue 33 item 4): the port
# path's (portack: by reference or into TCP's send buffer) and the worker's
# TCP's (every payload octet it sent, to the downstream and the peers)
PORT_CONN_COUNTERS = ("portack_connects", "portack_conn_failures", "portack_aborted")
COPY_COUNTERS = ("portack_article_octets_referenced", "portack_article_octets_copied",
                 "tcp_tx_referenced_octets", "tcp_tx_copied_octets")
# what an idle path waits on between the downstream's 239 and the peer's
# (read in the code, not measured apart: light load leaves no CPU to blame)
LIGHT_BOUND = {
    "veth": "the worker's idle wait: on af_packet it blocks in epoll on the receive "
            "interrupt (dataplane/dpdk/worker.c, intr_wait); innd's 239 comes back through "
            "the port as a frame that wakes it, then the peer's 239 goes out through the veth "
            "and the kernel's packet socket",
    "memif": "the hand-offs between threads (the sink's 239, the relay thread's epoll, the "
             "result ring the worker polls between sleeps of up to `idle-backoff`) on two "
             "cores where feedgen's poll loop holds one",
}


def conf(d):
    c = dict(kv.split("=", 1) for kv in open(os.path.join(d, "run.conf")).read().split())
    c.setdefault("path", "kernel" if c.get("down", "-") != "-" else "-")
    return c


def pids(d):
    out = {}
    for n in PROCS:
        p = os.path.join(d, n + ".pid")
        if os.path.exists(p):
            out[n] = int(open(p).read().strip())
    return out


def ticks_of(path):
    try:
        with open(path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return None


def worker_ticks(pid):
    """CPU ticks of the process's worker lcores (by thread name)."""
    t = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            comm = open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip()
        except OSError:
            continue
        if WORKER.search(comm):
            t += ticks_of("/proc/%d/task/%s/stat" % (pid, tid)) or 0
    return t


def counters(d):
    """floodgate's counters (floodctl stats), {} without floodctld."""
    if not os.path.exists(os.path.join(d, "floodctld.pid")):
        return {}
    floodctl = os.path.join(os.environ.get("FG_TOP", "."), "build", "release", "bin", "floodctl")
    r = subprocess.run([floodctl, "stats", "-s", os.path.join(d, "control.sock"), "--json",
                        "--timeout", "5"], capture_output=True, text=True)
    return json.loads(r.stdout)["counters"] if r.returncode == 0 else {}


def reading(d):
    ps = pids(d)
    rec = {"t": time.time(), "ticks": {n: ticks_of("/proc/%d/stat" % p) for n, p in ps.items()},
           "counters": counters(d)}
    if "floodgate" in ps:
        rec["worker_ticks"] = worker_ticks(ps["floodgate"])
        st = busy.dp_stats(os.path.join(d, "dataplane.sock"))
        rec["busy_cycles"] = sum(v for k, v in st.items()
                                 if k.startswith("worker:") and k.endswith(":busy_cycles"))
        rec["tsc_hz"] = st.get("tsc_hz", 0)
    return rec


def write(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


def start(d):
    rec = reading(d)
    rec["load_avg_1m"] = float(open("/proc/loadavg").read().split()[0])
    if None in rec["ticks"].values():
        sys.stderr.write("feed_path: a process is gone: %s\n" % rec["ticks"])
        return 1
    write(os.path.join(d, "start.json"), rec)
    return 0


def mark(d, name):
    write(os.path.join(d, name + ".json"), {"t": time.time(), "counters": counters(d)})
    return 0


def times(path):
    """{Message-ID: ns} of a --accept-times / --sink-times file."""
    out = {}
    if os.path.exists(path):
        for line in open(path):
            p = line.split()
            if len(p) == 2:
                out[p[0]] = int(p[1])
    return out


def innd_times(path):
    """{Message-ID: ns} of innd's accepted articles ('+' lines of its news
    log: "Mon DD HH:MM:SS.mmm + peer <id> ..."), its clock taken as UTC."""
    out = {}
    year = time.gmtime().tm_year
    for line in open(path, errors="replace"):
        p = line.split()
        if len(p) < 6 or p[3] != "+":
            continue
        try:
            hms, ms = p[2].split(".")
            t = time.strptime("%d %s %s %s" % (year, p[0], p[1], hms), "%Y %b %d %H:%M:%S")
        except ValueError:
            continue
        out[p[5]] = (calendar.timegm(t) * 1000 + int(ms)) * 1000000
    return out


def innd_flush(d):
    top = os.environ.get("FG_TOP", ".")
    return subprocess.run([os.path.join(top, "tools", "inn", "innd.sh"), "flush",
                           os.path.join(d, "inn")], capture_output=True).returncode == 0


def delta(end, begin, key):
    return end["counters"].get(key, 0) - begin["counters"].get(key, 0)


def after(d, json_path):
    run = json.load(open(json_path))
    c = conf(d)
    begin = json.load(open(os.path.join(d, "start.json")))
    want = run["accepted"]
    complete = True
    if c["down"] != "-":
        end_by = time.time() + SETTLE_TIMEOUT
        while True:
            now = counters(d)
            answered = sum(now.get(k, 0) for k in ANSWERED) - \
                sum(begin["counters"].get(k, 0) for k in ANSWERED)
            if answered >= want or time.time() > end_by:
                complete = answered >= want
                break
            time.sleep(POLL_S)
    end = reading(d)
    cpu = {n: (end["ticks"][n] - begin["ticks"][n]) / CLK
           for n in begin["ticks"] if end["ticks"].get(n) is not None}
    f = {"name": c["name"], "kind": c["kind"], "sink": c["sink"], "ack": c["ack"],
         "down": c["down"], "path": c["path"], "load": c["load"], "complete": complete,
         "drain_s": round(end["t"] - begin["t"], 3), "cpu_s": cpu,
         "load_avg_1m": begin.get("load_avg_1m")}
    if "worker_ticks" in begin:
        worker = (end["worker_ticks"] - begin["worker_ticks"]) / CLK
        busy_s = (end["busy_cycles"] - begin["busy_cycles"]) / end["tsc_hz"]
        f["worker_cpu_s"] = worker
        f["worker_busy_s"] = round(busy_s, 4)
        f["floodgate_cpu_busy_s"] = round(cpu["floodgate"] - worker + min(worker, busy_s), 4)
        f["counters"] = {k: delta(end, begin, k) for k in end["counters"]
                         if isinstance(end["counters"][k], int) and delta(end, begin, k)}
    # what reached the downstream
    if c["down"] == "innd" or c["kind"] == "-":
        if not innd_flush(d):
            complete = False
        down = innd_times(os.path.join(d, "inn", "log", "news"))
    elif c["down"] == "sink":
        down = times(os.path.join(d, "down.times"))
        complete = complete and run.get("sink", {}).get("drained", False)
    else:
        down = {}
    f["delivered"] = len(down) if (c["down"] != "-" or c["kind"] == "-") else want
    if c["kind"] == "-":
        f["delivered"] = want	# innd alone: its 239s are the intake
    peer = times(os.path.join(d, "peer.times"))
    beyond = [(peer[i] - down[i]) / 1000.0 for i in peer if i in down]
    if beyond:
        f["beyond_p50_us"] = round(statistics.median(beyond), 1)
        f["beyond_n"] = len(beyond)
    # the path the run is named for is the one its articles took: the
    # port's runs sent TAKETHIS from the worker's own TCP, the kernel's not
    ported = f.get("counters", {}).get("portack_offered", 0)
    if c["ack"] == "on" and (c["path"] == "port") != (ported > 0):
        sys.stderr.write("feed_path: %s is the %s path but portack_offered is %d\n"
                         % (c["name"], c["path"], ported))
        complete = False
    f["complete"] = complete
    for name in ("perf.start", "perf.end"):
        p = os.path.join(d, name + ".json")
        if os.path.exists(p):
            f[name.replace(".", "_")] = json.load(open(p))
    run["feed"] = f
    write(json_path, run)
    print("   feed_path %s: %d accepted, %d at the downstream, %.1f s, floodgate CPU %s s%s"
          % (c["name"], want, f["delivered"], f["drain_s"],
             f.get("floodgate_cpu_busy_s", "-"), "" if complete else " (INCOMPLETE)"),
          file=sys.stderr)
    return 0 if complete else 1


# ------------------------------------------------------------------ report

PORTS = {"-": "innd alone", "memif": "memif", "veth": "af_packet"}


def label(f):
    if f["kind"] == "-":
        return "innd alone (kernel sockets)"
    if f["down"] == "-":
        return "%s, null sink (receive only)" % PORTS[f["kind"]]
    mode = "end to end" if f["ack"] == "on" else "queue mode"
    down = "innd" if f["down"] == "innd" else "feedgen's sink"
    light = ", light load" if f.get("load") == "light" else ""
    path = ""
    if f["ack"] == "on":
        path = (" through the port (floodgate's TCP)" if f.get("path") == "port" else
                " through the kernel (relay thread's socket)")
    return "%s, %s, to %s%s%s" % (PORTS[f["kind"]], mode, down, path, light)


def figures(r):
    """The row's figures of one run (feedgen's JSON with "feed")."""
    f = r["feed"]
    acc = max(1, r["accepted"])
    x = {
        "articles_per_s": f["delivered"] / f["drain_s"],
        "gbit_in": 8 * r["article_bytes"] / r["elapsed_s"] / 1e9,
        "gbit_accepted": 8 * r["accepted_bytes"] / f["drain_s"] / 1e9,
        "copies": r["offers"] / max(1, r["articles_offered"]),
    }
    if "floodgate_cpu_busy_s" in f:
        x["cpu_us"] = 1e6 * f["floodgate_cpu_busy_s"] / acc
        x["cpu_us_700k"] = 1e6 * f["floodgate_cpu_busy_s"] * GOAL_SIZE / max(1, r["article_bytes"])
        x["cpu_all_us"] = 1e6 * f["cpu_s"]["floodgate"] / acc
        x["disk"] = f["counters"].get("queue_bytes", 0) / max(1, r["accepted_bytes"])
    else:
        x["cpu_us"] = 1e6 * f["cpu_s"].get("innd", 0) / acc
    return x


def fmt(v, spec="%.0f"):
    return "–" if v is None else spec % v


def run_table(runs):
    out = ["| run | articles/s at the downstream | Gbit/s in (all copies) | Gbit/s accepted "
           "| copies per article | floodgate CPU µs per article (polling idle excluded) "
           "| the same per 700 KB received | all threads, polling included | disk octets "
           "per accepted octet | peer's TAKETHIS p50 µs | 239 beyond the downstream's, p50 µs "
           "| spilled / queued at once | load as it began |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        f, x = r["feed"], figures(r)
        fg = "cpu_all_us" in x
        cnt = f.get("counters", {})
        spilled = sum(cnt.get(k, 0) for k in ("relay_ack_spill_timeout", "relay_ack_spill_refused",
                                               "relay_ack_spill_eof", "relay_ack_spill_cap"))
        beyond = f.get("beyond_p50_us") if f["ack"] == "on" else None
        out.append("| %s | %.1f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %.0f | %s | %s | %s |" % (
            label(f), x["articles_per_s"], x["gbit_in"], x["gbit_accepted"], x["copies"],
            fmt(x["cpu_us"]) if fg else "(innd: %.0f)" % x["cpu_us"],
            fmt(x.get("cpu_us_700k")), fmt(x.get("cpu_all_us")),
            fmt(x.get("disk"), "%.3f"), r["latency"]["article"]["p50_us"],
            fmt(beyond, "%.0f") if beyond is not None else
            ("– (239 after the queue's sync)" if f["ack"] == "off" else "–"),
            "%d / %d" % (spilled, cnt.get("relay_ack_queued", 0)) if f["ack"] == "on" else "–",
            fmt(f.get("load_avg_1m"), "%.2f")))
    return "\n".join(out)


def by_name(runs):
    return {r["feed"]["name"]: r for r in runs}


def ratio(a, b):
    return a / b if b else None


def refused(a, b):
    """report.py's rule between two runs of this benchmark: one processor
    and one commit by construction, so only loads more than 2x apart as
    they began refuse a ratio (the reason, or "")."""
    def st(r):
        return {"cpu": "this", "commit": "this", "load": r["feed"].get("load_avg_1m")}
    return bench_report.incomparable(st(a), st(b))


def ratio_row(what, r, base, key, against):
    """One row of the ratio table: r's figure key over base's, or why not."""
    why = refused(r, base)
    return "| %s, %s | %s | %s |" % (what, label(r["feed"]), "no ratio: " + why if why else
                                     "%.2fx" % ratio(figures(r)[key], figures(base)[key]),
                                     against)


def ratios(runs):
    n = by_name(runs)
    out = ["| ratio (same run) | figure | against |", "| --- | ---: | --- |"]
    cpu = "floodgate CPU per 700 KB received"
    # (figure, its key, the runs, the baseline run, what the baseline is)
    rows = (("articles reaching innd", "articles_per_s",
             ("veth_queue_innd", "veth_ack_innd", "veth_ack_innd_kernel", "memif_ack_innd"),
             "inn", "innd alone's intake"),
            (cpu, "cpu_us_700k", ("memif_queue_sink", "memif_ack_sink", "memif_ack_innd"),
             "memif_null", "memif null sink (receive only)"),
            (cpu, "cpu_us_700k", ("veth_queue_innd", "veth_ack_innd", "veth_ack_innd_kernel"),
             "veth_null", "af_packet null sink (receive only)"),
            ("articles reaching innd", "articles_per_s", ("veth_ack_innd",),
             "veth_ack_innd_kernel", "the same through the kernel (relay thread's socket)"),
            (cpu, "cpu_us_700k", ("veth_ack_innd",),
             "veth_ack_innd_kernel", "the same through the kernel (relay thread's socket)"))
    for what, key, names, base, against in rows:
        for name in names:
            if name in n and base in n:
                out.append(ratio_row(what, n[name], n[base], key, against))
    return "\n".join(out)


def stage_rows(runs):
    """{run name: ({stage: µs per article}, samples, articles in the window)}."""
    out = {}
    for r in runs:
        f = r["feed"]
        txt = os.path.join(r["_dir"], "perf.txt")
        if not os.path.exists(txt) or "perf_start" not in f or "perf_end" not in f:
            continue
        arts = f["perf_end"]["counters"].get("nntp_articles_accepted", 0) - \
            f["perf_start"]["counters"].get("nntp_articles_accepted", 0)
        counts, total = path_profile.classify(txt, path_profile.STAGES)
        if not arts or not total:
            continue
        out[f["name"]] = ({k: v / 1000.0 / arts * 1e6 for k, v in counts.items()}, total, arts)
    return out


def stage_table(runs, st):
    names = [r["feed"]["name"] for r in runs if r["feed"]["name"] in st]
    if not names:
        return "(no perf samples)"
    rows = {}
    for n in names:
        for k, v in st[n][0].items():
            rows.setdefault(k, {})[n] = v
    order = sorted(rows, key=lambda k: -max(rows[k].values()))
    out = ["| stage (floodgate's process, CPU µs per article accepted) | "
           + " | ".join(label(by_name(runs)[n]["feed"]) for n in names) + " |",
           "| --- |" + " ---: |" * len(names)]
    for k in order:
        if max(rows[k].values()) < 0.5:
            continue
        out.append("| %s | " % k + " | ".join("%.0f" % rows[k].get(n, 0) for n in names) + " |")
    out.append("| **all threads** | " + " | ".join(
        "**%.0f** (%d samples, %d articles)" % (sum(st[n][0].values()), st[n][1], st[n][2])
        for n in names) + " |")
    return "\n".join(out)


def top_stages(st, name, base=None, k=3):
    """The k stages that cost the run most per article (above base's, the
    receive-only run's, when given): what bounds it."""
    if name not in st:
        return "no samples"
    b = st[base][0] if base in st else {}
    rows = sorted(((s, v - b.get(s, 0)) for s, v in st[name][0].items()), key=lambda kv: -kv[1])
    return "; ".join("%s %+.0f µs" % (s, v) if b else "%s %.0f µs" % (s, v)
                     for s, v in rows[:k])


def goals(runs, st):
    n = by_name(runs)
    out = ["| goal (issue 33) | measured in this run | verdict |", "| --- | --- | --- |"]
    null, ack = n.get("memif_null"), n.get("memif_ack_sink")
    if null and ack and refused(ack, null):
        out.append("| kernel-free, end to end: CPU per article ≤ %.1fx receive only | not judged: "
                   "%s | – |" % (GOAL_CPU_RATIO, refused(ack, null)))
    elif null and ack:
        # per 700 KB received, not per article: the copies each article
        # arrives in differ from run to run (peers run ahead of each other)
        q = ratio(figures(ack)["cpu_us_700k"], figures(null)["cpu_us_700k"])
        copy_us = st.get("memif_ack_sink", ({}, 0, 0))[0].get(
            "queue sink: copying article bytes past the hold budget (copy_in)", 0)
        send_us = st.get("memif_ack_sink", ({}, 0, 0))[0].get(SENDMSG_STAGE, 0)
        out.append("| kernel-free, end to end: floodgate's CPU per 700 KB article ≤ %.1fx the "
                   "receive-only figure (per 700 KB received: the runs' copies per article "
                   "differ) | %.0f µs / %.0f µs = %.2fx | %s |" % (
                       GOAL_CPU_RATIO, figures(ack)["cpu_us_700k"], figures(null)["cpu_us_700k"], q,
                       "met" if q <= GOAL_CPU_RATIO else
                       "missed, bounded by what end to end adds per article over receive "
                       "only (stage table): " + top_stages(st, "memif_ack_sink", "memif_null")))
        c = ack["feed"].get("counters", {})
        out.append("| kernel-free, end to end: floodgate's own copies of article bytes = 0 | "
                   "portack: %d octets referenced, %d copied (the sink is reached through the "
                   "relay thread's kernel socket: memif has no kernel side and feedgen's sink "
                   "listens on kernel TCP); sampled: copy_in %.0f µs, the relay's sendmsg (the "
                   "kernel copies every octet) %.0f µs per article | %s |" % (
                       c.get("portack_article_octets_referenced", 0),
                       c.get("portack_article_octets_copied", 0), copy_us, send_us,
                       "missed, bounded by the relay's kernel socket to the sink (the port path "
                       "needs a downstream beyond the port: feedgen's sink on --dpdk is not "
                       "there)" if send_us or copy_us else "no copy sampled"))
    port = n.get("veth_ack_innd")
    if port:
        c = port["feed"].get("counters", {})
        ref, cp = (c.get(k, 0) for k in COPY_COUNTERS[:2])
        tref, tcp = (c.get(k, 0) for k in COPY_COUNTERS[2:])
        out.append("| floodgate's own copies of article octets = 0, %s | portack: %d octets referenced, %d copied (%.1f %%); the worker's "
                   "TCP (to innd and the peers' answers): %d referenced, %d copied into frames "
                   "(%.1f %%); net_af_packet copies every frame into the kernel's ring besides "
                   "| %s |" % (
                       label(port["feed"]), ref, cp, 100.0 * cp / max(1, ref + cp), tref, tcp,
                       100.0 * tcp / max(1, tref + tcp),
                       "met" if ref and not cp else
                       "missed, bounded by the session's holds: the pieces portack copies are "
                       "the engine's own copies, made where a peer's connection already held "
                       "its limit of receive buffers (half its receive buffer, "
                       "include/floodgate/tcpsess.h); relay_ack: %s" % ", ".join(
                           "%s %d" % (k[len("relay_ack_"):], c[k]) for k in ACK_COUNTERS
                           if c.get(k))))
    vnull = n.get("veth_null")
    for name in ("veth_ack_innd", "veth_ack_innd_kernel"):
        if vnull and name in n and refused(n[name], vnull):
            out.append("| af_packet, end to end: floodgate's CPU per 700 KB ≤ %.1fx the "
                       "receive-only figure, %s | not judged: %s | – |" % (
                           GOAL_CPU_RATIO, label(n[name]["feed"]), refused(n[name], vnull)))
        elif vnull and name in n:
            q = ratio(figures(n[name])["cpu_us_700k"], figures(vnull)["cpu_us_700k"])
            out.append("| af_packet, end to end: floodgate's CPU per 700 KB ≤ %.1fx the "
                       "receive-only figure, %s | %.0f µs / %.0f µs = %.2fx | %s |" % (
                           GOAL_CPU_RATIO, label(n[name]["feed"]), figures(n[name])["cpu_us_700k"],
                           figures(vnull)["cpu_us_700k"], q, "met" if q <= GOAL_CPU_RATIO else
                           "missed, bounded by what end to end adds per article over receive "
                           "only (stage table): " + top_stages(st, name, "veth_null")))
    inn = n.get("inn")
    for name in ("veth_ack_innd", "veth_ack_innd_kernel", "memif_ack_innd"):
        if name not in n:
            continue
        port = label(n[name]["feed"])
        if inn and refused(n[name], inn):
            out.append("| articles reaching innd ≥ %.1fx innd's own intake, %s | not judged: %s "
                       "| – |" % (GOAL_INTAKE_RATIO, port, refused(n[name], inn)))
        elif inn:
            q = ratio(figures(n[name])["articles_per_s"], figures(inn)["articles_per_s"])
            out.append("| articles reaching innd ≥ %.1fx innd's own intake, %s | %.2fx (%.1f / "
                       "%.1f articles/s) | %s |" % (
                           GOAL_INTAKE_RATIO, port, q, figures(n[name])["articles_per_s"],
                           figures(inn)["articles_per_s"],
                           "met" if q >= GOAL_INTAKE_RATIO else
                           "missed, bounded by floodgate's one worker, whose costliest stages "
                           "per article are: " + top_stages(st, name)))
    for name in ("memif_ack_sink", "veth_ack_innd", "veth_ack_innd_kernel", "memif_ack_innd"):
        if name in n:
            d = figures(n[name]).get("disk", 0)
            c = n[name]["feed"].get("counters", {})
            why = ", ".join("%s %d" % (k[len("relay_ack_"):], c[k]) for k in ACK_COUNTERS
                            if c.get(k) and k not in ("relay_ack_accepted", "relay_ack_refused"))
            if c.get("portack_offered"):
                # the port's connections: one aborted at a result (a spill)
                # reconnects with backoff; its articles meanwhile are queued
                why += "; the port's connections: %s" % ", ".join(
                    "%s %d" % (k[len("portack_"):], c.get(k, 0)) for k in PORT_CONN_COUNTERS)
            out.append("| disk octets per accepted octet = 0 while the downstream keeps up, %s | "
                       "%.3f | %s |" % (label(n[name]["feed"]), d, "met" if d == 0 else
                                        "missed: articles took the queue's path (not "
                                        "answered within ack-timeout, or their connection "
                                        "lost): " + why))
    out.append("| stated, not measurable here: 40 Gbit/s of 700 KB articles per core on a NIC "
               "with DMA and TSO | this machine's per core: the Sizing table below (memif and "
               "af_packet copy every frame and checksum in software) | stated: docs/dataplane.md "
               "says what the path needs, docs/scale.md sizes a box for 74 Gbit/s |")
    for name in ("memif_ack_sink_light", "veth_ack_innd_light"):
        if name in n and "beyond_p50_us" in n[name]["feed"]:
            b = n[name]["feed"]["beyond_p50_us"]
            full = n.get(name[:-len("_light")], {}).get("feed", {}).get("beyond_p50_us")
            out.append("| under light load, the 239 ≤ 1 ms p50 beyond the downstream's own "
                       "answer, %s | %.0f µs over %d articles%s%s | %s |" % (
                           label(n[name]["feed"]), b, n[name]["feed"]["beyond_n"],
                           "; innd's stamps are to the millisecond" if "innd" in name else "",
                           "; at full load %.0f µs" % full if full is not None else "",
                           "met" if b <= GOAL_LATENCY_US else
                           "missed, bounded by " + LIGHT_BOUND[n[name]["feed"]["kind"]]))
    return "\n".join(out)


FULL_FEED_GBIT = 74	# one full copy of the feed now (issue 33: 22 Gbit/s in 2023, +40 % a year)
PORT_GBIT = 100		# a 100 GbE port, full duplex


def sizing(runs):
    """Cores and 100 GbE ports for one full feed (FULL_FEED_GBIT of unique
    articles) from each full-load floodgate run's cost per received octet."""
    out = ["| from the run | Gbit/s received per core (all floodgate's threads, polling idle "
           "excluded) | cores, CHECK-first peers (one copy of each article arrives) | cores, "
           "TAKETHIS-only peers (every copy arrives: this run's copies per article) | 100 GbE "
           "ports, TAKETHIS-only (in; the relay's %d Gbit/s out shares them) |" % FULL_FEED_GBIT,
           "| --- | ---: | ---: | ---: | ---: |"]
    for r in runs:
        f = r["feed"]
        if f["kind"] == "-" or f["down"] == "-" or f.get("load") != "full":
            continue
        per_core = 8 * r["article_bytes"] / f["floodgate_cpu_busy_s"] / 1e9
        copies = figures(r)["copies"]
        inbound = FULL_FEED_GBIT * copies
        out.append("| %s | %.2f | %.0f | %.0f (%.1f copies) | %d |" % (
            label(f), per_core, math.ceil(FULL_FEED_GBIT / per_core),
            math.ceil(inbound / per_core), copies, math.ceil(max(inbound, FULL_FEED_GBIT) / PORT_GBIT)))
    return "\n".join(out)


def report(md, secs, dirs):
    runs = []
    for d in dirs:
        r = json.load(open(os.path.join(d, "run.json")))
        r["_dir"] = d
        r["_command"] = open(os.path.join(d, "command")).read().strip()
        runs.append(r)
    st = stage_rows(runs)
    p = runs[0]["params"]
    text = [
        "### A realistic feed through the whole path, both acknowledgement modes "
        "(`tools/bench/feed_path.sh`)", "",
        "Each run offers for %s s (`--duration`) a feed of the published size mix (`--size "
        "feed`) by TAKETHIS from %d peers, window %d, each article offered by several of them "
        "at nearly the same time (`--dups %s`: K peers with weight W), then finishes what is in "
        "flight; a fresh instance per run, one after the other. Ratios divide runs of this one "
        "benchmark (one commit, one processor, minutes apart). Baselines: innd alone for the "
        "articles reaching innd, floodgate on memif with the null sink (receive only) for the "
        "CPU. Baseline of af_packet's CPU: floodgate on af_packet with the null sink. The sink "
        "is feedgen's own (`--sink`, in the peers' process, kernel TCP). On af_packet, end to "
        "end, innd is reached through the port: innd is bound in the namespace to the veth's "
        "kernel-side address, on floodgate's subnet, `path auto` takes the port and the "
        "worker's own TCP sends the articles' octets by reference (docs/relay.md, \"Two "
        "paths\"); the run \"through the kernel\" is the same with innd on 127.0.0.1 (the "
        "relay thread's socket), the comparison. Queue mode and memif reach their downstream "
        "through the relay thread's kernel socket on loopback (memif has no kernel side; the "
        "sink on feedgen's own TCP is not there yet)." % (
            secs, p["peers"], p["window"], p["dups_dist"]), "",
        run_table(runs), "",
        ratios(runs), "",
        "#### Goals", "",
        goals(runs, st), "",
        "#### Sizing: one full feed of %d Gbit/s from these per-core figures" % FULL_FEED_GBIT, "",
        "Gbit/s per core: the article octets floodgate received over the CPU seconds of all its "
        "threads (polling idle excluded) in each full-load run; a run's cost per received octet "
        "includes relaying one in \"copies\" of them, so for CHECK-first peers (every received "
        "octet relayed) the per-core figure is a little high and their cores a little low. "
        "docs/scale.md reads this table.", "",
        sizing(runs), "",
        "#### Where the CPU goes, per mode and port", "",
        "perf cpu-clock at 1000 Hz with DWARF call chains on floodgate's process for a window "
        "of each full-load run (stages: tools/bench/path_profile.py), per article floodgate "
        "answered 239 in that window (`nntp_articles_accepted`). Polling is in these figures "
        "(the waiting and PMD rows), and the window's samples weigh the same articles as the "
        "run's CPU only roughly: the run table's CPU is the figure, this its breakdown. The "
        "counted copies are in the Goals (portack_article_octets_*, tcp_tx_*_octets); the "
        "copy_in row is their sampled trace.", "",
        stage_table(runs, st), "",
    ]
    with open(md, "w") as f:
        f.write("\n".join(text) + "\n")
    if md != "/dev/stdout":
        write(md + ".json", {"runs": [{k: v for k, v in r.items() if k not in ("connections",)}
                                      for r in runs], "seconds": secs,
                             "stages": {k: {"us_per_article": v[0], "samples": v[1],
                                            "articles": v[2]} for k, v in st.items()}})
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "start":
        return start(argv[2])
    if len(argv) == 4 and argv[1] == "mark":
        return mark(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "after":
        return after(argv[2], argv[3])
    if len(argv) >= 5 and argv[1] == "report":
        return report(argv[2], argv[3], argv[4:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
