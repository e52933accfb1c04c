# sys_fghost.sh — sourced by run.sh: floodgate-host, the same session
# engine on kernel sockets, as a benchmarked system next to floodgate (the
# contract is in sys_inn.sh).
#
# Like sys_floodgate.sh it lives in a network namespace of its own with
# feedgen beside it (sys_fghost_exec), but the path is the kernel's: both
# ends of each connection are kernel TCP over the namespace's loopback.
# One engine thread, a private history of FG_BENCH_HISTORY entries, the
# null sink (accepted articles are counted, not kept: floodgate's memory
# sink keeps none either). The difference between the two systems is then
# the transport: the kernel's sockets and epoll against DPDK's port and the
# userspace TCP.
SYS_fghost_LABEL="floodgate-host (kernel sockets, 1 thread, feedgen in its netns on loopback)"

_sys_fghost_ns() { echo "fg-dp-hbench-$$-$(basename "$1")"; }

sys_fghost_start() {
	local dir=$1 ns B=$FG_TOP/build/release/bin i
	ns=$(_sys_fghost_ns "$dir")
	mkdir -p "$dir"
	_sys_fg_conf "$dir/floodgate.conf" 127.0.0.1 127.0.0.0/8 ""	# sys_floodgate.sh
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns" && ip netns exec "$ns" ip link set lo up || return 1
	ip netns exec "$ns" "$B/floodgate-host" -c "$dir/floodgate.conf" --threads 1 \
		--sink null --stats-file "$dir/stats" > "$dir/host.log" 2>&1 &
	echo $! > "$dir/host.pid"
	for i in $(seq 100); do
		ip netns exec "$ns" bash -c 'exec 3<>/dev/tcp/127.0.0.1/119' 2>/dev/null && break
		sleep 0.1
	done
	echo "127.0.0.1 119 $(cat "$dir/host.pid")"
}

sys_fghost_exec() {
	echo "ip netns exec $(_sys_fghost_ns "$1")"
}

sys_fghost_stop() {
	local dir=$1 pid i
	pid=$(cat "$dir/host.pid")
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	ip netns del "$(_sys_fghost_ns "$dir")" 2>/dev/null || true
}
