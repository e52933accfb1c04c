# SPDX-License-Identifier: MIT
"""nickit.py — helpers of the port tests (83..86; not a test).

This machine's kernel has no 8021q, bridge or tc actions, so the link
layer the NIC tests need is built here in userspace: Switch is an 802.1Q
switch over packet sockets — frames from an access port go out on every
trunk, tagged with the port's VLAN (0: untagged); frames from a trunk go
to the access port of their VLAN, untagged — which is also what an
active-backup bond's neighbour needs (a frame reaches whichever member is
active; the bond ignores its backup).
"""
import os
import select
import socket
import struct
import subprocess
import threading

import fgkit


def sh(*cmd):
    subprocess.run(list(cmd), check=True)


SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID = 263, 8, 1 << 4
ETH_P_ALL, PACKET_OUTGOING = 3, 4


def quiet(dev):
    """Up, and no IPv6 of its own (no router solicitations in the way)."""
    sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dev)
    sh("ip", "link", "set", dev, "up")


class Switch:
    """An 802.1Q switch: each of `trunks` carries every VLAN (tagged; 0
    untagged); access port access[vid] carries VLAN vid untagged. The
    kernel may have taken a received tag off into the packet's auxiliary
    data (it does for every frame it receives): both are read. A trunk
    that is down is skipped."""

    def __init__(self, trunks, access):
        self.trunks = [self.raw(t) for t in trunks]
        self.access = {vid: self.raw(dev) for vid, dev in access.items()}
        self.tagged_from_dp = {vid: 0 for vid in access}
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
        socks = self.trunks + list(self.access.values())
        while not self.stop:
            ready, _, _ = select.select(socks, [], [], 0.2)
            for s in ready:
                try:
                    got = self.recv(s)
                except OSError:
                    # its link went down (a member taken down) or away
                    # (floodgate stopped): read it again once it is back
                    continue
                if got is None:
                    continue
                frame, vid = got
                if s in self.trunks:
                    vid = vid or 0
                    if vid in self.access:
                        self.tagged_from_dp[vid] += 1
                        self.send(self.access[vid], frame)
                    continue
                vid = [v for v, a in self.access.items() if a is s][0]
                if vid:
                    frame = frame[:12] + struct.pack("!HH", 0x8100, vid) + frame[12:]
                for t in self.trunks:
                    self.send(t, frame)

    @staticmethod
    def send(s, frame):
        try:
            s.send(frame)
        except OSError:
            pass		# a link that is down (a bond member taken down)

    def close(self):
        self.stop = True
        self.th.join(5)
        for s in self.trunks + list(self.access.values()):
            s.close()




def access_veth(name_a, name_b, addr):
    """A veth pair: name_a the clients' end (addr, tx checksum offload off:
    a packet socket sees frames as the sender left them), name_b the
    switch's access port."""
    if subprocess.run(["ip", "link", "show", name_a], capture_output=True).returncode:
        sh("ip", "link", "add", name_a, "type", "veth", "peer", "name", name_b)
        quiet(name_a)
        quiet(name_b)
        subprocess.run(["ethtool", "-K", name_a, "tx", "off"], check=True,
                       stdout=subprocess.DEVNULL)
        sh("ip", "addr", "add", addr, "dev", name_a)


def start_dp(w):
    """floodgate on the port its configuration names (World.start_dp
    addresses a tap fgd0; these tests build their links themselves)."""
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
        fgkit.fail("floodgate did not start (exit %s):\n%s" % (p.returncode, fgkit.slurp(logp)))
    return p
