#!/bin/bash
# SPDX-License-Identifier: MIT
# timeout: 300
# 77_dp_asan — the live tap test (70_dp_basic), the lossy-wire test
# (72_dp_faults) and the relay test (78_dp_relay: the queue's writer and
# relay threads, a SIGKILL and restart) once more, with floodgate built
# with ASan + UBSan (make SANITIZE=1): the project's allocations and arithmetic are checked on the
# whole path (DPDK's own heap is not instrumented). Any report ends up in
# floodgate's log, which the tests require to be clean; the runner also
# fails on a sanitizer line in this script's output.
set -eu
# not root: a skip (77) that make test, which runs as root, never takes
[ "$(id -u)" -eq 0 ] || { echo "SKIP (make deps): needs root (network namespaces, a tap port); make test runs as root"; exit 77; }
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
"$here/72_dp_faults.py"
"$here/78_dp_relay.py"
echo "PASS 77_dp_asan"
