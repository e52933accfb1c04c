#!/usr/bin/env python3
"""path_settle.py — the whole-path figures of a floodgate -> innd run
(tools/bench/sys_fgpath.sh). Python stdlib only.

  path_settle.py start DIR        record the clock and the CPU counters of
                                  floodgate, floodctld and innd (their pids
                                  in DIR/{floodgate,floodctld,innd}.pid) in
                                  DIR/path.start, just before feedgen starts
  path_settle.py after DIR JSON   wait until innd has answered every article
                                  feedgen saw accepted, then count innd's news
                                  log and add "path" to feedgen's JSON

innd keeps its news log buffered, as in production (innd.sh --buffered-log:
its last lines reach DIR/inn/log/news only when innd flushes), so the end of
the delivery is read from floodgate's side: the relay's counters of innd's
answers (239, 439, 437, 438, given up), from `floodctl stats --json` every
POLL_S (floodgate publishes them every 100 ms; floodctld's work answering
is in its CPU figure). Then the CPU counters are read, innd is told to
flush (innd.sh flush: ctlinnd flush ''), and its news log is counted: every
article floodgate accepted must have an outcome there.

The "path" object:
  drain_s                  start -> the poll that saw innd's last answer
                           (>= feedgen's elapsed_s: the relay may still be
                           delivering when feedgen ends; up to POLL_S plus
                           the 100 ms publication late)
  delivered                articles innd accepted ("+" lines of its news log)
  innd_refused             articles innd refused after floodgate accepted them
                           ("-" lines: rules the two do not share)
  delivered_per_s          delivered / drain_s
  bytes_in_per_s           feedgen's article octets / drain_s
  cpu_s                    {floodgate, floodctld, innd, total}: CPU seconds
                           (utime + stime, every thread) from start to drain
  cpu_per_m_offers         the same per million offers
A run whose deliveries do not all arrive within the timeout, or whose
news log then lacks an outcome, gets "complete": false and the figures so
far (run.sh then fails the run).
"""
import json
import os
import subprocess
import sys
import time

CLK = os.sysconf("SC_CLK_TCK")
PROCS = ("floodgate", "floodctld", "innd")
TIMEOUT = 900
POLL_S = 0.1
# the relay's counters of innd's answers that settle an article
ANSWERED = ("relay_accepted", "relay_refused_439", "relay_refused_437", "relay_not_wanted",
            "relay_given_up")


def ticks(pid):
    """utime + stime of every thread of the process, in clock ticks."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return None


def pids(d):
    out = {}
    for n in PROCS:
        with open(os.path.join(d, n + ".pid")) as f:
            out[n] = int(f.read().strip())
    return out


def start(d):
    ps = pids(d)
    rec = {"t": time.time(), "ticks": {n: ticks(p) for n, p in ps.items()}}
    if None in rec["ticks"].values():
        sys.stderr.write("path_settle: a process is gone: %s\n" % rec["ticks"])
        return 1
    with open(os.path.join(d, "path.start"), "w") as f:
        json.dump(rec, f)
    return 0


class NewsTail:
    """Counts innd's news log lines as they are written: '+' accepted,
    '-' refused (field 4 of "Mon DD HH:MM:SS.mmm + peer <id> ...")."""

    def __init__(self, path):
        self.path, self.pos, self.part = path, 0, b""
        self.plus = self.minus = 0

    def poll(self):
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        self.pos += len(data)
        lines = (self.part + data).split(b"\n")
        self.part = lines.pop()
        for ln in lines:
            p = ln.split(None, 4)
            if len(p) >= 4:
                self.plus += p[3] == b"+"
                self.minus += p[3] == b"-"


def relay_answered(d):
    """Articles innd has answered, by floodgate's relay counters; None when
    floodctld does not answer."""
    floodctl = os.path.join(os.environ.get("FG_TOP", "."), "build", "release", "bin", "floodctl")
    r = subprocess.run([floodctl, "stats", "-s", os.path.join(d, "control.sock"), "--json",
                        "--timeout", "5"], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    c = json.loads(r.stdout)["counters"]
    return sum(c.get(k, 0) for k in ANSWERED)


def innd_flush(d):
    top = os.environ.get("FG_TOP", ".")
    return subprocess.run([os.path.join(top, "tools", "inn", "innd.sh"), "flush",
                           os.path.join(d, "inn")]).returncode == 0


def after(d, json_path):
    with open(json_path) as f:
        run = json.load(f)
    with open(os.path.join(d, "path.start")) as f:
        begin = json.load(f)
    ps = pids(d)
    want = run["accepted"]
    end = time.time() + TIMEOUT
    while True:
        answered = relay_answered(d)
        complete = answered is not None and answered >= want
        if complete or time.time() > end:
            break
        time.sleep(POLL_S)
    t = time.time()
    cpu = {}
    for n in PROCS:
        now = ticks(ps[n])
        cpu[n] = (now - begin["ticks"][n]) / CLK if now is not None else None
    cpu["total"] = sum(v for v in cpu.values() if v is not None)
    drain = t - begin["t"]
    news = NewsTail(os.path.join(d, "inn", "log", "news"))
    if not innd_flush(d):
        complete = False
    news.poll()
    if news.plus + news.minus < want:
        sys.stderr.write("path_settle: innd's news log has %d outcomes for %d articles\n"
                         % (news.plus + news.minus, want))
        complete = False
    m = run["offers"] / 1e6 if run["offers"] else 1
    run["path"] = {
        "complete": complete, "drain_s": round(drain, 3), "delivered": news.plus,
        "innd_refused": news.minus, "delivered_per_s": round(news.plus / drain, 1),
        "bytes_in_per_s": round(run["article_bytes"] / drain, 1),
        "cpu_s": cpu,
        "cpu_per_m_offers": {n: (round(v / m, 3) if v is not None else None)
                             for n, v in cpu.items()},
    }
    with open(json_path, "w") as f:
        json.dump(run, f)
    print("   path: %d delivered (%d refused by innd) in %.2f s, %.0f/s; CPU s per M offers: "
          "floodgate %.2f + floodctld %.2f + innd %.2f = %.2f%s"
          % (news.plus, news.minus, drain, news.plus / drain,
             *(run["path"]["cpu_per_m_offers"][n] or 0 for n in PROCS + ("total",)),
             "" if complete else " (INCOMPLETE)"))
    return 0 if complete else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "start":
        return start(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "after":
        return after(sys.argv[2], sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
