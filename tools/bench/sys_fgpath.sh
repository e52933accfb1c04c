# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_fgpath.sh — sourced by run.sh: the whole path. floodgate as in
# sys_floodgate.sh (DPDK 22.11, net_tap port, one worker lcore, feedgen in
# the namespace) but with its durable queue and relay (--sink queue) and a
# [downstream] that is INN's innd on loopback in the same namespace
# (tools/inn/innd.sh with sys_inn.sh's settings, its news log buffered
# unless FG_BENCH_INND_LOG=unbuffered), so every accepted article is made
# durable, answered 239 and then delivered to innd.
#
# feedgen measures floodgate's answers (offers/s, latency, floodgate's CPU
# while it runs). sys_fgpath_after then waits until innd has answered every
# article floodgate accepted (the relay's counters), has innd flush its
# news log, checks it has an outcome for each, and adds "path" to the
# run's JSON
# (tools/bench/path_settle.py): the time from the start to the last
# delivery, delivered articles/s, and the CPU seconds of floodgate (every
# lcore and thread of the process: worker, main, queue writer, relay),
# floodctld and innd over that whole time, separately and together.
#
# FG_BENCH_PATH_KIND=veth puts floodgate on net_af_packet over a veth pair
# instead of the tap, FG_BENCH_MTU=N runs the link at MTU N (both for
# path_profile.sh and by hand; run.sh measures the tap at 1500).
SYS_fgpath_LABEL="floodgate relaying to innd: the whole path (DPDK net_tap, 1 worker lcore, durable queue, relay to innd on loopback)"
SYS_fgpath_INND=1

_sys_fgpath_ns() { echo "fg-iop-bench-$$-$(basename "$1")"; }

sys_fgpath_start() {
	local dir=$1 ns port=${FG_BENCH_PATH_PORT:-11129} out
	ns=$(_sys_fgpath_ns "$dir")
	mkdir -p "$dir"
	_sys_fg_netns "$ns" "${FG_BENCH_PATH_KIND:-tap}" || return 1
	# innd first: the relay finds it at its first connection
	# shellcheck disable=SC2046
	ip netns exec "$ns" "$FG_TOP/tools/inn/innd.sh" start "$dir/inn" "$port" --cutoff 10 \
		--history "$FG_BENCH_HISTORY" $(_sys_inn_log_flag) >&2 || return 1
	# warmup 0: past a cold start's warm-up the history answers alone (the
	# steady state); during it every unknown CHECK would also ask innd
	out=$(_sys_fg_start "$dir" "$ns" "${FG_BENCH_PATH_KIND:-tap}" queue "[persistence]
warmup 0
[downstream inn]
address 127.0.0.1:$port" keep) || return 1
	"$FG_TOP/tools/inn/innd.sh" pid "$dir/inn" > "$dir/innd.pid"
	python3 "$FG_TOP/tools/bench/path_settle.py" start "$dir" >&2 || return 1
	echo "$out"
}

sys_fgpath_exec() {
	echo "ip netns exec $(_sys_fgpath_ns "$1")"
}

sys_fgpath_after() {
	python3 "$FG_TOP/tools/bench/path_settle.py" after "$1" "$2" &&
		python3 "$FG_TOP/tools/bench/busy.py" after "$1" "$2"
}

sys_fgpath_stop() {
	_sys_fg_stop "$1" "$(_sys_fgpath_ns "$1")"
	"$FG_TOP/tools/inn/innd.sh" stop "$1/inn" >&2
}
