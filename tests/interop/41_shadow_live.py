#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""41_shadow_live — shadow mode live, on a veth mirror port.

The world: namespace fg-shadowlive-<pid>; the site of shadowkit.Site on
loopback (MTU 1500, no segment offloads); a veth pair sm0/sm1 is the
mirror link: shadowkit.Mirror copies every frame to and from the site
innd's port out of sm0, as a switch's SPAN port would, and floodgate
(mode shadow, net_af_packet on sm1, wall clock) follows both halves as
they come. floodgate starts first ("ready"), then shadowkit's planted
exchanges run (innfeed's feed of new, old and known articles; two raw
clients for a 238-against-431 case). Its report file (written every
second) must reach every pair while it runs; after a shutdown (SIGTERM)
the counters and `floodctl shadow` must show exactly the planted cases,
as on the capture of 40_shadow_innd, with no gap and nothing missed by
the port (port_imissed).
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

fgkit.rerun_in_netns("fg-shadowlive")
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402
import innkit  # noqa: E402
import shadowkit  # noqa: E402
from shadowkit import SITE_PORT  # noqa: E402


def mirror_link():
    subprocess.run(["ip", "link", "add", "sm0", "type", "veth", "peer", "name", "sm1"],
                   check=True)
    for dev in ("sm0", "sm1"):
        subprocess.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dev], check=True)
        subprocess.run(["ip", "link", "set", dev, "mtu", "1500", "up"], check=True)
        subprocess.run(["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off",
                        "gro", "off"], check=True, capture_output=True)


def report_pairs(path):
    """The classes' counts in the report file so far (0 before one)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    return sum(int(ln.split()[2]) for ln in lines if ln.startswith("count "))


def main():
    work = shadowkit.world("fg-shadowlive")
    mirror_link()
    site = shadowkit.Site(work)
    conf = shadowkit.config(work, "net_af_packet0,iface=sm1")
    stats, report = os.path.join(work, "stats"), os.path.join(os.path.dirname(conf),
                                                                "shadow.status")
    logp = os.path.join(work, "floodgate.log")
    dp = subprocess.Popen([os.path.join(fgdp.BIN, "floodgate"), "-c", conf,
                           "--stats-file", stats], stdout=subprocess.PIPE,
                          stderr=open(logp, "w"), text=True)
    mirror = None
    try:
        check(dp.stdout.readline().strip() == "ready",
              "floodgate did not start:\n%s" % fgdp.slurp(logp))
        mirror = shadowkit.Mirror(SITE_PORT, "sm0")
        site.exchanges()
        check(innkit.wait_for(lambda: report_pairs(report) == shadowkit.PAIRS, 60, step=0.2),
              "the live report reached %d of %d pairs (mirror copied %d frames)"
              % (report_pairs(report), shadowkit.PAIRS, mirror.copied))
    finally:
        if mirror:
            mirror.close()
        site.stop()
        rc = fgkit.stop(dp, signal.SIGTERM, 60)
    check(rc == 0, "floodgate exited %s:\n%s" % (rc, fgdp.slurp(logp)))
    bad = [ln for ln in fgkit.slurp_log(logp).splitlines()
           if ln.strip() and not fgdp.DPDK_NOISE.match(ln) and ln.strip() != "ready"]
    check(not bad, "shadow log not clean:\n" + "\n".join(bad))
    st = fgdp.read_stats_text(fgdp.slurp(stats))
    check(st.get("port_imissed", 0) == 0 and st.get("net_tx_frames", 0) == 0,
          "the port missed %d frames, sent %d" % (st.get("port_imissed", 0),
                                                  st.get("net_tx_frames", 0)))
    got = shadowkit.check_report(site, conf, st, report)
    log("live shadow: mirror copied %d frames; %s" % (
        mirror.copied, " ".join("%s=%d" % kv for kv in got.items() if kv[1])))
    if not fgkit.failed and not os.environ.get("FG_KEEP_TMP"):
        shutil.rmtree(work, ignore_errors=True)
    fgdp.passed("41_shadow_live")


if __name__ == "__main__":
    main()
