#!/usr/bin/env python3
# timeout: 300
"""49_ctl_host — floodgate-host as a writer on floodctld's region.

In a network namespace of its own: floodctld, then floodgate-host
--floodctld, which answers from floodctld's history, journals every final
transition into its writer slot, hands verdict-log lines over and
publishes its counters. A real NNTP client streams 20 new articles (239)
and 5 too old (439, remembered as rejected), and CHECKs, over IPv4, and
CHECKs once over IPv6 (the same peer). Then: floodctl lookup sees them,
the journal and the engine's counters show up in /metrics (per peer too),
the verdict log has a line per decision, each with its session's address
and port in its family; the host
SIGKILLed and restarted still refuses the accepted IDs as duplicates (the
region outlived it); a reboot (clean stop of floodctld, region wiped)
restores them from the journal.
"""
import json
import os
import signal
import socket
import subprocess

from ctlkit import BUILD, Ctl, check, http_get, log, passed, prom_parse, prom_value, wait_for
from hostlib import article

HOST = os.path.join(BUILD, "bin/floodgate-host")
PORT = 1119
DAY = 86400


class Nntp:
    def __init__(self, addr="127.0.0.1"):
        self.s = socket.create_connection((addr, PORT), timeout=20)
        self.f = self.s.makefile("rb")
        check(self.f.readline().startswith(b"200 "), "greeting")

    def cmd(self, line, data=b""):
        self.s.sendall(line.encode() + b"\r\n" + data)
        return self.f.readline().decode().rstrip("\r\n")

    def close(self):
        self.s.sendall(b"QUIT\r\n")
        self.f.readline()
        self.s.close()


def connectable6():
    try:
        socket.create_connection(("::1", PORT), timeout=5).close()
        return True
    except OSError:
        return False


def start_host(c):
    return c.start_host(PORT)



def metric(name, **labels):
    st, body = http_get("http://127.0.0.1:9119/metrics")
    return prom_value(prom_parse(body), name, **labels) if st == 200 else None


def main():
    c = Ctl("host")
    c.netns()
    vlog = os.path.join(c.dir, "verdict.log")
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d [::1]:%d\n"
             "[peer local]\naddress 127.0.0.1 ::1\nnewsgroups *\n"
             "[stats]\nverdict-log %s\n" % (PORT, PORT, vlog), http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])

    # a host without floodctld's region refuses to start, saying why
    p = subprocess.run([HOST, "-c", c.conf + ".none", "--floodctld"], capture_output=True,
                       timeout=30)
    check(p.returncode != 0, "a host with no config file fails")

    host, hlog = start_host(c)
    n = Nntp()
    check(n.cmd("MODE STREAM").startswith("203"), "MODE STREAM")
    for i in range(20):
        mid = "<new-%d@host.test>" % i
        check(n.cmd("TAKETHIS " + mid, article(mid)) == "239 " + mid, "239 for " + mid)
    for i in range(5):
        mid = "<old-%d@host.test>" % i
        r = n.cmd("TAKETHIS " + mid, article(mid, age=20 * DAY, inj_age=20 * DAY))
        check(r == "439 " + mid, "439 for %s: %r" % (mid, r))
    check(n.cmd("CHECK <new-3@host.test>") == "438 <new-3@host.test>", "438 for a known ID")
    check(n.cmd("CHECK <fresh@host.test>") == "238 <fresh@host.test>", "238 for a new ID")
    addr4 = "127.0.0.1:%d" % n.s.getsockname()[1]
    n.close()
    # the same peer over IPv6 (the host listens on both; a listener is
    # bound per thread, so the v6 one may come just after the v4 one)
    wait_for(lambda: connectable6(), "floodgate-host to listen on [::1]")
    n6 = Nntp("::1")
    check(n6.cmd("CHECK <six@host.test>") == "238 <six@host.test>", "238 over IPv6")
    addr6 = "[::1]:%d" % n6.s.getsockname()[1]
    n6.close()

    rc, j = c.ctl_json("lookup", "<new-7@host.test>")
    check(rc == 0 and j["state"] == "accepted", "lookup of an accepted ID: %r" % j)
    rc, j = c.ctl_json("lookup", "<old-2@host.test>")
    check(rc == 0 and j["state"] == "rejected", "lookup of a rejected ID: %r" % j)
    wait_for(lambda: metric("floodgate_journal_records_total") == 25, "25 journal records")
    # once journaled, lookup names the date header and the reject reason
    wait_for(lambda: c.ctl_json("lookup", "<old-2@host.test>")[1].get("in_retained_journal"),
             "the records in the journal files")
    rc, j = c.ctl_json("lookup", "<new-7@host.test>")
    check(j.get("date_header") == "Injection-Date" and j.get("reason") is None,
          "the engine's journal record names the date header: %r" % j)
    rc, j = c.ctl_json("lookup", "<old-2@host.test>")
    check(j.get("date_header") == "Injection-Date" and j.get("reason") == "too-old",
          "the engine's journal record carries the reject reason: %r" % j)
    wait_for(lambda: (metric("floodgate_rejected_total", reason="too-old") or 0) >= 5,
             "the host's counters published")
    check(metric("floodgate_writers") == 1, "one writer slot in use")
    check(metric("floodgate_peer_rejected_total", peer="local", reason="too-old") >= 5,
          "per-peer counters of the host")
    wait_for(lambda: os.path.exists(vlog) and sum(1 for _ in open(vlog)) >= 28,
             "verdict-log lines")
    lines = open(vlog).read()
    check(lines.count('"verdict":"accept"') == 20 and lines.count('"verdict":"reject"') == 5,
          "a line per decision")
    # each line names the session's address and port, in its family
    recs = [json.loads(line) for line in lines.splitlines()]
    want = {r["id"]: addr6 if r["id"] == "<six@host.test>" else addr4 for r in recs}
    bad = [r for r in recs if r.get("peer") != "local" or r.get("addr") != want[r["id"]]]
    check(len(recs) == 28 and not bad, "verdict-log addresses (%s, %s): %s" % (addr4, addr6, bad))
    log("verdict log: %d lines from %s, 1 from %s" % (len(recs) - 1, addr4, addr6))

    # the host dies; the region (and the history) outlive it
    host.send_signal(signal.SIGKILL)
    host.wait()
    wait_for(lambda: metric("floodgate_writers") == 0, "the dead host's slot reaped")
    host, hlog = start_host(c)
    n = Nntp()
    r = n.cmd("TAKETHIS <new-4@host.test>", article("<new-4@host.test>"))
    check(r == "439 <new-4@host.test>", "a duplicate after the host's restart: %r" % r)
    n.close()
    host.send_signal(signal.SIGTERM)
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")

    # a reboot: floodctld stops, the region goes, the journal brings it back
    c.stop()
    c.wipe_shm()
    c.start(args=["--expire-interval", "3600"])
    missing = [i for i in range(20)
               if c.ctl("lookup", "<new-%d@host.test>" % i)[0] != 0]
    check(not missing, "accepted IDs after a reboot: %r missing" % missing)
    host, hlog = start_host(c)
    n = Nntp()
    check(n.cmd("CHECK <new-9@host.test>") == "438 <new-9@host.test>", "438 after a reboot")
    n.close()
    host.send_signal(signal.SIGTERM)
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    c.stop()
    log("host as a writer: 25 records journaled, restored after a reboot")
    passed("49_ctl_host")


main()
