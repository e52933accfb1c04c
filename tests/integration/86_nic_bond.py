#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""86_nic_bond — floodgate on DPDK's bonding PMD, active-backup over two
taps; one member goes down mid-feed and the feed completes.

`[dataplane] port net_bonding0,mode=1,slave=net_tap0,slave=net_tap1,
primary=net_tap0`, the members created by eal-args. The network side of
both taps joins the clients' veth through nickit's userspace switch (this
kernel has no bridge or bonding of its own). feedgen feeds through the
bond; once floodgate has answered a share of the offers, the primary
member's link (fgb0) goes down: the bond moves to net_tap1 (the tap PMD
raises no link event, so floodgate's link watch makes net_tap1 the
primary: bond.c), `floodctl status` shows the member down and the bond
up, and feedgen
completes with every answer checked against its model (TCP retransmits
what the switch-over lost; no session drops).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import nickit  # noqa: E402
from fgdp import check, log, slurp, wait_until  # noqa: E402

ARTICLES = 6000


def config(w):
    text = ("[site]\npath-identity floodgate.test\nlisten 198.18.0.2:119\n"
            "[session]\nclock-skew-limit 0\n"
            "[history]\ncapacity 200000\nshm-path %s\n"
            "[persistence]\ndata-dir %s\n"
            "[stats]\ncontrol-socket %s\n"
            "[peer feeder]\naddress 198.18.0.1\n"
            "[dataplane]\n"
            "eal-args --no-huge -m 512 --no-pci --no-shconf --no-telemetry "
            "--vdev=net_tap0,iface=fgb0 --vdev=net_tap1,iface=fgb1\n"
            "port net_bonding0,mode=1,slave=net_tap0,slave=net_tap1,primary=net_tap0\n"
            "address 198.18.0.2/24\nmac 02:fd:00:00:00:02\n" % (w.shm, w.data, w.sock))
    with open(w.conf, "w") as f:
        f.write(text)


def nic(w):
    """{port name: its figures} as floodctl status --json has them."""
    rc, out, err = w.ctl("status", "--json")
    check(rc == 0, "floodctl status: %s" % err)
    return {p["port"]: p for p in json.loads(out).get("nic", [])}


def main():
    w = fgdp.World("bond")
    config(w)
    w.start_ctld()
    nickit.start_dp(w)
    check("is a bond of 2 members" in slurp(w.fg.logp), "floodgate saw the bond's members")
    nickit.access_veth("c0a", "c0b", "198.18.0.1/24")
    for t in ("fgb0", "fgb1"):
        nickit.quiet(t)
    sw = nickit.Switch(["fgb0", "fgb1"], {0: "c0b"})
    w.wait_tcp()
    ports = wait_until(lambda: (lambda n: n if len(n) == 3 and all(
        p["link_up"] for p in n.values()) else None)(nic(w)), 30,
        "the bond and both members up in floodctl status")
    check(ports["net_bonding0"]["role"] == "port" and ports["net_tap0"]["role"] == "member",
          "roles: %r" % {k: v["role"] for k, v in ports.items()})

    fg = subprocess.Popen([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                           "--articles", str(ARTICLES), "--path-identity", "floodgate.test",
                           "--id-prefix", "bond%d" % os.getpid(), "--timeout", "120"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w.procs.append(fg)
    w.wait_stats(lambda c: c.get("nntp_response:238", 0) >= ARTICLES // 4,
                 "a quarter of the feed answered before the member goes down", timeout=120)
    before = nic(w)["net_tap1"]["rx_packets"]
    nickit.sh("ip", "link", "set", "fgb0", "down")
    log("member net_tap0 (fgb0) down mid-feed")
    ports = wait_until(lambda: (lambda n: n if not n["net_tap0"]["link_up"] and
                                n["net_tap1"]["rx_packets"] > before else None)(nic(w)), 60,
                       "member net_tap0 down and the feed arriving on net_tap1")
    check(ports["net_bonding0"]["link_up"] == 1, "the bond stays up with one member")
    check("member 1 is the primary now" in slurp(w.fg.logp),
          "floodgate moved the bond to the member that is up:\n" + slurp(w.fg.logp))
    out, err = fg.communicate(timeout=240)
    check(fg.returncode == 0, "feedgen through the bond:\n%s\n%s" % (out[-3000:], err[-2000:]))
    log(out.strip().splitlines()[-1])
    rc, text, _ = w.ctl("status")
    check("nic net_tap0 (member): link DOWN" in text and "nic net_tap1 (member): link up" in text,
          "floodctl status shows the members:\n" + text)
    st = w.stats()
    check(st["tcp_accepted"] >= 1 and st.get("dp_sessions_refused_full", 0) == 0,
          "sessions held through the switch-over")
    sw.close()
    w.stop_dp()
    # DPDK: the bond stops its members before ethdev does
    w.check_logs(allow=r"^Device with port_id=\d+ already stopped$")
    fgdp.passed("86_nic_bond")


if __name__ == "__main__":
    main()
