#!/usr/bin/env bash
# timeout: 120
# feedgen against a throwaway INN innd (tools/inn/innd.sh) on loopback: a
# small CHECK run and a small TAKETHIS run with the same workload classes
# as the benchmark must match the model exactly (INN rejects too old, too
# far in the future and bad Message-IDs; it does not reject path loops, so
# none are generated: no --path-identity). Proves the INN setup works.
set -u
top=${FG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
feedgen=${FG_BUILD:-$top/build/release}/bin/feedgen
dir=$(mktemp -d "${FG_TEST_TMP:-/tmp}/fg-inn-test.XXXXXX")
chmod 0755 "$dir"	# innd runs as news and must reach its directory
port=$((20000 + RANDOM % 20000))
fail=0

cleanup() { "$top/tools/inn/innd.sh" stop "$dir/inn" >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT

[ -x "$feedgen" ] || { echo "FAIL: $feedgen not built"; exit 1; }
# not root: a skip (77) that make test, which runs as root, never takes
[ "$(id -u)" -eq 0 ] || { echo "SKIP (make deps): needs root (innd runs as news); make test runs as root"; exit 77; }
"$top/tools/inn/innd.sh" start "$dir/inn" "$port" --cutoff 10 --history 100000 || exit 1
pid=$("$top/tools/inn/innd.sh" pid "$dir/inn")

run() {
	local name=$1
	shift
	if "$feedgen" --port "$port" --server-pid "$pid" --articles 2000 --cutoff 10d \
		--no-progress --timeout 60 "$@" > "$dir/out" 2>&1 && grep -q 'check: OK' "$dir/out"; then
		echo "ok   $name: $(grep -E '^ +offers' "$dir/out" | tr -s ' ')"
	else
		echo "FAIL $name"
		cat "$dir/out"
		fail=$((fail + 1))
	fi
}

run "CHECK, 10 offers per article" --mode check --id-prefix t21check
run "TAKETHIS, 2 conns per peer" --mode takethis --conns 2 --peers 4 --dups 4 --id-prefix t21take
run "IHAVE" --mode ihave --peers 2 --dups 2 --articles 300 --id-prefix t21ihave
"$top/tools/inn/innd.sh" status "$dir/inn" >/dev/null || { echo "FAIL innd died"; fail=$((fail + 1)); }
echo "$((3 - fail)) passed, $fail failed"
[ $fail -eq 0 ]
