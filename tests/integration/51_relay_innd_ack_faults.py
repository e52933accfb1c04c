#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""51_relay_innd_ack_faults — the acknowledging downstream's own faults in
end-to-end mode (`acknowledges on`, ack-timeout 250ms; docs/relay.md),
against a real innd keeping its articles (tradspool) on a tmpfs of 4 MiB
mounted in this test's own mount namespace (ip netns exec gives it one).
innd stopped (SIGSTOP) is 51_relay_innd_ack's.

1. `ctlinnd throttle`: innd refuses articles; 20 articles are all answered
   239 (spilled: relay_ack_spill_* and relay_ack_queued grow by the 20,
   the queue holds 20 records), none 439 or 400; after `ctlinnd go` the
   queue delivers them and innd's history has every one;
2. `ctlinnd pause`: the same;
3. a full spool: innd answers "439 Can't store article" and forgets the
   ID (docs/relay.md, "Why the 438 check"). The peer gets that 439 as 439
   (item 1's rule), floodgate does not remember it (relay_ack_refused grows,
   relay_ack_remembered does not; a CHECK of the ID is answered 238), so
   once the spool has room again (the tmpfs grown) a re-offer is accepted
   and stored. Every ID answered 239 is in innd's history.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
import hostlib  # noqa: E402
import relaykit  # noqa: E402
from hostlib import check  # noqa: E402

relaykit.in_netns()

INND_PORT = 11194
ACK_MS = 250
SPILLS = ("relay_ack_spill_timeout", "relay_ack_spill_refused", "relay_ack_spill_eof",
          "relay_ack_queued")


def log(msg):
    print(msg, flush=True)


def ctr(st, name):
    return st.get(name, 0)


def grew(before, after, names):
    return sum(ctr(after, k) - ctr(before, k) for k in names)


def arts(tag, n, size=2048):
    out = []
    for i in range(n):
        mid = "<%s%d@fault.test>" % (tag, i)
        body = ["%070d" % k for k in range(max(size // 72, 1))]
        out.append((mid, hostlib.article(mid, groups="fg.test.text", body=body)))
    return out


def stopped_round(host, innd_dir, how):
    """innd throttled or paused: everything spilled and answered 239, then
    delivered once innd goes again."""
    relaykit.ctlinnd(innd_dir, how, "fg fault test")
    try:
        before = host.stats()
        batch = arts(how, 20)
        answers = relaykit.feed(batch, window=8)
        codes = [c for _, c in answers]
        check(codes == [239] * 20, "innd %s: the peer got %s" % (how, codes))
        after = host.stats()
        spilled = grew(before, after, SPILLS)
        records = grew(before, after, ("queue_records",))
        check(spilled == 20 and records == 20,
              "innd %s: %d spilled, %d queue records for 20 articles" % (how, spilled, records))
    finally:
        relaykit.ctlinnd(innd_dir, "go", "fg fault test")
    relaykit.wait_drained(host, timeout=180)
    mids = [m for m, _ in batch]
    missing = relaykit.not_in_history(innd_dir, mids)
    check(not missing, "innd %s: 239 but not in innd's history: %s" % (how, sorted(missing)[:5]))
    log("innd %s: 20 spilled (%s), all 239, all delivered after `ctlinnd go`"
        % (how, ", ".join("%s %d" % (k[10:], ctr(after, k) - ctr(before, k)) for k in SPILLS)))


def full_round(host, innd_dir, spool):
    before = host.stats()
    batch = arts("full", 60, size=100 * 1024)
    answers = relaykit.first_answers(relaykit.feed(batch, window=4))
    acc = [m for m, c in answers.items() if c == 239]
    ref = [m for m, c in answers.items() if c == 439]
    check(acc and ref and len(acc) + len(ref) == 60,
          "a 4 MiB spool and 60 articles of 100 KB: %d 239, %d 439, others %s"
          % (len(acc), len(ref), {c for c in answers.values() if c not in (239, 439)}))
    news = fgkit.slurp(os.path.join(innd_dir, "log", "news"))
    check("Can't store article" in news, "innd refused for lack of space:\n%s" % news[-1000:])
    after = host.stats()
    check(grew(before, after, ("relay_ack_refused",)) == len(ref),
          "relay_ack_refused grew by the %d refusals" % len(ref))
    check(grew(before, after, ("relay_ack_remembered",)) == 0,
          "a refusal innd did not keep was remembered")
    c = hostlib.Client()
    c.line()
    c.send(b"CHECK " + ref[0].encode() + b"\r\n")
    got = c.line()
    c.close()
    check(got.startswith(b"238 "), "a CHECK of an ID innd could not store: %r" % got)
    missing = relaykit.not_in_history(innd_dir, acc)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    # room again: the refused ones are taken when offered again
    subprocess.run(["mount", "-o", "remount,size=256m", spool], check=True)
    again = relaykit.first_answers(relaykit.feed([(m, w) for m, w in batch if m in ref],
                                                 window=4))
    check(set(again.values()) == {239}, "re-offered after the spool has room: %s"
          % set(again.values()))
    missing = relaykit.not_in_history(innd_dir, ref)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    log("full spool: %d stored, %d refused by innd (439 to the peer, not remembered), "
        "accepted and stored when offered again with room" % (len(acc), len(ref)))


def run(work, innd_dir):
    check(os.readlink("/proc/self/ns/mnt") != os.readlink("/proc/%d/ns/mnt" % os.getppid()),
          "a mount namespace of this test's own (ip netns exec)")
    spool = os.path.join(innd_dir, "spool", "articles")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,uid=9,gid=9,mode=0755",
                    "fg-fault-spool", spool], check=True)
    try:
        data = os.path.join(work, "data")
        host = hostlib.Host(max_article_size=1 << 20, extra=relaykit.host_config(
            data, down_port=INND_PORT, persistence="ack-timeout %dms\n" % ACK_MS,
            downstream_extra="acknowledges on\nconnections 2\n"))
        relaykit.wait_ack_ready(host.stats, "fault")
        stopped_round(host, innd_dir, "throttle")
        stopped_round(host, innd_dir, "pause")
        full_round(host, innd_dir, spool)
        host.stop()
    finally:
        relaykit.innd("stop", innd_dir)
        subprocess.run(["umount", spool])


def main():
    fgkit.need_inn()
    work = fgkit.mkdtemp("fg-relay-51fault-")
    hostlib.KEEP.append(work)
    d = os.path.join(work, "innd")
    relaykit.innd("start", d, str(INND_PORT), "--store")
    try:
        run(work, d)
    finally:
        relaykit.innd("stop", d)
    print("PASS: 51_relay_innd_ack_faults")


main()
