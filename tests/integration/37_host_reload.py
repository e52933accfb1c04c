#!/usr/bin/env python3
# timeout: 300
"""37_host_reload — a reload that keeps the sessions it does not concern:
floodgate-host with two threads, in its own network namespace, SIGHUP
after each edit of its file (docs/dataplane.md, "Reload").

Two feeds stream TAKETHIS on one connection each through every reload,
every answer checked (239 each, nothing lost, never a 400), and their
connections are the same ones at the end (the server counts one session
each, none closed, same local port). Meanwhile:

1. A peer is added (its connection, 502 before, is greeted) and another
   peer's max-connections lowered to 2: its feed stays, one more is let
   in, the next refused.
2. A peer is removed: its idle session is answered 400 and closed at
   once; its session in the middle of an article drains: the article is
   read and accepted (239), the CHECK sent behind it deferred (431), then
   400 and close.
3. A listen address is added (a connection to it is greeted), then
   removed: the session on it is answered 400 and closed, the port
   refuses connections, the feeds on the other address go on.
4. A file that changes keys only a restart changes ([session] max-line, a
   [downstream] added) and adds a peer is refused whole: each named
   "needs a restart" in the log, the new peer not let in, the feeds
   untouched.
"""
import os
import signal
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from hostlib import (GREETING, PORT, Client, Host, article, check, in_netns,  # noqa: E402
                     log, streaming)

in_netns("fg-rld")

KEEP, GONE, NEW, LATE = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"
PORT2 = PORT + 1
PEERS = """[peer keep]
address %s
[peer gone]
address %s
""" % (KEEP, GONE)
NOT_PEER = b"502 Not a configured peer of this transit-only server\r\n"
PEER_GONE = b"400 No longer a configured peer, closing\r\n"
ADDR_GONE = b"400 This address is no longer served, try another\r\n"
TOO_MANY = b"400 Too many connections from this peer, try again later\r\n"


class Feed(threading.Thread):
    """TAKETHIS in batches of 10 on one connection, each answer checked."""

    def __init__(self, src, tag):
        super().__init__()
        self.tag = tag
        self.c = streaming(src, PORT)
        self.port = self.c.s.getsockname()[1]
        self.n = 0
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.stop.is_set():
                ids = ["<%s.%d@reload.test>" % (self.tag, self.n + k) for k in range(10)]
                self.c.send(b"".join(b"TAKETHIS " + i.encode() + b"\r\n" + article(i)
                                     for i in ids))
                for i in ids:
                    got = self.c.line()
                    if got != ("239 %s\r\n" % i).encode():
                        raise AssertionError("%s: %r" % (i, got))
                self.n += len(ids)
            self.c.send(b"QUIT\r\n")
            if not self.c.line().startswith(b"205"):
                raise AssertionError("no 205 to QUIT")
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e

    def moving(self, what):
        """The feed answers on through `what`: 30 more articles after it."""
        n = self.n
        fgkit.wait_until(lambda: self.n >= n + 30 or self.error or not self.is_alive(), 60,
                         "%s's feed moving after %s" % (self.tag, what))
        check(self.error is None and self.is_alive(), "%s's feed after %s: %r"
              % (self.tag, what, self.error))


def not_let_in(src, what):
    c = Client(src=src)
    check(c.line() == NOT_PEER, what)
    c.close()


def all_moving(feeds, what):
    for f in feeds:
        f.moving(what)


def port_refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def reload(host, edit, what, ok=True):
    """Edit the file, SIGHUP, wait for the outcome in the log."""
    with open(host.conf) as f:
        text = f.read()
    new = edit(text)
    check(new != text, "the edit for %s changes the file" % what)
    with open(host.conf, "w") as f:
        f.write(new)
    before = fgkit.slurp(host.log).count("SIGHUP reload: ")
    host.proc.send_signal(signal.SIGHUP)
    want = "2 workers switched" if ok else "nothing applied"
    fgkit.wait_until(lambda: fgkit.slurp(host.log).count("SIGHUP reload: ") > before and
                     want in fgkit.slurp(host.log)[-4000:], 30, "the reload for %s" % what)
    if not ok:
        with open(host.conf, "w") as f:
            f.write(text)      # what runs, for the next edit


def add_peer_and_limit(host, feeds):
    c = Client(src=NEW)
    check(c.line() == NOT_PEER and c.eof(), "%s not a peer yet" % NEW)
    c.close()
    keep = "[peer keep]\naddress %s\n" % KEEP
    reload(host, lambda t: t.replace(keep, keep + "max-connections 2\n")
           + "[peer new]\naddress %s\n" % NEW, "a new peer, keep's limit")
    c = streaming(NEW, PORT)
    check(c.cmd("CHECK <new1@reload.test>") == "238 <new1@reload.test>", "the new peer offers")
    c.close()
    second = Client(src=KEEP)
    second.expect(GREETING)
    third = Client(src=KEEP)
    check(third.line() == TOO_MANY and third.eof(), "keep's third connection refused")
    third.close()
    second.close()
    all_moving(feeds, "adding a peer")
    log("a peer added and greeted; keep at max-connections 2: its feed and one more")


def remove_peer(host, feeds):
    idle = streaming(GONE, PORT)
    busy = streaming(GONE, PORT)
    mid = "<gone1@reload.test>"
    art = b"TAKETHIS " + mid.encode() + b"\r\n" + article(mid)
    cut = art.index(b"\r\n\r\n")
    busy.send(art[:cut])
    before = host.stats()
    reload(host, lambda t: t.replace("[peer gone]\naddress %s\n" % GONE, ""), "removing gone")
    check(idle.line() == PEER_GONE and idle.eof(), "gone's idle session: 400 and closed")
    host.wait_stats(lambda st: st["nntp_sessions_retired"] == before.get(
        "nntp_sessions_retired", 0) + 2, "both of gone's sessions draining")
    busy.send(art[cut:] + b"CHECK <gone2@reload.test>\r\n")
    got = busy.lines(3)
    check(got == [("239 %s\r\n" % mid).encode(), b"431 <gone2@reload.test>\r\n", PEER_GONE],
          "the article in flight taken, the CHECK deferred, then 400: %r" % got)
    check(busy.eof(), "and closed")
    busy.close()
    idle.close()
    not_let_in(GONE, "gone's new connection refused")
    all_moving(feeds, "removing a peer")
    log("gone removed: its idle session closed, the busy one drained (239, 431, 400)")


def listen_add_remove(host, feeds):
    check(port_refused(PORT2), "port %d not listened on yet" % PORT2)
    line = "listen 127.0.0.1:%d\n" % PORT
    reload(host, lambda t: t.replace(line, line + "listen 127.0.0.1:%d\n" % PORT2),
           "a new listen address")
    other = streaming("127.0.0.1", PORT2)
    check(other.cmd("CHECK <l1@reload.test>") == "238 <l1@reload.test>", "served on the new port")
    all_moving(feeds, "adding a listen address")
    reload(host, lambda t: t.replace("listen 127.0.0.1:%d\n" % PORT2, ""),
           "removing the listen address")
    check(other.line() == ADDR_GONE and other.eof(), "the session on it: 400 and closed")
    other.close()
    check(port_refused(PORT2), "port %d refused again" % PORT2)
    all_moving(feeds, "removing a listen address")
    log("listen 127.0.0.1:%d added and served, removed: its session 400 and closed" % PORT2)


def refused_reload(host, feeds):
    reload(host, lambda t: t + "[session]\nmax-line 2048\n[peer late]\naddress %s\n" % LATE
           + "[downstream site]\naddress 127.0.0.1:9119\n", "a restart key", ok=False)
    tail = fgkit.slurp(host.log)[-4000:]
    for key in ("[session] max-line", "[downstream]"):
        check(key + " needs a restart" in tail, "%s named: %r" % (key, tail))
    not_let_in(LATE, "the refused file's peer not let in")
    all_moving(feeds, "a refused reload")
    log("a file changing max-line and adding a downstream refused whole, each named")


def main():
    host = Host(args=["-t", "2"], extra=PEERS)
    feeds = [Feed("127.0.0.1", "local"), Feed(KEEP, "keep")]
    for f in feeds:
        f.start()
        f.moving("the start")
    add_peer_and_limit(host, feeds)
    remove_peer(host, feeds)
    listen_add_remove(host, feeds)
    refused_reload(host, feeds)
    st = host.stats()
    for f in feeds:
        f.stop.set()
        f.join(60)
        check(f.error is None, "%s's feed: %r" % (f.tag, f.error))
    check(st["sessions_open"] == 2, "the feeds' two sessions open, no other: %d"
          % st["sessions_open"])
    for f in feeds:
        check(f.c.s.getsockname()[1] == f.port, "%s's connection the same" % f.tag)
        f.c.close()
    log("feeds: %s articles, all 239, on their first connections" %
        ", ".join("%s %d" % (f.tag, f.n) for f in feeds))
    final = host.stop(allow=("SIGHUP reload: ",))
    check(final["sessions_open"] == 0, "nothing left open")
    fgkit.passed("37_host_reload")


main()
