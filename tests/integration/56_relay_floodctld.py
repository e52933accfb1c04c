#!/usr/bin/env python3
# timeout: 400
"""56_relay_floodctld — with floodctld: a power loss never forgets an ID
that got 239, even when the history journal lagged, and never loses the
article.

floodctld and floodgate-host --floodctld both run under the power-loss
shim on the one data directory (journal, snapshots, queue, cursors). The
journal's group commit is 60 s, so when both processes are SIGKILLed
mid-feed nothing of the feed is in the journal; the directory is reverted
to its durable state and the shared memory wiped, as a reboot would.
floodctld's restore then re-inserts the IDs from the outbound queue: every
ID that got 239 before the kill is answered 438 by the restarted filter
(it is in history), and, the downstream back, every such article is
delivered. /metrics shows the queue's gauges and the relay's counters
(published by the host's outbound slot), and promtool accepts it.
"""
import os
import re
import signal
import socket
import subprocess
import threading

import relaykit

relaykit.in_netns()

import hostlib  # noqa: E402 (after the namespace switch)
import fgkit  # noqa: E402
from ctlkit import BUILD, Ctl, check, http_get, log, passed, prom_parse, prom_value  # noqa: E402
from fgkit import wait_until  # noqa: E402

HOST = os.path.join(BUILD, "bin/floodgate-host")
PORT = hostlib.PORT
METRICS = "http://127.0.0.1:9119/metrics"


def start_host(c, env=None):
    logp = os.path.join(c.dir, "host.%d.log" % len(c.procs))
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen([HOST, "-c", c.conf, "--floodctld", "--stats-file",
                          os.path.join(c.dir, "host.stats")], stdout=subprocess.DEVNULL,
                         stderr=open(logp, "w"), env=e)
    c.procs.append(p)

    def listening():
        check(p.poll() is None, "floodgate-host exited:\n" + open(logp).read())
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            return True
        except OSError:
            return False
    wait_until(listening, 30, "floodgate-host to listen", step=0.02)
    return p


def host_stats(c, host):
    return fgkit.fresh_stats_file(host, os.path.join(c.dir, "host.stats"),
                                  "floodgate-host's stats")


def checks(ids):
    """CHECK every ID, pipelined; {id: code}."""
    c = hostlib.Client(timeout=60)
    check(c.line().startswith(b"200"), "greeting")
    out = {}
    for i in range(0, len(ids), 200):
        part = ids[i:i + 200]
        c.send("".join("CHECK %s\r\n" % m for m in part))
        for m in part:
            code, mid = c.line().decode().split()
            check(mid == m, "answer out of order: %s for %s" % (mid, m))
            out[m] = int(code)
    c.close()
    return out


def main():
    c = Ctl("relay")
    countd = relaykit.Countd(c.dir, args=["--delay-ms", "5"])
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer local]\naddress 127.0.0.1\nnewsgroups *\n"
             "[persistence]\njournal-commit 60s\nsnapshot-interval 1h\nwarmup 0\n"
             "queue-limit 16M\n"
             "[downstream down]\naddress 127.0.0.1:%d\nwindow 8\n"
             % (PORT, relaykit.DOWN_PORT), http="127.0.0.1:9119")
    pl = {"FG_PL_DIR": c.data, "FG_PL_STATE": c.state, "LD_PRELOAD": relaykit.POWERLOSS}
    c.start(powerloss=True, args=["--expire-interval", "3600"])
    countd.start()
    host = start_host(c, env=pl)

    arts = [("<f%d@ctld.test>" % i, relaykit.make_article("<f%d@ctld.test>" % i, size=3000))
            for i in range(4000)]
    answers = []
    t = threading.Thread(target=lambda: relaykit.feed(arts, answers=answers, until_eof=True))
    t.start()
    wait_until(lambda: len(answers) >= 1500 or not t.is_alive(), 120,
               "1500 answers before the kill", step=0.01)
    host.send_signal(signal.SIGKILL)
    c.kill()
    host.wait()
    t.join()
    countd.stop()
    accepted = [m for m, code in answers if code == 239]
    delivered_before = set(countd.counts())
    log("killed with %d accepted, %d delivered" % (len(accepted), len(delivered_before)))
    check(len(accepted) >= 1500, "accepted before the kill")
    check(len(delivered_before) < len(accepted), "some were still queued at the kill")

    relaykit.powerloss(c.data, c.state)
    c.wipe_shm()
    c.start(powerloss=True, args=["--expire-interval", "3600"])
    m = re.search(r"the outbound queue: (\d+) IDs re-inserted", c.log())
    check(m and int(m.group(1)) >= len(accepted) * 0.9,
          "the restore took the IDs from the queue: %s" % (m.group(0) if m else c.log()))
    host = start_host(c)
    got = checks(accepted)
    bad = [i for i, code in got.items() if code != 438]
    check(not bad, "%d IDs that got 239 are not in history after the power loss, e.g. %s"
          % (len(bad), bad[:3]))

    countd.args = []
    countd.start()
    fgkit.poll_until(lambda: all(i in countd.counts() for i in accepted), 60, step=0.2)
    counts = countd.counts()
    lost = [i for i in accepted if i not in counts]
    check(not lost, "%d articles that got 239 were never delivered, e.g. %s" % (len(lost), lost[:3]))
    twice = [i for i, n in counts.items() if n > 1]
    check(len(twice) <= 4 * 8, "%d re-sent after the power loss (bound 32)" % len(twice))
    log("%d accepted, all in history and delivered; %d re-sent after the crash"
        % (len(accepted), len(twice)))

    # the metrics: the queue's gauges, the relay's counters from the host's slot
    def scraped():
        st, body = http_get(METRICS)
        s = prom_parse(body) if st == 200 else {}
        return body, s
    last = {}

    def drained_scrape():
        last["body"], last["s"] = scraped()
        s = last["s"]
        return prom_value(s, "floodgate_relay_lag_records", downstream="down") == 0 and \
            (prom_value(s, "floodgate_relay_accepted_total") or 0) > 0
    fgkit.poll_until(drained_scrape, 20, step=0.2)
    body, s = last["body"], last["s"]
    check(prom_value(s, "floodgate_relay_lag_records", downstream="down") == 0,
          "lag 0: %s" % [l for l in body.splitlines() if "queue" in l or "lag" in l][-12:])
    check(prom_value(s, "floodgate_relay_lag_seconds", downstream="down") == 0, "no age")
    check((prom_value(s, "floodgate_queue_bytes") or 0) > 0, "queue bytes")
    check(prom_value(s, "floodgate_queue_records") is not None, "queue records")
    check((prom_value(s, "floodgate_relay_accepted_total") or 0) > 0, "relay counters exported")
    check((prom_value(s, "floodgate_queue_segments_total") or 0) > 0, "queue counters exported")
    p = subprocess.run(["promtool", "check", "metrics"], input=body.encode(),
                       capture_output=True)
    check(p.returncode == 0, "promtool: %s" % p.stderr.decode()[-500:])

    # the journal gate: a delivered segment stays until the journal holds
    # its IDs (commit every 60 s here; a snapshot commits the journal)
    more = [("<g%d@ctld.test>" % i, relaykit.make_article("<g%d@ctld.test>" % i, size=3000))
            for i in range(800)]
    got = relaykit.feed(more)
    check(all(code == 239 for _, code in got), "accepted")
    segs = lambda: sorted(f for f in os.listdir(c.data) if f.startswith("queue-0"))
    wait_until(lambda: all(i in countd.counts() for i, _ in more), 30,
               "countd to receive the 800", step=0.2)
    before = segs()
    check(len(before) >= 2, "a sealed, delivered segment: %s" % before)
    # the positive sign that deletion had its chance: the queue's
    # housekeeping found the delivered segment and the gate held it, twice
    held = host_stats(c, host)["queue_gate_held"]
    fgkit.wait_counters(lambda: host_stats(c, host),
                        lambda st: st["queue_gate_held"] >= held + 2, 30,
                        "the queue's housekeeping to meet the gate twice")
    check(segs() == before, "kept while the journal lags: %s" % segs())
    rc, out, err = c.ctl("snapshot")
    check(rc == 0, "floodctl snapshot: %s" % err)
    fgkit.poll_until(lambda: segs() != before, 30, step=0.1)
    check(len(segs()) < len(before), "deleted once the journal committed: %s" % segs())
    host.send_signal(signal.SIGTERM)
    check(host.wait(timeout=30) == 0, "host stops cleanly")
    countd.stop()
    c.stop()
    passed("56_relay_floodctld")


main()
