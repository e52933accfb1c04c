# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_fgmemif.sh — sourced by run.sh: floodgate kernel-free. floodgate as in
# sys_floodgate.sh (floodctld, one worker lcore, --sink null) but on the
# server end of a net_memif pair (socket in the run's directory), and
# feedgen as the client end: feedgen --dpdk runs its peers' TCP on the
# project's own stack (docs/feedgen.md), so no frame, segment or system
# call of the kernel is on the path — the closest thing to a NIC this
# machine has. Both ends compute checksums in software (memif has no
# offload). feedgen polls: it takes a core while it runs, so on two cores
# floodgate gets one worker (a second worker would share feedgen's core).
# The worker's busy cycles per offer (tools/bench/busy.py) are the cost
# that compares with a NIC's; floodgate's CPU seconds count its idle
# polling between bursts too.
SYS_fgmemif_LABEL="floodgate kernel-free (DPDK 22.11 net_memif, 1 worker lcore, null sink; feedgen --dpdk on the project's TCP)"

_sys_fgmemif_ns() { echo "fg-dp-mbench-$$-$(basename "$1")"; }

sys_fgmemif_start() {
	_sys_fg_start "$1" "$(_sys_fgmemif_ns "$1")" memif
}

sys_fgmemif_exec() {
	echo "ip netns exec $(_sys_fgmemif_ns "$1")"
}

sys_fgmemif_args() {
	echo "--dpdk net_memif0,role=client,socket=$1/memif.sock"
}

sys_fgmemif_after() {
	python3 "$FG_TOP/tools/bench/busy.py" after "$1" "$2"
}

sys_fgmemif_stop() {
	_sys_fg_stop "$1" "$(_sys_fgmemif_ns "$1")"
}
