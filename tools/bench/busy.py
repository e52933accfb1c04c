#!/usr/bin/env python3
"""busy.py — floodgate's worker cycles for one benchmark run. Python stdlib only.

  busy.py after DIR JSON   ask the dataplane (its control socket
                           DIR/dataplane.sock, `stats`) for every worker's
                           busy and idle cycles and the TSC's rate, and add
                           "busy" to feedgen's JSON
  busy.py stats DIR        the dataplane's counters now, as one JSON
                           object (tools/bench/gro_profile.sh takes two
                           and subtracts)

A polling lcore's CPU time counts its spinning: the figure that says what
an offer costs floodgate's worker is its busy cycles (docs/dataplane.md,
"Busy and idle cycles"). The counters run from floodgate's start; before
feedgen connects the worker has nothing to do, so its busy cycles are the
run's (a few timer passes aside).

The "busy" object:
  cycles, idle_cycles      summed over the workers
  tsc_hz                   the TSC's rate
  seconds                  cycles / tsc_hz
  share                    cycles / (cycles + idle_cycles)
  per_m_offers             busy seconds per million offers (the unit of the
                           CPU columns, so the two compare directly)
  ns_per_offer             busy nanoseconds per offer
  ns_per_article           busy nanoseconds per article sent (TAKETHIS and
                           IHAVE runs; null without articles)
  offers_per_busy_s        offers / seconds: what one fully busy worker
                           would decide at this cost
"""
import json
import os
import socket
import sys


def dp_stats(sock_path, timeout=10.0):
    """{name: int} of the dataplane's `stats` answer."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(sock_path)
        s.sendall(b"stats\n")
        with s.makefile("rb") as f:	# the answer ends when the dataplane closes
            head, body = f.readline(), f.read()
    if not head.startswith(b"ok "):
        raise RuntimeError("dataplane stats: %r" % head)
    out = {}
    for line in body.decode(errors="replace").splitlines():
        k, _, v = line.strip().rpartition(" ")
        if k and v.isdigit():
            out[k] = int(v)
    return out


def busy_figures(st, offers, articles):
    """The "busy" object from the dataplane's counters."""
    busy = sum(v for k, v in st.items() if k.startswith("worker:") and k.endswith(":busy_cycles"))
    idle = sum(v for k, v in st.items() if k.startswith("worker:") and k.endswith(":idle_cycles"))
    hz = st.get("tsc_hz", 0)
    if not hz or not busy:
        raise RuntimeError("no busy cycles or TSC rate in the dataplane's stats")
    secs = busy / hz
    return {
        "cycles": busy, "idle_cycles": idle, "tsc_hz": hz, "seconds": round(secs, 6),
        "share": round(busy / (busy + idle), 4),
        "per_m_offers": round(secs * 1e6 / offers, 4) if offers else None,
        "ns_per_offer": round(secs * 1e9 / offers, 1) if offers else None,
        "ns_per_article": round(secs * 1e9 / articles, 1) if articles else None,
        "offers_per_busy_s": round(offers / secs) if secs else None,
    }


def after(d, json_path):
    r = json.load(open(json_path))
    st = dp_stats(os.path.join(d, "dataplane.sock"))
    r["busy"] = busy_figures(st, r.get("offers", 0), r.get("articles_sent", 0))
    with open(json_path + ".tmp", "w") as f:
        json.dump(r, f)
    os.replace(json_path + ".tmp", json_path)
    b = r["busy"]
    print("   busy: %.3f s of worker cycles (%.0f %% of its loop), %.0f ns per offer%s"
          % (b["seconds"], 100 * b["share"], b["ns_per_offer"] or 0,
             ", %.0f ns per article" % b["ns_per_article"] if b["ns_per_article"] else ""),
          file=sys.stderr)


def main(argv):
    if len(argv) == 4 and argv[1] == "after":
        after(argv[2], argv[3])
        return 0
    if len(argv) == 3 and argv[1] == "stats":
        print(json.dumps(dp_stats(os.path.join(argv[2], "dataplane.sock"))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
