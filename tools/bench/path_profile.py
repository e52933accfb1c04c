#!/usr/bin/env python3
"""path_profile.py — perf samples of the whole path, per stage (stdlib only).

  path_profile.py RUN.json FLOODGATE.txt INND.txt [--stats STATS.json] [--port KIND]
                  [--md FILE]

RUN.json is feedgen's JSON with path_settle.py's "path"; the .txt files are
`perf script -F comm,tid,ip,sym,dso` of perf's cpu-clock samples with DWARF
call chains (tools/bench/path_profile.sh); STATS.json floodctl's counters
after the run (TCP segments per article). Every sample is one period of
CPU time on one thread; it goes to the first stage in STAGES whose thread
matches and one of whose patterns matches a frame of its chain (symbol or
library), so a sample counts once. Printed: CPU microseconds per article
delivered to innd, per stage, and the share of the process.
"""
import json
import re
import sys

# (stage, thread pattern, frame pattern); first match wins, so the order
# matters: a signal delivered on return from writev is the signal's cost.
WORKER = r"^(rte-worker|lcore)"
STAGES = [
    ("port: a SIGIO for every frame the tap receives (net_tap's rx trigger), its delivery and return",
     WORKER, r"__restore_rt|get_signal|x64_setup_rt_frame|copy_fpstate_to_sigframe|"
     r"__fpu_restore_sig|fpu__clear_user_states|arch_do_signal_or_restart|restore_sigcontext"),
    ("port: waiting for frames (epoll on the rx interrupt, or sleeping in short steps)", WORKER,
     r"epoll_wait|idle_backoff"),
    ("port: reading frames from the tap (readv, the kernel's copy out)", WORKER,
     r"readv|tun_chr_read_iter"),
    ("port: writing frames to the tap (writev: the kernel's TCP on feedgen's side takes our ACKs)",
     WORKER, r"writev|tun_chr_write_iter"),
    ("port: net_tap PMD, user side", WORKER, r"librte_net_tap"),
    ("port: net_af_packet PMD (the ring's copy into mbufs, sendto)", WORKER,
     r"librte_net_af_packet|__libc_sendto"),
    ("port: net_memif PMD (copies between the shared rings and mbufs; no system call)", WORKER,
     r"librte_net_memif|eth_memif_"),
    ("queue sink: copying article bytes past the hold budget (copy_in)", WORKER, r"\bcopy_in\b"),
    ("queue sink: holding buffers, freeing pieces", WORKER,
     r"\bsink_\w+|art_release|piece_add|iov_next|qring_|fg_nntp_xfer_append|fg_nntp_hold|"
     r"t_hold|t_release|fg_tcp_hold|fg_tcp_release|fg_net_buf_"),
    ("NNTP: the terminator scan, commands, rules, answers", WORKER,
     r"fg_nntp_reader|find_nl_dot|article_bytes|fg_nntp_session|fg_nntp|fg_rules|fg_article|"
     r"fg_msgid|fg_date|fg_history|xfer_|respq"),
    ("userspace TCP: segments in order, ACKs, window, timers", WORKER, r"\bfg_tcp|\btcp_"),
    ("net: Ethernet, ARP, IPv4, checksums", WORKER, r"\bfg_net_|\bnet_|cksum"),
    ("DPDK: mbufs, rx/tx bursts", WORKER, r"\brte_|librte_|\bdp_tx|\bdp_rx"),
    ("journal and verdict-log records (slot rings)", WORKER, r"fg_slotlink|fg_journal|fg_vlog|fg_region"),
    ("worker: the loop itself, other", WORKER, r"."),
    ("queue writer: CRC-32C of each record", r"^fg-qwriter", r"fg_crc32c"),
    ("queue writer: pwritev (the kernel copies into the page cache)", r"^fg-qwriter", r"pwritev"),
    ("queue writer: fdatasync", r"^fg-qwriter", r"fdatasync"),
    ("queue writer: deleting delivered segments", r"^fg-qwriter", r"unlink"),
    ("queue writer: cursor and head files", r"^fg-qwriter", r"__GI___libc_write|pwrite64|__libc_pwrite"),
    ("queue writer: wake-ups, rings, other", r"^fg-qwriter", r"."),
    ("relay: sendfile to innd (loopback TCP)", r"^fg-relay", r"sendfile"),
    ("relay: sendmsg of held buffers to the downstream (end to end; loopback TCP)", r"^fg-relay",
     r"sendmsg"),
    ("relay: innd's answers, records, epoll, other", r"^fg-relay", r"."),
    ("main lcore and DPDK service threads", r".", r"."),
]
INND_STAGES = [
    ("innd: reading articles from the relay (loopback TCP receive)", r".",
     r"\bread\b|__GI___libc_read|tcp_recvmsg|sock_read_iter"),
    ("innd: everything else (history, article checks, logging, trash storage)", r".", r"."),
]


def samples(path):
    """(comm, [frame text]) per sample of perf script's output."""
    comm, chain = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if comm is not None:
                    yield comm, chain
                comm, chain = None, []
            elif line[0] not in " \t":
                comm, chain = line.rsplit(None, 1)[0].strip(), []
            else:
                chain.append(line.strip())
    if comm is not None:
        yield comm, chain


def classify(path, stages):
    counts = {name: 0 for name, _, _ in stages}
    compiled = [(name, re.compile(t), re.compile(p)) for name, t, p in stages]
    total = 0
    for comm, chain in samples(path):
        total += 1
        # a worker's frames below its loop (the EAL's launcher) say nothing
        for i, fr in enumerate(chain):
            if "dp_worker_main" in fr:
                chain = chain[:i + 1]
                break
        for name, tre, pre in compiled:
            if tre.search(comm) and any(pre.search(fr) for fr in chain):
                counts[name] += 1
                break
    return counts, total


def emit(text, md):
    """Print a fragment's text, and write it to md (run.sh's --md) if given."""
    print(text)
    if md:
        with open(md, "w") as f:
            f.write(text)


def main():
    args = sys.argv[1:]
    opt = {}
    for name in ("--md", "--stats", "--port"):
        if name in args:
            i = args.index(name)
            opt[name] = args[i + 1]
            del args[i:i + 2]
    md = opt.get("--md")
    if len(args) != 3:
        sys.exit(__doc__)
    run = json.load(open(args[0]))
    path = run.get("path") or {}
    articles = path.get("delivered") or run["accepted"]
    fg, fg_total = classify(args[1], STAGES)
    inn, inn_total = classify(args[2], INND_STAGES)
    hz = 2000.0
    per = lambda n: n / hz / articles * 1e6
    size_kb = run["params"]["size"] // 1024
    rows = []
    for name, _, _ in STAGES:
        if fg[name]:
            rows.append((name, per(fg[name]), 100.0 * fg[name] / fg_total))
    rows.sort(key=lambda r: -r[1])
    port = {"tap": "a tap", "veth": "af_packet on a veth", "memif": "memif (kernel-free)"}.get(
        opt.get("--port", "tap"), opt.get("--port", "tap"))
    out = ["### Where the CPU goes: %d KB articles on the whole path, floodgate on %s "
           "(`tools/bench/path_profile.sh`)" % (size_kb, port), ""]
    out.append("| stage (floodgate's process, %d KB articles) | CPU µs per article | share |" % size_kb)
    out.append("| --- | ---: | ---: |")
    for name, us, share in rows:
        out.append("| %s | %.0f | %.1f %% |" % (name, us, share))
    out.append("| **floodgate, all threads** (%d samples) | **%.0f** | 100 %% |"
               % (fg_total, per(fg_total)))
    for name, _, _ in INND_STAGES:
        out.append("| %s | %.0f | |" % (name, per(inn[name])))
    out.append("| **innd** (%d samples) | **%.0f** | |" % (inn_total, per(inn_total)))
    cpu = path.get("cpu_s", {})
    note = ("%d articles of %d KB, TAKETHIS, one connection, window 8, %d delivered to innd; "
            "perf cpu-clock at %.0f Hz with DWARF call chains, every thread of floodgate and innd. "
            "For comparison, the whole run's CPU from /proc (path_settle.py): floodgate %.0f µs, "
            "innd %.0f µs per article."
            % (run["offers"], size_kb, articles, hz,
               cpu.get("floodgate", 0) / articles * 1e6, cpu.get("innd", 0) / articles * 1e6))
    if "--stats" in opt:
        c = json.load(open(opt["--stats"]))["counters"]
        note += (" floodgate's TCP took %.0f segments per article (%.0f octets each on average; "
                 "%d with data seen before, %d out of order, %d dropped for want of "
                 "descriptors in the whole run)."
                 % (c.get("tcp_rx_segs", 0) / run["offers"],
                    c.get("tcp_rx_bytes", 0) / max(1, c.get("tcp_rx_segs", 0)),
                    c.get("tcp_rx_dup_data", 0), c.get("tcp_rx_ooo", 0),
                    c.get("tcp_rx_segs_full", 0)))
    emit("\n".join(out) + "\n\n" + note + "\n", md)


if __name__ == "__main__":
    main()
