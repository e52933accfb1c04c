#!/usr/bin/env bash
# timeout: 300
# check_layers_selftest.sh — tools/check-layers.sh fails on a violation of
# the tiers. In a scratch copy of the tree (sources, not the build) and a
# view of the build (the tiers' archives and objects, linked, not copied),
# it runs the check once untouched (the control: it must pass), then on a
# copy with these violations planted, and expects a failure that names
# each one, and nothing else:
#
#   include  an engine source includes a lib tier's public header
#   relpath  an engine source includes a lib tier's source header by "../"
#   symbol   an engine object uses a symbol the lib tier defines
#   sibling  a dataplane object uses a symbol the control tier defines
#   header   a public header the check's HEADER table does not know
#
# The tiers, their directories and the symbols are asked of the Makefile
# (make print-tiers, print-tier-dirs) and of the archives (nm), so the test
# follows the tree when a tier moves. Needs the release build (make all).
set -u
# shellcheck source=tests/tools/selftest.sh
. "$(dirname "$0")/selftest.sh" layers-selftest check-layers
build=${FG_BUILD:-$top/build/release}

for t in engine lib control; do
	[ -f "$build/libfg-$t.a" ] || fail "$build/libfg-$t.a is not built (make all)"
done

# fresh NAME: a copy of the tree's sources in $tmp/NAME/src and a view of
# the build in $tmp/NAME/build (symbolic links to the real objects)
fresh() {
	local c=$tmp/$1 d o
	mkdir -p "$c/src" "$c/build/obj"
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$c/src" -xf - ||
		fail "copying the tree"
	for o in "$build"/libfg-*.a; do ln -s "$o" "$c/build/"; done
	for d in $(all_dirs); do
		mkdir -p "$c/build/obj/$d"
		for o in "$build/obj/$d"/*.o; do
			[ -e "$o" ] && ln -s "$o" "$c/build/obj/$d/"
		done
	done
	copy=$c
}

tier_dirs() { make -s --no-print-directory -C "$top" print-tier-dirs TIER="$1"; }
all_dirs() {
	local t
	for t in $(make -s --no-print-directory -C "$top" print-tiers); do
		tier_dirs "$t"
		make -s --no-print-directory -C "$top" print-tier-progs TIER="$t"
	done
}
first_word() { local w=${1# }; echo "${w%% *}"; }

# layers NAME: runs the copy's check-layers.sh on its build view
layers() {
	out=$tmp/$1.out
	"$copy/src/tools/check-layers.sh" "$copy/build" >"$out" 2>&1
	rc=$?
}

# a directory of each tier, and a symbol each defines (a function in text)
engine_dir=$(first_word "$(tier_dirs engine)")
dataplane_dir=$(first_word "$(tier_dirs dataplane)")
[ -n "$engine_dir" ] && [ -n "$dataplane_dir" ] || fail "no engine or dataplane directory (make print-tier-dirs)"
defined() { nm --defined-only -g "$build/libfg-$1.a" 2>/dev/null | awk '$2 == "T" { print $3; exit }'; }
lib_sym=$(defined lib)
control_sym=$(defined control)
[ -n "$lib_sym" ] && [ -n "$control_sym" ] || fail "no function defined in libfg-lib.a or libfg-control.a"
# a public header of the lib tier, and a source header of a lib directory
lib_header=$(grep -o '\[[a-z_/]*\]=lib\b' "$top/tools/check-layers.sh" | head -1 | sed 's/^\[\(.*\)\]=lib$/\1/')
[ -f "$top/include/floodgate/$lib_header.h" ] || fail "no lib header from check-layers.sh's HEADER table ($lib_header)"
lib_dir=$(first_word "$(tier_dirs lib)")
[ -n "$lib_dir" ] || fail "no lib directory (make print-tier-dirs)"

# an object that calls SYM, compiled from C with no header
plant_obj() {	# plant_obj DIR SYM
	printf 'void %s(void);\nvoid fg_planted_%s(void);\nvoid fg_planted_%s(void) { %s(); }\n' \
		"$2" "$$" "$$" "$2" >"$tmp/planted.c"
	cc -w -c -o "$copy/build/obj/$1/zz_planted.o" "$tmp/planted.c" || fail "cc of the planted object"
}

# the control: the untouched copy passes
fresh control
layers control
check "check-layers passes on an untouched copy (exit $rc)" [ "$rc" -eq 0 ]
check "and says PASS" said '^check-layers: PASS'

# every violation planted in one fresh copy: the check reports each one it
# finds (and a report is a failure), so one run shows all five, and the
# count of reports shows nothing else went wrong in the copy
fresh planted
# include: an engine source includes a lib header
printf '#include "floodgate/%s.h"\n' "$lib_header" >"$copy/src/$engine_dir/zz_planted.c"
# relpath: a lib directory's own header, through "../"
printf '/* planted */\n' >"$copy/src/$lib_dir/zz_planted.h"
rel=$(realpath -m --relative-to="$top/$engine_dir" "$top/$lib_dir/zz_planted.h")
printf '#include "%s"\n' "$rel" >"$copy/src/$engine_dir/zz_planted_rel.c"
# symbol: an engine object calls a lib function
plant_obj "$engine_dir" "$lib_sym"
# sibling: a dataplane object calls a control function
plant_obj "$dataplane_dir" "$control_sym"
# header: a public header without a tier
printf '/* planted */\n' >"$copy/src/include/floodgate/zz_planted.h"
layers planted
check "check-layers fails on the planted copy (exit $rc)" [ "$rc" -eq 1 ]
check "and says FAIL" said '^check-layers: FAIL'
check "include: names the engine source and the lib header" \
	said "$engine_dir/zz_planted\.c \(engine\) includes floodgate/$lib_header\.h \(lib\)"
check "relpath: names the relative include" \
	said "$engine_dir/zz_planted_rel\.c \(engine\) includes $rel \(lib\)"
check "symbol: names the engine object and $lib_sym" \
	said "$engine_dir/zz_planted\.o \(engine\) uses $lib_sym, defined in the lib tier"
check "sibling: names the dataplane object and $control_sym" \
	said "$dataplane_dir/zz_planted\.o \(dataplane\) uses $control_sym, defined in the control tier"
check "header: names the header without a tier" said "include/floodgate/zz_planted\.h has no tier"
n=$(grep -c '^check-layers: .* (\(engine\|dataplane\)) \(includes\|uses\) \|^check-layers: .* has no tier' "$out")
check "exactly the five planted violations are reported ($n)" [ "$n" -eq 5 ]

echo "PASS check_layers_selftest: $checks checks (engine $engine_dir, lib $lib_sym, control $control_sym)"
