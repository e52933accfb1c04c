#!/usr/bin/env bash
# timeout: 120
# run_tests_selftest.sh — tools/run-tests.sh fails a run for everything that
# is not a pass. It plants directories of fake numbered scripts in a scratch
# directory and runs the runner on each (`run-tests.sh scripts KIND DIR`,
# the classification `make test` uses for tests/integration):
#
#   an exit 77 without a "SKIP: why" line   FAIL, even with FG_ALLOW_SKIP=1
#   a reasoned SKIP, plain or (make deps)   fails the run; FG_ALLOW_SKIP=1 accepts it
#   a numbered script without its run bit   FAIL, and the scripts after it still run
#
# Each case sits beside a passing script, and a directory of passing scripts
# alone must pass: the positive sign that the runner could have said yes.
set -u
# shellcheck source=tests/tools/selftest.sh
. "$(dirname "$0")/selftest.sh" runner-selftest "the runner"

# plant CASE NAME MODE BODY: a script in $tmp/CASE that records its run in
# $tmp/ran/CASE (outside the directory the runner reads)
plant() {
	local d=$tmp/$1
	mkdir -p "$d" "$tmp/ran/$1"
	printf '#!/bin/sh\necho ran >>"%s/%s"\n%s\n' "$tmp/ran/$1" "$2" "$4" >"$d/$2"
	chmod "$3" "$d/$2"
}

# runner CASE [VAR=VALUE...]: runs the runner on $tmp/CASE; its exit status
# in rc, its output in $out
runner() {
	local c=$1
	shift
	out=$tmp/$c.out
	env -u FG_TEST_HOG -u FG_ALLOW_SKIP FG_TEST_LOGS="$tmp/logs-$c" "$@" \
		"$top/tools/run-tests.sh" scripts fake "$tmp/$c" >"$out" 2>&1
	rc=$?
}
ran() { [ -f "$tmp/ran/$1/$2" ]; }

# the positive control: passing scripts pass
plant good 01_pass.sh 755 'echo "PASS one"; exit 0'
plant good 02_pass.py 755 'echo "PASS two"; exit 0'
runner good
check "passing scripts alone pass (exit $rc)" [ "$rc" -eq 0 ]
check "the summary counts two passes" said '^2 passed, 0 failed, 0 skipped$'

# an exit 77 without a reason: a failure, whatever FG_ALLOW_SKIP says
plant bare77 01_pass.sh 755 'exit 0'
plant bare77 02_bare77.sh 755 'echo "nothing to see"; exit 77'
plant bare77 03_empty_reason.sh 755 'echo "SKIP:"; exit 77'
for allow in 0 1; do
	runner bare77 FG_ALLOW_SKIP=$allow
	check "exit 77 without a reason fails the run (FG_ALLOW_SKIP=$allow, exit $rc)" [ "$rc" -eq 1 ]
	check "02_bare77 is a FAIL (FG_ALLOW_SKIP=$allow)" said '^FAIL fake/02_bare77\.sh .*without a "SKIP: why" line'
	check "an empty SKIP: is no reason (FG_ALLOW_SKIP=$allow)" said '^FAIL fake/03_empty_reason\.sh '
	check "the summary counts them (FG_ALLOW_SKIP=$allow)" said '^1 passed, 2 failed, 0 skipped$'
done

# a reasoned skip, plain or for make deps: not a pass
plant plain 01_pass.sh 755 'exit 0'
plant plain 02_skip.sh 755 'echo "SKIP: no widget on this machine"; exit 77'
plant deps 01_pass.sh 755 'exit 0'
plant deps 02_skip.py 755 'echo "SKIP (make deps): INN is missing"; exit 77'
for c in plain deps; do
	runner $c
	check "a $c SKIP fails the run (exit $rc)" [ "$rc" -eq 1 ]
	check "the $c skip is shown as SKIP with its reason" said '^SKIP fake/02_skip\.(sh|py) .*SKIP.*: (no widget|INN is missing)'
	check "the $c skip is counted, not passed" said '^1 passed, 0 failed, 1 skipped$'
	check "the summary says why the run failed ($c)" said 'a skip fails the run, FG_ALLOW_SKIP=1 accepts it'
	runner $c FG_ALLOW_SKIP=1
	check "FG_ALLOW_SKIP=1 accepts a reasoned $c skip (exit $rc)" [ "$rc" -eq 0 ]
	check "and still counts it ($c)" said '^1 passed, 0 failed, 1 skipped$'
done

# a numbered script without its run bit: a failure, and the next still runs
plant noexec 01_pass.sh 755 'exit 0'
plant noexec 02_noexec.sh 644 'exit 0'
plant noexec 03_pass.sh 755 'exit 0'
for allow in 0 1; do
	rm -f "$tmp"/ran/noexec/*
	runner noexec FG_ALLOW_SKIP=$allow
	check "a script without its run bit fails the run (FG_ALLOW_SKIP=$allow, exit $rc)" [ "$rc" -eq 1 ]
	check "02_noexec is a FAIL naming chmod +x" said '^FAIL fake/02_noexec\.sh .*not executable.*chmod \+x'
	check "02_noexec was not run" eval '! ran noexec 02_noexec.sh'
	check "01 and 03 ran" eval 'ran noexec 01_pass.sh && ran noexec 03_pass.sh'
	check "the summary counts it (FG_ALLOW_SKIP=$allow)" said '^2 passed, 1 failed, 0 skipped$'
done

echo "PASS run_tests_selftest: $checks checks"
