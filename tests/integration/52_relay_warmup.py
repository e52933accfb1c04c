#!/usr/bin/env python3
# timeout: 300
"""52_relay_warmup — warm-up after a cold start, against INN's innd: innd
already holds articles; floodgate-host starts with an empty history; a
CHECK of an article innd holds gets 438 (innd's answer, and the ID is then
in the filter's history: its TAKETHIS gets 439 without a question), a new
one gets 238. Warm-up ends with its period (a later CHECK of an article
innd holds gets 238 from the filter's own empty history), and `warmup 0`
switches it off."""
import os
import socket
import time

import fgkit
import hostlib
import relaykit
from hostlib import check

relaykit.in_netns()

INND_PORT = 11191
PERIOD = 5              # seconds of the short warm-up period


def preload(ids):
    """Give innd these articles directly (TAKETHIS on its own port)."""
    s = socket.create_connection(("127.0.0.1", INND_PORT), timeout=30)
    f = s.makefile("rb")
    check(f.readline().startswith(b"200"), "innd greets")
    s.sendall(b"MODE STREAM\r\n")
    check(f.readline().startswith(b"203"), "innd streams")
    for mid in ids:
        s.sendall(b"TAKETHIS " + mid.encode() + b"\r\n" +
                  hostlib.article(mid, groups="fg.test.text"))
    for mid in ids:
        got = f.readline()
        check(got.startswith(b"239 " + mid.encode()), "innd took %s: %r" % (mid, got))
    s.sendall(b"QUIT\r\n")
    s.close()


def checks(ids):
    """CHECK each on the filter; [(code, mid)]."""
    c = hostlib.Client(timeout=30)
    check(c.line().startswith(b"200"), "greeting")
    c.send("".join("CHECK %s\r\n" % m for m in ids))
    out = []
    for m in ids:
        parts = c.line().decode().split()
        check(len(parts) == 2 and parts[1] == m, "answer for %s: %r" % (m, parts))
        out.append((int(parts[0]), m))
    c.send("QUIT\r\n")
    c.close()
    return out


def main():
    work = fgkit.mkdtemp("fg-relay-52-")
    hostlib.KEEP.append(work)
    relaykit.with_innd(work, INND_PORT, run)


def start(work, name, persistence=""):
    return hostlib.Host(extra=relaykit.host_config(os.path.join(work, name),
                                                   down_port=INND_PORT,
                                                   persistence=persistence))


def run(work, innd_dir):
    held = ["<held%d@warm.test>" % i for i in range(40)]
    new = ["<new%d@warm.test>" % i for i in range(20)]
    preload(held)

    # a cold start: warm-up on for the cutoff (the default)
    host = start(work, "d1")
    st = host.stats()
    check(st.get("warmup_active") == 1, "warm-up is on after a cold start")
    # until the asking connection is up, questions get no answer (238)
    host.wait_stats(lambda st: st.get("relay_connects", 0) >= 2,
                    "the feeding and the asking connection to be up")
    got = dict((m, c) for c, m in checks(held[:30] + new))
    check(all(got[m] == 438 for m in held[:30]), "innd's articles get 438: %s" % got)
    check(all(got[m] == 238 for m in new), "new articles get 238: %s" % got)
    # the 438 was remembered: TAKETHIS of one is a duplicate, no question asked
    answers = relaykit.feed([(held[0], hostlib.article(held[0], groups="fg.test.text"))])
    check(answers == [(held[0], 439)], "a warm-up 438 is in history: %s" % answers)
    st = host.stats()
    check(st["nntp_warmup_have"] == 30, "30 recorded from innd: %d" % st["nntp_warmup_have"])
    check(st["nntp_warmup_wanted"] >= 20, "20 wanted: %d" % st["nntp_warmup_wanted"])
    check(st["relay_asked"] >= 50, "asked innd: %d" % st["relay_asked"])
    host.stop()

    # a short period: on at first, off once it has passed. The first look
    # must come inside the period, which is long enough for a slow start
    t0 = time.time()
    host = start(work, "d2", "warmup %ds\n" % PERIOD)
    st = host.stats()
    check(st.get("warmup_active") == 1, "on at the start of the period (the host took "
          "%.1f s to start and answer; the period is %d s)" % (time.time() - t0, PERIOD))
    # the period's end, seen by the host itself, not by a sleep of ours
    host.wait_stats(lambda st: st.get("warmup_active") == 0, "the warm-up period to end",
                    timeout=PERIOD + 60)
    got = checks(held[30:35])
    check(all(c == 238 for c, _ in got), "after the period the filter answers alone: %s" % got)
    check(host.stats().get("nntp_warmup_asked", 0) == 0, "nothing asked after the period")
    host.stop()

    # switched off
    host = start(work, "d3", "warmup 0\n")
    st = host.stats()
    check(st.get("warmup_active") == 0, "warmup 0: off")
    got = checks(held[35:40])
    check(all(c == 238 for c, _ in got), "warm-up off: %s" % got)
    host.stop()
    print("PASS: 52_relay_warmup")


main()
