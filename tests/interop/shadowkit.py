# SPDX-License-Identifier: MIT
"""shadowkit.py — the site and the planted exchanges of the shadow-mode
tests (40_shadow_innd: a capture; 41_shadow_live: a veth mirror), not a
test.

Site(work) builds, inside the caller's network namespace: an origin innd
(innd.sh --store --batch-site site, artcutoff 30 days) that takes every
article through rnews and writes the batch innfeed reads back by storage
token; and the site's own server, another innd (artcutoff 30 days,
wipcheck 60 s) on 127.0.0.1:SITE_PORT, which already has the `known`
articles. Site.exchanges() then plays, against that server:

  innfeed (streaming, CHECK first) with the batch:
    new      in both windows                 innd 238, 239   floodgate 238, 239
    old      15 days old: in innd's 30 days,
             past floodgate's 10              innd 238, 239   floodgate 238, 439 too-old
    known    the site innd had them already,
             floodgate's history is empty     innd 438        floodgate 238
  and two raw clients CHECK one ID seconds apart: the first gets 238, the
  second innd's 431 (its wipcheck holds the first's 238) where floodgate,
  whose offer-timeout of 1 s has lapsed, answers 238.

check_report() checks floodgate's figures for exactly that: the counters,
and `floodctl shadow` in JSON and text.
"""
import json
import os
import shutil
import socket
import subprocess
import time

import fgdp
import fgkit
import innkit
from fgdp import check

ORIGIN_PORT, SITE_PORT = 11195, 11196
N_NEW, N_OLD, N_KNOWN = 20, 5, 6
TIMING_ID = "<timing@shadow.test>"
# every answer pair: new CHECK + TAKETHIS, old CHECK, the first raw CHECK
WANT = {"shadow_agree": 2 * N_NEW + N_OLD + 1, "shadow_refused_took": N_OLD,
        "shadow_took_refused": N_KNOWN, "shadow_timing": 1, "shadow_followups": 0,
        "shadow_not_compared": 0, "shadow_gaps": 0, "shadow_unanchored": 0,
        "passive_gaps": 0, "passive_midstream": 0}
PAIRS = sum(WANT[k] for k in ("shadow_agree", "shadow_refused_took", "shadow_took_refused",
                              "shadow_timing"))


def config(work, port, name="shadow"):
    """floodgate's shadow-mode configuration: the site innd's endpoint,
    the one peer on loopback, offer-timeout 1 s; its own data directory,
    region and control socket (for floodctld and --history region)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, "shadow.conf")
    with open(conf, "w") as f:
        f.write("[site]\npath-identity floodgate.test\nlisten 127.0.0.1:%d\n"
                "[persistence]\ndata-dir %s\n"
                "[session]\nclock-skew-limit 0\noffer-timeout 1s\n"
                "[history]\ncapacity 100000\nshm-path /dev/shm/fg-%s-%d\n"
                "[stats]\ncontrol-socket %s/control.sock\n"
                "[peer site]\naddress 127.0.0.0/8\n"
                "[dataplane]\nmode shadow\nport %s\naddress 127.0.0.1/8\n"
                % (SITE_PORT, d, name, os.getpid(), d, port))
    return conf


def world(name):
    """What both tests need (root, INN), a fresh scratch directory
    build/test-tmp/NAME-<pid>, and loopback as a wire carries it: MTU
    1500, no segment offloads, so what is captured or mirrored is the
    segments TCP sent. Returns the directory."""
    fgkit.need_root()
    fgkit.need_inn("innfeed")
    work = os.path.join(fgdp.TOP, "build/test-tmp", "%s-%d" % (name, os.getpid()))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    subprocess.run(["ip", "link", "set", "lo", "mtu", "1500"], check=True)
    subprocess.run(["ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"],
                   check=True, capture_output=True)
    return work


def _article_ids(arts):
    return sorted(a.split("Message-ID: ")[1].split("\n")[0] for a in arts)


class Site:
    def __init__(self, work):
        self.work = work
        now = fgdp.rfc5322(time.time() - 600)
        old = fgdp.rfc5322(time.time() - 15 * 86400)
        self.arts = {}
        for group, n, date in (("new", N_NEW, now), ("old", N_OLD, old),
                               ("known", N_KNOWN, now)):
            self.arts[group] = [
                innkit.plain_article("<%s%d@shadow.test>" % (group, i), date,
                                     ["shadow mode's %s article %d" % (group, i)])
                for i in range(n)]
        origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "site", 30)
        try:
            self.rnews(origin.conf, ORIGIN_PORT,
                       self.arts["new"] + self.arts["old"] + self.arts["known"])
        finally:
            origin.stop()
        self.batch = origin.batch()
        check(len(self.batch) == N_NEW + N_OLD + N_KNOWN,
              "origin's batch: %d lines" % len(self.batch))
        self.dir = os.path.join(work, "site")
        innkit.innd_sh("start", self.dir, str(SITE_PORT), "--cutoff", "30", "--wipcheck", "60")
        self.rnews(os.path.join(self.dir, "etc", "inn.conf"), SITE_PORT, self.arts["known"])

    @staticmethod
    def rnews(conf, port, arts):
        batch = "".join("#! rnews %d\n%s" % (len(a.encode()), a) for a in arts)
        pre, env = innkit.as_news(conf)
        r = subprocess.run(pre + [innkit.INNBIN + "/rnews", "-r", "127.0.0.1", "-P", str(port)],
                           input=batch.encode(), env=env, capture_output=True)
        check(r.returncode == 0, "rnews: %s" % r.stderr.decode(errors="replace"))

    def stop(self):
        innkit.innd_sh("stop", self.dir)

    def exchanges(self):
        """innfeed's feed, then the timing case; every answer innd gave
        is checked to be the one planted."""
        feed = innkit.Innfeed(os.path.join(self.work, "innfeed"),
                              os.path.join(self.work, "origin", "etc", "inn.conf"),
                              "site", "127.0.0.1", "127.0.0.1", port=SITE_PORT)
        feed.start(self.batch)

        def answered():
            got = feed.answers()
            return all(got.get(m, [0])[-1] in (239, 438) for _, m in self.batch)
        done = innkit.wait_for(answered, 60, step=0.1)
        rc = feed.stop()
        check(done and rc == 0, "innfeed: every offer answered %s, exit %s" % (done, rc))
        answers = feed.answers()
        for _, m in self.batch:
            want = [438] if m.startswith("<known") else [238, 239]
            check(answers.get(m) == want, "innd answered %s to %s, not %s"
                  % (answers.get(m), m, want))
        a = nntp_client()
        check(check_id(*a) == "238", "the first CHECK of %s" % TIMING_ID)
        time.sleep(2)	# past floodgate's offer-timeout (1 s), within innd's wipcheck (60 s)
        b = nntp_client()
        check(check_id(*b) == "431", "innd's answer to the second CHECK of %s" % TIMING_ID)
        quit_client(*b)
        quit_client(*a)


def nntp_client():
    s = socket.create_connection(("127.0.0.1", SITE_PORT), timeout=30)
    f = s.makefile("rb")
    check(f.readline().startswith(b"20"), "the site innd's greeting")
    s.sendall(b"MODE STREAM\r\n")
    check(f.readline().startswith(b"203"), "MODE STREAM")
    return s, f


def check_id(s, f):
    s.sendall(b"CHECK %s\r\n" % TIMING_ID.encode())
    return f.readline().decode().split()[0]


def quit_client(s, f):
    s.sendall(b"QUIT\r\n")
    f.readline()
    s.close()


def check_report(site, conf, st, report, seeded=False):
    """The counters `st` (the stats file's) and floodctl shadow's view of
    the report file: exactly the planted cases. `seeded`: floodgate's
    history had the known articles (floodctl remember), so they agree
    (438 both) instead of differing."""
    old, known = _article_ids(site.arts["old"]), _article_ids(site.arts["known"])
    want = dict(WANT)
    if seeded:
        want["shadow_agree"] += N_KNOWN
        want["shadow_took_refused"] = 0
        known = []
    got = {k: st.get(k, 0) for k in want}
    check(got == want, "counters %s, want %s" % (got, want))
    check(st["shadow_flows"] == st["passive_flows"] and st["passive_flows"] >= 3,
          "flows: %d server halves, %d client streams" % (st["shadow_flows"], st["passive_flows"]))
    floodctl = os.path.join(fgdp.BIN, "floodctl")
    r = subprocess.run([floodctl, "shadow", "-c", conf, "--json"], capture_output=True, text=True)
    check(r.returncode == 1, "floodctl shadow --json: exit %d %s" % (r.returncode, r.stderr))
    j = json.loads(r.stdout)
    cl = j["classes"]
    check(j["refused_took"] == N_OLD and cl["refused-took"]["by_reason"] == {"too-old": N_OLD},
          "refused-took: %s" % cl["refused-took"])
    check(sorted(s["message_id"] for s in cl["refused-took"]["samples"]) == old and
          all(s["floodgate"] == 439 and s["server"] == 239 and s["reason"] == "too-old"
              for s in cl["refused-took"]["samples"]), "refused-took samples %s" % cl)
    check(sorted(s["message_id"] for s in cl["took-refused"]["samples"]) == known and
          all(s["floodgate"] == 238 and s["server"] == 438
              for s in cl["took-refused"]["samples"]), "took-refused samples %s" % cl)
    check(cl["timing"]["count"] == 1 and cl["timing"]["samples"] ==
          [{"message_id": TIMING_ID, "floodgate": 238, "server": 431}], "timing %s" % cl)
    check(cl["took-refused"]["count"] == len(known), "took-refused %s" % cl["took-refused"])
    check(cl["agree"]["count"] == want["shadow_agree"] and j["not_compared"] == 0 and
          j["gaps"] == 0, "agree/not compared %s" % j)
    r = subprocess.run([floodctl, "shadow", "--file", report], capture_output=True, text=True)
    check(r.returncode == 1 and "would refuse what the server took: %d" % N_OLD in r.stdout and
          "too-old" in r.stdout and old[0] in r.stdout and TIMING_ID in r.stdout,
          "floodctl shadow (text): exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    return got


class Mirror:
    """A mirror port in userspace (this kernel has no tc actions, see
    nickit.py): every frame loopback carries to or from tcp port `port`
    (each once: loopback shows a frame as sent and as received, the
    received copy is taken) is copied, in order, out of `dev`, whose veth
    peer floodgate reads with net_af_packet — what a switch's SPAN port
    does for the INN box. Counts what it copied."""

    def __init__(self, port, dev):
        import select
        import struct
        import threading
        self.select, self.struct = select, struct
        self.port, self.copied, self.stop = port, 0, False
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.rx.bind(("lo", 0))
        self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.tx.bind((dev, 0))
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def ours(self, frame):
        if len(frame) < 38 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
            return False
        ihl = (frame[14] & 15) * 4
        sport, dport = self.struct.unpack("!HH", frame[14 + ihl:18 + ihl])
        return self.port in (sport, dport)

    def run(self):
        while not self.stop:
            ready, _, _ = self.select.select([self.rx], [], [], 0.2)
            if not ready:
                continue
            frame, addr = self.rx.recvfrom(65536)
            if addr[2] != 4 and self.ours(frame):	# 4: PACKET_OUTGOING
                self.tx.send(frame)
                self.copied += 1

    def close(self):
        self.stop = True
        self.th.join(5)
        self.rx.close()
        self.tx.close()
