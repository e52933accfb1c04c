#!/bin/bash
# SPDX-License-Identifier: MIT
# timeout: 480
# 77_dp_asan — the live tap tests (70_dp_basic, 70_dp_ipv6), the lossy-wire test
# (72_dp_faults) and the relay test (78_dp_relay: the queue's writer and
# relay threads, a SIGKILL and restart) once more, with floodgate built
# with ASan + UBSan (make SANITIZE=1): the project's allocations and arithmetic are checked on the
# whole path (DPDK's own heap is not instrumented). Any report ends up in
# floodgate's log, which the tests require to be clean; the runner also
# fails on a sanitizer line in this script's output.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=${FG_TOP:-$(cd "$here/../.." && pwd)}
asan=${FG_BUILD_ASAN:-$top/build/asan}
if [ ! -x "$asan/bin/floodgate" ]; then
	echo "FAIL no ASan floodgate at $asan/bin/floodgate (make SANITIZE=1 all)"
	exit 1
fi
export FG_DP_BUILD=$asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$here/70_dp_basic.py"
"$here/70_dp_ipv6.py"
"$here/72_dp_faults.py"
"$here/78_dp_relay.py"
echo "PASS 77_dp_asan"
