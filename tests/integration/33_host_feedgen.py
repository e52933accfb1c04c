#!/usr/bin/env python3
# timeout: 400
"""feedgen's independent model judges floodgate-host's every answer.

feedgen (docs/feedgen.md) plays several peers that flood-fill the same
articles — wanted ones, too old, too far in the future, path loops,
invalid Message-IDs, no Injection-Date, versions — and checks each answer
against what RFC 3977/4644 and the rules require: no article accepted
twice, none refused that was wanted, 431 only where a retry is due, never
a 431 to TAKETHIS. Run against the host with two threads (SO_REUSEPORT,
one shared history), in CHECK, TAKETHIS and IHAVE modes, and with a slow,
holding sink.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import BUILD, PORT, Host, check, in_netns  # noqa: E402

in_netns()
FEEDGEN = os.path.join(BUILD, "bin", "feedgen")
if not os.path.exists(FEEDGEN):
    print("FAIL: %s not built" % FEEDGEN)
    sys.exit(1)


def feed(host, mode, seed, extra=()):
    cmd = [FEEDGEN, "--host", "127.0.0.1", "--port", str(PORT), "--server-pid",
           str(host.proc.pid), "--mode", mode, "--peers", "6", "--dups", "4",
           "--articles", "4000", "--size", "mix", "--binary-size", "64K", "--window", "48",
           "--seed", str(seed), "--cutoff", "10d", "--path-identity", "filter.test.example",
           "--timeout", "300", "--no-progress"] + list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(r.returncode == 0 and "check: OK" in r.stdout,
          "feedgen %s (seed %d) against the host:\n%s" % (mode, seed, r.stdout[-3000:]))
    return r.stdout


def main():
    host = Host(args=["-t", "2"])
    for n, mode in enumerate(("check", "takethis", "ihave")):
        feed(host, mode, 11 + n)
    st = host.stop()
    check(st["nntp_response:431"] > 0 or st["nntp_response:436"] > 0, "no deferral seen")
    check(st["transfers_open"] == 0 and st["history_state:offered"] == 0, "left open")
    # a slow sink that holds the received buffers: same answers, in order
    host = Host(args=["-t", "2", "--sink-hold", "--sink-delay-ms", "5"])
    feed(host, "check", 21)
    feed(host, "takethis", 22)
    st = host.stop()
    check(st["nntp_sink_holds"] > 0, "the sink held buffers")
    print("PASS: 33_host_feedgen")


main()
