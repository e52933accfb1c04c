#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""70_dp_basic — floodgate on a tap port, real Linux TCP clients.

Refuses to start without floodctld, and against a file that is not a
region, each with a message saying what to do; refuses an MTU the port
cannot take (net_tap: 1522-octet frames), naming its limits. Then, with
floodctld: a
stdlib client holds a whole streaming session (greeting, MODE STREAM,
pipelined CHECK/TAKETHIS, duplicates, a too-old article, QUIT); the
accepted ID is in floodctld's history and the dataplane's counters are in
its stats; feedgen runs a feed whose every answer must match its model;
`peers` lists the peer; an idle dataplane costs little CPU; SIGTERM ends
it cleanly. Run with FG_BUILD pointing at build/asan for the ASan pass
(77_dp_asan does).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402


def refusals(w):
    p = w.start_dp(expect_ready=False)
    rc = p.wait(timeout=60)
    text = fgdp.slurp(p.logp)
    check(rc == 1, "floodgate without floodctld exited %s" % rc)
    check("cannot attach to floodctld's region" in text and "Start floodctld" in text,
          "no clear refusal without floodctld:\n" + text)
    with open(w.shm, "wb") as f:
        f.write(b"not a region at all" * 1000)
    p = w.start_dp(expect_ready=False)
    rc = p.wait(timeout=60)
    text = fgdp.slurp(p.logp)
    check(rc == 1 and "cannot attach" in text, "a foreign file was not refused:\n" + text)
    os.unlink(w.shm)
    w.logs = [l for l in w.logs if "floodgate" not in l]	# their errors were the point


def mtu_refusal(w):
    """Jumbo frames on a port that cannot take them: a refusal at start
    that names the port's limits (floodctld runs: the region is there)."""
    w.write_config(extra="mtu 9000\n")
    p = w.start_dp(expect_ready=False)
    rc = p.wait(timeout=60)
    text = fgdp.slurp(p.logp)
    check(rc == 1 and "[dataplane] mtu 9000 is not what it takes" in text and
          "frames up to 1522 octets" in text, "mtu 9000 on a tap was not refused:\n" + text)
    w.write_config()
    w.logs = [l for l in w.logs if "floodgate" not in l]


def session(w):
    s = fgdp.connect("198.18.0.1")
    r = fgdp.Lines(s)
    got = r.line()
    check(got.startswith("200 "), "greeting %r" % got)
    old = "<old.%d@dp.test>" % os.getpid()
    new = ["<n%d.%d@dp.test>" % (i, os.getpid()) for i in range(3)]
    out = [b"MODE STREAM\r\n"] + [b"CHECK %s\r\n" % i.encode() for i in new] + [b"CHECK x@y\r\n"]
    out += [b"TAKETHIS %s\r\n" % new[0].encode(), fgdp.article(new[0])]
    out += [b"TAKETHIS %s\r\n" % new[0].encode(), fgdp.article(new[0])]
    out += [b"TAKETHIS %s\r\n" % old.encode(), fgdp.article(old, age=20 * 86400)]
    s.sendall(b"".join(out))
    want = ["203 ", "238 " + new[0], "238 " + new[1], "238 " + new[2], "438 x@y",
            "239 " + new[0], "439 " + new[0], "439 " + old]
    for exp in want:
        got = r.line()
        check(got.startswith(exp), "expected %r, got %r" % (exp, got))
    # once safe, the ID is refused; a too-old reject is remembered too
    s.sendall(b"CHECK %s\r\nCHECK %s\r\nQUIT\r\n" % (new[0].encode(), old.encode()))
    for exp in ["438 " + new[0], "438 " + old, "205 "]:
        got = r.line()
        check(got.startswith(exp), "expected %r, got %r" % (exp, got))
    check(s.recv(100) == b"", "the connection stays open after 205")
    s.close()
    return new[0], old


def main():
    w = fgdp.World("basic")
    refusals(w)
    w.start_ctld()
    mtu_refusal(w)
    w.start_dp()
    # net_tap lists MULTI_SEGS: TCP's pieces sent by reference may be
    # chained, within floodgate's own cap of 17 mbufs (docs/tcp.md)
    check("TX frames of 17 mbufs at most" in fgdp.slurp(w.fg.logp),
          "the port's chaining limit is not in the log:\n%s" % fgdp.slurp(w.fg.logp)[-2000:])
    ok, body = w.dp("status")
    check(ok and "active" in body, "status: %s" % body)
    accepted, old = session(w)
    def looked_up():
        r = w.ctl("lookup", accepted)
        return r if r[0] == 0 and "accepted" in r[1] else None
    rc, out, err = fgdp.poll_until(looked_up, 30) or w.ctl("lookup", accepted)
    check(rc == 0 and "accepted" in out, "floodctl lookup %s: %s %s" % (accepted, out, err))
    # the journal records name the date header and the reject reason
    lookup = lambda i: __import__("json").loads(w.ctl("lookup", "--json", i)[1])
    fgdp.poll_until(lambda: lookup(old).get("in_retained_journal"), 60, step=0.1)
    j = lookup(old)
    check(j.get("state") == "rejected" and j.get("reason") == "too-old" and
          j.get("date_header") == "Injection-Date", "lookup of the too-old reject: %r" % j)
    j = lookup(accepted)
    check(j.get("date_header") == "Injection-Date" and j.get("reason") is None,
          "lookup of the accepted ID: %r" % j)
    # the dataplane publishes its counters into its slot now and then:
    # wait for them to show, do not bet on when
    def ctld_counters():
        c = __import__("json").loads(w.ctl("stats", "--json")[1])["counters"]
        return c if c["nntp_articles_accepted"] >= 1 and c["tcp_accepted"] >= 1 else None
    check(fgdp.poll_until(ctld_counters, 30), "floodctld's stats lack the dataplane's")
    rc, out, _ = w.ctl("status", "--json")
    writers = __import__("json").loads(out)["writers"]
    check(any(x["name"] == "floodgate/w0" and x["state"] == "live" for x in writers),
          "no live floodgate writer slot in %s" % writers)
    fg = subprocess.run([os.path.join(fgdp.BIN, "feedgen"), "--host", fgdp.DP_ADDR,
                         "--articles", "4000", "--path-identity",
                         "floodgate.test", "--id-prefix", "basic%d" % os.getpid(),
                         "--timeout", "60"], capture_output=True, text=True, timeout=120)
    check(fg.returncode == 0, "feedgen:\n%s\n%s" % (fg.stdout[-3000:], fg.stderr[-2000:]))
    log(fg.stdout.strip().splitlines()[-1])
    rc, out, err = w.ctl("peers", "--json")	# through floodctld
    check(rc == 0, "floodctl peers: %s" % err)
    peers = __import__("json").loads(out)
    a = [p for p in peers["peers"] if p["name"] == "feeder-a"]
    check(a and a[0]["check"] >= 40000 and a[0]["239"] >= 1, "peers: %s" % peers["peers"])
    # seed 002 per peer: every accepted article was an ID first offered by
    # feeder-a (the only peer), and its delays were measured
    p = a[0]
    check(p["239"] <= p["offers_first"] <= p["offers"] <= p["check"] + p["takethis"] and
          abs(p["offers_first_share"] - p["offers_first"] / p["offers"]) < 1e-5 and
          p["propagation_delay_mean_s"] is not None and p["injection_delay_mean_s"] is not None,
          "peers' seed 002 columns: %s" % p)
    rc, out, err = w.ctl("peers")
    check(rc == 0 and out.split("\n")[0].split()[-3:] == ["first%", "prop(s)", "inj(s)"],
          "floodctl peers' columns: %r" % out[:200])
    # idle: the worker blocks on the tap's interrupts (or sleeps)
    c0 = w.stats()
    t0 = fgdp.cpu_ticks(w.fg.pid)
    time.sleep(3)
    idle = (fgdp.cpu_ticks(w.fg.pid) - t0) / os.sysconf("SC_CLK_TCK") / 3
    c1 = w.stats()
    log("idle CPU: %.1f %% of a core" % (100 * idle))
    check(idle < 0.25, "an idle dataplane used %.0f %% of a core" % (100 * idle))
    # the loop's cycles: the feed's passes were busy; the idle seconds
    # went to idle cycles (wall time, whatever the machine's load), few
    # to busy ones
    hz = c1.get("tsc_hz", 0)
    busy = c1["worker:0:busy_cycles"] - c0["worker:0:busy_cycles"]
    idled = c1["worker:0:idle_cycles"] - c0["worker:0:idle_cycles"]
    log("while idle: %.3f s busy, %.3f s idle (TSC %d Hz)" % (busy / hz, idled / hz, hz)
        if hz else "no tsc_hz")
    check(hz > 0 and c0["worker:0:busy_cycles"] > 0, "no busy cycles after the feed: %r" %
          {k: v for k, v in c0.items() if "cycles" in k or k == "tsc_hz"})
    check(idled >= 2 * hz and busy < idled / 4,
          "3 s idle counted %d busy and %d idle cycles" % (busy, idled))
    lc = __import__("json").loads(w.ctl("stats", "--json")[1]).get("lcores", [])
    check(any(x["writer"] == "floodgate/w0" and 0 < x["busy_share"] < 1 for x in lc),
          "floodctld's stats show no busy share of floodgate/w0: %r" % lc)
    w.stop_dp()
    w.check_logs()
    fgdp.passed("70_dp_basic")


if __name__ == "__main__":
    main()
