#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""85_nic_vlan — 802.1Q VLANs on the port: two VLANs and the untagged
network on one link, each with floodgate's address and a peer.

Twice: on a veth pair with net_af_packet (the PMD offers VLAN strip and
insert: floodgate uses them), then on a tap (no VLAN offload: the tags are
read and written in software). This machine's kernel has no 8021q, bridge
or tc actions, so the switch is this script: a userspace 802.1Q switch
(packet sockets) whose trunk port is the link to floodgate and whose
access ports are veth pairs to the clients of VLAN 10, VLAN 20 and the
untagged network (checksum offload off on the clients' ends: a packet
socket sees frames as the sender left them). From each VLAN, and
untagged, a streaming session to floodgate's address on it is answered
and counted for that VLAN's peer; ping of each address is answered; the
switch saw tagged frames of both VLANs come back from floodgate; the
start-up log says which side did the tags; no frame was counted for an
unknown VLAN.
"""
import os
import select
import socket
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
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


def sh(*cmd):
    subprocess.run(list(cmd), check=True)


SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID = 263, 8, 1 << 4
ETH_P_ALL, PACKET_OUTGOING = 3, 4


def quiet(dev):
    sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dev)
    sh("ip", "link", "set", dev, "up")


class Switch:
    """An 802.1Q switch: `trunk` carries VLANs 10 and 20 tagged and the
    untagged network; access port c<vid>b carries VLAN vid untagged. The
    kernel may have taken a received tag off into the packet's auxiliary
    data (it does for every frame it receives): both are read."""

    def __init__(self, trunk):
        self.trunk = self.raw(trunk)
        self.access = {vid: self.raw("c%db" % vid) for vid, _ in NETS}
        self.tagged_from_dp = {vid: 0 for vid, _ in NETS}
        self.stop = False
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    @staticmethod
    def raw(dev):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        s.bind((dev, 0))
        return s

    @staticmethod
    def recv(s):
        """(frame, vid or None), or None for our own outgoing frames."""
        data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(20))
        if addr[2] == PACKET_OUTGOING:
            return None
        vid = None
        for level, kind, cdata in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and len(cdata) >= 16:
                status, _, _, _, _, tci = struct.unpack("IIIHHH", cdata[:18])
                if status & TP_STATUS_VLAN_VALID:
                    vid = tci & 0xfff
        if vid is None and len(data) >= 18 and data[12:14] == b"\x81\x00":
            vid = struct.unpack("!H", data[14:16])[0] & 0xfff
            data = data[:12] + data[16:]
        return data, vid

    def run(self):
        socks = [self.trunk] + list(self.access.values())
        while not self.stop:
            ready, _, _ = select.select(socks, [], [], 0.2)
            for s in ready:
                try:
                    got = self.recv(s)
                except OSError:
                    return		# its link went away (floodgate stopped)
                if got is None:
                    continue
                frame, vid = got
                if s is self.trunk:
                    vid = vid or 0
                    if vid in self.access:
                        self.tagged_from_dp[vid] += 1
                        self.access[vid].send(frame)
                    continue
                vid = [v for v, a in self.access.items() if a is s][0]
                if vid:
                    frame = frame[:12] + struct.pack("!HH", 0x8100, vid) + frame[12:]
                self.trunk.send(frame)

    def close(self):
        self.stop = True
        self.th.join(5)
        for s in [self.trunk] + list(self.access.values()):
            s.close()


def client_side(trunk):
    """A veth pair per network: c<vid>a the clients' (.1 of the net, tx
    checksum offload off), c<vid>b the switch's access port; the switch."""
    for vid, net in NETS:
        a, b = "c%da" % vid, "c%db" % vid
        if subprocess.run(["ip", "link", "show", a], capture_output=True).returncode:
            sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
            quiet(a)
            quiet(b)
            subprocess.run(["ethtool", "-K", a, "tx", "off"], check=True,
                           stdout=subprocess.DEVNULL)
            sh("ip", "addr", "add", net + ".1/24", "dev", a)
    quiet(trunk)
    return Switch(trunk)


def start(w, port):
    """floodgate on `port` (World.start_dp addresses a tap; these links are
    the test's own)."""
    config(w, port)
    exe = os.path.join(os.environ.get("FG_DP_BUILD") or fgkit.BUILD, "bin/floodgate")
    logp = os.path.join(w.dir, "floodgate.%d.log" % len(w.logs))
    w.logs.append(logp)
    p = subprocess.Popen([exe, "-c", w.conf], stdout=subprocess.PIPE,
                         stderr=open(logp, "w"), text=True)
    p.logp = logp
    w.procs.append(p)
    w.fg = p
    if p.stdout.readline().strip() != "ready":
        p.wait()
        fgdp.fail("floodgate did not start (exit %s):\n%s" % (p.returncode, slurp(logp)))
    return p


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
    quiet("fgv1")
    sw = client_side("fgv0")
    start(w, "net_af_packet0,iface=fgv1")
    text = slurp(w.fg.logp)
    check("VLAN tags strip port insert port" in text, "af_packet: the port does the tags:\n" + text)
    sessions(w, sw)
    sw.close()
    w.stop_dp()
    sh("ip", "link", "del", "fgv0")

    # 2: a tap: no VLAN offload, tags in software
    start(w, "net_tap0,iface=fgd0")
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
