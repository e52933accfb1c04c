#!/usr/bin/env bash
# path_profile.sh [ARTICLES [SIZE]] [--md FILE] — where the CPU goes on the
# whole path, per stage, for ARTICLES (default 300) articles of SIZE
# (default 700K), TAKETHIS only.
#
#  1. starts the whole path exactly as the benchmark does (sys_fgpath.sh:
#     floodgate on a net_tap port, one worker lcore, durable queue, relay
#     to innd on loopback, feedgen in the namespace); FG_BENCH_PATH_KIND=
#     memif puts floodgate on net_memif with feedgen --dpdk as its client
#     (sys_fgmpath.sh: kernel-free on the peers' side), veth on af_packet;
#  2. samples floodgate's and innd's every thread with perf's cpu-clock
#     software event (this machine has no hardware counters; the timer
#     samples user and kernel code alike) from before feedgen starts until
#     the relay's last delivery (path_settle.py);
#  3. tools/bench/path_profile.py puts every sample in a stage by its
#     thread and its call chain (the classification is that file's table)
#     and prints CPU microseconds per article for each.
# Needs root (namespaces, perf -p). Leaves nothing behind: the system is
# stopped and the scratch directory removed, also on failure
# (FG_PROFILE_KEEP=1 keeps the directory: perf's files, the run's JSON).
set -euo pipefail
# shellcheck source=tools/bench/profile_args.sh
. "$(dirname "$0")/profile_args.sh"
articles=${args[0]:-300}
size=${args[1]:-700K}
command -v perf > /dev/null || { echo "path_profile.sh: perf is not installed (make deps)" >&2; exit 1; }
# shellcheck source=/dev/null
. tools/bench/sys_inn.sh
# shellcheck source=/dev/null
. tools/bench/sys_floodgate.sh
# shellcheck source=/dev/null
. tools/bench/sys_fgpath.sh
# shellcheck source=/dev/null
. tools/bench/sys_fgmemif.sh
kind=${FG_BENCH_PATH_KIND:-tap}
export FG_BENCH_PATH_KIND=$kind
work=$(mktemp -d /tmp/fg-profile.XXXXXX)
chmod 0755 "$work"
dir=$work/fgpath
perf_pids=()
started=0
cleanup() {
	for p in "${perf_pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	[ $started = 0 ] || sys_fgpath_stop "$dir" > /dev/null 2>&1 || true
	if [ -n "${FG_PROFILE_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# what did start (a namespace, innd, floodctld) is stopped again even when
# the start fails (cleanup)
started=1
read -r host port pid < <(sys_fgpath_start "$dir")
innd_pid=$(cat "$dir/innd.pid")
# one perf per process: its own file, its threads by name (comm)
for p in "$pid" "$innd_pid"; do
	perf record -q -e cpu-clock -F 2000 --call-graph dwarf,8192 -p "$p" -o "$work/perf.$p.data" > /dev/null 2>&1 &
	perf_pids+=($!)
done
# perf attaches asynchronously: its file appears when it has
for p in "$pid" "$innd_pid"; do
	for _ in $(seq 100); do [ -s "$work/perf.$p.data" ] && break; sleep 0.1; done
done
json=$work/run.json
# memif: feedgen is the client end, on the project's TCP (--dpdk)
fg_args=()
[ "$kind" != memif ] || read -r -a fg_args <<< "$(sys_fgmemif_args "$dir")"
$(sys_fgpath_exec "$dir") build/release/bin/feedgen "${fg_args[@]}" --host "$host" --port "$port" \
	--server-pid "$pid" --mode takethis --peers 1 --conns 1 --dups 1 --articles "$articles" \
	--size "$size" --window 8 --seed 42 --cutoff 10d --no-progress --json --timeout 600 \
	--id-prefix prof > "$json"
sys_fgpath_after "$dir" "$json"
# floodgate's counters (segments per article: the port's costs are per frame)
build/release/bin/floodctl stats -s "$dir/control.sock" --json --timeout 5 > "$work/stats.json"
for p in "${perf_pids[@]}"; do kill -INT "$p"; wait "$p" || true; done
perf_pids=()
for p in "$pid" "$innd_pid"; do
	perf script -i "$work/perf.$p.data" -F comm,tid,ip,sym,dso 2> /dev/null > "$work/perf.$p.txt"
done
python3 tools/bench/path_profile.py "$json" "$work/perf.$pid.txt" "$work/perf.$innd_pid.txt" \
	--stats "$work/stats.json" --port "$kind" ${md:+--md "$md"}
