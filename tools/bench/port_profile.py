#!/usr/bin/env python3
"""port_profile.py — what one offer costs on each port, per stage (stdlib only).

  port_profile.py [--md FILE] LABEL WORKLOAD RUN.json PERF.txt [LABEL ...]
  port_profile.py coverage RUN.json PERF.txt   perf's share of the process's
                  CPU (feedgen's figure) for one run; exit 1 below MIN_COVERAGE

Four arguments per run (tools/bench/port_profile.sh): the port's label,
the workload (check or takethis_2k), feedgen's JSON of the run (with
busy.py's "busy" for the DPDK ports) and `perf script -F comm,tid,ip,sym,dso`
of floodgate's process sampled with perf's cpu-clock event and DWARF call
chains for the run.

A worker's sample goes to the first port stage (STAGES, "chain") one of
whose patterns matches any frame of its chain (a kernel frame under readv
is the tap's), else to the stage of the innermost frame some other stage
names, so a history lookup made by the engine is the history's, an mbuf
freed by TCP is DPDK's; a chain none names is "unattributed". Printed: one table, a column per run, CPU
nanoseconds per offer (CHECK) or per article (TAKETHIS) of each stage,
the worker's busy cycles beside them, and the share the idle stage takes.
"""
import json
import re
import sys

from path_profile import emit, samples

HZ = 2000.0	# path_profile.sh's and port_profile.sh's perf -F
# perf on a loaded machine can fall behind and lose samples: a run whose
# samples account for less than this share of the process's CPU is retried
MIN_COVERAGE = 0.7
WORKER = r"^(rte-worker|lcore|floodgate-host)"

# (stage, frame pattern, where): the port's stages ("chain") take a sample
# when any frame of its chain matches, in this order (a kernel frame under
# readv is the tap's); the others ("leaf") by the innermost frame that one
# of them matches, in this order for one frame
STAGES = [
    ("idle: waiting for frames (epoll, sleeps of the idle back-off)",
     r"epoll_wait|epoll_pwait|idle_backoff|nanosleep", "chain"),
    ("port: the tap's system calls and signals (readv, writev, SIGIO)",
     r"tun_chr_|readv|writev|__restore_rt|get_signal|x64_setup_rt_frame|"
     r"arch_do_signal_or_restart|restore_sigcontext|__fpu_restore_sig", "chain"),
    ("port: net_af_packet PMD (ring copies, sendto)",
     r"librte_net_af_packet|eth_af_packet", "chain"),
    ("port: net_memif PMD (shared-ring copies, no system call)", r"librte_net_memif|eth_memif_",
     "chain"),
    ("port: net_tap PMD, user side", r"librte_net_tap|\btap_", "chain"),
    ("port: other system calls (floodgate-host: recv and send on its sockets, the kernel's TCP)",
     r"entry_SYSCALL|do_syscall_64", "chain"),
    ("history: lookups and inserts", r"fg_history|fg_hlookup|fg_hread|fg_hdecode|fg_hcount|fg_hbump|"
     r"aeshash|siphash", "leaf"),
    ("answers: verdicts and response lines", r"fg_nntp_put|fg_nntp_fill|fg_respq|fg_nntp_verdict|"
     r"fg_nntp_drop_responses", "leaf"),
    ("journal and verdict-log records (slot rings)", r"fg_slotlink|fg_journal|fg_vlog|fg_region",
     "leaf"),
    ("engine: commands, Message-IDs, rules, articles", r"fg_nntp|fg_nntp_session|fg_rules|fg_article|"
     r"fg_msgid|fg_date|fg_wildmat|xfer_|find_nl_dot|host_conn|fg_sink|sink_", "leaf"),
    ("TCP: segments, ACKs, window, timers (floodgate's own)", r"\bfg_tcp|\btcp_|fg_tcpsess", "leaf"),
    ("net: Ethernet, ARP, IPv4, checksums", r"\bfg_net_|\bnet_|cksum", "leaf"),
    ("DPDK: mbufs, rx/tx bursts", r"\brte_|librte_|\bdp_tx|\bdp_rx", "leaf"),
    ("worker loop, other", r"dp_worker_main|iteration|host_worker", "leaf"),
]
OTHER = "other threads (main lcore, control, DPDK services)"


def classify(path):
    """{stage: samples} and the total of one perf script file."""
    chain_st = [(name, re.compile(p)) for name, p, where in STAGES if where == "chain"]
    leaf_st = [(name, re.compile(p)) for name, p, where in STAGES if where == "leaf"]
    wre = re.compile(WORKER)
    counts = {name: 0 for name, _, _ in STAGES}
    counts["worker, unattributed"] = 0
    counts[OTHER] = 0
    total = 0
    for comm, chain in samples(path):
        total += 1
        if not wre.search(comm):
            counts[OTHER] += 1
            continue
        stage = next((name for name, pre in chain_st if any(pre.search(fr) for fr in chain)), None)
        for fr in chain if stage is None else ():
            stage = next((name for name, pre in leaf_st if pre.search(fr)), None)
            if stage:
                break
        stage = stage or "worker, unattributed"
        counts[stage] += 1
    return counts, total


def coverage(run, total):
    """The share of the process's CPU over feedgen's run (its --server-pid
    figure, from /proc) that perf's samples account for."""
    return total / HZ / run["cpu_server_s"] if run.get("cpu_server_s") else 0.0


def main():
    args = sys.argv[1:]
    if args[:1] == ["coverage"] and len(args) == 3:
        # port_profile.sh's check of one run: perf kept up (exit 0) or lost
        # samples (exit 1: more than MIN_COVERAGE of the CPU unsampled)
        cov = coverage(json.load(open(args[1])), sum(1 for _ in samples(args[2])))
        print("%.2f" % cov)
        return 0 if cov >= MIN_COVERAGE else 1
    md = None
    if "--md" in args:
        i = args.index("--md")
        md = args[i + 1]
        del args[i:i + 2]
    if not args or len(args) % 4:
        sys.exit(__doc__)
    runs = []
    for i in range(0, len(args), 4):
        label, workload, jpath, ppath = args[i:i + 4]
        run = json.load(open(jpath))
        counts, total = classify(ppath)
        unit = run["offers"] if workload == "check" else run["accepted"]
        runs.append((label, workload, run, counts, total, unit))
    ns = lambda n, unit: n / HZ / unit * 1e9
    head = ["stage"] + ["%s, %s (ns per %s)" % (r[0], "CHECK" if r[1] == "check" else "2 KB TAKETHIS",
                                                "offer" if r[1] == "check" else "article")
                        for r in runs]
    out = ["### Where the cycles go: one CHECK offer and one 2 KB article on each port "
           "(`tools/bench/port_profile.sh`)", "",
           "| " + " | ".join(head) + " |", "| --- |" + " ---: |" * len(runs)]
    names = [n for n, _, _ in STAGES] + ["worker, unattributed", OTHER]
    for name in names:
        if any(r[3][name] for r in runs):
            out.append("| %s | %s |" % (name, " | ".join("%.0f" % ns(r[3][name], r[5]) for r in runs)))
    out.append("| **floodgate's process, all CPU** | %s |"
               % " | ".join("**%.0f**" % ns(r[4], r[5]) for r in runs))
    out.append("| all CPU less idle and other threads | %s |" % " | ".join(
        "%.0f" % ns(r[4] - r[3][STAGES[0][0]] - r[3][OTHER], r[5]) for r in runs))
    out.append("| the worker's busy cycles (its own counters, busy.py) | %s |" % " | ".join(
        "%.0f" % (r[2]["busy"]["cycles"] / r[2]["busy"]["tsc_hz"] / r[5] * 1e9)
        if r[2].get("busy") else "–" for r in runs))
    out.append("| offers/s of the run | %s |" % " | ".join("%.0f" % r[2]["offers_per_s"] for r in runs))
    out.append("| samples (perf's share of the process's CPU from /proc) | %s |" % " | ".join(
        "%d (%.0f %%)" % (r[4], 100 * coverage(r[2], r[4])) for r in runs))
    def workload(w):
        r = next((r[2] for r in runs if r[1] == w), None)
        if r is None:
            return "not run"
        p = r["params"]
        return "%d peers x %d connections, %d offers per article, window %d" % (
            p["peers"], p["conns"], p["dups"], p["window"])
    note = ("One run per column, each on a fresh instance, one after the other on this shared "
            "2-core VM (compare columns within the table, not with another run's). Null sink, "
            "one worker lcore (floodgate-host: one thread). CHECK: %s. 2 KB TAKETHIS: %s. "
            "perf cpu-clock at %.0f Hz with DWARF call chains on floodgate's process only "
            "(feedgen's side is not in these figures), from just before feedgen starts to its "
            "end, so perf's share of the process's CPU over feedgen's run can pass 100 %%; a "
            "run whose samples fall below %.0f %% of it (perf lost samples waiting for a core) "
            "is made again. A sample is its chain's port stage, else "
            "its innermost frame's stage (tools/bench/port_profile.py). A polling worker's CPU includes its empty "
            "polls (the spell of spinning before the idle back-off, in the PMD and loop rows) and "
            "its waits (the idle row: epoll on the tap's and af_packet's receive interrupt, "
            "sleeps on memif, which has none); the worker's busy cycles, beside them, leave "
            "both out, but they are wall-clock TSC cycles: a worker preempted inside a busy pass "
            "on this loaded machine counts that time too, so they can exceed the sampled CPU. "
            "floodgate-host's kernel TCP runs in its system calls (the other system calls row) and, on the receive "
            "side, in softirq context on feedgen's sends, which its process does not pay."
            % (workload("check"), workload("takethis_2k"), HZ, 100 * MIN_COVERAGE))
    emit("\n".join(out) + "\n\n" + note + "\n", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
