#!/bin/bash
# SPDX-License-Identifier: MIT
# timeout: 540
# 77_dp_asan — the live tap tests (70_dp_basic, 70_dp_ipv6), the lossy-wire test
# (72_dp_faults), the relay test (78_dp_relay: the queue's writer and
# relay threads, a SIGKILL and restart), the restore wait (76_dp_restoring:
# the workers torn down and built again on the region) and the peers' limits
# of two workers (75_dp_limits: the box's table, a reload), the reloads that keep
# sessions (75_dp_reload_sessions: peers and listen endpoints added and
# removed, sessions drained) once more, with floodgate built
# with ASan + UBSan (make SANITIZE=1): the project's allocations and arithmetic are checked on the
# whole path (DPDK's own heap is not instrumented). Any report ends up in
# floodgate's log, which the tests require to be clean; the runner also
# fails on a sanitizer line in this script's output.
set -eu
# not root: a skip (77) that make test, which runs as root, never takes
[ "$(id -u)" -eq 0 ] || { echo "SKIP (make deps): needs root (network namespaces, a tap port); make test runs as root"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
top=${FG_TOP:-$(cd "$here/../.." && pwd)}
. "$here/asan_dp.sh"
"$here/70_dp_basic.py"
"$here/70_dp_ipv6.py"
"$here/72_dp_faults.py"
"$here/75_dp_limits.py"
"$here/75_dp_reload_sessions.py"
"$here/76_dp_restoring.py"
"$here/78_dp_relay.py"
echo "PASS 77_dp_asan"
