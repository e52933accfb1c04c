# shellcheck shell=bash
# selftest.sh — what tests/tools/*_selftest.sh share (sourced, not run):
#
#   . "$(dirname "$0")/selftest.sh" NAME TOOL
#
# sets top (the tree), tmp (a scratch directory fg-NAME.XXXXXX in
# FG_TEST_TMP or /tmp, removed at exit) and checks; out names the file
# holding the tool's last output, which a failure shows under "TOOL said".
#   check WHAT COMMAND...   run COMMAND; count a check, or fail naming WHAT
#   fail WHY                print "FAIL WHY" and the tool's output, exit 1
#   said ERE                the tool's output has a line matching ERE
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${FG_TEST_TMP:-/tmp}/fg-$1.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
selftest_tool=$2
checks=0
out=

fail() {
	echo "FAIL $*"
	if [ -n "$out" ] && [ -f "$out" ]; then
		echo "---- $selftest_tool said:"
		tail -40 "$out"
	fi
	exit 1
}
check() {	# check WHAT COMMAND...
	local what=$1
	shift
	"$@" || fail "$what"
	checks=$((checks + 1))
}
said() { grep -qE -- "$1" "$out"; }
