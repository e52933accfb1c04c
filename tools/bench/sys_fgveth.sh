# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_fgveth.sh — sourced by run.sh: floodgate once more, on a veth pair
# through DPDK's net_af_packet (packet-socket rings: no system call and no
# signal per frame, unlike the tap). Everything else as sys_floodgate.sh,
# whose helpers it uses.
SYS_fgveth_LABEL="floodgate (DPDK 22.11 net_af_packet on a veth pair, 1 worker lcore, feedgen in its netns)"

_sys_fgveth_ns() { echo "fg-dp-vbench-$$-$(basename "$1")"; }

sys_fgveth_start() {
	_sys_fg_start "$1" "$(_sys_fgveth_ns "$1")" veth
}

sys_fgveth_exec() {
	echo "ip netns exec $(_sys_fgveth_ns "$1")"
}

sys_fgveth_after() {
	python3 "$FG_TOP/tools/bench/busy.py" after "$1" "$2"
}

sys_fgveth_stop() {
	_sys_fg_stop "$1" "$(_sys_fgveth_ns "$1")"
}
