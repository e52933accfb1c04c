#!/usr/bin/env bash
# feed_path.sh [SECONDS] [--md FILE] — a realistic feed through the whole
# path, in both acknowledgement modes, beside innd alone (issue 33 item 6;
# run by run.sh as the fragment feed_path; SECONDS per run, default 30).
#
#  1. the feed: feedgen --size feed (the published size mix: median binary
#     740,484 octets, text 0.35 % of the octets) with an offer multiplicity
#     (--dups FEED_DUPS: each article offered by 1, 2, 3 or 6 of 6 peers at
#     nearly the same time, as flood-fill does: one TAKETHIS gets 239, the
#     copies 439), TAKETHIS, window 8, offering for SECONDS (--duration)
#     and then finishing what is in flight;
#  2. the runs, each on a fresh instance, one after the other (RUNS below):
#     innd alone (the baseline of "articles reaching innd"); floodgate on
#     memif with the null sink (receive only: the baseline of the CPU
#     goal); floodgate on memif relaying to a sink in the same feedgen
#     process (--sink: on two cores the peers and the downstream are one
#     process beside one worker), in queue mode and end to end
#     (`acknowledges on`, `ack-timeout` ACK_TIMEOUT); floodgate on
#     af_packet over a veth with the null sink (receive only: the CPU
#     baseline of that port); floodgate on af_packet relaying to innd in
#     queue mode (the relay thread's kernel socket to innd on loopback)
#     and end to end twice: through the PORT (innd bound in the namespace
#     to the veth's kernel-side address KERNEL_ADDR, on floodgate's
#     subnet: `path auto` takes the port, the worker's own TCP sends the
#     article's octets by reference, docs/relay.md "Two paths") and, the
#     named comparison, through the kernel (innd on 127.0.0.1, the relay
#     thread's socket); memif relaying to innd end to end (kernel path:
#     memif has no kernel side, and feedgen's sink listens on kernel TCP);
#     end to end under light load (LIGHT_RATE offers a second) on memif to
#     the sink and on af_packet to innd through the port, for the 239's
#     latency;
#  3. per run, tools/bench/feed_path.py: CPU counters of every process and
#     of each of floodgate's threads and the worker's busy cycles before
#     feedgen starts and once the downstream has answered every accepted
#     article (the relay's counters), the queue's octets written, the 239
#     stamps of the peers against the downstream's own (the sink's
#     --sink-times, innd's news log); perf samples floodgate for
#     PERF_SECONDS from PERF_AT seconds into each full-load run, classified
#     by tools/bench/path_profile.py's stages;
#  4. feed_path.py report writes the fragment (FILE) and, beside it,
#     FILE.json with every run's figures (run.sh stamps both).
# A port-path run is configured `path auto` (the address decides, as a
# site's would); one that the port path did not take (no TAKETHIS from
# floodgate's own TCP: portack_offered 0) fails, as a run that did not
# finish does. FG_BENCH_FEED_DOWNSTREAM_EXTRA is added to every
# [downstream] section (trying a setting by hand).
# Needs root (namespaces, perf). Leaves nothing behind, also on failure
# (FG_PROFILE_KEEP=1 keeps the scratch directory).
set -euo pipefail
# shellcheck source=tools/bench/profile_args.sh
. "$(dirname "$0")/profile_args.sh"
secs=${args[0]:-30}
command -v perf > /dev/null || { echo "feed_path.sh: perf is not installed (make deps)" >&2; exit 1; }
# shellcheck source=/dev/null
. tools/bench/sys_inn.sh
# shellcheck source=/dev/null
. tools/bench/sys_floodgate.sh
# shellcheck source=/dev/null
. tools/bench/sys_fgmemif.sh

FEED_DUPS=1:0.2,2:0.3,3:0.3,6:0.2
ACK_TIMEOUT=250ms
PERF_AT=$((secs / 3))
PERF_SECONDS=$((secs / 4 > 4 ? secs / 4 : 4))
INND_PORT=11139
SINK_PORT=11149
INND_MAXART=5000000	# innd's and floodgate's: the feed's largest article is 4.16 MB (both default to 1 MB)
KERNEL_ADDR=198.18.0.1	# the veth's kernel side (sys_floodgate.sh); floodgate is 198.18.0.2/24
# name|port kind|floodgate's sink|acknowledges|downstream|path (kernel: the
# relay thread's socket to 127.0.0.1; port: innd on KERNEL_ADDR, reached
# through floodgate's port by the worker's own TCP)|load (full: as fast as
# it goes; light: LIGHT_RATE first offers a second for LIGHT_SECONDS, the
# latency goal's condition, no perf)
RUNS=(
	"inn|-|-|-|-|-|full"
	"memif_null|memif|null|-|-|-|full"
	"memif_queue_sink|memif|queue|off|sink|kernel|full"
	"memif_ack_sink|memif|queue|on|sink|kernel|full"
	"veth_null|veth|null|-|-|-|full"
	"veth_queue_innd|veth|queue|off|innd|kernel|full"
	"veth_ack_innd|veth|queue|on|innd|port|full"
	"veth_ack_innd_kernel|veth|queue|on|innd|kernel|full"
	"memif_ack_innd|memif|queue|on|innd|kernel|full"
	"memif_ack_sink_light|memif|queue|on|sink|kernel|light"
	"veth_ack_innd_light|veth|queue|on|innd|port|light"
)
LIGHT_RATE=10
LIGHT_SECONDS=10
WORKLOAD="--mode takethis --peers 6 --conns 1 --dups $FEED_DUPS --spread 8 --size feed
 --articles 500000 --window 8 --duration $secs --seed 42 --cutoff 10d --no-progress --json
 --timeout $((secs * 4 + 300))"

work=$(mktemp -d /tmp/fg-feed.XXXXXX)
chmod 0755 "$work"
cur=
perf_pid=
cleanup() {
	[ -z "$perf_pid" ] || kill -INT "$perf_pid" 2>/dev/null || true
	[ -z "$cur" ] || stop_run "$cur" > /dev/null 2>&1 || true
	if [ -n "${FG_PROFILE_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

ns_of() { echo "fg-feed-$$-$1"; }

innd_start() {	# DIR [NS [innd.sh's --bind/--peer...]]: innd as sys_inn.sh sets it up, larger articles allowed
	local run=(); [ -z "${2:-}" ] || run=(ip netns exec "$2")
	# shellcheck disable=SC2046
	"${run[@]}" "$FG_TOP/tools/inn/innd.sh" start "$1/inn" "$INND_PORT" --cutoff 10 \
		--history "$FG_BENCH_HISTORY" --maxartsize "$INND_MAXART" $(_sys_inn_log_flag) \
		"${@:3}" >&2
	"$FG_TOP/tools/inn/innd.sh" pid "$1/inn" > "$1/innd.pid"
}

# start_run NAME KIND SINK ACK DOWN PATH: prints "HOST PORT PID"
start_run() {
	local name=$1 kind=$2 sink=$3 ack=$4 down=$5 path=$6 dir=$work/$1 ns
	local more="[rules]
max-article-size $INND_MAXART"
	ns=$(ns_of "$name")
	mkdir -p "$dir"
	if [ "$kind" = - ]; then
		innd_start "$dir"
		echo "127.0.0.1 $INND_PORT $(cat "$dir/innd.pid")"
		return
	fi
	_sys_fg_netns "$ns" "$kind" || return 1
	if [ "$down" != - ]; then
		local addr=127.0.0.1:$SINK_PORT
		if [ "$down" = innd ] && [ "$path" = port ]; then
			# the veth's kernel side gets its address before innd binds
			# it (_sys_fg_start replaces it: the same); innd takes feeds
			# from the worker (floodgate's address) and from the relay
			# thread (the queue's path, the kernel's address)
			ip netns exec "$ns" ip link set fgv0 up
			ip netns exec "$ns" ip addr add "$KERNEL_ADDR/24" dev fgv0
			innd_start "$dir" "$ns" --bind "$KERNEL_ADDR" --peer 198.18.0.2 --peer "$KERNEL_ADDR"
			addr=$KERNEL_ADDR:$INND_PORT
		elif [ "$down" = innd ]; then
			innd_start "$dir" "$ns"
			addr=127.0.0.1:$INND_PORT
		fi
		more="$more
[persistence]
warmup 0
ack-timeout $ACK_TIMEOUT
[downstream $down]
address $addr
acknowledges $ack
path $([ "$path" = port ] && echo auto || echo kernel)
${FG_BENCH_FEED_DOWNSTREAM_EXTRA:-}"
	fi
	_sys_fg_start "$dir" "$ns" "$kind" "$sink" "$more" keep
}

stop_run() {
	local dir=$work/$1
	if [ -f "$dir/floodgate.pid" ]; then
		_sys_fg_stop "$dir" "$(ns_of "$1")"
	fi
	if [ -f "$dir/innd.pid" ]; then
		"$FG_TOP/tools/inn/innd.sh" stop "$dir/inn" >&2
	fi
	rm -f "$dir/floodgate.pid" "$dir/innd.pid"
}

# perf on floodgate for PERF_SECONDS from PERF_AT seconds on (background);
# the counters are read as sampling starts (perf attached: its file
# appeared) and as it is stopped, not when perf has written its file
perf_window() {
	local dir=$1 pid=$2 p
	sleep "$PERF_AT"
	perf record -q -e cpu-clock -F 1000 --call-graph dwarf,8192 -p "$pid" -o "$dir/perf.data" \
		> /dev/null 2>&1 &
	p=$!
	for _ in $(seq 100); do [ -s "$dir/perf.data" ] && break; sleep 0.05; done
	python3 tools/bench/feed_path.py mark "$dir" perf.start
	sleep "$PERF_SECONDS"
	python3 tools/bench/feed_path.py mark "$dir" perf.end
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
}

rundirs=()
for r in "${RUNS[@]}"; do
	IFS='|' read -r name kind sink ack down path load <<< "$r"
	# FG_BENCH_FEED_RUNS="inn memif_ack_sink": only these (working on one)
	[ -z "${FG_BENCH_FEED_RUNS:-}" ] || [[ " $FG_BENCH_FEED_RUNS " == *" $name "* ]] || continue
	dir=$work/$name
	cur=$name
	read -r host port pid < <(start_run "$name" "$kind" "$sink" "$ack" "$down" "$path")
	run_in=() fg_args=()
	if [ "$kind" != - ]; then
		read -r -a run_in <<< "ip netns exec $(ns_of "$name")"
	fi
	[ "$kind" != memif ] || read -r -a fg_args <<< "$(sys_fgmemif_args "$dir")"
	if [ "$down" = sink ]; then
		# the relay's connections first: 1, and its #ack one end to end
		fg_args+=(--sink "127.0.0.1:$SINK_PORT" --sink-times "$dir/down.times"
			--sink-wait "$([ "$ack" = on ] && echo 2 || echo 1)" --sink-drain 300)
	fi
	load_args=()
	[ "$load" = full ] || load_args=(--rate "$LIGHT_RATE" --duration "$LIGHT_SECONDS")
	printf '%s\n' "name=$name kind=$kind sink=$sink ack=$ack down=$down path=$path load=$load" > "$dir/run.conf"
	python3 tools/bench/feed_path.py start "$dir"
	perf_pid=
	if [ "$kind" != - ] && [ "$load" = full ]; then
		perf_window "$dir" "$pid" &
		perf_pid=$!
	fi
	# shellcheck disable=SC2206  # WORKLOAD is words
	cmd=(build/release/bin/feedgen "${fg_args[@]}" --host "$host" --port "$port"
		--server-pid "$pid" $WORKLOAD "${load_args[@]}" --id-prefix "feed$name"
		--accept-times "$dir/peer.times")
	echo "-- feed_path $name: ${run_in[*]} ${cmd[*]}" >&2
	printf '%s\n' "${cmd[*]}" > "$dir/command"
	rc=0
	"${run_in[@]}" "${cmd[@]}" > "$dir/run.json" || rc=$?
	[ -z "$perf_pid" ] || wait "$perf_pid" || true
	perf_pid=
	[ $rc -eq 0 ] || { echo "feed_path.sh: feedgen found mismatches ($name)" >&2; exit 1; }
	python3 tools/bench/feed_path.py after "$dir" "$dir/run.json"
	stop_run "$name"
	cur=
	if [ -s "$dir/perf.data" ]; then
		perf script -i "$dir/perf.data" -F comm,tid,ip,sym,dso 2> /dev/null > "$dir/perf.txt"
		rm -f "$dir/perf.data"
	fi
	rundirs+=("$dir")
done
python3 tools/bench/feed_path.py report "${md:-/dev/stdout}" "$secs" "${rundirs[@]}"
