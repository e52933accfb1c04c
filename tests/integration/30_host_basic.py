#!/usr/bin/env python3
# timeout: 300
"""floodgate-host over real sockets, driven by a stdlib client.

Inside its own network namespace: greeting and 502 for a non-peer, the
simple commands, a pipelined streaming feed (CHECK then TAKETHIS, answers
in order), IHAVE, duplicates and invalid IDs, a command sent one byte at a
time, two connections racing on the same IDs, a client that stops reading
(the host stops reading too: bounded memory), the counters against what
was sent, and a clean SIGTERM (400 to open sessions, offers released).
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (GREETING, Client, Host, article, check, in_netns)  # noqa: E402

in_netns()


def simple_commands():
    c = Client()
    c.expect(GREETING)
    c.send("CAPABILITIES\r\n")
    check(c.lines(6) == [b"101 Capability list:\r\n", b"VERSION 2\r\n", b"IHAVE\r\n",
                         b"STREAMING\r\n", b"IMPLEMENTATION floodgate 0.1\r\n", b".\r\n"],
          "CAPABILITIES")
    c.send("HELP\r\nMODE STREAM\r\nMODE STREAM x\r\nLIST\r\nCHECK\r\n")
    help_ = c.lines(10)
    check(help_[0] == b"100 Help text follows\r\n" and help_[-1] == b".\r\n", "HELP")
    c.expect("203 Streaming permitted\r\n")
    c.expect("501 Syntax error\r\n")
    c.expect("500 Unknown command\r\n")
    c.expect("501 Syntax error\r\n")
    c.send("QUIT\r\n")
    c.expect("205 Bye\r\n")
    check(c.eof(), "QUIT closes")
    c.close()
    # RFC-NOTES: a host that is not a configured peer gets 502 and is closed
    n = Client(src="127.0.0.2")
    n.expect("502 Not a configured peer of this transit-only server\r\n")
    check(n.eof(), "502 closes")
    n.close()


def streaming(n_art):
    c = Client()
    c.expect(GREETING)
    ids = ["<s%d@host.test>" % i for i in range(n_art)]
    c.send("MODE STREAM\r\n" + "".join("CHECK %s\r\n" % i for i in ids))
    c.expect("203 Streaming permitted\r\n")
    for i in ids:
        c.expect("238 %s\r\n" % i)
    # pipelined TAKETHIS from a writer thread while this one reads
    data = b"".join(b"TAKETHIS " + i.encode() + b"\r\n" + article(i) for i in ids)
    w = threading.Thread(target=c.send, args=(data,))
    w.start()
    for i in ids:
        c.expect("239 %s\r\n" % i)
    w.join()
    # now every one is known
    c.send("".join("CHECK %s\r\n" % i for i in ids[:20]))
    for i in ids[:20]:
        c.expect("438 %s\r\n" % i)
    c.send(b"TAKETHIS " + ids[0].encode() + b"\r\n" + article(ids[0]))
    c.expect("439 %s\r\n" % ids[0])
    # invalid IDs are echoed; the article is read to its end first
    c.send(b"CHECK bogus\r\nTAKETHIS bogus2\r\n" + article("<x@host.test>") + b"MODE STREAM\r\n")
    c.expect("438 bogus\r\n")
    c.expect("439 bogus2\r\n")
    c.expect("203 Streaming permitted\r\n")
    # the article's Message-ID must be the command's; not remembered
    c.send(b"TAKETHIS <m1@host.test>\r\n" + article("<m1@host.test>", hdr_mid="<m2@host.test>"))
    c.expect("439 <m1@host.test>\r\n")
    c.send("CHECK <m1@host.test>\r\n")
    c.expect("238 <m1@host.test>\r\n")
    # a poisoned group of the peer's pattern, too old, too new
    c.send(b"TAKETHIS <j@host.test>\r\n" + article("<j@host.test>", groups="junk.x"))
    c.send(b"TAKETHIS <o@host.test>\r\n" + article("<o@host.test>", age=20 * 86400,
                                                     inj_age=20 * 86400))
    c.send(b"TAKETHIS <f@host.test>\r\n" + article("<f@host.test>", age=-3 * 86400,
                                                     inj_age=-3 * 86400))
    for i in ("<j@host.test>", "<o@host.test>", "<f@host.test>"):
        c.expect("439 %s\r\n" % i)
    c.send("CHECK <o@host.test>\r\nCHECK <f@host.test>\r\nQUIT\r\n")
    c.expect("438 <o@host.test>\r\n")     # remembered: a fact of the article
    c.expect("238 <f@host.test>\r\n")     # not remembered: time cures it
    c.expect("205 Bye\r\n")
    c.close()


def ihave():
    c = Client()
    c.expect(GREETING)
    c.send("IHAVE <i1@host.test>\r\n")
    c.expect("335 Send it; end with <CR-LF>.<CR-LF>\r\n")
    c.send(article("<i1@host.test>"))
    c.expect("235 Article transferred OK\r\n")
    c.send("IHAVE <i1@host.test>\r\nIHAVE nonsense\r\nIHAVE <i2@host.test>\r\n")
    c.expect("435 Article not wanted\r\n")
    c.expect("501 Syntax error\r\n")
    c.expect("335 Send it; end with <CR-LF>.<CR-LF>\r\n")
    c.send(article("<i2@host.test>", age=30 * 86400, inj_age=30 * 86400))
    c.expect("437 Rejected: too-old\r\n")
    c.close()


def byte_by_byte():
    c = Client()
    c.expect(GREETING)
    def dribble(data):
        for i in range(len(data)):
            c.send(data[i:i + 1])
            if i % 97 == 0:
                time.sleep(0.001)

    dribble(b"TAKETHIS <b@host.test>\r\n" + article("<b@host.test>"))
    c.expect("239 <b@host.test>\r\n")
    dribble(b"CHECK <b@host.test>\n")
    c.expect("438 <b@host.test>\r\n")      # a bare LF ends a command too
    c.close()


def race():
    ids = ["<r%d@host.test>" % i for i in range(150)]
    data = b"".join(b"TAKETHIS " + i.encode() + b"\r\n" + article(i) for i in ids)
    outs = [[], []]

    def peer(k):
        c = Client()
        c.expect(GREETING)
        w = threading.Thread(target=c.send, args=(data,))
        w.start()
        outs[k] = c.lines(len(ids))
        w.join()
        c.close()

    ts = [threading.Thread(target=peer, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for n, i in enumerate(ids):
        got = sorted([outs[0][n], outs[1][n]])
        check(got == sorted([("239 %s\r\n" % i).encode(), ("439 %s\r\n" % i).encode()]),
              "race on %s: %r" % (i, got))


def slow_reader(host):
    """The client stops reading: the host stops reading, memory stays flat."""
    c = Client(timeout=60, rcvbuf=16384)
    c.expect(GREETING)
    n = 200000
    # IDs accepted earlier: 438 each, so the table does not fill with offers
    data = "".join("CHECK <s%d@host.test>\r\n" % (i % 300) for i in range(n)).encode()
    rss0 = host.rss_kb()
    sent = [0]

    def writer():
        c.s.sendall(data)
        sent[0] = 1

    w = threading.Thread(target=writer)
    w.start()
    # the host stops reading once its answers back up (the condition, with a
    # deadline only as the failure bound); memory is measured after that
    host.wait_stats(lambda st: st["nntp_stall_responses"] >= 1, "the host to stop reading")
    rss1 = host.rss_kb()
    check(rss1 - rss0 < 20000, "memory grew by %d kB while the peer did not read" % (rss1 - rss0))
    for i in range(n):
        got = c.line()
        if got != ("438 <s%d@host.test>\r\n" % (i % 300)).encode():
            check(False, "slow reader answer %d: %r" % (i, got))
    w.join()
    c.close()


def main():
    host = Host()
    simple_commands()
    streaming(300)
    ihave()
    byte_by_byte()
    race()
    slow_reader(host)
    st = host.stats()
    check(st["nntp_response:239"] == 300 + 1 + 150, "239 count %d" % st["nntp_response:239"])
    check(st["nntp_response:235"] == 1, "235 count")
    check(st["nntp_sessions_not_peer"] == 1, "502 count")
    # 20 re-CHECKs, a TAKETHIS, the race's losers, IHAVE, the bare-LF CHECK,
    # the remembered too-old one, the slow reader's
    check(st["rejected:duplicate"] == 20 + 1 + 150 + 1 + 1 + 1 + 200000,
          "duplicates %d" % st["rejected:duplicate"])
    check(st["rejected:message-id-mismatch"] == 1, "mismatch")
    check(st["rejected:too-old"] == 2, "too-old")
    check(st["rejected:too-far-future"] == 1, "too-far-future")
    check(st["rejected:unwanted-newsgroup"] == 1, "unwanted-newsgroup")
    check(st["rejected:bad-message-id"] == 2, "bad-message-id")
    check(st["nntp_bare_lf"] == 1, "bare LF")
    check(st["peer:local:nntp_response:239"] == st["nntp_response:239"], "per-peer counters")
    check(st["history_state:accepted"] == 300 + 1 + 1 + 150, "history accepted %d" %
          st["history_state:accepted"])
    # SIGTERM with a session open: 400, then a clean exit; offers released
    c = Client()
    c.expect(GREETING)
    c.send("CHECK <last@host.test>\r\n")
    c.expect("238 <last@host.test>\r\n")
    final = host.stop()
    c.expect("400 Server shutting down, try again later\r\n")
    check(c.eof(), "closed at shutdown")
    check(final["history_state:offered"] == 0, "offers released at shutdown")
    check(final["transfers_open"] == 0 and final["sessions_open"] == 0, "nothing left open")

    # a failing, slow sink: answers stay in order; 400 and close (RFC 4644 2.5.2)
    host = Host(args=["--sink-delay-ms", "30", "--sink-fail-match", "fail"])
    c = Client()
    c.expect(GREETING)
    c.send(b"TAKETHIS <ok1@host.test>\r\n" + article("<ok1@host.test>") +
           b"CHECK <c1@host.test>\r\nTAKETHIS <fail1@host.test>\r\n" +
           article("<fail1@host.test>") + b"CHECK <c2@host.test>\r\n")
    c.expect("239 <ok1@host.test>\r\n")
    c.expect("238 <c1@host.test>\r\n")
    c.expect("400 Article could not be stored, try again later\r\n")
    check(c.eof(), "400 closes")
    c = Client()
    c.expect(GREETING)
    c.send("CHECK <fail1@host.test>\r\nCHECK <c2@host.test>\r\nIHAVE <fail2@host.test>\r\n")
    c.expect("238 <fail1@host.test>\r\n")   # released: the peer may retry
    c.expect("238 <c2@host.test>\r\n")      # the closed session's offer was released
    c.expect("335 Send it; end with <CR-LF>.<CR-LF>\r\n")
    c.send(article("<fail2@host.test>") + b"QUIT\r\n")
    c.expect("436 Transfer failed, try again later\r\n")
    c.expect("205 Bye\r\n")
    c.close()
    final = host.stop()
    check(final["nntp_articles_failed"] == 2, "failed articles %d" % final["nntp_articles_failed"])
    check(final["history_state:accepting"] == 0, "no ACCEPTING entry left")
    print("PASS: 30_host_basic")


main()
