#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_net6_corpus.py — writes tests/fuzz/corpus/net6/ (the record format
is in fuzz_net6.c): extension-header chains good and bad (hop-by-hop
first and not, options that say skip and discard, routing headers with
and without segments left, lengths past the packet, nine headers),
fragments, ND (solicitations unicast, to the group, DAD probes from ::,
advertisements, bad hop limits and options), echo to us and to a group,
Packet Too Big (small MTU, short quote, a quote of a segment), TCP
handshakes and data over IPv6, raw frames cut short. Run it again after
changing the format; the files are committed."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "net6")
OUR = bytes([0xfd, 0, 0, 0xfd] + [0] * 11 + [2])
PEER = bytes([0xfd, 0, 0, 0xfd] + [0] * 11 + [1])
GROUP = bytes([0xff, 2] + [0] * 9 + [1, 0xff, 0, 0, 2])
UDP = 17


def rec(kind, body, clock=0, csum_ok=False, group=False):
    op = (clock & 15) | (kind << 4) | (0x40 if csum_ok else 0) | (0x80 if group else 0)
    return struct.pack(">BH", op, len(body)) + body


def ip6(first, payload, **kw):
    return rec(1, bytes([first]) + payload, **kw)


def icmp6(typ, code, rest, **kw):
    return rec(2, bytes([typ, code, 0, 0]) + rest, **kw)


def ext(nxt, hdrlen_units, body):
    """An extension header: next, length in 8-octet units beyond the first."""
    return bytes([nxt, hdrlen_units]) + body


def tcp(sport, seq, ack, flags, payload=b"", opts=b""):
    off = (20 + len(opts)) // 4
    return rec(3, struct.pack(">HHIIBBHHH", sport, 119, seq, ack, off << 4, flags, 65535, 0, 0)
               + opts + payload)


def frame(payload_after_eth):
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd])
    return rec(0, eth + payload_after_eth)


def fixed(nxt, plen, src=PEER, dst=OUR, hlim=64):
    return struct.pack(">IHBB", 6 << 28, plen, nxt, hlim) + src + dst


SEEDS = {
    "ext_good_chain": ip6(0, ext(60, 0, bytes([5, 2, 0, 0, 1, 0])) +
                          ext(UDP, 0, b"\0" * 6) + b"payload!", clock=3),
    "ext_routing_done": ip6(43, ext(6, 0, bytes([4, 0, 0, 0, 0, 0])) + b"\0" * 20, clock=3),
    "ext_routing_left": ip6(43, ext(6, 0, bytes([4, 1, 0, 0, 0, 0])) + b"\0" * 20, clock=3),
    "ext_hbh_second": ip6(60, ext(0, 0, bytes([1, 4, 0, 0, 0, 0])) +
                          ext(6, 0, bytes([1, 4, 0, 0, 0, 0])), clock=3),
    "ext_opt_discard": ip6(60, ext(6, 0, bytes([0x87, 4, 0, 0, 0, 0])), clock=3),
    "ext_opt_long": ip6(0, ext(6, 0, bytes([1, 9, 0, 0, 0, 0])), clock=3),
    "ext_past_end": ip6(60, ext(6, 5, b"\0" * 6), clock=3),
    "ext_nine": ip6(60, b"".join(ext(60 if i < 8 else 6, 0, bytes([1, 4, 0, 0, 0, 0]))
                                 for i in range(9)), clock=3),
    "fragment": ip6(44, bytes([6, 0, 0, 1, 0, 0, 0, 7]) + b"\0" * 20, clock=3),
    "no_next": ip6(59, b"", clock=3),
    "ns_unicast": rec(2, bytes([135, 0, 0, 0]) + b"\0" * 4 + OUR + b"\x01\x01" +
                      bytes([2, 0, 0, 0, 0, 1]), clock=3),
    "ns_group": rec(2, bytes([135, 0, 0, 0]) + b"\0" * 4 + OUR, clock=3, group=True),
    "ns_during_dad": rec(2, bytes([135, 0, 0, 0]) + b"\0" * 4 + OUR),
    "na_conflict": rec(2, bytes([136, 0, 0, 0, 0x20, 0, 0, 0]) + OUR + b"\x02\x01" +
                       bytes([2, 0, 0, 0, 0, 9])),
    "na_late": rec(2, bytes([136, 0, 0, 0, 0x20, 0, 0, 0]) + OUR, clock=5),
    "nd_zero_option": rec(2, bytes([135, 0, 0, 0]) + b"\0" * 4 + OUR + b"\x01\x00", clock=3),
    "dad_probe_frame": frame(fixed(58, 24, src=b"\0" * 16, dst=GROUP, hlim=255) +
                             bytes([135, 0, 0, 0]) + b"\0" * 4 + OUR),
    "echo": rec(2, bytes([128, 0, 0, 0, 0x12, 0x34, 0, 1]) + b"ping" * 8, clock=3),
    "echo_group": rec(2, bytes([128, 0, 0, 0, 0, 1, 0, 1]), clock=3, group=True),
    "ptb_small_mtu": rec(2, bytes([2, 0, 0, 0]) + struct.pack(">I", 1000) +
                         fixed(6, 20, src=OUR, dst=PEER) + b"\0" * 20, clock=3),
    "ptb_quote": rec(2, bytes([2, 0, 0, 0]) + struct.pack(">I", 1280) +
                     fixed(6, 20, src=OUR, dst=PEER) + struct.pack(">HHI", 119, 40000, 1) +
                     b"\0" * 12, clock=3),
    "ptb_short": rec(2, bytes([2, 0, 0, 0]) + struct.pack(">I", 1400) + b"\0" * 30, clock=3),
    "tcp_handshake_data": tcp(40000, 100, 0, 0x02, opts=bytes([2, 4, 5, 0xa0])) +
    tcp(40000, 101, 0, 0x10) + tcp(40000, 101, 0, 0x18, b"MODE STREAM\r\n"),
    "tcp_syns": b"".join(tcp(40000 + i, 7 * i, 0, 0x02) for i in range(8)),
    "tcp_rst_fin": tcp(40001, 5, 0, 0x02) + tcp(40001, 6, 0, 0x11) + tcp(40001, 6, 0, 0x04),
    "raw_short": frame(fixed(6, 40)[:30]),
    "raw_bad_version": frame(b"\x45" + fixed(6, 0)[1:]),
    "raw_plen_long": frame(fixed(6, 500) + b"\0" * 20),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d files to %s" % (len(SEEDS), OUT))


if __name__ == "__main__":
    main()
