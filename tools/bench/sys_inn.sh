# shellcheck shell=bash disable=SC2034  # (sourced by run.sh, which reads the SYS_* settings)
# sys_inn.sh — sourced by run.sh: INN's innd as a benchmarked system.
# A system file defines sys_<name>_start WORKDIR (prints "HOST PORT PID")
# and sys_<name>_stop WORKDIR; run.sh gives every workload a fresh instance.
# To add a system, drop tools/bench/sys_<name>.sh defining the same two
# functions and a SYS_<name>_LABEL; run.sh picks it up. A system in a
# network namespace also defines sys_<name>_exec WORKDIR, printing the
# command prefix that runs feedgen in there (sys_floodgate.sh); one whose
# client is not on kernel sockets defines sys_<name>_args WORKDIR, printing
# feedgen's transport arguments (sys_fgmemif.sh: --dpdk). A system
# with work left after feedgen's last answer defines sys_<name>_after
# WORKDIR JSON, which waits for it and may add keys to feedgen's JSON
# (sys_fgpath.sh: the relay's deliveries to innd). SYS_<name>_SKIP lists
# workloads a system cannot run yet, SYS_<name>_SKIP_WHY says why (the
# report shows it). SYS_<name>_INND=1 says an innd is part of the system:
# run.sh records how it kept its news log (FG_BENCH_INND_LOG).
SYS_inn_LABEL="INN $(dpkg-query -W -f='${Version}' inn2 2>/dev/null) innd (trash storage, no overview)"
SYS_inn_INND=1

# innd.sh's flag for the news log run.sh asked for: buffered, as a
# production innd keeps it, unless FG_BENCH_INND_LOG=unbuffered (innd -u)
_sys_inn_log_flag() {
	[ "${FG_BENCH_INND_LOG:-buffered}" = unbuffered ] || echo --buffered-log
}

sys_inn_start() {
	local dir=$1 port=${FG_BENCH_INN_PORT:-11119}
	# shellcheck disable=SC2046
	"$FG_TOP/tools/inn/innd.sh" start "$dir/inn" "$port" --cutoff 10 \
		--history "$FG_BENCH_HISTORY" $(_sys_inn_log_flag) >&2 || return 1
	echo "127.0.0.1 $port $("$FG_TOP/tools/inn/innd.sh" pid "$dir/inn")"
}

sys_inn_stop() {
	"$FG_TOP/tools/inn/innd.sh" stop "$1/inn" >&2
}
