#!/bin/bash
# SPDX-License-Identifier: MIT
# timeout: 600
# 87_nic_asan — the port tests (83 counters, 84 exception path, 85 VLANs,
# 86 bonding) once more with floodgate built with ASan + UBSan (make
# SANITIZE=1), as 77_dp_asan does for the basic path: the exception
# path's shared mbufs, the VLAN tags put in and taken out in software and
# the bond's link watch run checked. Any report ends up in floodgate's
# log, which the tests require to be clean.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=${FG_TOP:-$(cd "$here/../.." && pwd)}
. "$here/asan_dp.sh"
for t in 83_nic_counters 84_nic_exception 85_nic_vlan 86_nic_bond; do
	"$here/$t.py"
done
echo "PASS 87_nic_asan"
