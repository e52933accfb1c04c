#!/bin/bash
# SPDX-License-Identifier: MIT
# timeout: 600
# 80_make_run — the live demo, as a newcomer runs it, twice:
#  1. `make run RUN_ARGS="--once ..."`: the whole path (namespace, floodctld,
#     innd, floodgate, feedgen) and its summary; every count of accepted
#     articles must agree (feedgen's 239s, floodgate's, those made safe,
#     relayed, and landed in innd's history and news log), every kind of
#     refusal the demo feed carries must appear, the offers must add up to
#     the feed's, and nothing may be left: no namespace, no process, no
#     region, no scratch directory;
#  2. without --once: once it says it keeps serving, a SIGINT (what Ctrl-C
#     sends) must stop everything in order and exit 0, leaving nothing.
set -u -o pipefail
# not root: a skip (77) that make test, which runs as root, never takes
[ "$(id -u)" -eq 0 ] || { echo "SKIP (make deps): needs root (network namespaces, innd as news, a tap port); make test runs as root"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
top=${FG_TOP:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d /tmp/fg-demo-test.XXXXXX)
checks=0

fail() { echo "FAIL $*"; echo "--- output:"; tail -60 "$work/out" 2>/dev/null; exit 1; }
check() { checks=$((checks + 1)); eval "$1" || fail "$2"; }
trap 'rm -rf "$work"' EXIT

# what a demo leaves when it cleans up badly
leftovers() {
	local what=""
	[ -e /var/run/netns/fg-demo ] && what="$what namespace fg-demo;"
	pgrep -f '/tmp/fg-demo\.' >/dev/null && what="$what processes: $(pgrep -af '/tmp/fg-demo\.' | head -3);"
	compgen -G '/dev/shm/fg-demo-*' >/dev/null && what="$what region $(echo /dev/shm/fg-demo-*);"
	for d in /tmp/fg-demo.*; do
		[ -d "$d" ] && ! grep -qxF "$d" "$work/before" && what="$what scratch $d;"
	done
	echo "$what"
}
# scratch directories that failed runs kept for a look are not this test's
ls -d /tmp/fg-demo.* >"$work/before" 2>/dev/null

# the summary's "  label   N" line
num() { sed -n "s/^  $1 *\([0-9][0-9]*\).*/\1/p" "$work/out" | head -1; }

[ -z "$(leftovers)" ] || fail "a demo is running or left state before the test: $(leftovers)"

# ---- 0. the floodctl commands the demo stands on, without a daemon
ctl=$top/build/release/bin/floodctl
"$ctl" config --default >"$work/default.conf"
rc=$?
check '[ $rc -eq 0 ] && grep -q "^\[downstream inn\]" "$work/default.conf"' "config --default: $rc"
"$ctl" config --check "$work/default.conf" >/dev/null 2>&1
rc=$?
check '[ $rc -eq 0 ]' "the embedded default fails its own check: $rc"
printf '[rules]\ncutoff banana\n' >"$work/bad.conf"
"$ctl" config --check "$work/bad.conf" >"$work/bad.out" 2>&1
rc=$?
check '[ $rc -eq 1 ] && grep -q "bad.conf:2" "$work/bad.out"' "a bad file: exit $rc, $(cat "$work/bad.out")"
"$ctl" top -s "$work/nothing.sock" --count 1 >/dev/null 2>&1
rc=$?
check '[ $rc -eq 3 ]' "top with no floodctld exited $rc, not 3"

# ---- 1. --once
articles=2000 dups=10
cd "$top" || exit 1
make --no-print-directory run RUN_ARGS="--once --articles $articles --rate 2000" \
	>"$work/out" 2>&1
rc=$?
check '[ $rc -eq 0 ]' "make run --once exited $rc"
check 'grep -q "^  consistent  *yes" "$work/out"' "the summary is not consistent"
accepted=$(num "feedgen's 239s")
check '[ -n "$accepted" ] && [ "$accepted" -gt 0 ]' "no article accepted"
for label in "floodgate's 239s" "made safe in the queue" "relayed: innd said 239" \
	"landed in innd's history" "innd's news log, accepted"; do
	n=$(num "$label")
	check '[ "$n" = "$accepted" ]' "$label: '$n', but feedgen got $accepted 239s"
done
offers=$(num "offers")
retries=$(sed -n 's/^  offers .*of them \([0-9]*\) again.*/\1/p' "$work/out")
check '[ "$offers" = $((articles * dups + retries)) ]' \
	"offers $offers != $articles articles x $dups + $retries retries"
for reason in duplicate too-old too-far-future path-loop bad-message-id; do
	n=$(sed -n "s/^    $reason  *\([0-9]*\)$/\1/p" "$work/out")
	check '[ -n "$n" ] && [ "$n" -gt 0 ]' "no refusal for $reason in the summary"
done
check 'grep -q "^\[ *[0-9.]* s\] offers [0-9]* ([0-9]*/s)  accepted" "$work/out"' \
	"no live line from floodctl top"
# --source: the simulated peers are the config's peers; --rate: 20000
# first offers at 2000 a second take at least 10 s
check 'grep -q "^summary: .* of feed from 10 peers" "$work/out"' "not 10 distinct peers"
secs=$(sed -n 's/^summary: \([0-9]*\)\..* s of feed.*/\1/p' "$work/out")
check '[ -n "$secs" ] && [ "$secs" -ge 9 ]' "the feed took ${secs:-?} s: --rate not honoured"
check 'grep -q "namespace fg-demo and its tap removed" "$work/out"' "no cleanup report"
left=$(leftovers)
check '[ -z "$left" ]' "left after --once:$left"

# ---- 2. serving, then Ctrl-C (SIGINT)
tools/run-demo.sh --articles 300 --rate 3000 >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 600); do
	grep -q "^floodgate keeps serving" "$work/out" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.2
done
check 'grep -q "^floodgate keeps serving" "$work/out"' "the demo never reached serving"
check 'grep -q "ip-name: *10.99.0.1" "$work/out"' "no innfeed example printed"
kill -INT $pid
wait $pid
rc=$?
check '[ $rc -eq 0 ]' "after SIGINT the demo exited $rc"
check 'grep -q "floodgate stopped (exit 0)" "$work/out"' "floodgate did not stop cleanly"
check 'grep -q "innd stopped" "$work/out"' "innd was not stopped"
left=$(leftovers)
check '[ -z "$left" ]' "left after Ctrl-C:$left"

echo "PASS 80_make_run: $checks checks"
