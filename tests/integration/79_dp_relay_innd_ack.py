#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""79_dp_relay_innd_ack — end-to-end acknowledgement on floodgate (DPDK,
tap port) to a real innd: the same sink and relay as floodgate-host
(51_relay_innd_ack), the articles written to innd from the worker's held
mbufs. Once an article was acknowledged end-to-end (the #ack connections
are up), 150 new articles and 20 too old get 239/439 with nothing written
to floodgate's disk (queue_bytes does not move while relay_ack_accepted
grows by the 150), and innd's history holds every 239'd ID.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
import hostlib  # noqa: E402
import relaykit  # noqa: E402
from fgdp import check, log  # noqa: E402

INND_PORT = 11192


def feed(arts):
    return relaykit.feed(arts, addr=(fgdp.DP_ADDR, 119), src=fgdp.KERNEL_ADDRS[0])


def run(w, innd_dir):
    w.start_ctld()
    w.start_dp()
    relaykit.wait_acked(w.stats, feed, "dpack")

    before = w.stats()
    arts = []
    for i in range(150):
        mid = "<dpack%d@dpack.test>" % i
        arts.append((mid, hostlib.article(mid, groups="fg.test.text")))
    for i in range(20):
        mid = "<dpackold%d@dpack.test>" % i
        arts.append((mid, hostlib.article(mid, age=15 * 86400, inj_age=15 * 86400,
                                          groups="fg.test.text")))
    answers = relaykit.first_answers(feed(arts))
    acc = [m for m, c in answers.items() if c == 239]
    check(len(acc) == 150 and sum(1 for c in answers.values() if c == 439) == 20,
          "150 accepted, 20 refused: %s" % answers)

    def counted(st):
        return st.get("relay_ack_accepted", 0) - before.get("relay_ack_accepted", 0) >= 150
    after = w.wait_stats(counted, "the 150 counted as acknowledged end-to-end")
    grew = after.get("relay_ack_accepted", 0) - before.get("relay_ack_accepted", 0)
    written = after.get("queue_bytes", 0) - before.get("queue_bytes", 0)
    check(grew == 150, "relay_ack_accepted grew by %d, not 150" % grew)
    check(written == 0, "%d octets written to floodgate's disk while innd kept up" % written)
    missing = relaykit.not_in_history(innd_dir, acc)
    check(not missing, "239 but not in innd's history: %s" % sorted(missing)[:5])
    w.stop_dp()
    w.check_logs()
    log("150 acknowledged end-to-end by innd through the DPDK dataplane, 0 octets queued; "
        "the worker blocked %d times, woken by a result %d times" % (
            after.get("dp_idle_waits", 0) - before.get("dp_idle_waits", 0),
            after.get("dp_wakes", 0) - before.get("dp_wakes", 0)))


def main():
    fgkit.need_inn()
    w = fgdp.World("innda", prefix="fg-dpr",
                   extra="[downstream down]\naddress 127.0.0.1:%d\nconnections 2\n"
                         "acknowledges on\n" % INND_PORT)
    os.chmod(w.dir, 0o755)
    relaykit.with_innd(w.dir, INND_PORT, lambda work, d: run(w, d))
    fgdp.passed("79_dp_relay_innd_ack")


if __name__ == "__main__":
    main()
