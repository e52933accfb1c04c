# shellcheck shell=bash disable=SC2034  # (sourced: the caller reads md, args)
# profile_args.sh — the common start of the profile scripts (path_profile.sh,
# port_profile.sh, innd_paced.sh), sourced with their arguments: md is the
# file after --md (empty without one), args the other arguments in order;
# the shell moves to the top of the tree, FG_TOP and FG_BENCH_HISTORY
# (default 2000000, run.sh's quick size) exported.
md=
args=()
while [ $# -gt 0 ]; do
	if [ "$1" = --md ]; then md=$2; shift 2; else args+=("$1"); shift; fi
done
FG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
export FG_TOP
cd "$FG_TOP" || exit 1
export FG_BENCH_HISTORY=${FG_BENCH_HISTORY:-2000000}
