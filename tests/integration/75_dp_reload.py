#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""75_dp_reload — a new configuration under load, no session dropped.

Two workers; load clients stream fresh articles the whole time, and one
long-lived session watches the rules. With the cutoff at 10 days an
article dated 5 days ago is accepted. `floodctl reload` of a file with
errors is refused by floodctld (each error listed, the dataplane never
sees it, the same article age is still accepted). Then the cutoff becomes
3 days: floodctld applies it and hands the file to the dataplane; on the
very same connection a new 5-day-old article is refused as too old, a
fresh one still accepted; the load clients never saw an error or a
reconnect, and every worker switched.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402

DAY = 86400


def offer(s, r, msgid, age, expect):
    s.sendall(b"TAKETHIS %s\r\n" % msgid.encode() + fgdp.article(msgid, age=age))
    got = r.line()
    check(got.startswith(expect + " " + msgid), "%s (%d days old): got %r, want %s"
          % (msgid, age // DAY, got, expect))


def reload(w, path):
    """`floodctl reload`: floodctld validates and applies, then the dataplane."""
    rc, out, err = w.ctl("reload", path)
    return rc == 0, out + err


def main():
    w = fgdp.World("reload", workers=2, rx_queues=2)
    w.start_ctld()
    w.start_dp()
    pid = os.getpid()
    s = fgdp.connect("198.18.0.3")
    r = fgdp.Lines(s)
    check(r.line().startswith("200 "), "greeting")
    offer(s, r, "<old1.%d@reload.test>" % pid, 5 * DAY, "239")
    # wait_tcp's probe closed without QUIT: its session is counted closed
    # once its FIN is in, which may be after this point; wait for that
    # (every session but ours ended) before taking the base
    closed0 = fgkit.wait_counters(
        w.stats, lambda c: c["nntp_sessions_opened"] - c["nntp_sessions_closed"] == 1, 30,
        "the start-up probe's session to close")["nntp_sessions_closed"]
    load = [fgdp.Feed(src, "l%d" % k) for k, src in enumerate(["198.18.0.1", "198.18.0.1",
                                                            "198.18.0.4", "198.18.0.4"])]
    for t in load:
        t.start()
    # the reloads come under load: once the clients have articles accepted
    fgdp.wait_until(lambda: sum(t.n for t in load) > 0, 60, "the load clients to get going")
    # a broken file: refused, every error named, nothing changed
    bad = os.path.join(w.dir, "bad.conf")
    with open(bad, "w") as f:
        f.write("[rules]\ncutoff banana\nfuture-margin 48h\n[nosuchsection]\n")
    ok, body = reload(w, bad)
    check(not ok and "refused" in body and "cutoff" in body and "future-margin" in body,
          "a broken file was not refused with its errors: %s" % body)
    check("\ndataplane: " not in "\n" + body, "a refused file went on to the dataplane: %s" % body)
    offer(s, r, "<old2.%d@reload.test>" % pid, 5 * DAY, "239")
    # cutoff 10d -> 3d, under load
    new = w.write_config(workers=2, rx_queues=2, cutoff="3d",
                         path=os.path.join(w.dir, "cutoff3d.conf"))
    ok, body = reload(w, new)
    check(ok and "applied        rules cutoff" in body and "dataplane: " in body and
          "[rules] cutoff" in body and "2 workers switched" in body, "reload: %s" % body)
    log(body.strip().splitlines()[-1])
    offer(s, r, "<old3.%d@reload.test>" % pid, 5 * DAY, "439")
    offer(s, r, "<new3.%d@reload.test>" % pid, 3600, "239")
    # and the load goes on after it: more articles accepted since
    mark = sum(t.n for t in load)
    fgdp.wait_until(lambda: sum(t.n for t in load) > mark or any(t.error for t in load), 60,
                    "the load clients to go on after the reload")
    for t in load:
        t.stop.set()
    for t in load:
        t.join(30)
        check(not t.is_alive() and t.error is None, "load client: %s" % t.error)
    log("load: %d articles accepted across the reload" % sum(t.n for t in load))
    check(all(t.n > 0 for t in load), "a load client made no progress")
    # a client's QUIT is answered before its connection is closed and
    # counted: wait for the count, not for the clients
    st = fgkit.wait_counters(w.stats, lambda c: c["nntp_sessions_closed"] - closed0 >= len(load),
                             30, "the load clients' sessions to close")
    check(st["dp_config_swaps"] == 2, "workers switched %d times" % st["dp_config_swaps"])
    check(st["rejected:too-old"] >= 1, "no too-old reject")
    # the load clients quit cleanly; the watching session is still open
    check(st["nntp_sessions_closed"] - closed0 == len(load) and
          st["nntp_command:quit"] == len(load), "sessions ended: %d, QUITs: %d"
          % (st["nntp_sessions_closed"] - closed0, st["nntp_command:quit"]))
    s.sendall(b"QUIT\r\n")
    check(r.line().startswith("205"), "QUIT")
    s.close()
    ok, body = w.dp("status")
    check("1 reloads" in body, "status: %s" % body)
    w.stop_dp()
    w.check_logs(allow=r"^(err|warn) config: .*bad\.conf|^err floodctld: reload of .*bad\.conf refused")
    fgdp.passed("75_dp_reload")


if __name__ == "__main__":
    main()
