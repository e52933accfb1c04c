#!/usr/bin/env bash
# fuzz.sh SECONDS — run every libFuzzer target (built by `make FUZZ=1`) for
# SECONDS each. The stored corpus is read, never written: new inputs go to
# build/fuzz/corpus/<target>/, crashes to build/fuzz/crashes/<target>/.
# A crash found here belongs in tests/fuzz/corpus/<target>/ once fixed, so
# `make test` replays it forever.
set -u
secs=${1:-60}
cd "$(dirname "$0")/.." || exit 2
rc=0
for t in build/fuzz/tests/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	name=${n#fuzz_}
	work=build/fuzz/corpus/$name
	crashes=build/fuzz/crashes/$name
	mkdir -p "$work" "$crashes"
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	echo "== $n for ${secs}s"
	if ! "$t" -max_total_time="$secs" -print_final_stats=1 "${dict[@]}" \
		-artifact_prefix="$crashes/" "$work" "tests/fuzz/corpus/$name" \
		>"build/fuzz/$n.log" 2>&1; then
		echo "FAIL $n: see build/fuzz/$n.log and $crashes/"
		rc=1
	else
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "build/fuzz/$n.log" | tail -2
	fi
done
exit $rc
