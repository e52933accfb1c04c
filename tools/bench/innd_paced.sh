#!/usr/bin/env bash
# innd_paced.sh [ARTICLES] [--md FILE] — innd's own CPU per article behind
# floodgate's relay against innd fed directly at the same article rate.
#
#  1. the whole path (sys_fgpath.sh: floodgate on a tap, or
#     FG_BENCH_PATH_KIND=veth|memif, durable queue, relay to innd on
#     loopback) takes ARTICLES (default 30000) 2 KB articles, TAKETHIS, as
#     run.sh's takethis_2k workload; path_settle.py gives innd's CPU from
#     the start to the relay's last delivery and the rate innd accepted at;
#  2. innd alone (sys_inn.sh, a fresh instance) takes the same articles from
#     feedgen flat out: innd's CPU per article at its own maximum;
#  3. innd alone once more with feedgen --rate, paced so that innd accepts
#     articles at the rate the relay delivered them in 1: innd's CPU per
#     article at the same rate.
# The fragment compares 1 with 3 (and 2): what innd spends per article
# because the relay feeds it, not because it is fed slower or faster.
# Leaves nothing behind: each system is stopped and the scratch directory
# removed, also on failure (FG_PROFILE_KEEP=1 keeps it).
set -euo pipefail
# shellcheck source=tools/bench/profile_args.sh
. "$(dirname "$0")/profile_args.sh"
articles=${args[0]:-30000}
for s in inn floodgate fgpath fgmemif; do
	# shellcheck source=/dev/null
	. "tools/bench/sys_$s.sh"
done
kind=${FG_BENCH_PATH_KIND:-tap}
export FG_BENCH_PATH_KIND=$kind
work=$(mktemp -d /tmp/fg-innpaced.XXXXXX)
chmod 0755 "$work"
sys=
dir=
cleanup() {
	[ -z "$sys" ] || "sys_${sys}_stop" "$dir" > /dev/null 2>&1 || true
	if [ -n "${FG_PROFILE_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
WL="--mode takethis --peers 4 --conns 2 --dups 1 --articles $articles --size 2K --window 32"
WL="$WL --seed 42 --cutoff 10d --no-progress --json --timeout 600"

# run NAME SYSTEM [FEEDGEN ARGS...]: one run on a fresh instance, its JSON
# in $work/NAME.json
run() {
	local name=$1 s=$2 host port pid run_in="" fg_args=""
	shift 2
	dir=$work/$name
	# what did start is stopped again even when the start fails (cleanup)
	sys=$s
	read -r host port pid < <("sys_${s}_start" "$dir")
	! declare -F "sys_${s}_exec" > /dev/null || run_in=$("sys_${s}_exec" "$dir")
	[ "$kind" != memif ] || [ "$s" != fgpath ] || fg_args=$(sys_fgmemif_args "$dir")
	echo "-- $name" >&2
	# shellcheck disable=SC2086
	$run_in build/release/bin/feedgen $fg_args --host "$host" --port "$port" --server-pid "$pid" \
		$WL --id-prefix "ip$name" "$@" > "$work/$name.json"
	! declare -F "sys_${s}_after" > /dev/null || "sys_${s}_after" "$dir" "$work/$name.json"
	"sys_${s}_stop" "$dir" 2> /dev/null
	sys=
}

run path fgpath
run direct inn
# innd's accepted articles per second in the path run, as feedgen's offers
# per second (the same workload: innd refuses the same share directly)
rate=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
p = r["path"]
print(round(p["delivered_per_s"] * r["offers"] / p["delivered"]))' "$work/path.json")
run paced inn --rate "$rate"
python3 - "$kind" "$rate" "$work/path.json" "$work/direct.json" "$work/paced.json" "$md" <<'PY'
import json
import sys

kind, rate, pj, dj, qj, md = sys.argv[1:7]
path, direct, paced = (json.load(open(p)) for p in (pj, dj, qj))
p = path["path"]
port = {"tap": "a tap", "veth": "af_packet on a veth", "memif": "memif (kernel-free)"}[kind]
# innd's CPU microseconds per article it accepted, and its accepting rate
behind = (p["cpu_s"]["innd"] / p["delivered"] * 1e6, p["delivered_per_s"])
alone = lambda r: (r["cpu_server_s"] / r["accepted"] * 1e6, r["accepted"] / r["elapsed_s"])
rows = [("innd behind the relay (whole path, floodgate on %s)" % port, behind),
        ("innd fed directly by feedgen, paced (--rate %s offers/s)" % rate, alone(paced)),
        ("innd fed directly by feedgen, flat out", alone(direct))]
ratio_paced = behind[0] / rows[1][1][0]
ratio_flat = behind[0] / rows[2][1][0]
out = ["### innd behind the relay against innd fed directly at the same rate "
       "(`tools/bench/innd_paced.sh`)", "",
       "| innd | articles accepted/s | innd CPU µs per accepted article | behind the relay / this |",
       "| --- | ---: | ---: | ---: |"]
for name, (us, rate) in rows:
    out.append("| %s | %.0f | %.1f | %.2fx |" % (name, rate, us, behind[0] / us))
if abs(ratio_paced - 1) <= 0.10:
    verdict = ("within 10 %% of what innd spends fed directly at the same rate (%.2fx): the relay's "
               "delivery costs innd no more than a peer's feed does" % ratio_paced)
elif ratio_paced > 1:
    verdict = ("%.2fx what innd spends fed directly at the same rate: the relay's way of feeding "
               "(its connection, window and batching) costs innd more than a peer's feed" % ratio_paced)
else:
    verdict = ("%.2fx what innd spends fed directly at the same rate: innd spends less behind the "
               "relay than fed directly" % ratio_paced)
note = ("%d articles of 2 KB, TAKETHIS, 4 peers x 2 connections, window 32, the same seed in "
        "each run, each on a fresh innd (buffered news log); one run of each, one after the "
        "other on this shared 2-core VM: compare within this table. Behind the relay innd's "
        "CPU runs from feedgen's start to the relay's last delivery (path_settle.py), fed "
        "directly over feedgen's run; the paced run's rate is chosen so that innd accepts "
        "articles at the rate the relay delivered them. Against innd flat out the ratio is "
        "%.2fx. Conclusion from this run: innd's CPU per article behind the relay is %s."
        % (path["params"]["articles"], ratio_flat, verdict))
text = "\n".join(out) + "\n\n" + note + "\n"
print(text)
if md:
    with open(md, "w") as f:
        f.write(text)
PY
