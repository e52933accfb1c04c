#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""40_shadow_innd — shadow mode on a capture of innfeed feeding a real innd.

The world: namespace fg-shadow-<pid>, loopback only (MTU 1500, no segment
offloads, so the capture holds the segments TCP sent). shadowkit.Site
builds an origin innd whose batch innfeed reads back and the site's own
innd on 127.0.0.1:SITE_PORT; tcpdump captures every segment to and from
that port while shadowkit's planted exchanges run (innfeed's feed of new,
old and known articles; two raw clients for a 238-against-431 case:
shadowkit.py's head comment has the table).

floodgate replays the capture in shadow mode (mode shadow, net_pcap,
--clock capture) and must find exactly: agree = 2 per new article + 1 per
old one's CHECK + the first raw CHECK, refused-took = the old articles, by
reason too-old, with their IDs as samples; took-refused = the known ones;
timing = the raw client's 431; nothing followed up, nothing not compared,
no gap, every flow anchored. `floodctl shadow` says so in text and JSON
and exits 1 (the headline figure is not 0).
"""
import os
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgkit  # noqa: E402

fgkit.rerun_in_netns("fg-shadow")
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402
import innkit  # noqa: E402
import shadowkit  # noqa: E402
from shadowkit import SITE_PORT, TIMING_ID  # noqa: E402


def capture(site, pcap):
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "--immediate-mode", "-U", "-s", "0",
                             "-w", pcap, "tcp port %d" % SITE_PORT],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    check("listening on" in dump.stderr.readline(), "tcpdump did not start")
    site.exchanges()

    def captured():
        # both CHECKs of the timing case, and both clients' 205 after them
        with open(pcap, "rb") as f:
            data = f.read()
        at = data.rfind(b"CHECK " + TIMING_ID.encode())
        return data.count(b"CHECK " + TIMING_ID.encode()) == 2 and data.count(b"205 ", at) >= 2
    check(innkit.wait_for(captured, 30, step=0.1), "tcpdump did not write the last segments")
    dump.send_signal(signal.SIGINT)
    dump.communicate(timeout=30)


def replay(conf, *args):
    d = os.path.dirname(conf)
    stats, report = os.path.join(d, "stats"), os.path.join(d, "shadow.status")
    logp = os.path.join(d, "floodgate.log")
    p = subprocess.run([os.path.join(fgdp.BIN, "floodgate"), "-c", conf, "--clock", "capture",
                        "--exit-idle", "300", "--stats-file", stats] + list(args),
                       stdout=subprocess.PIPE, stderr=open(logp, "w"), text=True, timeout=120)
    check(p.returncode == 0, "floodgate shadow exited %d:\n%s" % (p.returncode, fgdp.slurp(logp)))
    bad = [ln for ln in fgkit.slurp_log(logp).splitlines()
           if ln.strip() and not fgdp.DPDK_NOISE.match(ln)]
    check(not bad, "shadow log not clean:\n" + "\n".join(bad))
    return fgdp.read_stats_text(fgdp.slurp(stats)), report


def seeded_replay(site, pcap, work):
    """The same capture on floodctld's history (--history region), the
    known articles remembered first: they agree now (438 both), and the
    decisions are journaled (floodctl lookup finds a new one)."""
    conf = shadowkit.config(work, "net_pcap0,rx_pcap=%s" % pcap, "seeded")
    floodctl = [os.path.join(fgdp.BIN, "floodctl")]
    ctld = fgkit.spawn([os.path.join(fgdp.BIN, "floodctld"), "-c", conf],
                       os.path.join(os.path.dirname(conf), "floodctld.log"))
    try:
        fgkit.wait_until(lambda: subprocess.run(floodctl + ["status", "-c", conf],
                                                capture_output=True).returncode == 0,
                         30, "floodctld to answer")
        for _, m in site.batch:
            if m.startswith("<known"):
                r = subprocess.run(floodctl + ["remember", "-c", conf, m], capture_output=True,
                                   text=True)
                check(r.returncode == 0, "floodctl remember %s: %s" % (m, r.stderr))
        st, report = replay(conf, "--history", "region")
        shadowkit.check_report(site, conf, st, report, seeded=True)
        r = subprocess.run(floodctl + ["lookup", "-c", conf, "<new0@shadow.test>", "--json"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "the shadow run's decision is in floodctld's history: %s %s"
              % (r.stdout, r.stderr))
    finally:
        fgkit.stop(ctld)
        shm = "/dev/shm/fg-seeded-%d" % os.getpid()
        if os.path.exists(shm):
            os.unlink(shm)


def main():
    work = shadowkit.world("fg-shadow")
    site = shadowkit.Site(work)
    pcap = os.path.join(work, "site.pcap")
    try:
        capture(site, pcap)
    finally:
        site.stop()
    conf = shadowkit.config(work, "net_pcap0,rx_pcap=%s" % pcap)
    st, report = replay(conf)
    got = shadowkit.check_report(site, conf, st, report)
    log("shadow: " + " ".join("%s=%d" % kv for kv in got.items() if kv[1]))
    seeded_replay(site, pcap, work)
    if not fgkit.failed and not os.environ.get("FG_KEEP_TMP"):
        shutil.rmtree(work, ignore_errors=True)
    fgdp.passed("40_shadow_innd")


if __name__ == "__main__":
    main()
