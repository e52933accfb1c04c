# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_fgvpath.sh — sourced by run.sh: the whole path with floodgate on
# net_af_packet over a veth pair (packet-socket rings, as sys_fgveth.sh)
# instead of the tap; everything else as sys_fgpath.sh (durable queue,
# relay to innd on loopback, every process's CPU by path_settle.py).
SYS_fgvpath_LABEL="floodgate on af_packet relaying to innd: the whole path (DPDK net_af_packet on a veth pair, 1 worker lcore, durable queue, relay to innd on loopback)"
SYS_fgvpath_INND=1

sys_fgvpath_start() {
	FG_BENCH_PATH_KIND=veth sys_fgpath_start "$@"
}

sys_fgvpath_exec() {
	sys_fgpath_exec "$@"
}

sys_fgvpath_after() {
	sys_fgpath_after "$@"
}

sys_fgvpath_stop() {
	sys_fgpath_stop "$@"
}
