#!/usr/bin/env python3
"""gro_profile.py — the figures of tools/bench/gro_profile.sh. Python stdlib only.

  gro_profile.py run KIND GRO DIR FEEDGEN_JSON BEFORE_JSON LOAD
        one run's line (JSON) on stdout: feedgen's figures, the load
        average as the run began and the dataplane's counters since
        BEFORE_JSON (busy.py stats), taken
        once its 239s are all published (the worker publishes its
        counters every 100 ms: waited for, up to 10 s)
  gro_profile.py table RUNS_JSONL ARTICLES ROUNDS
        the Markdown fragment: per port and gro setting the median of
        the rounds; the MTU 9000 starts as they went
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import busy  # noqa: E402

PORTS = {"tap": "net_tap", "veth": "net_af_packet (veth)"}


def run(kind, gro, d, fg_path, before_json, load):
    fg = json.load(open(fg_path))
    fg["load_avg_1m"] = float(load)
    b = json.loads(before_json)
    deadline = time.monotonic() + 10
    while True:
        a = busy.dp_stats(os.path.join(d, "dataplane.sock"))
        if (a.get("nntp_response:239", 0) - b.get("nntp_response:239", 0) >= fg["accepted"]
                or time.monotonic() > deadline):
            break
        time.sleep(0.05)
    c = {k: a[k] - b.get(k, 0) for k in a}
    c["tsc_hz"] = a.get("tsc_hz", 0)
    print(json.dumps({"kind": kind, "gro": gro, "feedgen": fg, "counters": c}))


def figures(r):
    fg, c = r["feedgen"], r["counters"]
    n = fg["articles_sent"]
    merged, packets = c.get("dp_gro_segs_merged", 0), c.get("dp_gro_packets", 0)
    return {
        "frames": (c["net_rx_frames"] + merged) / n,
        "packets": c["tcp_rx_segs"] / n,
        "per_merge": (packets + merged) / packets if packets else 0.0,
        "sent": c["tcp_tx_segs"] / n,
        "busy_us": c["dp_busy_cycles"] / c["tsc_hz"] * 1e6 / n if c["tsc_hz"] else 0.0,
        "cpu_us": fg["cpu_server_s"] * 1e6 / n,
        "rate": fg["articles_per_s"],
        "load": fg.get("load_avg_1m", 0.0),
    }


def table(path, articles, rounds):
    runs = [json.loads(l) for l in open(path) if l.strip()]
    out = ["### What GRO changes for 700 KB articles (`tools/bench/gro_profile.sh`)", "",
           "Each row the median of %s runs of %s articles of 700 KB by TAKETHIS (feedgen: 4 peers "
           "x 2 connections, window 8, every article new) against a fresh floodgate (one worker, "
           "null sink); gro off and on alternate, the order flipping every round. Frames: what "
           "the port delivered (`net_rx_frames` + `dp_gro_segs_merged`); packets: what TCP took "
           "(`tcp_rx_segs`); sent: floodgate's segments (ACKs, answers, window updates); busy: "
           "the worker's busy cycles (its polling left out, but TSC time: on a loaded machine "
           "it counts the time the worker was runnable and not running too); CPU: floodgate's "
           "process from /proc (clock ticks: 10 ms over the run), polling and all; load: the "
           "1-minute load average as each run began." % (rounds, articles), "",
           "| port | gro | MTU | frames per article | packets TCP took per article | segments per "
           "merged packet | segments sent per article | worker busy µs per article | "
           "floodgate CPU µs per article | articles/s | load (1 min) |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind in PORTS:
        for gro in ("off", "on"):
            fs = [figures(r) for r in runs if r.get("kind") == kind and r.get("gro") == gro]
            if not fs:
                continue
            m = {k: statistics.median(f[k] for f in fs) for k in fs[0]}
            out.append("| %s | %s | 1500 | %.0f | %.0f | %s | %.0f | %.0f | %.0f | %.0f | %.1f |"
                       % (PORTS[kind], gro, m["frames"], m["packets"],
                          "%.1f" % m["per_merge"] if m["per_merge"] else "—", m["sent"],
                          m["busy_us"], m["cpu_us"], m["rate"], m["load"]))
    for r in runs:
        if "jumbo" in r:
            out.append("| %s | — | 9000 | %s | | | | | | | |"
                       % (PORTS.get(r["kind"], r["kind"]),
                          "not measured: floodgate refused to start: `%s`" % r["jumbo"]
                          if r["jumbo"] != "started" else "started (not measured)"))
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) == 8 and argv[1] == "run":
        run(*argv[2:])
        return 0
    if len(argv) == 5 and argv[1] == "table":
        sys.stdout.write(table(argv[2], argv[3], argv[4]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
