#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""73_dp_passive — pcap replay in passive mode, through DPDK's net_pcap.

feedgen writes its workload's client side as a capture and says what a
server deciding that capture in order must answer (pcapfeed's model).
floodgate replays it in passive mode (mode passive, port
net_pcap0,rx_pcap=FILE, --clock capture: dates judged at capture time),
with no floodctld and no network namespace needed: its answers, counted
and never sent, must equal the model's exactly — for a CHECK feed where
offers race their articles, for innfeed's TAKETHIS-only mode, and for a
feed with large binaries, and a CHECK feed captured over IPv6 (flows
from fd00::198.18.x.y to [fd00::198.19.0.1]:119, feedgen --pcap-ipv6). The
same capture replayed twice gives the same counts.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402

NOW = 1790000000


def write_config(d, pcap):
    conf = os.path.join(d, "passive.conf")
    with open(conf, "w") as f:
        f.write("[site]\npath-identity floodgate.test\n"
                "listen 198.19.0.1:119 [fd00::c613:1]:119\n"
                "[session]\nclock-skew-limit 0\n"
                "[history]\ncapacity 400000\n"
                "[stats]\ncontrol-socket %s/control.sock\n"
                "[peer feeders]\naddress 198.18.0.0/15 fd00::c612:0/111\n"
                "[dataplane]\nmode passive\nport net_pcap0,rx_pcap=%s\naddress 198.19.0.1/24\n"
                % (d, pcap))
    return conf


def replay(d, conf, tag):
    stats = os.path.join(d, "stats.%s" % tag)
    logp = os.path.join(d, "floodgate.%s.log" % tag)
    p = subprocess.run([os.path.join(fgdp.BIN, "floodgate"), "-c", conf, "--clock", "capture",
                        "--exit-idle", "300", "--stats-file", stats],
                       stdout=subprocess.PIPE, stderr=open(logp, "w"), text=True, timeout=120)
    check(p.returncode == 0, "floodgate passive exited %d:\n%s" % (p.returncode, fgdp.slurp(logp)))
    bad = [l for l in fgdp.fgkit.slurp_log(logp).splitlines() if l.strip() and not fgdp.DPDK_NOISE.match(l)]
    check(not bad, "passive log not clean:\n" + "\n".join(bad))
    return fgdp.read_stats_text(fgdp.slurp(stats))


def case(d, name, args):
    pcap = os.path.join(d, name + ".pcap")
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--pcap", pcap, "--now", str(NOW),
                         "--path-identity", "floodgate.test"] + args,
                        capture_output=True, text=True, timeout=120)
    check(fg.returncode == 0, "feedgen --pcap: %s %s" % (fg.stdout, fg.stderr))
    m = re.search(r"expected in order: (.*)", fg.stdout)
    check(m, "feedgen printed no expectation: %s" % fg.stdout)
    expect = {k: int(v) for k, v in (x.split("=") for x in m.group(1).split())}
    flows = int(re.search(r"(\d+) connections", fg.stdout).group(1))
    conf = write_config(d, pcap)
    first = None
    for run in range(2):
        st = replay(d, conf, "%s.%d" % (name, run))
        got = {k: st.get("nntp_response:%s" % k, 0) for k in expect}
        check(got == expect, "%s: answers %s, the model says %s" % (name, got, expect))
        check(st["passive_flows"] == flows and st["nntp_response:200"] == flows,
              "%s: %d flows followed, %d greeted, %d in the capture"
              % (name, st["passive_flows"], st["nntp_response:200"], flows))
        for k in ("passive_gaps", "passive_midstream", "passive_bad", "port_imissed",
                  "dp_rx_multiseg", "nntp_eof_mid_article"):
            check(st.get(k, 0) == 0, "%s: %s = %d" % (name, k, st.get(k, 0)))
        check(st.get("net_tx_frames", 0) == 0 and st.get("port_opackets", 0) == 0,
              "%s: passive mode transmitted" % name)
        if first is None:
            first = st
        check(st["nntp_article_bytes"] == first["nntp_article_bytes"], "replays differ")
    log("%s: %s" % (name, " ".join("%s=%d" % kv for kv in expect.items())))


def main():
    d = fgdp.fgkit.scratch("fg-dp-passive-%d" % os.getpid())
    case(d, "check", ["--articles", "6000", "--peers", "6", "--conns", "2"])
    case(d, "check-late", ["--articles", "3000", "--window", "4", "--spread", "400"])
    case(d, "takethis", ["--articles", "3000", "--mode", "takethis", "--dups", "4"])
    case(d, "binaries", ["--articles", "800", "--size", "mix", "--binary-size", "300K",
                         "--binary-share", "0.1", "--peers", "4"])
    case(d, "check-ipv6", ["--articles", "4000", "--peers", "5", "--conns", "2", "--pcap-ipv6"])
    if not fgdp.fgkit.failed and not os.environ.get("FG_KEEP_TMP"):
        shutil.rmtree(d, ignore_errors=True)
    fgdp.passed("73_dp_passive")


if __name__ == "__main__":
    main()
