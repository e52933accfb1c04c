#!/usr/bin/env bash
# run.sh quick|full — every benchmark, then docs/benchmarks.md.
#
#  1. every build/release/bench/bench_* binary with --quick or --full and
#     --md STAGE/<name>.md (the modules write their own fragment); run.sh
#     stamps each fragment with this run (mode, commit, date, load average
#     as the module began); then tools/bench/path_profile.sh, where the
#     CPU goes for 700 KB articles on the whole path (perf), stamped alike
#     (docs/benchmarks.md shows it in the method section), port_profile.sh
#     (one CHECK offer on each port) and innd_paced.sh (innd behind the
#     relay against innd fed directly at the same rate) alike;
#  2. the end-to-end runs: feedgen against each system (tools/bench/
#     sys_<name>.sh), each workload on a fresh instance, raw feedgen JSON
#     kept as STAGE/e2e_<system>_<workload>.json (plus the same stamp,
#     load_avg_1m as the run began, the command, and "path" from systems
#     with a downstream: fgpath);
#  3. only when every step succeeded: the staged files replace their old
#     versions in docs/bench/, and tools/bench/report.py writes the tables,
#     the ratios, the PNG plots and docs/benchmarks.md.
# A benchmark that fails stops the run with a non-zero status before
# anything under docs/ changes: an old figure is never published again
# under this run's date and commit. `make bench` (quick) must stay under
# 22 minutes on the 2-core machine (feed_path, 30 s a run, 11 of them).
set -euo pipefail
mode=${1:-quick}
case $mode in quick|full) ;; *) echo "usage: $0 quick|full" >&2; exit 2 ;; esac
FG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
export FG_TOP
cd "$FG_TOP"
B=build/release
feedgen=$B/bin/feedgen
work=$(mktemp -d /tmp/fg-bench.XXXXXX)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT
stage=$work/stage
mkdir -p "$stage"
t_start=$(date +%s)

die() { echo "run.sh: $*" >&2; exit 1; }

# The code this run measures: the commit as the run starts, "+" when the
# tree (docs/ aside: the figures themselves) has uncommitted changes.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no -- . ':!docs' 2>/dev/null)" ] || commit="$commit+"
run_date=$(date -u +%Y-%m-%dT%H:%MZ)
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# the processor that made the figures: a ratio across two processors is
# refused by report.py (the stamp's value has no spaces: they become _)
cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -1 | tr -s ' \t' '__')
[ -n "$cpu_model" ] || cpu_model=unknown

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
		"takethis_700k|--mode takethis --peers 4 --conns 2 --dups 1 --articles 400 --size 700K --window 8"
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
# innd's news log as a production innd keeps it: buffered (innd.sh
# --buffered-log); FG_BENCH_INND_LOG=unbuffered measures innd -u instead
# (one write per article), and the run's JSON says which.
export FG_BENCH_INND_LOG=${FG_BENCH_INND_LOG:-buffered}
case $FG_BENCH_INND_LOG in buffered|unbuffered) ;;
*) die "FG_BENCH_INND_LOG must be buffered or unbuffered" ;; esac

# FG_BENCH_SYSTEMS="inn fgpath": only these end-to-end systems (their old
# results are replaced, the others' kept, each with its own stamp, for the
# report; "none": no end-to-end system); FG_BENCH_MODULES=0 skips the
# module benchmarks (their fragments are kept, with their own stamps);
# FG_BENCH_FRAGMENTS="relay port_profile": only these fragments (by their
# run_fragment names) are run and replaced, the others kept. Both for working on one system; a
# published run is a whole one.
echo "== module benchmarks ($mode)"
shopt -s nullglob
failed=()
modules=0
if [ "${FG_BENCH_MODULES:-1}" = 0 ]; then
	echo "(skipped: FG_BENCH_MODULES=0)"
else
	# run_fragment NAME CMD...: CMD writes the fragment to the file named
	# by its last argument; stamped with this run, or counted as failed
	run_fragment() {
		local name=$1 frag=$stage/$1.md load rc=0
		shift
		if [ -n "${FG_BENCH_FRAGMENTS:-}" ] && [[ " $FG_BENCH_FRAGMENTS " != *" $name "* ]]; then
			return 0
		fi
		load=$(loadavg)
		echo "-- $name"
		"$@" "$frag.raw" || rc=$?
		if [ $rc -ne 0 ]; then
			failed+=("$name (exit $rc)")
		elif [ ! -s "$frag.raw" ]; then
			failed+=("$name (exit 0 but no fragment)")
		else
			printf '<!-- fg-bench mode=%s commit=%s date=%s load=%s cpu=%s -->\n' \
				"$mode" "$commit" "$run_date" "$load" "$cpu_model" > "$frag"
			cat "$frag.raw" >> "$frag"
			rm -f "$frag.raw"
			# a fragment's figures as JSON beside it (FRAG.json), stamped alike
			if [ -f "$frag.raw.json" ]; then
				python3 tools/bench/report.py annotate "$frag.raw.json" mode "$mode" \
					commit "$commit" date "$run_date" load_avg_1m "$load" cpu "$cpu_model"
				mv "$frag.raw.json" "$stage/$name.json"
			fi
			modules=$((modules + 1))
		fi
	}
	for b in "$B"/bench/bench_*; do
		# bench_tso needs a namespace, a tap and a listener: tso_tap.py
		[ "${b##*/}" = bench_tso ] && continue
		run_fragment "${b##*/bench_}" "$b" "--$mode" --md
	done
	# the TCP sending by reference through net_tap to the kernel, TSO
	# against one segment a frame (docs/tcp.md, "Sending by reference")
	FG_BUILD=$B run_fragment tso_tap python3 tools/bench/tso_tap.py "--$mode" --md
	[ $modules -gt 0 ] || [ ${#failed[@]} -gt 0 ] || [ -n "${FG_BENCH_FRAGMENTS:-}" ] ||
		die "no module benchmark in $B/bench (make all)"
	# where the CPU goes for 700 KB articles on the whole path (perf): a
	# fragment like a module's, shown in the method section
	run_fragment path_profile tools/bench/path_profile.sh \
		"$([ "$mode" = full ] && echo 1000 || echo 300)" 700K --md
	# the same on af_packet over a veth (issue 24 asks for it by name)
	FG_BENCH_PATH_KIND=veth run_fragment path_profile_veth tools/bench/path_profile.sh \
		"$([ "$mode" = full ] && echo 1000 || echo 300)" 700K --md
	# the same kernel-free (memif, feedgen --dpdk), for 700 KB and 2 KB
	# articles: issue 20's cost table per port
	FG_BENCH_PATH_KIND=memif run_fragment path_profile_memif tools/bench/path_profile.sh \
		"$([ "$mode" = full ] && echo 1000 || echo 300)" 700K --md
	FG_BENCH_PATH_KIND=memif run_fragment path_profile_memif_2k tools/bench/path_profile.sh \
		"$([ "$mode" = full ] && echo 20000 || echo 5000)" 2K --md
	# where the cycles of one CHECK offer go on each port (tap, af_packet,
	# memif, floodgate-host's kernel sockets) and of one 2 KB article on
	# the tap and af_packet (perf and the worker's busy cycles)
	run_fragment port_profile tools/bench/port_profile.sh \
		"$([ "$mode" = full ] && echo 100000 || echo 30000)" \
		"$([ "$mode" = full ] && echo 100000 || echo 30000)" --md
	# what [dataplane] gro changes for 700 KB articles on the tap and
	# af_packet, off and on in turns, and what MTU 9000 does on them
	run_fragment gro_profile tools/bench/gro_profile.sh \
		"$([ "$mode" = full ] && echo 2000 || echo 600)" \
		"$([ "$mode" = full ] && echo 5 || echo 3)" --md
	# innd's CPU per article behind the relay against innd fed directly at
	# the same rate (feedgen --rate) and flat out
	run_fragment innd_paced tools/bench/innd_paced.sh \
		"$([ "$mode" = full ] && echo 100000 || echo 30000)" --md
	# a realistic feed (--size feed, offer multiplicity) through the whole
	# path for FEED seconds a run, both acknowledgement modes, memif and
	# af_packet (innd through the port, and through the kernel), beside innd
	# alone (issue 33 item 6): 11 runs
	run_fragment feed_path tools/bench/feed_path.sh \
		"$([ "$mode" = full ] && echo 120 || echo 30)" --md
	# several boxes with and without the shared history on a Redis
	# Cluster (docs/scale.md, "Several boxes")
	run_fragment cluster_boxes python3 tools/bench/cluster_boxes.py "--$mode" --md
	if [ ${#failed[@]} -gt 0 ]; then
		echo "run.sh: FAILED: ${failed[*]}" >&2
		die "docs/ left as it was; no figure of this run is published"
	fi
fi

echo "== end to end ($mode)"
[ -x "$feedgen" ] || die "$feedgen not built (make all)"
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
[ "${FG_BENCH_SYSTEMS:-}" != none ] || systems=()
for sys in "${systems[@]}"; do
	for w in "${WORKLOADS[@]}"; do
		wname=${w%%|*}
		wargs=${w#*|}
		# a system may name workloads it cannot run yet, and why
		# (SYS_<name>_SKIP, SYS_<name>_SKIP_WHY); the report lists them
		skip="SYS_${sys}_SKIP" why="SYS_${sys}_SKIP_WHY"
		if [[ " ${!skip:-} " == *" $wname "* ]]; then
			echo "-- $sys $wname: not run: ${!why:-}"
			printf '%s\n' "${!why:-}" > "$stage/e2e_${sys}_${wname}.skip"
			continue
		fi
		if ! read -r host port pid < <("sys_${sys}_start" "$work/$sys-$wname"); then
			# what did start (a namespace, floodctld, innd) goes again
			"sys_${sys}_stop" "$work/$sys-$wname" > /dev/null 2>&1 || true
			die "could not start $sys ($wname); docs/ left as it was"
		fi
		# a system in a network namespace of its own names a prefix that
		# starts feedgen in there (sys_<name>_exec, optional)
		run_in=""
		if declare -F "sys_${sys}_exec" > /dev/null; then
			run_in=$("sys_${sys}_exec" "$work/$sys-$wname")
		fi
		# and feedgen's transport, when it is not kernel sockets
		# (sys_<name>_args, optional: --dpdk for the memif systems)
		fg_args=""
		if declare -F "sys_${sys}_args" > /dev/null; then
			fg_args=$("sys_${sys}_args" "$work/$sys-$wname")
		fi
		cmd="$run_in $feedgen $fg_args --host $host --port $port --server-pid $pid $wargs $COMMON --id-prefix $sys$wname"
		echo "-- $sys $wname: $cmd"
		rc=0
		json=$stage/e2e_${sys}_${wname}.json
		load=$(loadavg)
		# shellcheck disable=SC2086
		$cmd > "$json" || rc=$?
		# the load average as the run began, kept with its figures, and
		# the run that made them
		python3 tools/bench/report.py annotate "$json" load_avg_1m "$load" command "${cmd# }" \
			mode "$mode" commit "$commit" date "$run_date" cpu "$cpu_model"
		# a system with innd in it (SYS_<name>_INND=1) says how innd kept
		# its news log
		innd="SYS_${sys}_INND"
		if [ "${!innd:-0}" = 1 ]; then
			python3 tools/bench/report.py annotate "$json" innd_news_log "$FG_BENCH_INND_LOG"
		fi
		# a system with work left after feedgen's last answer (the relay
		# delivering downstream) settles it and adds its figures (optional)
		settled=0
		if [ $rc -eq 0 ] && declare -F "sys_${sys}_after" > /dev/null; then
			"sys_${sys}_after" "$work/$sys-$wname" "$json" || settled=$?
		fi
		"sys_${sys}_stop" "$work/$sys-$wname"
		python3 tools/bench/report.py summary "$json"
		[ $rc -eq 0 ] || die "feedgen found mismatches against $sys ($wname); docs/ left as it was"
		[ $settled -eq 0 ] || die "$sys did not settle ($wname); docs/ left as it was"
	done
done

# ------------------------------------------------------------ publish
# Every step succeeded: this run's files replace their old versions. A
# module run replaces every module fragment (one of a benchmark that no
# longer exists goes too); an end-to-end system replaces all its results.
mkdir -p docs/bench docs/img
if [ $modules -gt 0 ] && [ -z "${FG_BENCH_FRAGMENTS:-}" ]; then
	for f in docs/bench/*.md; do
		case ${f##*/} in e2e*) ;; *) rm -f "$f" ;; esac
	done
fi
for sys in "${systems[@]}"; do
	rm -f docs/bench/e2e_"$sys"_*.json docs/bench/e2e_"$sys"_*.skip
done
staged=("$stage"/*)
[ ${#staged[@]} -eq 0 ] || cp "${staged[@]}" docs/bench/
python3 tools/bench/report.py docs --mode "$mode" --commit "$commit" --date "$run_date" \
	--load "$(cut -d' ' -f1-3 /proc/loadavg)" \
	--commands "make bench$([ "$mode" = full ] && echo -full) (tools/bench/run.sh $mode)" \
	--common "$COMMON" "${labels[@]}"
grep -E "^(###|\|)" docs/bench/e2e.md || true
echo "== done in $(( $(date +%s) - t_start )) s: docs/benchmarks.md"
