#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""75_dp_reload_sessions — `floodctl reload` on the DPDK dataplane keeps
the sessions it does not concern (docs/dataplane.md, "Reload").

Two workers; two feeds (feeder-a, feeder-b) stream TAKETHIS on one
connection each through every reload, every answer checked (239 each,
never a 400), on the same connections at the end. Meanwhile:

1. feeder-c, not a peer at the start (502), is added, and feeder-b's
   max-connections lowered to 2: feeder-c is greeted, feeder-b's feed
   stays, one more of its connections is let in, the next refused.
2. feeder-c is removed: its idle session is answered 400 and closed at
   once; its session in the middle of an article drains: the article is
   accepted (239), the CHECK sent behind it deferred (431), then 400 and
   close.
3. A listen port is added (port 120: a connection to it is greeted), then
   removed: the session on it is answered 400 and closed, a new
   connection to port 120 is refused (RST), the feeds on 119 go on.
4. A port address is added with a listen endpoint on it (a connection to
   it is greeted), then both removed: the session on it is answered 400
   and closed, new connections to it are refused while it leaves.
5. A file that changes the worker count, adds an IPv6 port address, and
   lifts feeder-b's limit is refused whole: each named "needs a restart",
   floodctl exits non-zero, and the limit still holds. So is a file that
   listens on an address that is not the port's (as floodgate would not
   start with it).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

A, B, C = "198.18.0.1", "198.18.0.3", "198.18.0.4"
PEER_C = "[peer feeder-c]\naddress %s\n" % C
PEER_B = "[peer feeder-b]\naddress %s\n" % B
NOT_PEER = "502 Not a configured peer of this transit-only server"
PEER_GONE = "400 No longer a configured peer, closing"
TOO_MANY = "400 Too many connections from this peer, try again later"
ADDR_GONE = "400 This address is no longer served, try another"
DP = fgdp.DP_ADDR
LISTEN = "listen %s:119\n" % DP
NINE = "198.18.0.9"


def at_eof(r):
    """The server closed the connection (nothing more but its end)."""
    try:
        return r.line() is None
    except EOFError:
        return True


def port_refused(port, dst=fgdp.DP_ADDR, timeout=5):
    """True: refused (RST); False: connected; None: no answer at all."""
    try:
        fgdp.connect(A, timeout=timeout, port=port, dst=dst).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return None
    return False


def session(src, port=119, dst=fgdp.DP_ADDR):
    s = fgdp.connect(src, timeout=20, port=port, dst=dst)
    r = fgdp.Lines(s)
    return s, r, r.line()


def greeted(src, port=119, dst=fgdp.DP_ADDR):
    s, r, first = session(src, port, dst)
    check(first.startswith("200 "), "%s greeted: %r" % (src, first))
    return s, r


def closed_with(src, want, what):
    s, r, first = session(src)
    check(first == want and at_eof(r), "%s: %r" % (what, first))
    s.close()


def reload(w, feeds, edit, what, ok=True):
    """floodctl reload of the running file edited; the feeds go on."""
    with open(w.conf) as f:
        text = f.read()
    path = os.path.join(w.dir, "reload-%d.conf" % len(os.listdir(w.dir)))
    with open(path, "w") as f:
        f.write(edit(text))
    rc, out, err = w.ctl("reload", path)
    body = out + err
    if ok:
        check(rc == 0 and "2 workers switched" in body, "%s: exit %d %s" % (what, rc, body))
        with open(w.conf, "w") as f:
            f.write(edit(text))
    else:
        check(rc != 0 and "nothing applied" in body, "%s not refused: %s" % (what, body))
    for f in feeds:
        f.moving(what)
    return body


def main():
    w = fgdp.World("rlds", workers=2, rx_queues=2)
    with open(w.conf) as f:
        text = f.read()
    check(PEER_C in text and LISTEN in text, "the world's config: feeder-c, the listen line")
    with open(w.conf, "w") as f:
        f.write(text.replace(PEER_C, ""))
    w.start_ctld()
    w.start_dp()
    w.wait_tcp()
    feeds = [fgdp.Feed(A, "a"), fgdp.Feed(B, "b")]
    for f in feeds:
        f.start()
    for f in feeds:
        f.moving("the start")

    # 1. a peer added, a limit lowered
    closed_with(C, NOT_PEER, "feeder-c before it is a peer")
    reload(w, feeds, lambda t: t.replace(PEER_B, PEER_B + "max-connections 2\n") + PEER_C,
           "adding feeder-c, feeder-b's limit")
    s, r = greeted(C)
    s.sendall(b"CHECK <c1@rlds.test>\r\n")
    check(r.line() == "238 <c1@rlds.test>", "feeder-c offers")
    s.close()
    b2, _ = greeted(B)
    closed_with(B, TOO_MANY, "feeder-b's third connection")
    log("feeder-c added and greeted; feeder-b at 2 connections: its feed and one more")

    # 2. a peer removed: its sessions drain and close
    idle, idle_r = greeted(C)
    busy, busy_r = greeted(C)
    mid = "<c2.%d@rlds.test>" % os.getpid()
    art = b"TAKETHIS " + mid.encode() + b"\r\n" + fgdp.article(mid, body=700)
    cut = art.index(b"\r\n\r\n")
    busy.sendall(art[:cut])
    st0 = w.stats()
    reload(w, feeds, lambda t: t.replace(PEER_C, ""), "removing feeder-c")
    check(idle_r.line() == PEER_GONE and at_eof(idle_r), "feeder-c's idle session closed")
    w.wait_stats(lambda st: st["nntp_sessions_retired"] - st0["nntp_sessions_retired"] == 2,
                 "both of feeder-c's sessions draining")
    busy.sendall(art[cut:] + b"CHECK <c3@rlds.test>\r\n")
    got = [busy_r.line() for _ in range(3)]
    check(got == ["239 " + mid, "431 <c3@rlds.test>", PEER_GONE] and at_eof(busy_r),
          "the article in flight taken, the CHECK deferred, then 400 and close: %r" % got)
    for s in (idle, busy):
        s.close()
    closed_with(C, NOT_PEER, "feeder-c after its removal")
    log("feeder-c removed: its idle session closed, the busy one drained (239, 431, 400)")

    # 3. a listen port added, then removed
    check(port_refused(120), "port 120 not listened on yet")
    reload(w, feeds, lambda t: t.replace(LISTEN, LISTEN.rstrip("\n") + " %s:120\n" % DP),
           "listening on port 120")
    s, r = greeted(A, port=120)
    s.sendall(b"CHECK <p1@rlds.test>\r\n")
    check(r.line() == "238 <p1@rlds.test>", "served on port 120")
    reload(w, feeds, lambda t: t.replace(" %s:120" % DP, ""), "no longer on port 120")
    check(r.line() == ADDR_GONE and at_eof(r), "the session on port 120: 400 and closed")
    s.close()
    check(port_refused(120), "port 120 refused again")
    log("port 120 listened on and served, then removed: its session 400 and closed")

    # 4. a port address added (listened on), then removed
    with_9 = (lambda t: t.replace("address %s/24" % DP, "address %s/24 %s/24" % (DP, NINE))
              .replace(LISTEN, LISTEN.rstrip("\n") + " %s:119\n" % NINE))
    check(port_refused(119, NINE, timeout=2) is None, "%s not the dataplane's yet" % NINE)
    reload(w, feeds, with_9, "a new port address")
    # the probe above left the kernel a failed neighbour entry for it
    subprocess.run(["ip", "neigh", "flush", "to", NINE], check=True)
    s, r = greeted(A, dst=NINE)
    s.sendall(b"CHECK <n1@rlds.test>\r\n")
    check(r.line() == "238 <n1@rlds.test>", "served on %s" % NINE)
    reload(w, feeds, lambda t: t.replace(" %s/24" % NINE, "").replace(" %s:119" % NINE, ""),
           "the port address removed")
    check(r.line() == ADDR_GONE and at_eof(r), "the session on %s: 400 and closed" % NINE)
    s.close()
    check(port_refused(119, NINE), "%s refuses new connections while it leaves" % NINE)
    log("%s added to the port and served, removed: its session 400 and closed" % NINE)

    # 5. what needs a restart refuses the whole file
    body = reload(w, feeds, lambda t: t.replace("workers 2\nrx-queues 2", "workers 3\nrx-queues 3")
                  .replace("address %s/24" % DP, "address %s/24 fd00:fd::2/64" % DP)
                  .replace("max-connections 2\n", ""), "a restart key", ok=False)
    for key in ("[dataplane] workers", "[dataplane] rx-queues", "[dataplane] address (IPv6)"):
        check(key + " needs a restart" in body, "%s named: %s" % (key, body))
    closed_with(B, TOO_MANY, "feeder-b's limit kept after the refused file")
    # a listen address the port never receives: refused as at start
    body = reload(w, feeds, lambda t: t.replace(LISTEN, LISTEN.rstrip("\n") + " 198.18.0.7:119\n"),
                  "a listen address not the port's", ok=False)
    check("198.18.0.7" in body, "the endpoint named: %s" % body)
    log("workers and address changed, a listen address not the port's: refused whole")

    # a refused connection's session is gone once its FIN is in
    st = w.wait_stats(lambda st: st["worker:0:sessions"] + st["worker:1:sessions"] == 3,
                      "open: the two feeds and feeder-b's second, no other")
    for f in feeds:
        f.stop.set()
        f.join(60)
        check(f.error is None, "%s's feed: %r" % (f.tag, f.error))
    b2.close()
    check(st["dp_config_swaps"] == 12, "six reloads on two workers: %d" % st["dp_config_swaps"])
    log("feeds: %s articles, all 239, on one connection each"
        % ", ".join("%s %d" % (f.tag, f.n) for f in feeds))
    w.stop_dp()
    w.check_logs(allow=r"^err floodctld: reload of .* refused by the dataplane")
    fgkit.passed("75_dp_reload_sessions")


if __name__ == "__main__":
    main()
