# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_fgmpath.sh — sourced by run.sh: the whole path, kernel-free on the
# peers' side. As sys_fgpath.sh (floodgate with its durable queue and relay,
# innd on loopback behind it, every process's CPU by path_settle.py), but
# floodgate's port is net_memif's server end and feedgen --dpdk the client
# (sys_fgmemif.sh). The relay to innd stays on kernel sockets, as it is
# in production (its volume is the unique articles only).
SYS_fgmpath_LABEL="floodgate kernel-free relaying to innd: the whole path (net_memif, 1 worker lcore, durable queue, relay to innd on loopback)"
SYS_fgmpath_INND=1

sys_fgmpath_start() {
	FG_BENCH_PATH_KIND=memif sys_fgpath_start "$@"
}

sys_fgmpath_exec() {
	sys_fgpath_exec "$@"
}

sys_fgmpath_args() {
	sys_fgmemif_args "$@"
}

sys_fgmpath_after() {
	sys_fgpath_after "$@"
}

sys_fgmpath_stop() {
	sys_fgpath_stop "$@"
}
