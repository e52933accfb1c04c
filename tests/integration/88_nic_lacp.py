#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""88_nic_lacp — floodgate on an 802.3ad bond (net_bonding mode=4) whose
LACP partner is feedgen's own 802.3ad bond: two DPDK processes joined by
two net_memif pairs, LACP really negotiated between the two bonding PMDs
(this kernel has no bonding driver to be the partner).

floodgate: `port net_bonding0,mode=4,slave=net_memif0,slave=net_memif1`,
the members memif servers created by eal-args. feedgen --dpdk
net_bonding0,mode=4,... over the two client ends (--dpdk-member) waits
until LACP has both its members collecting and distributing, then feeds.
While it feeds, floodgate's side of LACP shows in `floodctl status` (both
members "lacp collecting+distributing") and in /metrics
(floodgate_nic_lacp_state with the collecting and distributing bits, 0x30,
per member); feedgen's model checks every answer (exit 0, "check: OK").
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from ctlkit import http_get, prom_parse, prom_value  # noqa: E402
from fgdp import check, log, wait_until  # noqa: E402

ARTICLES = 4000
MEMBERS = ("net_memif0", "net_memif1")
LACP_UP = 0x30		# collecting | distributing (IEEE 802.1AX actor state)
METRICS = "http://127.0.0.1:9119/metrics"
DP_MAC = "02:fd:00:00:00:02"	# fgdp.World's [dataplane] mac
NO_ALLMULTI = "no member takes all-multicast"


def bond_spec(members):
    return "net_bonding0,mode=4," + ",".join("slave=" + m for m in members)


def lacp_states(w):
    """{member: LACP actor state} from floodctl status --json."""
    rc, out, err = w.ctl("status", "--json")
    check(rc == 0, "floodctl status: %s" % err)
    return {p["port"]: p["lacp_state"] for p in json.loads(out).get("nic", [])
            if p["role"] == "member"}


def both_up(w):
    st = lacp_states(w)
    return st if sorted(st) == list(MEMBERS) and all(
        v & LACP_UP == LACP_UP for v in st.values()) else None


def main():
    w = fgdp.World("lacp")
    socks = [os.path.join(w.dir, "m%d.sock" % i) for i in range(len(MEMBERS))]
    with open(w.conf) as f:
        text = f.read()
    with open(w.conf, "w") as f:
        f.write(text.replace("[stats]\n", "[stats]\nhttp 127.0.0.1:9119\n"))
    w.start_ctld()
    fgdp.start_memif_dp(w, "eal-args --no-huge -m 512 --no-pci --no-shconf --no-telemetry %s\n"
                        "port %s" % (" ".join("--vdev=%s,role=server,socket=%s" % (m, s)
                                              for m, s in zip(MEMBERS, socks)),
                                     bond_spec(MEMBERS)))
    logtext = fgdp.slurp(w.fg.logp)
    check("is a bond of 2 members" in logtext, "floodgate saw the bond's members")
    check(NO_ALLMULTI in logtext, "floodgate said its bond drops broadcast:\n" + logtext)

    cmd = [os.path.join(fgdp.BIN, "feedgen"), "--dpdk", bond_spec(MEMBERS)]
    for m, s in zip(MEMBERS, socks):
        cmd += ["--dpdk-member", "%s,role=client,socket=%s" % (m, s)]
    # memif takes no all-multicast, and an 802.3ad bond drops broadcast
    # unless it is all-multicast: no ARP request crosses, feedgen is given
    # floodgate's MAC (floodgate answers to a frame's source MAC)
    cmd += ["--dpdk-peer-mac", DP_MAC, "--host", fgdp.DP_ADDR, "--path-identity", "floodgate.test",
            "--id-prefix", "lacp%d" % os.getpid(), "--articles", str(ARTICLES),
            "--no-progress", "--timeout", os.environ.get("FG_LACP_TIMEOUT", "120")]
    fg = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w.procs.append(fg)
    # floodgate's side of LACP, while feedgen (the partner) runs
    st = wait_until(lambda: both_up(w), 60,
                    "both members collecting and distributing in floodctl status")
    log("LACP actor states: %s" % {k: hex(v) for k, v in st.items()})
    rc, text, _ = w.ctl("status")
    for m in MEMBERS:
        check(re.search(r"^nic %s \(member\): link up[^;]*, lacp collecting\+distributing"
                        % m, text, re.M),
              "floodctl status shows %s carrying traffic:\n%s" % (m, text))
    st, body = http_get(METRICS)
    check(st == 200, "GET /metrics: %d" % st)
    samples = prom_parse(body)
    for m in MEMBERS:
        v = prom_value(samples, "floodgate_nic_lacp_state", port=m, role="member")
        check(v is not None and int(v) & LACP_UP == LACP_UP,
              "/metrics: %s's lacp_state %r" % (m, v))

    out, err = fg.communicate(timeout=240)
    if fg.returncode != 0:
        st = w.stats()
        log("floodgate's counters: %r\n%s" % (
            {k: v for k, v in st.items() if v and k.split("_")[0] in ("net", "tcp", "dp", "port")},
            w.ctl("status")[1]))
    check(fg.returncode == 0 and "check: OK, every answer matched the model" in out,
          "feedgen through the 802.3ad bond: exit %d\n%s\n%s"
          % (fg.returncode, out[-3000:], err[-2000:]))
    log(out.strip().splitlines()[-1])
    check("802.3ad: all 2 members collecting and distributing" in err,
          "feedgen waited for its own side of LACP:\n" + err[-2000:])
    st = w.stats()
    check(st.get("nntp_articles_accepted", 0) >= 1, "articles accepted: %s"
          % st.get("nntp_articles_accepted"))
    w.stop_dp()
    w.check_logs(allow="%s|%s|%s" % (fgdp.BOND_NOISE, fgdp.MEMIF_NOISE, NO_ALLMULTI))
    fgdp.passed("88_nic_lacp")


if __name__ == "__main__":
    main()
