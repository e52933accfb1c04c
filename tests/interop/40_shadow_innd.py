#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""40_shadow_innd — shadow mode on a capture of innfeed feeding a real innd.

The world: namespace fg-shadow-<pid>, loopback only (MTU 1500, no segment
offloads, so the capture holds the segments TCP sent). An origin innd
(innd.sh --store --batch-site site, artcutoff 30 days) takes every article
through rnews and writes the batch innfeed reads back by storage token.
The site's own server is another innd (artcutoff 30 days, wipcheck 60 s)
on 127.0.0.1:SITE_PORT; tcpdump captures every segment to and from that
port while

  innfeed feeds it (streaming, CHECK first) the batch:
    new      in both windows                 innd 238, 239   floodgate 238, 239
    old      15 days old: in innd's 30 days,
             past floodgate's 10              innd 238, 239   floodgate 238, 439 too-old
    known    the site innd had them already
             (rnews before), floodgate's
             history is empty                 innd 438        floodgate 238
  and two raw clients CHECK one ID a few seconds apart: the first gets 238,
  the second innd's 431 (its wipcheck still holds the first's 238), where
  floodgate, whose offer-timeout of 1 s has lapsed on the capture's clock,
  answers 238.

floodgate replays the capture in shadow mode (mode shadow, net_pcap,
--clock capture) and must find exactly: agree = 2 new + 1 old CHECK + the
first raw CHECK, refused-took = the old articles, by reason too-old, with
their IDs as samples; took-refused = the known ones; timing = the raw
client's 431; nothing followed up, nothing not compared, no gap, every
flow anchored. `floodctl shadow` says so in text and JSON and exits 1 (the
headline figure is not 0).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgkit  # noqa: E402

fgkit.rerun_in_netns("fg-shadow")
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402
import innkit  # noqa: E402

ORIGIN_PORT, SITE_PORT = 11195, 11196
N_NEW, N_OLD, N_KNOWN = 20, 5, 6
TIMING_ID = "<timing@shadow.test>"


def articles():
    now = fgdp.rfc5322(time.time() - 600)
    old = fgdp.rfc5322(time.time() - 15 * 86400)
    out = {}
    for group, n, date in (("new", N_NEW, now), ("old", N_OLD, old), ("known", N_KNOWN, now)):
        out[group] = [innkit.plain_article("<%s%d@shadow.test>" % (group, i), date,
                                           ["shadow mode's %s article %d" % (group, i)])
                      for i in range(n)]
    return out


def rnews(conf, port, arts):
    batch = "".join("#! rnews %d\n%s" % (len(a.encode()), a) for a in arts)
    pre, env = innkit.as_news(conf)
    r = subprocess.run(pre + [innkit.INNBIN + "/rnews", "-r", "127.0.0.1", "-P", str(port)],
                       input=batch.encode(), env=env, capture_output=True)
    check(r.returncode == 0, "rnews: %s" % r.stderr.decode(errors="replace"))


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


def capture(work, batch, pcap):
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "--immediate-mode", "-U", "-s", "0", "-w", pcap,
                             "tcp port %d" % SITE_PORT],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    check("listening on" in dump.stderr.readline(), "tcpdump did not start")
    feed = innkit.Innfeed(os.path.join(work, "innfeed"), os.path.join(work, "origin", "etc",
                                                                      "inn.conf"),
                          "site", "127.0.0.1", "127.0.0.1", port=SITE_PORT)
    feed.start(batch)

    def answered():
        got = feed.answers()
        return all(got.get(m, [0])[-1] in (239, 438) for _, m in batch)
    done = innkit.wait_for(answered, 60, step=0.1)
    rc = feed.stop()
    check(done and rc == 0, "innfeed: every offer answered %s, exit %s" % (done, rc))
    answers = feed.answers()
    for _, m in batch:
        want = [438] if m.startswith("<known") else [238, 239]
        check(answers.get(m) == want, "innd answered %s to %s, not %s" % (answers.get(m), m, want))
    # the timing case: innd holds the first 238 for wipcheck (60 s)
    a = nntp_client()
    check(check_id(*a) == "238", "the first CHECK of %s" % TIMING_ID)
    time.sleep(2)	# past floodgate's offer-timeout (1 s) on the capture's clock
    b = nntp_client()
    check(check_id(*b) == "431", "innd's answer to the second CHECK of %s" % TIMING_ID)
    quit_client(*b)
    quit_client(*a)

    def captured():
        # both CHECKs of the timing case, and both clients' 205 after them
        with open(pcap, "rb") as f:
            data = f.read()
        at = data.rfind(b"CHECK " + TIMING_ID.encode())
        return data.count(b"CHECK " + TIMING_ID.encode()) == 2 and data.count(b"205 ", at) >= 2
    check(innkit.wait_for(captured, 30, step=0.1), "tcpdump did not write the last segments")
    dump.send_signal(signal.SIGINT)
    dump.communicate(timeout=30)
    check(os.path.getsize(pcap) > 24, "the capture is empty")


def replay(work, pcap):
    conf = os.path.join(work, "shadow.conf")
    with open(conf, "w") as f:
        f.write("[site]\npath-identity floodgate.test\nlisten 127.0.0.1:%d\n"
                "[persistence]\ndata-dir %s\n"
                "[session]\nclock-skew-limit 0\noffer-timeout 1s\n"
                "[history]\ncapacity 100000\n"
                "[stats]\ncontrol-socket %s/control.sock\n"
                "[peer site]\naddress 127.0.0.0/8\n"
                "[dataplane]\nmode shadow\nport net_pcap0,rx_pcap=%s\naddress 127.0.0.1/8\n"
                % (SITE_PORT, work, work, pcap))
    stats, report = os.path.join(work, "stats"), os.path.join(work, "shadow.status")
    logp = os.path.join(work, "floodgate.log")
    p = subprocess.run([os.path.join(fgdp.BIN, "floodgate"), "-c", conf, "--clock", "capture",
                        "--exit-idle", "300", "--stats-file", stats],
                       stdout=subprocess.PIPE, stderr=open(logp, "w"), text=True, timeout=120)
    check(p.returncode == 0, "floodgate shadow exited %d:\n%s" % (p.returncode, fgdp.slurp(logp)))
    bad = [ln for ln in fgkit.slurp_log(logp).splitlines()
           if ln.strip() and not fgdp.DPDK_NOISE.match(ln)]
    check(not bad, "shadow log not clean:\n" + "\n".join(bad))
    return conf, fgdp.read_stats_text(fgdp.slurp(stats)), report


def check_report(conf, st, report, arts):
    old = sorted(a.split("Message-ID: ")[1].split("\n")[0] for a in arts["old"])
    known = sorted(a.split("Message-ID: ")[1].split("\n")[0] for a in arts["known"])
    want = {"shadow_agree": 2 * N_NEW + N_OLD + 1, "shadow_refused_took": N_OLD,
            "shadow_took_refused": N_KNOWN, "shadow_timing": 1, "shadow_followups": 0,
            "shadow_not_compared": 0, "shadow_gaps": 0, "shadow_unanchored": 0,
            "passive_gaps": 0, "passive_midstream": 0}
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
    check(cl["agree"]["count"] == want["shadow_agree"] and j["not_compared"] == 0 and
          j["gaps"] == 0, "agree/not compared %s" % j)
    r = subprocess.run([floodctl, "shadow", "--file", report], capture_output=True, text=True)
    check(r.returncode == 1 and "would refuse what the server took: %d" % N_OLD in r.stdout and
          "too-old" in r.stdout and old[0] in r.stdout and TIMING_ID in r.stdout,
          "floodctl shadow (text): exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    log("shadow: " + " ".join("%s=%d" % kv for kv in got.items() if kv[1]))


def main():
    fgkit.need_root()
    innkit.fgkit.need_inn("innfeed")
    work = os.path.join(fgdp.TOP, "build/test-tmp", "fg-shadow-%d" % os.getpid())
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    subprocess.run(["ip", "link", "set", "lo", "mtu", "1500"], check=True)
    subprocess.run(["ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"],
                   check=True, capture_output=True)
    arts = articles()
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "site", 30)
    try:
        rnews(origin.conf, ORIGIN_PORT, arts["new"] + arts["old"] + arts["known"])
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == N_NEW + N_OLD + N_KNOWN, "origin's batch: %d lines" % len(batch))
    site = os.path.join(work, "site")
    innkit.innd_sh("start", site, str(SITE_PORT), "--cutoff", "30", "--wipcheck", "60")
    pcap = os.path.join(work, "site.pcap")
    try:
        rnews(os.path.join(site, "etc", "inn.conf"), SITE_PORT, arts["known"])
        capture(work, batch, pcap)
    finally:
        innkit.innd_sh("stop", site)
    conf, st, report = replay(work, pcap)
    check_report(conf, st, report, arts)
    if not fgkit.failed and not os.environ.get("FG_KEEP_TMP"):
        shutil.rmtree(work, ignore_errors=True)
    fgdp.passed("40_shadow_innd")


if __name__ == "__main__":
    main()
