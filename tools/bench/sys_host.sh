# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_host.sh — sourced by run.sh: floodgate-host (the session engine on
# kernel sockets) as a benchmarked system, next to INN. One worker thread,
# the null sink (accepted articles are counted, not stored), a history of
# FG_BENCH_HISTORY entries. feedgen checks every answer against its model.
SYS_host_LABEL="floodgate-host (kernel sockets, 1 thread, null sink)"

sys_host_start() {
	local dir=$1 port=${FG_BENCH_HOST_PORT:-11120}
	mkdir -p "$dir"
	cat > "$dir/floodgate.conf" <<CONF
[site]
server-name bench.fg.test
path-identity floodgate.fg.test
listen 127.0.0.1:$port
[rules]
cutoff 10d
retention 11d
[history]
capacity $FG_BENCH_HISTORY
[peer bench]
address 127.0.0.1
CONF
	"$FG_TOP/build/release/bin/floodgate-host" -c "$dir/floodgate.conf" --sink null \
		--stats-file "$dir/stats" 2>"$dir/host.log" &
	echo $! > "$dir/host.pid"
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	echo "127.0.0.1 $port $(cat "$dir/host.pid")"
}

sys_host_stop() {
	local pid
	pid=$(cat "$1/host.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
	kill -9 "$pid" 2>/dev/null || true
}
