#!/usr/bin/env python3
# timeout: 300
"""45_ctl_reload — configuration reloads: refused with every error, or applied.

A broken file: `floodctl reload` exits 1 and lists every error with its
file:line (text and JSON), and the running configuration stays in force.
A file that changes a key only a restart changes (history capacity) is
refused whole, the key named with "needs a restart": nothing of it is
applied. A good file: the changes floodctld owns are applied at once
(expiry, snapshots, journal commit, verdict log, full-table policy). SIGHUP re-reads the running file, with the
same refusal for a broken one. The reload counters count all of it.
"""
import os
import signal

from ctlkit import Ctl, check, log, passed
from fgkit import poll_until

BROKEN = """[rules]
cutoff forever
[persistence]
snapshot-interval 30s
bogus-key 1
[nosuchsection]
"""


def settings(c):
    _, st = c.ctl_json("status")
    return (st["snapshot"]["interval_seconds"], st["expiry"]["mode"],
            st["expiry"]["cutoff_seconds"], st["journal"]["commit_ms"], st["verdict_log"])


def main():
    c = Ctl("reload")
    c.config("[persistence]\nsnapshot-interval 1h\n")
    c.start()
    before = settings(c)
    check(before == (3600, "first-seen", 864000, 1000, None), "initial settings %r" % (before,))

    bad = os.path.join(c.dir, "broken.conf")
    with open(bad, "w") as f:
        f.write(open(c.conf).read() + BROKEN)
    rc, out, err = c.ctl("reload", bad)
    check(rc == 1, "broken reload: exit %d" % rc)
    check("refused" in err and "running configuration is kept" in err, "says refused: %r" % err)
    for needle in ("cutoff", "bogus-key", "nosuchsection"):
        check(needle in err, "error about %s listed: %r" % (needle, err))
    check(err.count("broken.conf:") >= 3, "each error names file:line: %r" % err)
    rc, j = c.ctl_json("reload", bad)
    check(rc == 1 and len(j["details"]) >= 3 and j["errors"] >= 3, "JSON refusal: %r" % j)
    check(settings(c) == before, "old configuration still in force: %r" % (settings(c),))

    good = os.path.join(c.dir, "good.conf")
    vlog = os.path.join(c.dir, "verdict.log")
    text = open(c.conf).read().replace("snapshot-interval 1h",
                                       "snapshot-interval 10m\njournal-commit 500ms\nsnapshot-rate 2M")
    text += "[rules]\nexpiry article-date\ncutoff 7d\n[stats]\nverdict-log %s\n" % vlog
    with open(good, "w") as f:
        f.write(text.replace("capacity 200000", "capacity 300000"))
    rc, out, err = c.ctl("reload", good)
    check(rc == 1, "a reload with a restart key: exit %d" % rc)
    check("history capacity needs a restart" in err and "running configuration is kept" in err,
          "the key named, nothing applied: %r" % err)
    check(settings(c) == before, "nothing of it applied: %r" % (settings(c),))
    with open(good, "w") as f:
        f.write(text)
    rc, out, err = c.ctl("reload", good)
    check(rc == 0, "good reload: exit %d %r" % (rc, err))
    for key in ("persistence snapshot-interval", "persistence journal-commit",
                "persistence snapshot-rate", "rules expiry", "rules cutoff", "stats verdict-log"):
        check(("applied        " + key) in out, "applied %s: %r" % (key, out))
    after = settings(c)
    check(after == (600, "article-date", 7 * 86400, 500, vlog), "new settings %r" % (after,))
    # the rate paces the next snapshot: at least its buckets (5 slots and
    # 64 octets each) over 2 MiB a second
    rc, out, err = c.ctl("snapshot")
    check(rc == 0, "snapshot at the new rate: exit %d %r" % (rc, err))
    _, st = c.ctl_json("status")
    floor = st["history"]["capacity"] / 5 * 64 / (2 << 20)
    check(st["snapshot"]["rate_bytes_per_second"] == 2 << 20, "rate in status: %r" % st["snapshot"])
    check(st["snapshot"]["last_seconds"] >= floor,
          "paced snapshot took %.2f s, its floor %.2f s" % (st["snapshot"]["last_seconds"], floor))
    rc, out, err = c.ctl("status")
    check("at most 2.1 MB/s" in out, "text status names the rate: %r" % out)
    # the verdict log is on now: a writer's lines land in the file
    c.run_writer("--count", "20", "--vlog")
    poll_until(lambda: os.path.exists(vlog) and open(vlog).read().count("\n") >= 20, 60, 0.1)
    check(os.path.exists(vlog) and open(vlog).read().count("\n") == 20, "verdict log written")

    # SIGHUP re-reads the running file (now good.conf)
    with open(good, "w") as f:
        f.write(text.replace("snapshot-interval 10m", "snapshot-interval 20m"))
    c.d.send_signal(signal.SIGHUP)
    poll_until(lambda: settings(c)[0] == 1200, 60, 0.1)
    check(settings(c)[0] == 1200, "SIGHUP applied the edited file")
    with open(good, "a") as f:
        f.write("[history]\nfull-policy sometimes\n")
    refusals = c.log().count("reload of %s refused" % good)    # the restart key's, above
    c.d.send_signal(signal.SIGHUP)
    poll_until(lambda: c.log().count("reload of %s refused" % good) > refusals, 60, 0.1)
    check(c.log().count("reload of %s refused" % good) > refusals and "full-policy" in c.log(),
          "SIGHUP with a broken file: refused and logged")
    check(settings(c)[0] == 1200, "and the running configuration kept")
    _, st = c.ctl_json("stats")
    check(st["counters"]["config_reloads"] == 2 and st["counters"]["config_reload_failures"] == 4,
          "reload counters: %r" % {k: v for k, v in st["counters"].items() if "reload" in k})
    c.stop()
    passed("45_ctl_reload")


main()
