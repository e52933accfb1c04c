#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/session/: peer streams for fuzz_session.

Each file is 4 header octets (flags, largest piece - 1, seed; see
fuzz_session.c) and then what a peer sends: real streaming and IHAVE
transcripts as innfeed writes them, and nasty ones (split and over-long
lines, binary junk, NUL, bare LF, dot-stuffing edges, mid-article ends).
Dates are around the fuzz target's fixed now (1800000000).
"""
import email.utils
import os
import random

NOW = 1800000000
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "session")


def date(age):
    return email.utils.formatdate(NOW - age, usegmt=True).encode()


def article(mid, hdr_mid=None, age=120, inj_age=60, body=b"Hello.\r\n", extra=b"",
            stuff=True):
    h = (b"Path: peer.example!not-for-mail\r\nFrom: a@example.com\r\n"
         b"Newsgroups: test.fuzz\r\nSubject: fuzz\r\n"
         b"Message-ID: " + (hdr_mid or mid) + b"\r\nDate: " + date(age) + b"\r\n")
    if inj_age is not None:
        h += b"Injection-Date: " + date(inj_age) + b"\r\n"
    h += extra + b"\r\n"
    lines = body.split(b"\r\n")
    if stuff:
        lines = [b"." + l if l.startswith(b".") else l for l in lines]
    return h + b"\r\n".join(lines) + b".\r\n"


def takethis(mid, art):
    return b"TAKETHIS " + mid + b"\r\n" + art


def write(name, flags, maxseg, seed, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([flags, maxseg, seed >> 8, seed & 255]) + data)


def main():
    os.makedirs(OUT, exist_ok=True)
    r = random.Random(7)
    ids = [b"<f%d@fuzz.example>" % i for i in range(12)]
    stream = b"MODE STREAM\r\n"
    for i, m in enumerate(ids[:6]):
        stream += b"CHECK " + m + b"\r\n" + takethis(m, article(m))
    stream += b"CHECK " + ids[0] + b"\r\nQUIT\r\n"
    write("01-streaming", 0, 255, 1, stream)
    write("02-streaming-bytes", 2, 0, 2, stream)
    write("03-streaming-holds-delay", 3, 40, 3, stream)
    write("04-failing-sink", 4 | 2, 200, 4, stream)
    write("05-journal-full-slow-reader", 8 | 16, 30, 5, stream)
    write("06-two-sessions", 32 | 2, 90, 6, stream)
    ihave = b""
    for m in ids[6:9]:
        ihave += b"IHAVE " + m + b"\r\n" + article(m)
    ihave += b"IHAVE " + ids[6] + b"\r\nIHAVE bogus\r\nQUIT\r\n"
    write("07-ihave", 0, 64, 7, ihave)
    write("08-ihave-drop", 64 | 1, 17, 8, ihave[: len(ihave) // 2])
    nasty = b"CAPABILITIES\r\nHELP\r\nMODE READER?\r\nmode stream\n"
    nasty += b"CHECK " + b"x" * 700 + b"\r\n"
    nasty += b"TAKETHIS <" + b"y" * 600 + b">\r\n" + article(b"<long@fuzz.example>")
    nasty += b"CHECK <nul\0byte@x>\r\nCHECK <cr\r@x>\r\n\r\n\t \r\n"
    nasty += b"TAKETHIS\r\n" + article(b"<noarg@fuzz.example>")
    nasty += b"TAKETHIS junk-id\r\n" + article(b"<junk@fuzz.example>")
    nasty += takethis(b"<dots@fuzz.example>", article(
        b"<dots@fuzz.example>", body=b".\r\n..\r\n. x\r\n.\r\r\nbare\nlf\r\n\0nul\r\n"))
    nasty += takethis(b"<mismatch@fuzz.example>", article(b"<mismatch@fuzz.example>",
                                                          hdr_mid=b"<other@fuzz.example>"))
    nasty += takethis(b"<old@fuzz.example>", article(b"<old@fuzz.example>", age=30 * 86400,
                                                     inj_age=30 * 86400))
    nasty += takethis(b"<future@fuzz.example>", article(b"<future@fuzz.example>",
                                                        age=-3 * 86400, inj_age=-3 * 86400))
    nasty += takethis(b"<big@fuzz.example>", article(b"<big@fuzz.example>",
                                                     body=(b"z" * 70 + b"\r\n") * 400))
    nasty += takethis(b"<sup@fuzz.example>", article(
        b"<sup@fuzz.example>", extra=b"Supersedes: <f1@fuzz.example>\r\n"))
    nasty += takethis(b"<faq$v=2$a@fuzz.example>", article(b"<faq$v=2$a@fuzz.example>"))
    nasty += b"CHECK <faq$v=1$b@fuzz.example>\r\n"
    nasty += b"TAKETHIS <empty@fuzz.example>\r\n.\r\n"
    nasty += b"TAKETHIS <hdronly@fuzz.example>\r\nMessage-ID: <hdronly@fuzz.example>\r\n.\r\n"
    nasty += b"TAKETHIS <unterminated@fuzz.example>\r\n" + article(
        b"<unterminated@fuzz.example>")[:-5]
    write("10-nasty", 0, 255, 10, nasty)
    write("11-nasty-bytes", 1, 0, 11, nasty)
    write("12-nasty-everything", 1 | 2 | 4 | 8 | 16 | 32, 13, 12, nasty)
    junk = bytes(r.getrandbits(8) for _ in range(3000))
    write("13-binary-junk", 0, 100, 13, junk + b"\r\nQUIT\r\n")
    pipe = b"".join(b"CHECK <p%d@fuzz.example>\r\n" % i for i in range(80))
    write("14-pipelined-checks-slow-reader", 16, 255, 14, pipe)
    write("15-sink-full", 128, 255, 15, stream)
    hdr = b"X-Long: " + b"h" * 20000 + b"\r\n"
    write("16-long-header-line", 0, 255, 16,
          takethis(b"<lh@fuzz.example>", article(b"<lh@fuzz.example>", extra=hdr)))
    many = b"".join(b"X-F%d: v\r\n" % i for i in range(400))
    write("17-many-fields", 0, 255, 17,
          takethis(b"<mf@fuzz.example>", article(b"<mf@fuzz.example>", extra=many)))
    # AUTHINFO (RFC 4643): seed bit 15 puts the session on the peer with
    # credentials (fuzz-user / "fuzz pass"); innfeed's order first
    auth = b"AUTHINFO USER fuzz-user\r\nAUTHINFO PASS fuzz pass\r\n"
    write("20-auth-innfeed", 2, 60, 0x8000 | 20, auth + stream)
    refused = b"CAPABILITIES\r\nCHECK " + ids[0] + b"\r\n" + takethis(ids[1], article(ids[1]))
    refused += b"IHAVE " + ids[2] + b"\r\nMODE STREAM\r\nAUTHINFO PASS fuzz pass\r\n"
    refused += b"AUTHINFO\r\nAUTHINFO USER\r\nAUTHINFO SASL PLAIN\r\nauthinfo user fuzz-user\r\n"
    refused += b"AUTHINFO PASS fuzz  pass\r\nAUTHINFO USER " + b"u" * 300 + b"\r\n"
    refused += b"AUTHINFO PASS fuzz pass\r\nAUTHINFO USER fuzz-user\r\nAUTHINFO PASS x\r\n"
    refused += stream
    write("21-auth-refused-closes", 0, 255, 0x8000 | 21, refused)
    retry = b"AUTHINFO USER fuzz-user\r\nAUTHINFO PASS fuzz pas\r\nCHECK " + ids[3] + b"\r\n"
    retry += b"AUTHINFO USER fuzz-user\r\nAUTHINFO PASS fuzz pass\r\nAUTHINFO USER again\r\n"
    retry += b"AUTHINFO PASS " + b"p" * 700 + b"\r\nAUTHINFO PASS a\0b\r\n" + stream
    write("22-auth-retry-slow-reader", 16 | 1, 7, 0x8000 | 22, retry)
    write("23-auth-not-needed", 0, 255, 23, auth + b"AUTHINFO PASS x\r\n" + stream)


if __name__ == "__main__":
    main()
