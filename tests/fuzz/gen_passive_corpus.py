#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_passive_corpus.py — writes tests/fuzz/corpus/passive/ (the record
format is in fuzz_passive.c): whole streams in order, out of order, with
retransmissions, resets from both sides, a tagged flow, a stream without
its SYN, a hole, a flow lingering after its session ended, an overflowing
out-of-order list, raw garbage frames; and for shadow mode the server's
half: its answers in order and split, before and after the decisions, a
hole and a retransmission in it, IHAVE's answers, a half without its SYN,
answer lines too long or malformed. Run it again after changing the
format; the files are committed."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "passive")
SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10


def rec(kind, flow, off, flags, payload=b"", clock=0, csum_ok=False):
    body = struct.pack(">IB", off & 0xffffffff, flags) + payload
    op = (clock & 7) | (kind << 3) | ((flow & 3) << 5) | (0x80 if csum_ok else 0)
    return struct.pack(">BH", op, len(body)) + body


def raw(frame):
    return struct.pack(">BH", 0, len(frame)) + frame


def article(mid):
    return ("TAKETHIS %s\r\nPath: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.est\r\n"
            "Subject: s\r\nMessage-ID: %s\r\nDate: Mon, 21 Sep 2026 10:00:00 +0000\r\n\r\n"
            "body\r\n..stuffed\r\n.\r\n" % (mid, mid)).encode()


def stream(flow, text, kind=1, seg=200, start=1):
    out, off = [], start
    for i in range(0, len(text), seg):
        out.append(rec(kind, flow, off, ACK | PSH, text[i:i + seg]))
        off += len(text[i:i + seg])
    return out, off


def write(name, recs):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b"".join(recs))


def main():
    os.makedirs(OUT, exist_ok=True)
    feed = b"MODE STREAM\r\nCHECK <a@t>\r\nCHECK <b@t>\r\n" + article("<a@t>") + b"QUIT\r\n"
    segs, end = stream(0, feed)
    write("in_order", [rec(1, 0, 0, SYN)] + segs + [rec(1, 0, end, FIN | ACK)])
    write("reversed", [rec(1, 1, 0, SYN)] + segs[::-1] + [rec(1, 1, end, FIN | ACK)])
    dup = [rec(1, 2, 0, SYN)]
    for s in segs:
        dup += [s, s]
    write("retransmitted", dup)
    write("client_rst", [rec(1, 0, 0, SYN)] + segs[:2] + [rec(1, 0, 50, RST)] + segs[2:])
    write("server_rst", [rec(1, 3, 0, SYN)] + segs[:1] + [rec(2, 3, 9, RST)] + segs[1:])
    tagged, tend = stream(1, feed, kind=3)
    write("tagged", [rec(3, 1, 0, SYN)] + tagged + [rec(3, 1, tend, FIN | ACK, csum_ok=True)])
    write("midstream", segs[1:])
    write("hole", [rec(1, 2, 0, SYN)] + segs[:1] + segs[2:] + [rec(1, 2, end, FIN | ACK)])
    write("slow_clock", [rec(1, 0, 0, SYN, clock=7)] + [rec(1, 0, 1, ACK, b"CHECK <c@t>\r\n",
                                                          clock=7) for _ in range(3)])
    write("port_reuse", [rec(1, 0, 0, SYN)] + segs[:2] + [rec(1, 0, 9999, SYN)] + segs)
    # the session ends at QUIT: the client's last octets and its FIN go to
    # the lingering flow, then a new SYN on the same ports starts again
    write("linger", [rec(1, 0, 0, SYN)] + segs + [rec(1, 0, end, ACK | PSH, b"CHECK <z@t>\r\n"),
                                                rec(1, 0, end + 13, FIN | ACK),
                                                rec(1, 0, 70000, SYN)] + segs[:2])
    # more segments ahead of a hole than the out-of-order list holds (16)
    ahead = [rec(1, 1, 1000 + 10 * i, ACK, b"CHECK <%d>" % i) for i in range(20)]
    write("ooo_overflow", [rec(1, 1, 0, SYN)] + segs[:1] + ahead + segs[1:])
    shadow(segs, end)
    eth = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01"
    write("garbage", [raw(eth + b"\x08\x06" + b"\x00" * 28), raw(eth + b"\x08\x00\x45"),
                      raw(eth + b"\x08\x00\x4f" + b"\xff" * 60), raw(b"\x01" * 10),
                      raw(eth + b"\x86\xdd" + b"\x60" * 40)])


def shadow(segs, end):
    """The server's half (kind 2) of flow 0's exchange, as shadow mode
    follows it: its SYN at offset 0, then its answers."""
    answers = b"200 ready\r\n203 ok\r\n238 <a@t>\r\n438 <b@t>\r\n239 <a@t>\r\n205 bye\r\n"
    srv, send = stream(0, answers, kind=2, seg=7)
    both = [rec(1, 0, 0, SYN), rec(2, 0, 0, SYN | ACK)]
    mixed = []
    for i in range(max(len(segs), len(srv))):
        mixed += segs[i:i + 1] + srv[i:i + 1]
    write("shadow_exchange", both + mixed + [rec(1, 0, end, FIN | ACK), rec(2, 0, send, FIN | ACK),
                                             rec(2, 0, send + 1, ACK)])
    # the answers before the commands they answer, and retransmitted
    write("shadow_early", both + srv + srv[:3] + segs + [rec(1, 0, end, FIN | ACK)])
    # a hole in the server's half, then the rest
    write("shadow_hole", both + segs + srv[:2] + srv[4:])
    # no SYN of the server's half: nothing to cut into lines
    write("shadow_unanchored", [rec(1, 0, 0, SYN)] + segs + srv)
    ihave = b"IHAVE <i@t>\r\n" + article("<i@t>")[len(b"TAKETHIS <i@t>\r\n"):] + \
        b"IHAVE <j@t>\r\nQUIT\r\n"
    isegs, iend = stream(1, ihave)
    isrv, _ = stream(1, b"200 ok\r\n335 send\r\n235 ok\r\n435 no\r\n205 bye\r\n", kind=2)
    write("shadow_ihave", [rec(1, 1, 0, SYN), rec(2, 1, 0, SYN | ACK)] + isegs + isrv)
    junk, _ = stream(2, b"238\r\n238 \r\n2x8 <a@t>\r\n" + b"4" * 700 + b"\r\n431 <" +
                     b"q" * 300 + b">\r\n", kind=2)
    write("shadow_malformed", [rec(1, 2, 0, SYN), rec(2, 2, 0, SYN | ACK)] + junk)


if __name__ == "__main__":
    main()
