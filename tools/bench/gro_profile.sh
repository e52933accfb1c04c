#!/usr/bin/env bash
# gro_profile.sh [ARTICLES [ROUNDS]] [--md FILE] — what [dataplane] gro
# changes for 700 KB articles on the tap and on af_packet (a veth), and
# what jumbo frames would (issue 24).
#
#  1. for each round, for each port, gro off and gro on, in turns (the
#     order flips every round, so a change in the machine's load falls on
#     both alike): the system exactly as run.sh benchmarks it
#     (sys_floodgate.sh: net_tap; sys_fgveth.sh's veth: net_af_packet),
#     null sink, one worker, a fresh instance per run, and feedgen's
#     700 KB TAKETHIS workload (ARTICLES articles, default 600; 4 peers x
#     2 connections, every article new);
#  2. per run: floodgate's CPU (feedgen --server-pid: the process, its
#     polling included) and the worker's busy cycles (busy.py: what the
#     articles cost the lcore, its spinning left out), per article; the
#     frames the port delivered (net_rx_frames + dp_gro_segs_merged), the
#     packets TCP took (tcp_rx_segs) and the segments floodgate sent
#     (tcp_tx_segs: its ACKs and answers), per article;
#  3. MTU 9000 (FG_BENCH_MTU): each port is started with it once; DPDK
#     22.11's net_tap and net_af_packet refuse it at start, and their
#     refusal is what the table shows;
#  4. tools/bench/gro_profile.py prints the medians of the ROUNDS
#     (default 3) runs as one table.
# Needs root (namespaces). Leaves nothing behind: each system is stopped
# and the scratch directory removed, also on failure (FG_PROFILE_KEEP=1
# keeps the directory).
set -euo pipefail
# shellcheck source=tools/bench/profile_args.sh
. "$(dirname "$0")/profile_args.sh"
articles=${args[0]:-600}
rounds=${args[1]:-3}
for s in floodgate fgveth; do
	# shellcheck source=/dev/null
	. "tools/bench/sys_$s.sh"
done
B=$FG_TOP/build/release/bin
work=$(mktemp -d /tmp/fg-gro.XXXXXX)
chmod 0755 "$work"
cur=
cleanup() {
	[ -z "$cur" ] || _sys_fg_stop "$work/$cur" "fg-gro-$$-$cur" > /dev/null 2>&1 || true
	if [ -n "${FG_PROFILE_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# one run: port kind $1 (tap, veth), gro $2 (on, off), run number $3;
# appends one JSON line to $work/runs.jsonl
run() {
	local kind=$1 gro=$2 name=$1-$2-$3 host port pid before load
	cur=$name
	read -r host port pid < <(_sys_fg_start "$work/$name" "fg-gro-$$-$name" "$kind" null \
		"gro $gro")
	load=$(cut -d' ' -f1 /proc/loadavg)
	before=$(python3 tools/bench/busy.py stats "$work/$name")
	ip netns exec "fg-gro-$$-$name" "$B/feedgen" --host "$host" --port "$port" \
		--mode takethis --peers 4 --conns 2 --dups 1 --articles "$articles" --size 700K \
		--window 8 --seed 42 --cutoff 10d --no-progress --json --timeout 600 \
		--server-pid "$pid" > "$work/$name.json"
	python3 tools/bench/gro_profile.py run "$kind" "$gro" "$work/$name" "$work/$name.json" \
		"$before" "$load" >> "$work/runs.jsonl"
	_sys_fg_stop "$work/$name" "fg-gro-$$-$name" 2> /dev/null
	cur=
}

# MTU 9000 on port kind $1: the refusal floodgate gives, as one JSON line
jumbo() {
	local kind=$1 name=$1-jumbo why
	cur=$name
	if FG_BENCH_MTU=9000 _sys_fg_start "$work/$name" "fg-gro-$$-$name" "$kind" null \
		> /dev/null 2> "$work/$name.err"; then
		why="started"
	else
		why=$(grep -m1 -o 'mtu 9000 .*' "$work/$name/floodgate.log" || echo "did not start")
	fi
	_sys_fg_stop "$work/$name" "fg-gro-$$-$name" 2> /dev/null || true
	cur=
	python3 -c 'import json, sys; print(json.dumps({"kind": sys.argv[1], "jumbo": sys.argv[2]}))' \
		"$kind" "$why" >> "$work/runs.jsonl"
}

for r in $(seq "$rounds"); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off"
	for kind in tap veth; do
		for g in $order; do
			echo "-- round $r: $kind, gro $g" >&2
			run "$kind" "$g" "$r"
		done
	done
done
for kind in tap veth; do jumbo "$kind"; done
if [ -n "$md" ]; then
	python3 tools/bench/gro_profile.py table "$work/runs.jsonl" "$articles" "$rounds" > "$md"
else
	python3 tools/bench/gro_profile.py table "$work/runs.jsonl" "$articles" "$rounds"
fi
