#!/usr/bin/env python3
# timeout: 300
"""feedgen against a scripted NNTP responder (stdlib only, loopback).

The responder implements the rules feedgen's model assumes (RFC 4644
CHECK/TAKETHIS, RFC 3977 IHAVE, RFC 5537 3.3 dates, a path-loop check, one
history for all connections, 431 while another connection holds an offer)
and can be told to answer wrongly:
  dup239    TAKETHIS of an ID already accepted gets 239 again
  miss239   the first article that would be accepted gets 439 instead
  once400   the 5th TAKETHIS gets 400 and the connection is closed
A correct responder (and once400, which feedgen must survive by
reconnecting and re-offering) must give exit 0; each wrong answer must
make feedgen exit 1 and name the mismatch.
"""
import email.utils
import os
import re
import socket
import subprocess
import sys
import threading
import time

TOP = os.environ.get("FG_TOP", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FEEDGEN = os.path.join(os.environ.get("FG_BUILD", os.path.join(TOP, "build/release")), "bin/feedgen")
PATH_ID = "responder.fg.test"
CUTOFF = 10 * 86400
MARGIN = 86400
ID_RE = re.compile(r"^<([^@<>\s]+)@([^@<>\s]+)>$")


def valid_id(mid):
    m = ID_RE.match(mid)
    return bool(m) and ".." not in m.group(1) and ".." not in m.group(2)


class Responder:
    def __init__(self, fault=None):
        self.fault = fault
        self.lock = threading.Lock()
        self.history = {}      # id -> "accepted" | "rejected"
        self.offered = {}      # id -> connection holding a 238
        self.takethis = 0
        self.missed = False
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.session, args=(c,), daemon=True).start()

    def verdict(self, mid, article):
        """The answer to a complete article: (accepted?, reason)."""
        heads = {}
        for line in article.split(b"\r\n"):
            if not line:
                break
            k, _, v = line.decode("latin-1").partition(": ")
            heads[k.lower()] = v
        if heads.get("message-id") != mid:
            return False
        if PATH_ID in heads.get("path", "").split("!"):
            return False
        date = heads.get("injection-date") or heads.get("date")
        t = email.utils.parsedate_to_datetime(date).timestamp()
        now = time.time()
        return now - CUTOFF <= t <= now + MARGIN

    def decide(self, conn, mid, article):
        with self.lock:
            self.offered.pop(mid, None)
            known = self.history.get(mid)
            if not valid_id(mid):
                return False
            if known:
                return self.fault == "dup239" and known == "accepted"
            ok = self.verdict(mid, article)
            if ok and self.fault == "miss239" and not self.missed:
                self.missed = True
                ok = False
            self.history[mid] = "accepted" if ok else "rejected"
            return ok

    def offer(self, conn, mid):
        """CHECK/IHAVE: 'send', 'refuse' or 'defer'."""
        with self.lock:
            if not valid_id(mid) or mid in self.history:
                return "refuse"
            holder = self.offered.get(mid)
            if (holder is not None and holder is not conn) or self.fault == "deferall":
                return "defer"
            self.offered[mid] = conn
            return "send"

    @staticmethod
    def read_article(f):
        lines = []
        while True:
            line = f.readline()
            if not line:
                raise EOFError
            if line == b".\r\n":
                return b"".join(lines)
            lines.append(line[1:] if line.startswith(b".") else line)

    def session(self, c):
        f = c.makefile("rb")
        out = c.makefile("wb")
        me = object()

        def say(s):
            out.write(s.encode() + b"\r\n")
            out.flush()
        try:
            say("200 responder ready (transit)")
            while True:
                line = f.readline()
                if not line:
                    return
                words = line.decode("latin-1").strip().split()
                verb = words[0].upper() if words else ""
                arg = words[1] if len(words) > 1 else ""
                if verb == "CAPABILITIES":
                    say("101 Capability list:\r\nVERSION 2\r\nIHAVE\r\nSTREAMING\r\n.")
                elif verb == "MODE" and arg.upper() == "STREAM":
                    say("203 Streaming permitted")
                elif verb == "QUIT":
                    say("205 bye")
                    return
                elif verb == "CHECK":
                    r = self.offer(me, arg)
                    say({"send": "238 ", "refuse": "438 ", "defer": "431 "}[r] + arg)
                elif verb == "TAKETHIS":
                    art = self.read_article(f)
                    with self.lock:
                        self.takethis += 1
                        n = self.takethis
                    if self.fault == "once400" and n == 5:
                        with self.lock:
                            self.offered.pop(arg, None)
                        say("400 " + arg + " temporary failure, come back later")
                        # close without a reset: stop sending, drain what is in flight
                        c.shutdown(socket.SHUT_WR)
                        c.settimeout(2)
                        while c.recv(65536):
                            pass
                        return
                    say(("239 " if self.decide(me, arg, art) else "439 ") + arg)
                elif verb == "IHAVE":
                    r = self.offer(me, arg)
                    if r != "send":
                        say("435 not wanted" if r == "refuse" else "436 try later")
                        continue
                    say("335 send it")
                    art = self.read_article(f)
                    say("235 thanks" if self.decide(me, arg, art) else "437 rejected")
                else:
                    say("500 what?")
        except (EOFError, ConnectionError, socket.timeout):
            pass
        finally:
            c.close()


def run(fault, *args):
    r = Responder(fault)
    cmd = [FEEDGEN, "--port", str(r.port), "--articles", "400", "--peers", "4", "--dups", "4",
           "--spread", "4", "--path-identity", PATH_ID, "--old", "0.05", "--future", "0.05",
           "--path-loop", "0.05", "--bad-id", "0.03", "--versions", "0.05", "--timeout", "120",
           "--no-progress"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=200)
    r.sock.close()
    return p.returncode, p.stdout + p.stderr


def expect(name, fault, want_rc, want_text, *args):
    rc, out = run(fault, *args)
    ok = rc == want_rc and (want_text is None or want_text in out)
    print("%s %s: exit %d%s" % ("ok  " if ok else "FAIL", name, rc,
                                "" if ok else "\n" + out))
    return ok


def per_peer_cap():
    """The deferral cap is per peer: 4 peers offer each of 400 articles, so
    with 3 retries each there are more than 3 x 400 retries (a cap per
    article, shared by the peers, would allow at most that many)."""
    rc, out = run("deferall", "--max-retries", "3", "--retry-delay", "0.01")
    m = re.search(r"retries (\d+)", out)
    retries = int(m.group(1)) if m else 0
    ok = rc == 1 and retries > 3 * 400
    print("%s the deferral cap is per peer: %d retries%s" % (
        "ok  " if ok else "FAIL", retries, "" if ok else "\n" + out))
    return ok


def main():
    if not os.access(FEEDGEN, os.X_OK):
        print("FAIL: %s not built" % FEEDGEN)
        return 1
    results = [
        expect("check mode, correct answers", None, 0, "check: OK"),
        expect("takethis mode, correct answers", None, 0, "check: OK", "--mode", "takethis",
               "--conns", "2"),
        expect("ihave mode with capabilities", None, 0, "check: OK", "--mode", "ihave",
               "--capabilities"),
        expect("400 mid-stream: reconnect and re-offer", "once400", 0, "reconnects 1",
               "--mode", "takethis"),
        expect("a 239 for a duplicate fails", "dup239", 1, "accepted a duplicate",
               "--mode", "takethis"),
        expect("a missing 239 fails", "miss239", 1, "never got a 239"),
        expect("deferred without end: given up", "deferall", 1, "deferred 3 times; given up",
               "--max-retries", "3", "--retry-delay", "0.01"),
        per_peer_cap(),
    ]
    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
