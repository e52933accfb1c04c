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
import os
import signal

import fgkit
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


def main():
    work = fgkit.mkdtemp("fg-relay-50-")
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
    relaykit.expect_exactly_once(countd, answers, wires)

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
    relaykit.expect_exactly_once(countd, answers, wires)

    # 3. a slow downstream, SIGKILL with articles in flight, restart
    countd.restart(["--delay-ms", "20"])
    last = [("<c%d@relay.test>" % i, relaykit.make_article("<c%d@relay.test>" % i))
            for i in range(300)]
    wires.update(last)
    relaykit.first_answers(relaykit.feed(last), answers)
    check(all(answers[m] == 239 for m, _ in last), "accepted before the kill")
    # the relay may be in a reconnect backoff: kill once delivery has begun
    countd.wait_mid_relay(last)
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait()
    relaykit.powerloss(data, data + ".pl")
    countd.restart()
    host = start_host(data)
    relaykit.wait_drained(host)
    counts = countd.counts()
    twice = [m for m, n in counts.items() if n > 1]
    check(len(twice) <= BOUND, "%d articles re-sent after the crash, bound %d" %
          (len(twice), BOUND))
    check(all(counts[m] == 2 for m in twice), "none more than twice")
    relaykit.expect_exactly_once(countd, answers, wires, allow_twice=set(twice))
    host.stop()
    countd.stop()
    print("PASS: 50_relay_countd (%d articles, %d re-sent after the crash)" %
          (len(answers), len(twice)))


main()
