#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""countd.py — a counting downstream news server for the relay tests.

innd drops a duplicate itself, so it cannot say whether the relay sent an
article twice; this server can. It speaks the receiving side of RFC 3977 /
RFC 4644 (greeting, CAPABILITIES, MODE STREAM, CHECK, TAKETHIS, IHAVE,
QUIT) and appends one line per article transfer it reads to the record
file, flushed at once:

    T <message-id> <octets> <sha256 of the wire octets> accepted|refused
    I <message-id> <octets> <sha256 of the wire octets> accepted|refused

(T: TAKETHIS, I: IHAVE.)
It has a history like a real server: the first complete transfer of an ID
is accepted (239/235), any later one refused (439/437), and CHECK/IHAVE
offers of a known ID get 438/435. The history is rebuilt from the record
file at start, so the server can be stopped and started again mid-feed.

    countd.py --port PORT --record FILE [--addr 127.0.0.1] [--no-stream]
              [--refuse SUBSTR] [--defer SUBSTR] [--delay-ms N] [--pidfile FILE]

--refuse: answer 439/437 to articles whose ID holds SUBSTR (as a server
whose own rules refuse them); --defer: answer 431/436 to the first offer
of such an ID; --delay-ms: wait this long before answering an article (a
slow server, so that articles are in flight when a test pulls the plug).
SIGTERM stops it. Python stdlib only.
"""
import argparse
import hashlib
import os
import signal
import socketserver
import sys
import threading
import time

LOCK = threading.Lock()
SEEN = set()        # IDs accepted
DEFERRED = set()    # IDs given a 431/436 once
OPTS = None
RECORD = None


def load(path):
    if not os.path.exists(path):
        return
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 5 and parts[4] == "accepted":
                SEEN.add(parts[1])


def record(kind, mid, data, outcome):
    with LOCK:
        RECORD.write("%s %s %d %s %s\n" % (kind, mid, len(data),
                                           hashlib.sha256(data).hexdigest(), outcome))
        RECORD.flush()


def decide(mid):
    """The answer to a complete article: True accepted, False refused."""
    with LOCK:
        if mid in SEEN or (OPTS.refuse and OPTS.refuse in mid):
            return False
        SEEN.add(mid)
        return True


def defer_once(mid):
    with LOCK:
        if not OPTS.defer or OPTS.defer not in mid or mid in DEFERRED:
            return False
        DEFERRED.add(mid)
        return True


def known(mid):
    with LOCK:
        return mid in SEEN


class Handler(socketserver.StreamRequestHandler):
    def say(self, line):
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def article(self):
        """The wire octets up to the terminator (None at EOF)."""
        parts = []
        while True:
            line = self.rfile.readline()
            if not line:
                return None
            if line == b".\r\n":
                return b"".join(parts)
            parts.append(line)

    def transfer(self, kind, mid):
        data = self.article()
        if data is None:
            return False
        if OPTS.delay_ms:
            time.sleep(OPTS.delay_ms / 1000.0)
        ok = decide(mid)
        record(kind, mid, data, "accepted" if ok else "refused")
        if kind == "T":
            self.say(("239 " if ok else "439 ") + mid)
        else:
            self.say("235 ok" if ok else "437 refused")
        return True

    def handle(self):
        self.say("200 countd ready")
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            words = raw.decode("latin-1").strip().split()
            if not words:
                self.say("500 what?")
                continue
            verb, arg = words[0].upper(), (words[1] if len(words) > 1 else "")
            if verb == "CAPABILITIES":
                caps = ["VERSION 2", "IHAVE"] + ([] if OPTS.no_stream else ["STREAMING"])
                self.say("101 capabilities")
                for c in caps:
                    self.say(c)
                self.say(".")
            elif verb == "MODE" and arg.upper() == "STREAM" and not OPTS.no_stream:
                self.say("203 streaming")
            elif verb == "CHECK" and not OPTS.no_stream:
                if defer_once(arg):
                    self.say("431 " + arg)
                else:
                    self.say(("438 " if known(arg) else "238 ") + arg)
            elif verb == "TAKETHIS" and not OPTS.no_stream:
                if not self.transfer("T", arg):
                    return
            elif verb == "IHAVE":
                if known(arg):
                    self.say("435 have it")
                elif defer_once(arg):
                    self.say("436 later")
                else:
                    self.say("335 send it")
                    if not self.transfer("I", arg):
                        return
            elif verb == "QUIT":
                self.say("205 bye")
                return
            else:
                self.say("500 unknown command")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global OPTS, RECORD
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--addr", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--no-stream", action="store_true")
    ap.add_argument("--refuse", default="")
    ap.add_argument("--defer", default="")
    ap.add_argument("--delay-ms", type=int, default=0)
    ap.add_argument("--pidfile")
    OPTS = ap.parse_args()
    load(OPTS.record)
    RECORD = open(OPTS.record, "a")
    srv = Server((OPTS.addr, OPTS.port), Handler)
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=srv.shutdown).start())
    if OPTS.pidfile:
        with open(OPTS.pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    print("countd listening on %s:%d" % (OPTS.addr, OPTS.port), flush=True)
    srv.serve_forever()
    srv.server_close()
    return 0


def read_record(path):
    """[(kind, id, octets, sha, outcome)] from a record file."""
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5:
                    out.append((p[0], p[1], int(p[2]), p[3], p[4]))
    return out


if __name__ == "__main__":
    sys.exit(main())
