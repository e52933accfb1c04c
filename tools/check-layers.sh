#!/usr/bin/env bash
# check-layers.sh [BUILD] — the tiers of the Makefile (TIERS) hold: no
# object of a tier uses a symbol that a tier it may not use defines, and no
# source of a tier includes such a tier's header. BUILD defaults to
# build/release (its archives and program objects must be built).
#
# May use, by tier (the Makefile's order; dataplane and control are
# siblings, neither uses the other):
#   engine     engine
#   lib        engine lib
#   dataplane  engine lib dataplane
#   control    engine lib control
#   tools      everything
# The symbol check reads the objects themselves (nm), not the link: an
# object already pulled into a program could resolve an upward reference
# that link order alone would never refuse.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/release}

declare -A MAY=(
	[engine]="engine"
	[lib]="engine lib"
	[dataplane]="engine lib dataplane"
	[control]="engine lib control"
	[tools]="engine lib dataplane control tools"
)

# The tier of each public header (include/floodgate/): the tier of the code
# that implements it. A header missing here fails the check.
declare -A HEADER=(
	[common]=engine [iov]=engine [log]=engine [stats]=engine [crc32c]=engine
	[tbl/counters]=engine [tbl/reasons]=engine [tbl/nntp_codes]=engine
	[tbl/nntp_verbs]=engine [tbl/nic]=engine [nic]=engine [article]=engine [config]=engine [date]=engine
	[history]=engine [msgid]=engine [peerlim]=engine [rules]=engine [session]=engine [sink]=engine
	[wildmat]=engine [notify]=engine [failpoint]=engine [siphash]=engine [feeds]=engine [innhist]=engine
	[region]=lib [journal]=lib [vlog]=lib [datadir]=lib [ctl]=lib [sbuf]=lib
	[queue]=lib [warmup]=lib [dstatus]=lib [statusfield]=lib [cluster]=lib [respguard]=lib
	[cstatus]=lib [levers]=lib [shadowrep]=lib
	[net]=dataplane [tcp]=dataplane [tcpsess]=dataplane [memport]=dataplane [memlink]=dataplane
	[passive]=dataplane [shadow]=dataplane [qwriter]=dataplane [relay]=dataplane [outbound]=dataplane [acksink]=dataplane [ackrule]=dataplane [portack]=dataplane
	[slotlink]=dataplane [wiring]=dataplane [wire]=dataplane [mbuf]=dataplane
	[claimer]=dataplane
	[expiry]=control [metrics]=control [report]=control [snapshot]=control [statuspage]=control
)

tiers=$(make -s --no-print-directory print-tiers)
fail=0
err() {
	echo "check-layers: $*" >&2
	fail=1
}

# the module directories of each tier, and its program directories
declare -A DIRS PROGS DIRTIER
for t in $tiers; do
	DIRS[$t]=$(make -s --no-print-directory print-tier-dirs TIER="$t")
	PROGS[$t]=$(make -s --no-print-directory print-tier-progs TIER="$t")
	for d in ${DIRS[$t]} ${PROGS[$t]}; do
		DIRTIER[$d]=$t
	done
done

allowed() {	# allowed USER_TIER TIER
	local t
	for t in ${MAY[$1]}; do [ "$t" = "$2" ] && return 0; done
	return 1
}

# ---- includes
for h in include/floodgate/*.h include/floodgate/tbl/*.h; do
	n=${h#include/floodgate/}
	n=${n%.h}
	[ -n "${HEADER[$n]:-}" ] || err "$h has no tier in tools/check-layers.sh's HEADER table"
done
for t in $tiers; do
	for d in ${DIRS[$t]} ${PROGS[$t]}; do
		for f in "$d"/*.[ch]; do
			[ -e "$f" ] || continue
			while IFS= read -r inc; do
				case $inc in
				floodgate/*)
					n=${inc#floodgate/}
					n=${n%.h}
					ht=${HEADER[$n]:-}
					[ -n "$ht" ] || continue
					;;
				../*)
					rd=$(realpath -m --relative-to=. "$(dirname "$f")/$(dirname "$inc")")
					ht=${DIRTIER[$rd]:-}
					[ -n "$ht" ] || continue
					;;
				*) continue ;;
				esac
				allowed "$t" "$ht" || err "$f ($t) includes $inc ($ht)"
			done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
		done
	done
done

# ---- symbols
declare -A DEF
for t in $tiers; do
	a=$B/libfg-$t.a
	[ -f "$a" ] || { err "$a is not built"; continue; }
	while read -r sym; do
		DEF[$sym]=$t
	done < <(nm --defined-only -g "$a" 2>/dev/null | awk 'NF == 3 { print $3 }')
done
for t in $tiers; do
	objs=()
	for d in ${DIRS[$t]} ${PROGS[$t]}; do
		for o in "$B/obj/$d"/*.o; do
			[ -e "$o" ] && objs+=("$o")
		done
	done
	[ ${#objs[@]} -gt 0 ] || continue
	while read -r o sym; do
		st=${DEF[$sym]:-}
		[ -n "$st" ] || continue
		allowed "$t" "$st" || err "${o#$B/obj/} ($t) uses $sym, defined in the $st tier"
	done < <(for o in "${objs[@]}"; do nm -u "$o" | awk -v o="$o" '{ print o, $NF }'; done)
done

if [ $fail -ne 0 ]; then
	echo "check-layers: FAIL (the tiers: Makefile TIERS, docs/architecture.md)" >&2
	exit 1
fi
echo "check-layers: PASS ($(echo $tiers | wc -w) tiers, ${#DEF[@]} symbols)"
