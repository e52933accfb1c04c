# SPDX-License-Identifier: MIT
# asan_dp.sh — sourced by the ASan passes (77_dp_asan, 87_nic_asan; not a
# test): the tests they run start build/asan's floodgate (FG_DP_BUILD),
# with the sanitizers set to stop at the first report.
asan=${FG_BUILD_ASAN:-$top/build/asan}
if [ ! -x "$asan/bin/floodgate" ]; then
	echo "FAIL no ASan floodgate at $asan/bin/floodgate (make SANITIZE=1 all)"
	exit 1
fi
export FG_DP_BUILD=$asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
