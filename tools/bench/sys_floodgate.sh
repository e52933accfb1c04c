# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_floodgate.sh — sourced by run.sh: floodgate, the DPDK dataplane, as a
# benchmarked system (the contract is in sys_inn.sh).
#
# A network namespace of its own (fg-dp-bench-PID-N): floodctld owns the
# region (history sized FG_BENCH_HISTORY), floodgate runs one worker lcore
# on a net_tap port (fgb0) with the embedded default's EAL arguments (no
# hugepages, no PCI), and sys_floodgate_exec makes run.sh start feedgen
# inside the namespace, so every offer goes feedgen -> the kernel's TCP ->
# the tap -> floodgate's own TCP, and back. The printed PID is floodgate's:
# feedgen measures its CPU. floodctld's CPU (the journal drain) is not in
# that figure; sys_floodgate_stop prints it on stderr. Accepted articles are
# counted, not kept (--sink null, as floodgate-host's run): the transports
# are compared, not the relay (bench_relay measures that). FG_BENCH_MTU=N
# runs the port and the client's interface at MTU N (jumbo frames; not
# set by run.sh: path_profile.sh and by hand, to measure what it changes).
SYS_floodgate_LABEL="floodgate (DPDK 22.11 net_tap port, 1 worker lcore, feedgen in its netns)"

_sys_fg_ns() { echo "fg-dp-bench-$$-$(basename "$1")"; }

# The processes were started in run.sh's $( ) subshell: not our children.
_sys_fg_wait_gone() {
	local i
	for i in $(seq 300); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
}

# The benchmark's configuration, sys_host.sh's rules and history (the two
# are compared): LISTEN-ADDR, PEER-PREFIX and further sections.
_sys_fg_conf() {
	cat > "$1" <<-EOF
		[site]
		path-identity bench.floodgate.test
		listen $2:119
		[rules]
		cutoff 10d
		retention 11d
		[history]
		capacity ${FG_BENCH_HISTORY:-2000000}
		[peer bench]
		address $3
		$4
	EOF
}

# A fresh namespace $1 with loopback up; for a port of kind $2 = veth, the
# veth pair (the client's end computes its checksums: a packet socket sees
# them as sent).
_sys_fg_netns() {
	local ns=$1 kind=$2
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns" && ip netns exec "$ns" ip link set lo up || return 1
	if [ "$kind" = veth ]; then
		ip netns exec "$ns" ip link add fgv0 type veth peer name fgv1
		ip netns exec "$ns" ip link set fgv1 up
		ip netns exec "$ns" ethtool -K fgv0 tx off > /dev/null
	fi
}

# Start floodctld and floodgate in namespace $2 on a port of kind $3: tap
# (net_tap, the kernel side of the tap is the client's interface), veth
# (net_af_packet on one end of a veth pair, the client on the other) or
# memif (net_memif's server end, socket $1/memif.sock: the client is
# feedgen --dpdk, no kernel interface at all).
# $4: floodgate's --sink (null unless given); $5: more configuration
# ([downstream] sections). The namespace is made here unless $6 is
# "keep" (the caller made it and started something in it already).
_sys_fg_start() {
	local dir=$1 ns=$2 kind=$3 sink=${4:-null} more=${5:-} B=$FG_TOP/build/release/bin port dev
	mkdir -p "$dir/data"
	# jumbo frames on af_packet need ring frames that hold them
	if [ "$kind" = veth ]; then
		port=net_af_packet0,iface=fgv1${FG_BENCH_MTU:+,framesz=16384,blocksz=16384}; dev=fgv0
	elif [ "$kind" = memif ]; then
		port=net_memif0,role=server,socket=$dir/memif.sock; dev=
	else
		port=net_tap0,iface=fgb0; dev=fgb0
	fi
	_sys_fg_conf "$dir/floodgate.conf" 198.18.0.2 198.18.0.0/24 "
[history]
shm-path /dev/shm/$ns
[persistence]
data-dir $dir/data
[stats]
control-socket $dir/control.sock
[dataplane]
port $port
address 198.18.0.2/24
mac 02:fb:00:00:00:02
${FG_BENCH_MTU:+mtu $FG_BENCH_MTU}
$more"
	[ "${6:-}" = keep ] || _sys_fg_netns "$ns" "$kind" || return 1
	ip netns exec "$ns" "$B/floodctld" -c "$dir/floodgate.conf" > "$dir/floodctld.log" 2>&1 &
	echo $! > "$dir/floodctld.pid"
	for _ in $(seq 100); do
		"$B/floodctl" status -s "$dir/control.sock" > /dev/null 2>&1 && break
		sleep 0.1
	done
	ip netns exec "$ns" "$B/floodgate" -c "$dir/floodgate.conf" --sink "$sink" > "$dir/floodgate.out" \
		2> "$dir/floodgate.log" &
	echo $! > "$dir/floodgate.pid"
	for _ in $(seq 200); do
		grep -q '^ready' "$dir/floodgate.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^ready' "$dir/floodgate.out" || { cat "$dir/floodgate.log" >&2; return 1; }
	if [ -z "$dev" ]; then
		# memif: the peer is feedgen --dpdk, at 198.18.0.1 on the memif link
		echo "198.18.0.2 119 $(cat "$dir/floodgate.pid")"
		return 0
	fi
	# jumbo frames (FG_BENCH_MTU): the client's side of the link too
	[ -z "${FG_BENCH_MTU:-}" ] || ip netns exec "$ns" ip link set "$dev" mtu "$FG_BENCH_MTU"
	ip netns exec "$ns" ip link set "$dev" up
	ip netns exec "$ns" ip addr replace 198.18.0.1/24 dev "$dev"
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	echo "198.18.0.2 119 $(cat "$dir/floodgate.pid")"
}

_sys_fg_stop() {
	local dir=$1 ns=$2 pid ticks
	pid=$(cat "$dir/floodgate.pid")
	kill -TERM "$pid" 2>/dev/null
	_sys_fg_wait_gone "$pid"
	pid=$(cat "$dir/floodctld.pid")
	ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
	echo "floodctld used $(awk -v t="$ticks" -v h="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", t/h}') s CPU" >&2
	kill -TERM "$pid" 2>/dev/null
	_sys_fg_wait_gone "$pid"
	rm -f "/dev/shm/$ns"
	ip netns del "$ns" 2>/dev/null || true
}

sys_floodgate_start() {
	_sys_fg_start "$1" "$(_sys_fg_ns "$1")" tap
}

# A command prefix run.sh puts before feedgen: the client lives in the namespace.
sys_floodgate_exec() {
	echo "ip netns exec $(_sys_fg_ns "$1")"
}

# The worker's busy cycles of the run (tools/bench/busy.py): what an offer
# costs the polling lcore, its spinning left out.
sys_floodgate_after() {
	python3 "$FG_TOP/tools/bench/busy.py" after "$1" "$2"
}

sys_floodgate_stop() {
	_sys_fg_stop "$1" "$(_sys_fg_ns "$1")"
}
