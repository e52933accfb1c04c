#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""70_dp_ipv6 — the dataplane on a tap speaking IPv6 and IPv4 at once.

floodgate gets `address 198.18.0.2/24 fd00:fd::2/64` and listens on both;
the kernel side has the three peers' addresses in both families (IPv6 with
nodad). Then: the kernel resolves our IPv6 address by Neighbour
Discovery (the dataplane's NA) and pings it (ICMPv6 echo); a stdlib
client holds a whole streaming session over IPv6; `floodctl peers` shows
the IPv6 connection under its peer, and the verdict log names that peer
and the connection's address and port for its offers; feedgen feeds over
IPv6 and over IPv4 at the same time (two workers), every answer as its
model says, and the verdict log carries each feed's address in its family; the
counters show DAD's probes, the NAs and the echoes; SIGTERM ends it
cleanly with a clean log.
"""
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402
from restartkit import vlog_lines  # noqa: E402


def verdicts_name_the_peer(vlog, ids, addr):
    """The verdict log's lines for `ids` (written by floodctld from the
    worker's ring) name the peer the IPv6 source matched, feeder-a, and
    the session's own address and port, `addr`."""
    def lines():
        got = {}
        for rec in vlog_lines(vlog):
            if rec.get("id") in ids:
                got.setdefault(rec["id"], []).append((rec.get("peer"), rec.get("addr")))
        return got if len(got) == len(ids) else None
    got = fgdp.poll_until(lines, 30)
    check(got and all(set(p) == {("feeder-a", addr)} for p in got.values()),
          "verdict log for the IPv6 session %s: %s" % (addr, got or lines()))


def verdicts_carry_both_families(vlog):
    """The two feeds' lines: feedgen's IPv6 sessions logged with
    "[fd00:fd::1]:port", its IPv4 ones with "198.18.0.1:port" (both
    feeder-a), ports its own (not 119)."""
    tags = {"six": r"\[%s\]:(\d+)" % re.escape(fgdp.KERNEL_ADDRS6[0]),
            "four": r"%s:(\d+)" % re.escape(fgdp.KERNEL_ADDRS[0])}

    def by_tag():
        got = {t: [] for t in tags}
        for rec in vlog_lines(vlog):
            for t in tags:
                if rec.get("id", "").startswith("<%s%d" % (t, os.getpid())):
                    got[t].append(rec)
        return got if all(got.values()) else None
    got = fgdp.poll_until(by_tag, 30)
    check(got, "no verdict-log lines of one feed: %s" % {t: len(v) for t, v in
                                                         (by_tag() or {}).items()})
    for t, recs in got.items():
        bad = [r for r in recs if r.get("peer") != "feeder-a" or
               not re.fullmatch(tags[t], r.get("addr") or "") or
               int(re.fullmatch(tags[t], r["addr"]).group(1)) in (0, 119)]
        check(not bad, "%s: %d of %d lines with another peer or address: %s" %
              (t, len(bad), len(recs), bad[:3]))
        log("verdict log: %d %s lines, e.g. %s" % (len(recs), t, recs[0]["addr"]))


def session6(w):
    s = fgdp.connect(fgdp.KERNEL_ADDRS6[0], dst=fgdp.DP_ADDR6)
    r = fgdp.Lines(s)
    got = r.line()
    check(got.startswith("200 "), "greeting over IPv6 %r" % got)
    new = ["<v6n%d.%d@dp.test>" % (i, os.getpid()) for i in range(2)]
    old = "<v6old.%d@dp.test>" % os.getpid()
    out = [b"MODE STREAM\r\n"] + [b"CHECK %s\r\n" % i.encode() for i in new]
    out += [b"TAKETHIS %s\r\n" % new[0].encode(), fgdp.article(new[0], body=20000)]
    out += [b"TAKETHIS %s\r\n" % old.encode(), fgdp.article(old, age=20 * 86400)]
    s.sendall(b"".join(out))
    for exp in ["203 ", "238 " + new[0], "238 " + new[1], "239 " + new[0], "439 " + old]:
        got = r.line()
        check(got.startswith(exp), "over IPv6: expected %r, got %r" % (exp, got))
    # while it is open, `peers` lists it under its peer with its IPv6 address
    conns = w.dp_json("peers")["connections"]
    mine = "[%s]:%d" % (fgdp.KERNEL_ADDRS6[0], s.getsockname()[1])
    c = [x for x in conns if x["remote"] == mine]
    check(c and c[0]["peer"] == "feeder-a", "peers has no %s of feeder-a: %s" % (mine, conns))
    rc, out, err = w.ctl("peers")
    check(rc == 0 and "[%s]:" % fgdp.KERNEL_ADDRS6[0] in out, "floodctl peers: %s %s" % (out, err))
    s.sendall(b"CHECK %s\r\nQUIT\r\n" % new[0].encode())
    for exp in ["438 " + new[0], "205 "]:
        got = r.line()
        check(got.startswith(exp), "over IPv6: expected %r, got %r" % (exp, got))
    check(s.recv(100) == b"", "the connection stays open after 205")
    s.close()
    verdicts_name_the_peer(os.path.join(w.dir, "verdicts.log"), set(new + [old]), mine)


def echo6(dst, seq):
    """One ICMPv6 echo request (the kernel fills the checksum of a raw
    ICMPv6 socket); True when the reply with our identifier and data came."""
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.settimeout(10)
    ident = os.getpid() & 0xffff
    data = b"floodgate-v6-echo-%d" % seq
    s.sendto(struct.pack("!BBHHH", 128, 0, 0, ident, seq) + data, (dst, 0))
    try:
        while True:
            pkt, _ = s.recvfrom(2048)
            if pkt[0] == 129 and struct.unpack("!HH", pkt[4:8]) == (ident, seq):
                return pkt[8:] == data
    except socket.timeout:
        return False
    finally:
        s.close()


def feed(host, source, tag, results):
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", host, "--source", source,
                         "--peers", "1", "--conns", "2", "--articles", "3000", "--path-identity",
                         "floodgate.test", "--id-prefix", "%s%d" % (tag, os.getpid()),
                         "--timeout", "90"], capture_output=True, text=True, timeout=180)
    results[tag] = fg


def refusal(w):
    """An IPv6 listen with no IPv6 [dataplane] address: floodgate refuses
    to start with the very words `floodctl config --check --for floodgate`
    says (no floodctld needed: the file is checked first)."""
    bad = w.write_config(path=os.path.join(w.dir, "bad.conf"))
    with open(bad) as f:
        text = f.read().replace(" %s/64" % fgdp.DP_ADDR6, "")
    with open(bad, "w") as f:
        f.write(text)
    chk = subprocess.run([os.path.join(fgdp.BIN, "floodctl"), "config", "--check", bad,
                          "--for", "floodgate"], capture_output=True, text=True)
    want = "[site] listen [%s]:119 is not one of [dataplane] address" % fgdp.DP_ADDR6
    check(chk.returncode == 1 and "refused at start: " + want in chk.stderr,
          "floodctl config --check --for floodgate:\n%s" % chk.stderr)
    logp = os.path.join(w.dir, "refused.log")
    p = subprocess.run([os.path.join(fgdp.BIN, "floodgate"), "-c", bad], capture_output=True,
                       text=True, timeout=60)
    with open(logp, "w") as f:
        f.write(p.stderr)
    line = [l for l in p.stderr.splitlines() if want in l]
    check(p.returncode == 1 and line and line[0].split(": ", 1)[1] ==
          chk.stderr.split("refused at start: ", 1)[1].splitlines()[0],
          "floodgate's own refusal differs:\n%s" % p.stderr)
    ok = subprocess.run([os.path.join(fgdp.BIN, "floodctl"), "config", "--check", bad,
                         "--for", "floodgate-host"], capture_output=True, text=True)
    check(ok.returncode == 0, "floodgate-host takes it: %s" % ok.stderr)


def main():
    w = fgdp.World("ipv6", workers=2, v6=True)
    w.write_config(workers=2, extra="[stats]\nverdict-log %s\n"
                   % os.path.join(w.dir, "verdicts.log"))
    refusal(w)
    w.start_ctld()
    w.start_dp()	# waits for a greeting on each family
    for seq in range(3):
        check(echo6(fgdp.DP_ADDR6, seq), "no ICMPv6 echo reply %d from %s" % (seq, fgdp.DP_ADDR6))
    neigh = subprocess.run(["ip", "-6", "neigh", "show", fgdp.DP_ADDR6], capture_output=True,
                           text=True).stdout
    check("02:fd:00:00:00:02" in neigh, "the kernel did not learn our MAC by ND: %r" % neigh)
    session6(w)
    # IPv6 and IPv4 feeds at once, on two workers: peers feeder-a and -b
    results = {}
    th = [threading.Thread(target=feed, args=(fgdp.DP_ADDR6, fgdp.KERNEL_ADDRS6[0], "six",
                                              results)),
          threading.Thread(target=feed, args=(fgdp.DP_ADDR, fgdp.KERNEL_ADDRS[0], "four",
                                              results))]
    for t in th:
        t.start()
    for t in th:
        t.join()
    for tag, fg in results.items():
        check(fg.returncode == 0, "feedgen over %s:\n%s\n%s" % (tag, fg.stdout[-3000:],
                                                              fg.stderr[-2000:]))
        log("%s: %s" % (tag, fg.stdout.strip().splitlines()[-1]))
    verdicts_carry_both_families(os.path.join(w.dir, "verdicts.log"))
    st = w.stats()
    log("net6: rx %d, NS in %d, NA out %d, DAD probes %d, echoes %d, ext %d, dropped: bad %d "
        "not-ours %d proto %d icmp %d" % (
            st["net6_rx"], st["net6_solicit_rx"], st["net6_advert_tx"], st["net6_dad_probes"],
            st["net6_echo"], st["net6_ext"], st["net6_bad"], st["net6_not_ours"],
            st["net6_proto"], st["net6_icmp_drop"]))
    check(st["net6_dad_probes"] == 2,
          "DAD probes: %d (link-local and fd00:fd::2)" % st["net6_dad_probes"])
    check(st["net6_advert_tx"] >= 3, "NAs: %d (2 unsolicited + answers)" % st["net6_advert_tx"])
    check(st["net6_echo"] == 3, "echo answers: %d" % st["net6_echo"])
    check(st["net6_dad_conflict"] == 0 and st["net6_bad"] == 0, "conflicts or bad packets")
    rc, out, err = w.ctl("peers", "--json")	# through floodctld
    peers = json.loads(out)["peers"]
    a = [p for p in peers if p["name"] == "feeder-a"]
    check(rc == 0 and a and a[0]["239"] >= 1, "peers: %s" % peers)
    w.stop_dp()
    w.check_logs()
    fgdp.passed("70_dp_ipv6")


if __name__ == "__main__":
    main()
