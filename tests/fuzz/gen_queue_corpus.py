#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_queue (tests/fuzz/corpus/queue/): queue
segment images laid out as include/floodgate/queue.h tables them — sound
ones, torn ones, damaged ones — and a pair of cursor slots. Run from the
repository root; the files are committed, so this only reruns on a format
change."""
import os
import struct

OUT = "tests/fuzz/corpus/queue"


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def seg_header(number, base, recno, created=1700000000, reserved=0, version=1):
    h = b"FGQSEGMT" + struct.pack("<IIQQQQ", version, 64, number, base, recno, created)
    h += bytes([reserved]) + bytes(11)
    return h + struct.pack("<I", crc32c(h))


def record(recno, msgid, art, arrival=1700000000, peer=3, crc=None):
    fields = struct.pack("<QQIHH", recno, arrival, len(art), len(msgid), peer)
    c = crc32c(msgid + art, crc32c(fields)) if crc is None else crc
    body = struct.pack("<II", 0x52514746, c) + fields + msgid + art
    return body + bytes(-len(body) % 8)


def record_v2(recno, msgid, art, route=(), every=False, arrival=1700000000, peer=3,
              count=None):
    """Version 2: the route (downstream identifiers) after the fixed part."""
    n = len(route) if count is None else count
    fields = struct.pack("<QQIHH", recno, arrival, len(art), len(msgid), peer)
    fields += bytes([n, 1 if every else 0]) + bytes(6)
    fields += b"".join(struct.pack("<Q", r) for r in route)
    c = crc32c(msgid + art, crc32c(fields))
    body = struct.pack("<II", 0x44514746, c) + fields + msgid + art
    return body + bytes(-len(body) % 8)


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


BIN, TEXT = fnv1a64(b"binaries"), fnv1a64(b"text")

ART = (b"Path: a!b\r\nFrom: x@y.example\r\nNewsgroups: t.test\r\nSubject: s\r\n"
       b"Message-ID: <m@x>\r\nDate: Mon, 02 Mar 2026 12:00:00 +0000\r\n"
       b"Injection-Date: Mon, 02 Mar 2026 12:00:05 +0000\r\n\r\nbody\r\n..dot\r\n")


def segment(n, base=0, recno=0, reserved=0):
    out = seg_header(7, base, recno, reserved=reserved)
    for i in range(n):
        out += record(recno + i, b"<r%d@x>" % i, ART)
    return out


def slot(magic, seq, pos, recno):
    s = magic + struct.pack("<QQQQQ", seq, pos, recno, 1700000000, 0) + bytes(12)
    return s + struct.pack("<I", crc32c(s))


def main():
    os.makedirs(OUT, exist_ok=True)
    three = segment(3, base=4096, recno=100)
    files = {
        "01-three-records": three,
        "02-torn-last": three[:-40],
        "03-garbage-after": three + b"\xab" * 77,
        "04-bad-crc-middle": three[:64 + 40] + b"X" + three[64 + 41:],
        "05-header-only": seg_header(0, 0, 0),
        "06-empty-article": seg_header(1, 0, 0) + record(0, b"<a>", b""),
        "07-long-id": seg_header(2, 0, 0) + record(0, b"<" + b"i" * 247 + b"@>", ART),
        "08-recno-gap": seg_header(3, 0, 5) + record(5, b"<a@b>", ART) + record(7, b"<c@d>", ART),
        "09-bad-header": b"FGQSEGMX" + three[8:],
        "10-reseal-mode": segment(2, reserved=1)[:-3] + b"\x00\x00\x00",
        "11-reseal-big-length": seg_header(4, 0, 0, reserved=1)
        + record(0, b"<a@b>", ART)[:24] + struct.pack("<IHH", 0xFFFFFFF0, 5, 0) + b"<a@b>",
        "12-cursor-slots": slot(b"FGQCURSR", 4, 100, 1) + slot(b"FGQCURSR", 5, 200, 2),
        "13-nonzero-pad": seg_header(5, 0, 0) + record(0, b"<ab@c>", b"x")[:-1] + b"\x01",
        "14-many-small": segment(0) + b"".join(record(i, b"<%d@s>" % i, b"a\r\n" * (i % 5))
                                               for i in range(60)),
    }
    # version 2: records carry their routes
    v2 = seg_header(8, 0, 0, version=2)
    files.update({
        "15-v2-routes": v2 + record_v2(0, b"<a@b>", ART, (BIN, TEXT))
        + record_v2(1, b"<c@d>", ART, (TEXT,)) + record_v2(2, b"<e@f>", ART, ()),
        "16-v2-every": v2 + record_v2(0, b"<a@b>", ART, every=True),
        "17-v2-bad-route": v2 + record_v2(0, b"<a@b>", ART, (BIN,) * 9)
        + record_v2(1, b"<c@d>", ART, every=True, count=1),
        "18-v2-v1-record-inside": v2 + record_v2(0, b"<a@b>", ART, (BIN,))
        + record(1, b"<c@d>", ART),
        "19-v2-reseal": seg_header(9, 0, 0, reserved=1, version=2)
        + record_v2(0, b"<a@b>", ART, (BIN, TEXT, 7, 8, 9, 10, 11, 12))[:-5] + bytes(5),
        "20-v1-record-v2-segment-header": seg_header(10, 0, 0, version=1)
        + record_v2(0, b"<a@b>", ART, (TEXT,)),
    })
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
