#!/usr/bin/env bash
# run.sh quick|full — every benchmark, then docs/benchmarks.md.
#
#  1. every build/release/bench/bench_* binary with --quick or --full and
#     --md docs/bench/<name>.md (the modules write their own fragment);
#  2. the end-to-end runs: feedgen against each system (tools/bench/
#     sys_<name>.sh), each workload on a fresh instance, raw feedgen JSON
#     kept as docs/bench/e2e_<system>_<workload>.json (plus load_avg_1m as
#     the run began, and "path" from systems with a downstream: fgpath);
#  3. tools/bench/report.py: the per-system tables, the floodgate/INN
#     ratios when both ran, the PNG plots (gnuplot) and docs/benchmarks.md.
# `make bench` (quick) must stay under 15 minutes on the 2-core machine.
set -euo pipefail
mode=${1:-quick}
case $mode in quick|full) ;; *) echo "usage: $0 quick|full" >&2; exit 2 ;; esac
FG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
export FG_TOP
cd "$FG_TOP"
B=build/release
feedgen=$B/bin/feedgen
mkdir -p docs/bench docs/img
work=$(mktemp -d /tmp/fg-bench.XXXXXX)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT
t_start=$(date +%s)

# ------------------------------------------------------------ workloads
# name|feedgen arguments. CHECK-heavy: 10 peers each offering every
# article (10 offers per article), as a flood-fill transit site sees.
# TAKETHIS: innfeed's no-CHECK mode once most offers are wanted: one offer
# per article, so every article is new.
if [ "$mode" = quick ]; then
	export FG_BENCH_HISTORY=2000000
	WORKLOADS=(
		"check|--mode check --peers 10 --dups 10 --articles 30000 --size 2K --window 64"
		"takethis_2k|--mode takethis --peers 4 --conns 2 --dups 1 --articles 60000 --size 2K --window 32"
	)
else
	export FG_BENCH_HISTORY=20000000
	WORKLOADS=(
		"check|--mode check --peers 10 --dups 10 --articles 200000 --size 2K --window 64"
		"takethis_2k|--mode takethis --peers 4 --conns 2 --dups 1 --articles 300000 --size 2K --window 32"
		"takethis_700k|--mode takethis --peers 4 --conns 2 --dups 1 --articles 3000 --size 700K --window 8"
	)
fi
COMMON="--seed 42 --cutoff 10d --no-progress --json --timeout 600"

# FG_BENCH_SYSTEMS="inn fgpath": only these end-to-end systems (their old
# results are replaced, the others' kept for the report); FG_BENCH_MODULES=0
# skips the module benchmarks. Both for working on one system; a published
# run is a whole one.
echo "== module benchmarks ($mode)"
shopt -s nullglob
[ "${FG_BENCH_MODULES:-1}" = 0 ] && echo "(skipped: FG_BENCH_MODULES=0)"
for b in "$B"/bench/bench_*; do
	[ "${FG_BENCH_MODULES:-1}" = 0 ] && break
	name=${b##*/bench_}
	echo "-- $name"
	"$b" "--$mode" --md "docs/bench/$name.md" || echo "bench_$name failed (exit $?)" >&2
done

echo "== end to end ($mode)"
[ -x "$feedgen" ] || { echo "run.sh: $feedgen not built (make all)" >&2; exit 1; }
systems=()
for s in tools/bench/sys_*.sh; do
	# shellcheck source=/dev/null
	. "$s"
	n=${s##*/sys_}
	systems+=("${n%.sh}")
done
labels=()
for sys in "${systems[@]}"; do
	v="SYS_${sys}_LABEL"
	labels+=("$sys=${!v:-$sys}")
done
[ -n "${FG_BENCH_SYSTEMS:-}" ] && read -r -a systems <<< "$FG_BENCH_SYSTEMS"
for sys in "${systems[@]}"; do
	rm -f docs/bench/e2e_"$sys"_*.json docs/bench/e2e_"$sys"_*.skip
done
for sys in "${systems[@]}"; do
	for w in "${WORKLOADS[@]}"; do
		wname=${w%%|*}
		wargs=${w#*|}
		# a system may name workloads it cannot run yet, and why
		# (SYS_<name>_SKIP, SYS_<name>_SKIP_WHY); the report lists them
		skip="SYS_${sys}_SKIP" why="SYS_${sys}_SKIP_WHY"
		if [[ " ${!skip:-} " == *" $wname "* ]]; then
			echo "-- $sys $wname: not run: ${!why:-}"
			printf '%s\n' "${!why:-}" > "docs/bench/e2e_${sys}_${wname}.skip"
			continue
		fi
		read -r host port pid < <("sys_${sys}_start" "$work/$sys-$wname") || {
			echo "run.sh: could not start $sys" >&2; exit 1; }
		# a system in a network namespace of its own names a prefix that
		# starts feedgen in there (sys_<name>_exec, optional)
		run_in=""
		if declare -F "sys_${sys}_exec" > /dev/null; then
			run_in=$("sys_${sys}_exec" "$work/$sys-$wname")
		fi
		cmd="$run_in $feedgen --host $host --port $port --server-pid $pid $wargs $COMMON --id-prefix $sys$wname"
		echo "-- $sys $wname: $cmd"
		rc=0
		json=docs/bench/e2e_${sys}_${wname}.json
		load=$(cut -d' ' -f1 /proc/loadavg)
		# shellcheck disable=SC2086
		$cmd > "$json" || rc=$?
		# the load average as the run began, kept with its figures
		python3 tools/bench/report.py annotate "$json" load_avg_1m "$load"
		python3 tools/bench/report.py annotate "$json" command "${cmd# }"
		# a system with work left after feedgen's last answer (the relay
		# delivering downstream) settles it and adds its figures (optional)
		settled=0
		if [ $rc -eq 0 ] && declare -F "sys_${sys}_after" > /dev/null; then
			"sys_${sys}_after" "$work/$sys-$wname" "$json" || settled=$?
		fi
		"sys_${sys}_stop" "$work/$sys-$wname"
		python3 tools/bench/report.py summary "$json"
		[ $rc -eq 0 ] || { echo "run.sh: feedgen found mismatches against $sys ($wname)" >&2; exit 1; }
		[ $settled -eq 0 ] || { echo "run.sh: $sys did not settle ($wname)" >&2; exit 1; }
	done
done

python3 tools/bench/report.py docs --mode "$mode" --commands "make bench$([ "$mode" = full ] && echo -full) (tools/bench/run.sh $mode)" \
	--common "$COMMON" "${labels[@]}"
grep -E "^(###|\|)" docs/bench/e2e.md || true
echo "== done in $(( $(date +%s) - t_start )) s: docs/benchmarks.md"
