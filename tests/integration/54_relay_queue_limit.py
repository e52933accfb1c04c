#!/usr/bin/env python3
# timeout: 300
"""54_relay_queue_limit — a full queue defers peers and never refuses them
(floodgate-host; what a power loss does to the queue is 53's).

The downstream is down and the queue's limit small (queue-limit 1M): once
the queue holds that much, a CHECK for a new ID gets 431 and a peer sending
TAKETHIS is slowed by the filter no longer reading (never a 431 or a 439 to
TAKETHIS); when the downstream comes back the queue drains, the refusal
ends by itself, the stalled feed completes with 239 for every article, and
each is delivered exactly once."""
import os
import threading

import fgkit
import hostlib
import relaykit
from hostlib import check

relaykit.in_netns()


def check_answer(mid):
    c = hostlib.Client(timeout=30)
    check(c.line().startswith(b"200"), "greeting")
    c.send("CHECK %s\r\n" % mid)
    got = c.line().decode().split()
    c.close()
    return int(got[0])


def main():
    work = fgkit.mkdtemp("fg-relay-54-")
    hostlib.KEEP.append(work)
    data = os.path.join(work, "data")
    countd = relaykit.Countd(work)
    host = hostlib.Host(extra=relaykit.host_config(data, persistence="queue-limit 1M\n"))
    arts = [("<q%d@limit.test>" % i, relaykit.make_article("<q%d@limit.test>" % i, size=8000))
            for i in range(400)]
    answers = []
    t = threading.Thread(target=lambda: relaykit.feed(arts, window=8, answers=answers))
    t.start()
    st = host.wait_stats(lambda st: st.get("queue_refusing") == 1 and st["nntp_stall_sink"] >= 1,
                         "the queue to refuse at its limit and the feed to stall", timeout=60)
    check(st.get("queue_refusing") == 1, "the queue refuses at its limit")
    check(st["queue_bytes_on_disk"] >= 1 << 20, "1 MiB queued: %d" % st["queue_bytes_on_disk"])
    # the feed has read every answer the host gave (the host's own count)
    fgkit.wait_until(lambda: len(answers) >= host.stats()["nntp_response:239"], 30,
                     "the feed to read the answers the host gave")
    stalled = len(answers)
    check(stalled < 400, "the feed is held back (%d answered)" % stalled)
    check(all(c == 239 for _, c in answers), "only 239 so far: %s" %
          [a for a in answers if a[1] != 239][:3])
    # the engine goes on answering (a CHECK on another connection) while the
    # stalled feed gets nothing more: the host's count of 239s stands still
    check(check_answer("<new@limit.test>") == 431, "CHECK of a new ID: 431 while full")
    st = host.stats()
    check(st["nntp_response:239"] == stalled and len(answers) == stalled,
          "still held back: %d 239s, %d answers, %d before" % (
              st["nntp_response:239"], len(answers), stalled))
    check(st["nntp_defer_sink"] >= 1 and st["nntp_stall_sink"] >= 1,
          "deferred and stalled for the sink: %d %d" % (st["nntp_defer_sink"],
                                                        st["nntp_stall_sink"]))
    countd.start()
    t.join(120)
    check(not t.is_alive(), "the feed completed")
    check(len(answers) == 400 and all(c == 239 for _, c in answers),
          "every article 239: %s" % [a for a in answers if a[1] != 239][:3])
    st = relaykit.wait_drained(host)
    check(st["queue_refusing"] == 0, "refusal over")
    check(check_answer("<new@limit.test>") == 238, "new IDs wanted again")
    counts = countd.counts()
    check(len(counts) == 400 and all(n == 1 for n in counts.values()),
          "each delivered once: %d" % len(counts))
    host.stop()
    countd.stop()
    print("PASS: 54_relay_queue_limit (%d answered before the downstream came back)" % stalled)


main()
