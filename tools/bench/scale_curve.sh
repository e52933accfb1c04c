#!/usr/bin/env bash
# scale_curve.sh [OUT_JSON] — the history's cost curve (make bench-full):
# bench_scale at 10 M and 100 M entries, sharded (64) and single table,
# then once at 1 G entries sharded (the table alone is about 16 GB): that
# run only when MemAvailable holds the table and 4 GB to spare (the
# snapshot's dirty pages, everyone else), else the largest of 500 M,
# 200 M that does (said on stderr and in docs/scale.md). Each run is its own process, nice'd; the
# runs so far stay in FG_SCALE_PARTIAL (default a file in /tmp, removed
# once copied) if the curve is cut short. The rows are appended to OUT_JSON
# with commit, date and processor (never written by hand). Then
# tools/bench/scale_plot.py writes docs/bench/scale.md and docs/img/scale.svg.
set -euo pipefail
FG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$FG_TOP"
out=${1:-docs/bench/scale.json}
bin=build/release/bench/bench_scale
[ -x "$bin" ] || { echo "scale_curve.sh: build first (make all)" >&2; exit 1; }
tmp=${FG_SCALE_PARTIAL:-$(mktemp /tmp/fg-scale.XXXXXX.json)}
for n in 10000000 100000000; do
	for s in 64 1; do
		nice -n 5 "$bin" --entries "$n" --shards "$s" --json "$tmp" >/dev/null
	done
done
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
big=
for n in 1000000000 500000000 200000000; do
	# the table: (entries + an hour of journal) x 1.25 slots of 12.8
	# bytes; 4 GB more for the snapshot's dirty pages, the samples and
	# everyone else on the machine
	need_kb=$(( (n + 25000000) / 1000 * 125 / 100 * 128 / 10 + 4000000 ))
	if [ "$avail_kb" -ge "$need_kb" ]; then big=$n; break; fi
	echo "scale_curve.sh: $n entries need ${need_kb} kB, MemAvailable is ${avail_kb} kB: trying fewer" >&2
done
[ -n "$big" ] && nice -n 5 "$bin" --entries "$big" --shards 64 --json "$tmp" >/dev/null
# every row of this curve gets its provenance (the load is bench_scale's
# own) and is appended: earlier runs stay, and scale_plot.py shows the
# newest of each (entries, shards) with the run that made it
python3 - "$tmp" "$out" <<'PY'
import json, subprocess, sys, time
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip() or "unknown"
if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs"],
                  capture_output=True, text=True).stdout.strip():
    commit += "+"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "unknown")
date = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
with open(sys.argv[1]) as src, open(sys.argv[2], "a") as dst:
    for line in src:
        if line.strip():
            r = json.loads(line)
            r.update(commit=commit, date=date, cpu=cpu)
            dst.write(json.dumps(r) + "\n")
PY
rm -f "$tmp"
python3 tools/bench/scale_plot.py "$out"
