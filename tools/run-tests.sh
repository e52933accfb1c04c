#!/usr/bin/env bash
# run-tests.sh quick|long|long-only — runs every test suite that `make test`
# (quick) or `make test-long` (long) promises, each with its own log, and
# ends with one summary line per suite. Exit status 0 only if every suite
# passed. long-only runs tests/long alone (`make test-long-only`), for a
# machine where the quick suites have just passed on the same commit.
# run-tests.sh scripts KIND DIR runs only the numbered scripts of DIR, as
# the integration scripts are run (tests/tools/run_tests_selftest.sh
# plants a directory of fake scripts and checks the verdicts).
#
# Suites, in order:
#   layers/check           the tiers hold (tools/check-layers.sh: symbols, includes)
#   tools/<name>           the runner's and check-layers' own tests (tests/tools/)
#   unit/<name>            libcheck binaries, release build
#   unit-asan/<name>       the same under ASan+UBSan
#   unit-tsan/<name>       concurrency tests (*_mt) under ThreadSanitizer
#   fuzz/<name>            each fuzz target's corpus replayed under ASan+UBSan
#   integration/<name>     tests/integration/NN_*.{sh,py}, real processes
#   interop/<name>         tests/interop/NN_*.{sh,py}, against INN
#   long/<name>            tests/long/* (only with `long` and `long-only`)
#   fuzz-long/<name>       each libFuzzer target (build/fuzz, make FUZZ=1
#                          fuzz-build) fuzzing anew for FG_FUZZ_LONG_SECONDS
#                          (default 180), one at a time (tools/fuzz.sh);
#                          with `long` and `long-only`
# A script may say "# timeout: SECONDS" in its first lines (default 900).
# Library suites (unit, unit-asan, unit-tsan, fuzz) run FG_TEST_JOBS at a
# time (default: the number of cores); integration and interop scripts run
# one at a time, since they start real servers and measure real sessions.
#
# Verdicts: PASS (exit 0, no sanitizer report), FAIL, and SKIP. A script
# that cannot run here exits 77 (automake's code) after a line "SKIP: why",
# or "SKIP (make deps): why" when what it lacks is what `make deps` and
# running as root provide (root, INN, promtool). A skip is not a pass: any
# SKIP fails the run unless FG_ALLOW_SKIP=1, and even then it is counted
# and shown. An exit 77 without a "SKIP" line is a FAIL, always (a skip
# must say why), and so is a numbered file in a script directory without
# its run bit (chmod +x): it would otherwise never run.
#
# FG_TEST_HOG=1: a busy loop runs on one core for the whole run (started
# and stopped here), so a green run proves the suite under load.
# FG_TEST_LOGS=DIR: the logs go there (default build/test-logs; emptied
# first). FG_TEST_TMP is set to this run's scratch directory (below).
#
# The summary lists one line per suite, then "suites: N, passed: N,
# failed: N, skipped: N (...)" and, alone on the last line, "N passed,
# N failed, N skipped" (CI reads it).
set -u
mode=${1:-quick}
usage="usage: $0 quick|long|long-only, or $0 scripts KIND DIR"
case $mode in
quick|long|long-only) ;;
scripts) [ $# -eq 3 ] || { echo "$usage" >&2; exit 2; } ;;
*) echo "$usage" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
logs=${FG_TEST_LOGS:-build/test-logs}
rm -rf "$logs"
mkdir -p "$logs"

export FG_TOP="$top" FG_BUILD="$top/build/release" FG_BUILD_ASAN="$top/build/asan"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}

results=$logs/results
mkdir -p "$results"

# The tests' scratch directories (fgkit.scratch_root, FG_TEST_TMP): one
# directory a run, under /tmp and not in the tree, mode 0755, so that innd
# and innfeed (user news) and floodctl run as nobody reach them wherever
# the checkout is (a clone under /root, mode 0700, is out of their reach).
# Removed after a green run; kept, and named, after a failure.
scratch=$(mktemp -d /tmp/fg-test.XXXXXX) || exit 2
chmod 0755 "$scratch"
export FG_TEST_TMP=$scratch
jobs_max=${FG_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
seq_no=0
t_start=$(date +%s)

# The hog is started from a subshell, so that it is no job of this shell:
# run_bg counts jobs, and `wait` waits for all of them.
hog_pid= hog_note=
stop_hog() {
	if [ -n "$hog_pid" ]; then
		kill "$hog_pid" 2>/dev/null
		hog_pid=
	fi
}
trap 'stop_hog; echo "interrupted: scratch directories left in $scratch"; exit 130' INT TERM
trap stop_hog EXIT
if [ "${FG_TEST_HOG:-0}" = 1 ]; then
	hog_pid=$( (sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!) )
	hog_note=" [under FG_TEST_HOG: a busy loop on one core]"
	echo "FG_TEST_HOG=1: a busy loop (pid $hog_pid) holds one core for the whole run"
fi

# run_suite_n SEQ NAME TIMEOUT CMD... — runs CMD with its output in a log,
# prints the verdict and the line that best summarises it, and records that
# line as result number SEQ (the summary lists results in start order).
run_suite_n() {
	local n=$1 name=$2 tmo=$3
	shift 3
	local log="$logs/${name//\//_}.log" t0 t1 rc line verdict
	t0=$(date +%s.%N)
	timeout --kill-after=10 "$tmo" "$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	# a sanitizer report is a failure even when the exit status is 0
	if [ $rc -eq 0 ] && grep -qE '^(==[0-9]+==ERROR|SUMMARY: (Address|Undefined|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer)|runtime error:' "$log"; then
		rc=99
	fi
	line=$(grep -E '^[0-9]+%: Checks:' "$log" | tail -1)
	[ -n "$line" ] || line=$(grep -E '^(replayed|RESULT|ok|PASS|FAIL)' "$log" | tail -1)
	[ -n "$line" ] || line=$(tail -1 "$log")
	if [ $rc -eq 77 ]; then
		# a skip says why, on a line of its own: without one it is a failure
		line=$(grep -E '^SKIP( \(make deps\))?: *[^ ]' "$log" | tail -1)
		if [ -n "$line" ]; then
			verdict=SKIP
		else
			verdict=FAIL; line="exit 77 (a skip) without a \"SKIP: why\" line"
		fi
	elif [ $rc -eq 0 ]; then
		verdict=PASS
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		verdict=FAIL; line="timeout after ${tmo}s; $line"
	else
		verdict=FAIL; line="exit $rc; $line"
	fi
	local s
	s=$(printf '%-4s %-44s %6.1fs  %s' "$verdict" "$name" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$line")
	if [ $verdict = FAIL ]; then
		s="$s"$'\n'"---- last lines of $log ----"$'\n'"$(tail -30 "$log")"$'\n'"----"
	fi
	echo "$s"
	printf '%s\n' "${s%%$'\n'*}" >"$results/$(printf '%04d' "$n")"
}

# in the background, at most jobs_max at once; `wait` collects them
run_bg() {
	seq_no=$((seq_no + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	run_suite_n "$seq_no" "$@" &
}

run_fg() {
	seq_no=$((seq_no + 1))
	run_suite_n "$seq_no" "$@"
}

script_timeout() {
	local t
	t=$(head -5 "$1" | sed -n 's/^# timeout: *\([0-9]\+\).*/\1/p')
	echo "${t:-900}"
}

# a numbered file the runner cannot run is a failure, not a quiet omission
not_runnable() {	# not_runnable SEQ NAME WHY
	local s
	s=$(printf '%-4s %-44s %6.1fs  %s' FAIL "$2" 0 "$3")
	echo "$s"
	printf '%s\n' "$s" >"$results/$(printf '%04d' "$1")"
}

run_scripts() {
	local kind=$1 dir=$2 s
	for s in "$dir"/[0-9]*; do
		[ -e "$s" ] || continue
		if [ ! -f "$s" ]; then
			seq_no=$((seq_no + 1))
			not_runnable "$seq_no" "$kind/$(basename "$s")" "not a file: a numbered entry of $dir is a test"
		elif [ ! -x "$s" ]; then
			seq_no=$((seq_no + 1))
			not_runnable "$seq_no" "$kind/$(basename "$s")" "not executable: never run (chmod +x $s)"
		else
			run_fg "$kind/$(basename "$s")" "$(script_timeout "$s")" "$s"
		fi
	done
}

# everything `make test` runs: the library suites, then the scripts
quick_suites() {
	run_bg "layers/check" 300 tools/check-layers.sh build/release
	for t in tests/tools/*_selftest.sh; do
		[ -e "$t" ] || continue
		run_bg "tools/$(basename "$t" .sh)" "$(script_timeout "$t")" "$t"
	done
	for t in build/release/tests/unit/test_*; do
		[ -x "$t" ] || continue
		run_bg "unit/$(basename "$t")" 600 "$t"
	done
	for t in build/asan/tests/unit/test_*; do
		[ -x "$t" ] || continue
		run_bg "unit-asan/$(basename "$t")" 900 "$t"
	done
	for t in build/tsan/tests/unit/test_*_mt; do
		[ -x "$t" ] || continue
		run_bg "unit-tsan/$(basename "$t")" 900 "$t"
	done
	for t in build/asan/tests/fuzz/fuzz_*; do
		[ -x "$t" ] || continue
		n=$(basename "$t")
		corpus=tests/fuzz/corpus/${n#fuzz_}
		run_bg "fuzz/$n" 900 "$t" "$corpus"
	done
	wait

	run_scripts integration tests/integration
	run_scripts interop tests/interop
}

# every fuzz target for a few minutes of new inputs (the quick suites only
# replay the stored corpora): one at a time, each as CPU-heavy as it gets
fuzz_long_suites() {
	local secs=${FG_FUZZ_LONG_SECONDS:-180} t n found=0
	for t in build/fuzz/tests/fuzz/fuzz_*; do
		[ -x "$t" ] || continue
		found=1
		n=$(basename "$t")
		run_fg "fuzz-long/$n" $((secs + 300)) tools/fuzz.sh "$secs" "$n"
	done
	# no target built is a failure, never a quiet pass
	[ $found = 1 ] || run_fg "fuzz-long/build" 60 tools/fuzz.sh "$secs"
}

case $mode in
scripts) run_scripts "$2" "$3" ;;
*)
	[ "$mode" = long-only ] || quick_suites
	[ "$mode" = quick ] || { run_scripts long tests/long; fuzz_long_suites; }
	;;
esac

t_end=$(date +%s)
echo
echo "==================== summary ($mode, $((t_end - t_start)) s) ===================="
cat "$results"/* 2>/dev/null
total=$(cat "$results"/* 2>/dev/null | wc -l)
failed=$(cat "$results"/* 2>/dev/null | grep -c '^FAIL')
skipped=$(cat "$results"/* 2>/dev/null | grep -c '^SKIP')
skipped_deps=$(cat "$results"/* 2>/dev/null | grep -c '^SKIP .*SKIP (make deps):')
passed=$((total - failed - skipped))
status=0
[ "$failed" -eq 0 ] || status=1
note=
if [ "$skipped" -gt 0 ]; then
	note=" ($skipped_deps of them for what make deps provides"
	if [ "${FG_ALLOW_SKIP:-0}" = 1 ]; then
		note="$note; allowed by FG_ALLOW_SKIP=1)"
	else
		note="$note; a skip fails the run, FG_ALLOW_SKIP=1 accepts it)"
		status=1
	fi
fi
[ "$total" -gt 0 ] || { echo "no suites ran"; status=1; }
stop_hog
if [ $status -eq 0 ]; then
	rm -rf "$scratch"
elif rmdir "$scratch" 2>/dev/null; then
	:
else
	echo "this run's scratch directories kept in $scratch (each failed suite's log names its own)"
fi
echo "suites: $total, passed: $passed, failed: $failed, skipped: $skipped$note   (logs in $logs/)$hog_note"
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
