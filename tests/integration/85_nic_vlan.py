#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""85_nic_vlan — 802.1Q VLANs on the port: two VLANs and the untagged
network on one link, each with floodgate's address and a peer.

Twice: on a veth pair with net_af_packet (the PMD offers VLAN strip and
insert: floodgate uses them), then on a tap (no VLAN offload: the tags are
read and written in software). This machine's kernel has no 8021q, bridge
or tc actions, so the switch is this script: a userspace 802.1Q switch
(packet sockets, nickit.py) whose trunk port is the link to floodgate and
whose access ports are veth pairs to the clients of VLAN 10, VLAN 20 and the
untagged network (checksum offload off on the clients' ends: a packet
socket sees frames as the sender left them). From each VLAN, and
untagged, a streaming session to floodgate's address on it is answered
and counted for that VLAN's peer; ping of each address is answered; the
switch saw tagged frames of both VLANs come back from floodgate; the
start-up log says which side did the tags; no frame was counted for an
unknown VLAN.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import nickit  # noqa: E402
from fgdp import check, log, slurp  # noqa: E402

NETS = [(0, "198.18.0"), (10, "198.18.10"), (20, "198.18.20")]


def config(w, port):
    text = ("[site]\npath-identity floodgate.test\nlisten 0.0.0.0:119\n"
            "[session]\nclock-skew-limit 0\n"
            "[history]\ncapacity 100000\nshm-path %s\n"
            "[persistence]\ndata-dir %s\n"
            "[stats]\ncontrol-socket %s\n"
            "[peer untagged]\naddress 198.18.0.1\n"
            "[peer vlan10]\naddress 198.18.10.1\n"
            "[peer vlan20]\naddress 198.18.20.1\n"
            "[dataplane]\nport %s\naddress 198.18.0.2/24\nmac 02:fd:00:00:00:02\n"
            "vlan 10 198.18.10.2/24\nvlan 20 198.18.20.2/24\n"
            % (w.shm, w.data, w.sock, port))
    with open(w.conf, "w") as f:
        f.write(text)


sh = nickit.sh
def client_side(trunk):
    """A veth pair per network (c<vid>a the clients', .1 of the net;
    c<vid>b the switch's access port), and the switch on `trunk`."""
    for vid, net in NETS:
        nickit.access_veth("c%da" % vid, "c%db" % vid, net + ".1/24")
    nickit.quiet(trunk)
    return nickit.Switch([trunk], {vid: "c%db" % vid for vid, _ in NETS})


def sessions(w, sw):
    for vid, net in NETS:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(20)
        s.bind((net + ".1", 0))
        try:
            s.connect((net + ".2", 119))
        except OSError as e:
            fgdp.fail("VLAN %d: connect to %s.2: %s; floodgate's counters: %r; the switch "
                      "passed back %r" % (vid, net, e, {k: v for k, v in w.stats().items()
                                                         if k.startswith(("net_", "port_")) and v},
                                          sw.tagged_from_dp))
        r = fgdp.Lines(s)
        check(r.line().startswith("200"), "VLAN %d: greeting" % vid)
        s.sendall(b"MODE STREAM\r\n")
        check(r.line().startswith("203"), "VLAN %d: MODE STREAM" % vid)
        for i in range(5):
            s.sendall(b"CHECK <vlan%d-%d-%d@test>\r\n" % (vid, i, os.getpid()))
            check(r.line().startswith("238"), "VLAN %d: CHECK answered" % vid)
        s.sendall(b"QUIT\r\n")
        check(r.line().startswith("205"), "VLAN %d: QUIT" % vid)
        s.close()
        fgkit.icmp_echo(net + ".2")
    st = w.stats()
    for peer in ("untagged", "vlan10", "vlan20"):
        check(st.get("peer:%s:nntp_command:check" % peer, 0) >= 5,
              "peer %s counted its CHECKs: %r" % (
                  peer, {k: v for k, v in st.items() if k.startswith("peer:")}))
    check(st["net_rx_vlan_unknown"] == 0, "no frame of an unknown VLAN")
    check(st["net_icmp_echo"] >= 3, "three addresses answered ping")
    check(sw.tagged_from_dp[10] > 0 and sw.tagged_from_dp[20] > 0,
          "floodgate's answers came tagged 10 and 20: %r" % sw.tagged_from_dp)


def main():
    w = fgdp.World("vlan")
    config(w, "net_af_packet0,iface=fgv1")	# floodctld names the peers from it
    w.start_ctld()

    # 1: a veth pair, af_packet on fgv1: the PMD strips and inserts
    sh("ip", "link", "add", "fgv0", "type", "veth", "peer", "name", "fgv1")
    nickit.quiet("fgv1")
    sw = client_side("fgv0")
    config(w, "net_af_packet0,iface=fgv1")
    nickit.start_dp(w)
    text = slurp(w.fg.logp)
    check("VLAN tags strip port insert port" in text, "af_packet: the port does the tags:\n" + text)
    sessions(w, sw)
    sw.close()
    w.stop_dp()
    sh("ip", "link", "del", "fgv0")

    # 2: a tap: no VLAN offload, tags in software
    config(w, "net_tap0,iface=fgd0")
    nickit.start_dp(w)
    text = slurp(w.fg.logp)
    check("VLAN tags strip software insert software" in text, "tap: software tags:\n" + text)
    sw = client_side("fgd0")
    sessions(w, sw)
    sw.close()
    w.stop_dp()
    w.check_logs()
    log("VLANs 10 and 20 and untagged answered on af_packet (port offloads) and tap (software)")
    fgdp.passed("85_nic_vlan")


if __name__ == "__main__":
    main()
