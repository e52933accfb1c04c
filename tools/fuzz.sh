#!/usr/bin/env bash
# fuzz.sh SECONDS [TARGET...] — run libFuzzer targets (built by `make FUZZ=1
# fuzz-build`) for SECONDS each, one after another: every target, or the
# TARGETs named (cluster or fuzz_cluster). `make fuzz` runs them all;
# `make test-long` runs each as a suite of its own (fuzz-long/<target>,
# tools/run-tests.sh). The stored corpus is read, never written: new
# inputs go to build/fuzz/corpus/<target>/, crashes to
# build/fuzz/crashes/<target>/. A crash found here belongs in
# tests/fuzz/corpus/<target>/ once fixed, so `make test` replays it
# forever. One line a target: "ok fuzz_X: ..." or "FAIL fuzz_X: ...";
# exit 0 only when every target ran clean for its time.
set -u
secs=${1:-60}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.." || exit 2
targets=()
if [ $# -eq 0 ]; then
	for t in build/fuzz/tests/fuzz/fuzz_*; do
		[ -x "$t" ] && targets+=("$t")
	done
else
	for n in "$@"; do
		targets+=("build/fuzz/tests/fuzz/fuzz_${n#fuzz_}")
	done
fi
if [ ${#targets[@]} -eq 0 ]; then
	echo "FAIL: no fuzz target in build/fuzz/tests/fuzz (make FUZZ=1 fuzz-build)"
	exit 1
fi
rc=0
for t in "${targets[@]}"; do
	n=$(basename "$t")
	name=${n#fuzz_}
	if [ ! -x "$t" ] || [ ! -d "tests/fuzz/corpus/$name" ]; then
		echo "FAIL $n: no such target (built: $t; corpus: tests/fuzz/corpus/$name)"
		rc=1
		continue
	fi
	work=build/fuzz/corpus/$name
	crashes=build/fuzz/crashes/$name
	mkdir -p "$work" "$crashes"
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	echo "== $n for ${secs}s"
	if ! "$t" -max_total_time="$secs" -print_final_stats=1 "${dict[@]}" \
		-artifact_prefix="$crashes/" "$work" "tests/fuzz/corpus/$name" \
		>"build/fuzz/$n.log" 2>&1; then
		grep -E '^(==[0-9]+== ?ERROR|SUMMARY)|runtime error' "build/fuzz/$n.log" | head -3
		echo "FAIL $n: see build/fuzz/$n.log and $crashes/"
		rc=1
	else
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build/fuzz/$n.log" | tail -1)
		done_line=$(grep -E '^#[0-9]+.*DONE' "build/fuzz/$n.log" | tail -1)
		echo "ok $n: ${runs:-?} runs in ${secs}s, clean (${done_line#*DONE   })"
	fi
done
exit $rc
