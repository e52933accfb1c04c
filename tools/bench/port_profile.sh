#!/usr/bin/env bash
# port_profile.sh [CHECK_ARTICLES [TAKETHIS_ARTICLES]] [--md FILE] — where
# the cycles of one CHECK offer go on each port, and of one 2 KB article on
# the tap and af_packet (memif's is path_profile_memif_2k's).
#
#  1. for each run below: the system exactly as run.sh benchmarks it
#     (sys_floodgate.sh: net_tap; sys_fgveth.sh: net_af_packet on a veth;
#     sys_fgmemif.sh: net_memif with feedgen --dpdk; sys_host.sh:
#     floodgate-host on kernel sockets), null sink, one worker, a fresh
#     instance per run;
#  2. perf's cpu-clock samples floodgate's process (every thread, DWARF
#     call chains) from before feedgen starts until its last answer; the
#     DPDK ports' busy cycles are added to the run's JSON (busy.py);
#  3. tools/bench/port_profile.py puts each sample in a stage by its
#     innermost frame and prints one table, a column per run.
# CHECK: run.sh's CHECK-heavy workload (10 peers, 10 offers per article);
# TAKETHIS: 4 peers x 2 connections, every article new, as run.sh's.
# Needs root (namespaces, perf -p). Leaves nothing behind: each system is
# stopped and the scratch directory removed, also on failure
# (FG_PROFILE_KEEP=1 keeps the directory).
set -euo pipefail
# shellcheck source=tools/bench/profile_args.sh
. "$(dirname "$0")/profile_args.sh"
check_articles=${args[0]:-30000}
tk_articles=${args[1]:-30000}
command -v perf > /dev/null || { echo "port_profile.sh: perf is not installed (make deps)" >&2; exit 1; }
for s in floodgate fgveth fgmemif host; do
	# shellcheck source=/dev/null
	. "tools/bench/sys_$s.sh"
done
# system|label|workload|feedgen arguments
RUNS=(
	"floodgate|tap|check|--mode check --peers 10 --dups 10 --articles $check_articles --size 2K --window 64"
	"fgveth|af_packet|check|--mode check --peers 10 --dups 10 --articles $check_articles --size 2K --window 64"
	"fgmemif|memif|check|--mode check --peers 10 --dups 10 --articles $check_articles --size 2K --window 64"
	"host|kernel sockets (floodgate-host)|check|--mode check --peers 10 --dups 10 --articles $check_articles --size 2K --window 64"
	"floodgate|tap|takethis_2k|--mode takethis --peers 4 --conns 2 --dups 1 --articles $tk_articles --size 2K --window 32"
	"fgveth|af_packet|takethis_2k|--mode takethis --peers 4 --conns 2 --dups 1 --articles $tk_articles --size 2K --window 32"
)
work=$(mktemp -d /tmp/fg-pprofile.XXXXXX)
chmod 0755 "$work"
perf_pid=
sys=
dir=
cleanup() {
	[ -z "$perf_pid" ] || kill -INT "$perf_pid" 2>/dev/null || true
	[ -z "$sys" ] || "sys_${sys}_stop" "$dir" > /dev/null 2>&1 || true
	if [ -n "${FG_PROFILE_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# profile N SYSTEM WORKLOAD-ARGS: one run on a fresh instance, its JSON and
# perf script's text as $work/run.N.json, perf.N.txt
profile() {
	local n=$1 s=$2 wargs=$3 host port pid run_in="" fg_args=""
	dir=$work/$n-$s
	# what did start is stopped again even when the start fails (cleanup)
	sys=$s
	read -r host port pid < <("sys_${s}_start" "$dir")
	# a buffer perf does not overflow while it waits for a core (-m)
	perf record -q -e cpu-clock -F 2000 --call-graph dwarf,8192 -m 64M -p "$pid" \
		-o "$work/perf.$n.data" > /dev/null 2>&1 &
	perf_pid=$!
	# perf attaches asynchronously: its file appears when it has
	for _ in $(seq 100); do [ -s "$work/perf.$n.data" ] && break; sleep 0.1; done
	! declare -F "sys_${s}_exec" > /dev/null || run_in=$("sys_${s}_exec" "$dir")
	! declare -F "sys_${s}_args" > /dev/null || fg_args=$("sys_${s}_args" "$dir")
	# shellcheck disable=SC2086
	$run_in build/release/bin/feedgen $fg_args --host "$host" --port "$port" --server-pid "$pid" \
		$wargs --seed 42 --cutoff 10d --no-progress --json --timeout 600 --id-prefix "pp$n" \
		> "$work/run.$n.json"
	kill -INT "$perf_pid"
	wait "$perf_pid" || true
	perf_pid=
	! declare -F "sys_${s}_after" > /dev/null || "sys_${s}_after" "$dir" "$work/run.$n.json"
	"sys_${s}_stop" "$dir" 2> /dev/null
	sys=
	perf script -i "$work/perf.$n.data" -F comm,tid,ip,sym,dso 2> /dev/null > "$work/perf.$n.txt"
	rm -rf "$work/perf.$n.data" "$dir"
}

table=()
n=0
for r in "${RUNS[@]}"; do
	IFS='|' read -r s label wname wargs <<< "$r"
	n=$((n + 1))
	# perf falling behind on the loaded machine loses samples: a run whose
	# samples miss too much of the process's CPU is made again (3 tries)
	for try in 1 2 3; do
		echo "-- $label $wname (try $try)" >&2
		profile "$n" "$s" "$wargs"
		cov=0
		cov=$(python3 tools/bench/port_profile.py coverage "$work/run.$n.json" "$work/perf.$n.txt") &&
			break
		echo "   perf sampled only $cov of the process's CPU" >&2
		[ "$try" != 3 ] || { echo "port_profile.sh: perf keeps losing samples ($label $wname)" >&2; exit 1; }
	done
	table+=("$label" "$wname" "$work/run.$n.json" "$work/perf.$n.txt")
done
python3 tools/bench/port_profile.py ${md:+--md "$md"} "${table[@]}"
