#!/usr/bin/env python3
# timeout: 300
"""50_relay_countd — floodgate-host with the durable queue and the relay
(under the power-loss shim), against the counting downstream (countd.py):
every article that got 239 is
relayed exactly once, byte for byte; none that got 439 is relayed; the
downstream stopped mid-feed and started again gets everything it missed,
still exactly once; floodgate-host killed (SIGKILL) with articles in flight
and started again delivers everything not acknowledged, re-sending at most
the documented bound (4 x connections x window)."""
import hashlib
import os
import signal
import tempfile
import time

import hostlib
import relaykit
from hostlib import check

relaykit.in_netns()

WINDOW = 4
BOUND = 4 * 1 * WINDOW


def start_host(data, extra=""):
    """Under the power-loss shim: what it deems durable is what a crash keeps."""
    return hostlib.Host(extra=relaykit.host_config(
        data, downstream_extra="window %d\n%s" % (WINDOW, extra)),
        env=relaykit.powerloss_env(data, data + ".pl"))


def expect_exactly_once(countd, answers, wires, allow_twice=()):
    counts = countd.counts()
    sums = {r[1]: r[3] for r in countd.records()}
    for mid, code in answers.items():
        if code == 239:
            n = counts.get(mid, 0)
            check(n == 1 or (n == 2 and mid in allow_twice),
                  "%s got 239 and was relayed %d times" % (mid, n))
            want = hashlib.sha256(relaykit.wire_payload(wires[mid])).hexdigest()
            check(sums.get(mid) == want, "%s relayed with other octets" % mid)
        else:
            check(mid not in counts, "%s got %d and was relayed" % (mid, code))


def main():
    work = tempfile.mkdtemp(prefix="fg-relay-50-")
    os.chmod(work, 0o755)
    hostlib.KEEP.append(work)
    data = os.path.join(work, "data")
    countd = relaykit.Countd(work)
    countd.start()
    host = start_host(data)

    # 1. a feed: new, too old (439), duplicates (439)
    arts = [("<a%d@relay.test>" % i, relaykit.make_article("<a%d@relay.test>" % i))
            for i in range(200)]
    arts += [("<old%d@relay.test>" % i,
              relaykit.make_article("<old%d@relay.test>" % i, age=20 * 86400)) for i in range(10)]
    wires = dict(arts)
    got = relaykit.feed(arts + arts[:10])
    check(all(code == 439 for _, code in got[210:]), "duplicates refused")
    answers = relaykit.first_answers(got)
    check(sum(c == 239 for c in answers.values()) == 200, "200 accepted: %s" % answers)
    check(all(answers[m] == 439 for m, _ in arts[200:210]), "too old refused")
    st = relaykit.wait_drained(host)
    check(relaykit.stats_line(st, "down", "accepted") == 200, "countd accepted 200")
    expect_exactly_once(countd, answers, wires)

    # 2. the downstream goes away mid-feed, comes back: nothing lost, once
    more = [("<b%d@relay.test>" % i, relaykit.make_article("<b%d@relay.test>" % i))
            for i in range(150)]
    wires.update(more)
    countd.stop()
    relaykit.first_answers(relaykit.feed(more), answers)
    check(all(answers[m] == 239 for m, _ in more), "accepted while the downstream is down")
    st = host.stats()
    check(relaykit.stats_line(st, "down", "lag_records") == 150, "150 waiting: %s" %
          relaykit.stats_line(st, "down", "lag_records"))
    check(relaykit.stats_line(st, "down", "ready") == 0, "no connection up")
    countd.start()
    relaykit.wait_drained(host)
    expect_exactly_once(countd, answers, wires)

    # 3. a slow downstream, SIGKILL with articles in flight, restart
    countd.stop()
    countd.args = ["--delay-ms", "20"]
    countd.start()
    last = [("<c%d@relay.test>" % i, relaykit.make_article("<c%d@relay.test>" % i))
            for i in range(300)]
    wires.update(last)
    relaykit.first_answers(relaykit.feed(last), answers)
    check(all(answers[m] == 239 for m, _ in last), "accepted before the kill")
    # the relay may be in a reconnect backoff: kill once delivery has begun
    end = time.time() + 30
    while time.time() < end and not any(m in countd.counts() for m, _ in last):
        time.sleep(0.05)
    before = countd.counts()
    check(0 < sum(1 for m, _ in last if m in before) < 300, "the kill lands mid-relay")
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait()
    relaykit.powerloss(data, data + ".pl")
    countd.stop()
    countd.args = []
    countd.start()
    host = start_host(data)
    relaykit.wait_drained(host)
    counts = countd.counts()
    twice = [m for m, n in counts.items() if n > 1]
    check(len(twice) <= BOUND, "%d articles re-sent after the crash, bound %d" %
          (len(twice), BOUND))
    check(all(counts[m] == 2 for m in twice), "none more than twice")
    expect_exactly_once(countd, answers, wires, allow_twice=set(twice))
    host.stop()
    countd.stop()
    print("PASS: 50_relay_countd (%d articles, %d re-sent after the crash)" %
          (len(answers), len(twice)))


main()
