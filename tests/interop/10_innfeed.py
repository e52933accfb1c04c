#!/usr/bin/env python3
# timeout: 240
"""10_innfeed — INN's innfeed as a real peer of floodgate, with feedgen
offering the same articles at the same time; floodgate relays to INN's innd.

The world: namespace fg-iop-innfeed-<pid>; floodgate (DPDK, net_tap port,
198.18.0.2) with floodctld; a downstream innd on 127.0.0.1:11190
(tools/inn/innd.sh) that floodgate relays every accepted article to.

INN writes the articles: an origin innd (innd.sh --store --batch-site
floodgate, artcutoff 30 days) receives them — posts through rnews, and
feedgen's articles through TAKETHIS — stores them in its tradspool and
writes the batch file "@token@ <id>" for site floodgate, which becomes
innfeed's backlog. innfeed (innfeed.conf: peer floodgate, streaming, two
connections, from 198.18.0.3) reads them back by token. What innfeed must
be answered, by group (its debug log has every response):

  new        rnews, only innfeed offers them        238 then 239
  old        rnews, 15 days old (floodgate's         238 then 439
             cutoff is 10 days, the origin's 30)
  known      feedgen offered them to floodgate first 438
  held       a third peer (198.18.0.4) holds a 238   431, to the backlog
             for them during innfeed's first run
  contested  feedgen (198.18.0.1) offers them        238+239, 238+439, 438
             during innfeed's first run              or 431
  (feedgen's articles all in the window and valid: both sides must want them)

innfeed offers a deferred article again after a few seconds. The test
stops it once every offer has an answer, but on a slow machine the retry
may come first: a held article is then deferred again (its peer keeps the
238 through the whole first run), a contested one answered as feedgen's
transfer left it. So any answer may come after a run of 431s; only what
comes after them is checked against the table.

Checks: every answer as above and every code seen; innfeed's backlog after
its first run (stopped with SIGTERM once every offer has its answer) is
exactly the articles whose last answer was 431, each once; the held ones are
then sent by their peer (239); a second innfeed run drains the backlog to
zero (438 each: floodgate has them all by then) and exits by itself; every
wanted article reaches the downstream innd exactly once (its news log) and
nothing else does; feedgen missed a 239 exactly for the contested articles
innfeed won; floodgate's logs are clean.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import BIN, DP_ADDR, check, log  # noqa: E402
import innkit  # noqa: E402

DOWN_PORT, ORIGIN_PORT = 11190, 11191
N_NEW, N_OLD, N_HELD, N_KNOWN, N_CONTESTED = 120, 10, 8, 150, 400
# feedgen binds no address: it comes from the tap's first, 198.18.0.1
INNFEED_ADDR, HELD_ADDR = "198.18.0.3", "198.18.0.4"
# feedgen's articles: all valid and in the window of both innds and floodgate
FEEDGEN_ALL_WANTED = ["--old", "0", "--future", "0", "--bad-id", "0", "--offline", "0",
                      "--versions", "0", "--near-future", "0", "--size", "2K",
                      "--cutoff", "10d", "--no-progress", "--json", "--timeout", "120"]
CONFIG = ("[session]\n# a held 238 outlasts innfeed's first run\noffer-timeout 60s\n"
          "[downstream inn]\naddress 127.0.0.1:%d\n" % DOWN_PORT)


def feedgen(host, port, prefix, articles, *extra):
    return [os.path.join(BIN, "feedgen"), "--host", host, "--port", str(port),
            "--id-prefix", prefix, "--articles", str(articles), "--seed", "10"] + \
        FEEDGEN_ALL_WANTED + list(extra)


def run_feedgen(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    check(r.returncode == 0, "feedgen %s: exit %d %s" % (what, r.returncode, r.stderr[-800:]))
    return json.loads(r.stdout)


def posts():
    """The rnews groups: {group: [plain article]}."""
    now = fgdp.rfc5322(time.time() - 600)
    old = fgdp.rfc5322(time.time() - 15 * 86400)
    body = ["Posted through rnews into the origin's spool.", ".a line with a leading dot",
            "..two dots", ".", "a lone dot above"]
    out = {}
    for group, n, date in (("new", N_NEW, now), ("old", N_OLD, old), ("held", N_HELD, now)):
        out[group] = [innkit.plain_article("<%s%d@iop.test>" % (group, i), date,
                                           body + ["%s article %d" % (group, i)] * (1 + i % 9))
                      for i in range(n)]
    return out


def write_origin(work, arts):
    """The origin innd takes every article; its batch is innfeed's input."""
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "floodgate", 30)
    try:
        # contested first, so innfeed offers them while feedgen does; held last
        for prefix, n in (("iopc", N_CONTESTED), ("iopk", N_KNOWN)):
            fg = run_feedgen(feedgen("127.0.0.1", ORIGIN_PORT, prefix, n, "--mode", "takethis",
                                     "--peers", "1", "--dups", "1"), "into the origin")
            check(fg["accepted"] == n, "origin took %d of %d" % (fg["accepted"], n))
        origin.rnews(arts["new"] + arts["old"] + arts["held"])
    finally:
        origin.stop()
    batch = origin.batch()
    total = N_CONTESTED + N_KNOWN + N_NEW + N_OLD + N_HELD
    check(len(batch) == total and len(set(m for _, m in batch)) == total,
          "origin's batch has %d lines for %d articles" % (len(batch), total))
    check(all(t.startswith("@") for t, _ in batch), "batch lines are storage tokens")
    return batch


def group_of(mid):
    for prefix, g in (("<iopc.", "contested"), ("<iopk.", "known"), ("<new", "new"),
                      ("<old", "old"), ("<held", "held")):
        if mid.startswith(prefix):
            return g
    return None


EXPECT = {"new": [[238, 239]], "old": [[238, 439]], "known": [[438]], "held": [[431]],
          "contested": [[238, 239], [238, 439], [438], [431]]}


def after_deferrals(codes):
    """The answers after innfeed's retries of a 431: [431] if it was never
    answered otherwise."""
    i = 0
    while i < len(codes) - 1 and codes[i] == 431:
        i += 1
    return codes[i:]


def hold(mids):
    """A third peer CHECKs the held IDs (238 each) and keeps its session."""
    s = fgdp.connect(HELD_ADDR)
    r = fgdp.Lines(s)
    check(r.line().startswith("200"), "held peer: greeting")
    s.sendall("".join("CHECK %s\r\n" % m for m in mids).encode())
    for m in mids:
        got = r.line()
        check(got.startswith("238 " + m), "held peer: CHECK %s -> %r" % (m, got))
    return s, r


def release(held, arts):
    s, r = held
    s.sendall(b"".join(b"TAKETHIS " + mid_of(a).encode() + b"\r\n" + innkit.wire(a)
                       for a in arts))
    for a in arts:
        got = r.line()
        check(got.startswith("239 " + mid_of(a)), "held peer: TAKETHIS -> %r" % got)
    s.sendall(b"QUIT\r\n")
    check(r.line().startswith("205"), "held peer: QUIT")
    s.close()


def mid_of(text):
    """The Message-ID of a plain article."""
    return text.split("\nMessage-ID: ", 1)[1].split("\n", 1)[0]


def first_run(feed, batch, arts):
    """innfeed and feedgen at once; innfeed stopped once all is answered."""
    held = hold([mid_of(a) for a in arts["held"]])
    fg = subprocess.Popen(feedgen(DP_ADDR, 119, "iopc", N_CONTESTED, "--mode", "check",
                                  "--peers", "2", "--dups", "2", "--spread", "1",
                                  "--window", "8"),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    feed.start(batch)
    final = (239, 431, 438, 439)

    def answered():
        got = feed.answers()
        return all(got.get(m, [0])[-1] in final for _, m in batch)
    done = innkit.wait_for(answered, 60, step=0.1)
    # innfeed retries a 431 after a few seconds; whether the stop comes
    # before that or not, what it has not delivered goes to its backlog
    log("innfeed's first run: every offer answered %.1f s after its start" % (time.time() - t0))
    rc = feed.stop()
    out, err = fg.communicate(timeout=180)
    check(done, "innfeed did not get an answer to every offer in 60 s: %d of %d" % (
        len(feed.answers()), len(batch)))
    check(rc == 0, "innfeed's first run exited %s" % rc)
    return held, json.loads(out), err


def check_answers(answers, batch):
    seen = set()
    for _, m in batch:
        codes = answers.get(m)
        check(codes and after_deferrals(codes) in EXPECT[group_of(m)],
              "innfeed got %s for %s (%s), want one of %s after any 431s"
              % (codes, m, group_of(m), EXPECT[group_of(m)]))
        seen.update(codes)
    check(seen >= {238, 239, 431, 438, 439}, "innfeed saw only %s" % sorted(seen))
    check(set(answers) == set(m for _, m in batch), "answers for IDs innfeed never offered")


def check_feedgen(fg, answers):
    """feedgen's only complaint: the contested articles innfeed won."""
    won = [m for m, c in answers.items()
           if group_of(m) == "contested" and after_deferrals(c) == [238, 239]]
    check(fg["accepted"] + len(won) == N_CONTESTED,
          "feedgen %d + innfeed %d != %d contested" % (fg["accepted"], len(won), N_CONTESTED))
    check(fg["mismatches"] == len(won) and
          all("never got a 239" in t for t in fg["first_mismatches"]),
          "feedgen's mismatches: %d %s" % (fg["mismatches"], fg["first_mismatches"][:3]))
    return won


def main():
    w = fgdp.World("innfeed", prefix="fg-iop", extra=CONFIG)
    work = fgkit.mkdtemp("fg-iop-")
    arts = posts()
    batch = write_origin(work, arts)
    innkit.with_downstream(work, DOWN_PORT, lambda down: scenario(w, work, batch, arts, down))


def scenario(w, work, batch, arts, down):
    w.start_ctld()
    w.start_dp()
    fg = run_feedgen(feedgen(DP_ADDR, 119, "iopk", N_KNOWN, "--mode", "check", "--peers", "1",
                             "--dups", "1"), "known articles to floodgate")
    check(fg["accepted"] == N_KNOWN, "known: %d accepted" % fg["accepted"])

    feed = innkit.Innfeed(os.path.join(work, "innfeed"), os.path.join(work, "origin", "etc",
                                                                        "inn.conf"),
                          "floodgate", DP_ADDR, INNFEED_ADDR)
    held, fgc, fg_err = first_run(feed, batch, arts)
    answers = feed.answers()
    check_answers(answers, batch)
    deferred = sorted(m for m, c in answers.items() if c[-1] == 431)
    n431 = sum(c.count(431) for c in answers.values())
    left = feed.backlog()
    check(sorted(left) == deferred and len(left) == len(set(left)),
          "innfeed's backlog holds %d articles, %d ended with a 431 (%d 431s in all): "
          "%s vs %s" % (len(left), len(deferred), n431, sorted(left)[:5], deferred[:5]))
    check(len(deferred) >= N_HELD, "every held article was deferred: %d" % len(deferred))
    won = check_feedgen(fgc, answers)
    log("first run: %d offers; 239 %d (%d contested won), 439 %d, 438 %d, 431 %d -> backlog %d"
        % (len(batch), sum(c[-1] == 239 for c in answers.values()), len(won),
           sum(c[-1] == 439 for c in answers.values()),
           sum(c[-1] == 438 for c in answers.values()), n431, len(left)))

    release(held, arts["held"])
    feed.start()
    rc = feed.wait(60)
    check(rc == 0, "innfeed's second run exited %s" % rc)
    again = feed.answers()
    check(sorted(again) == deferred and all(c == [438] for c in again.values()),
          "second run: %s" % {m: c for m, c in list(again.items())[:5]})
    check(feed.backlog() == [], "backlog after the second run: %s" % feed.backlog()[:5])

    want = sorted(m for _, m in batch if group_of(m) != "old")
    news = innkit.NewsLog(os.path.join(down, "log", "news"))
    # every transfer the relay will make has its answer (nothing left in its
    # queue) and innd logged at least what is wanted: a second copy, had
    # there been one, would be in the log by now
    fgkit.wait_counters(w.stats, lambda st: st.get("downstream:inn:lag_records") == 0,
                        120, "floodgate's relay to innd to drain")
    fgkit.wait_until(lambda: len(news.accepted()) >= len(want), 60,
                     lambda: "innd's news log to show the %d wanted articles (it has %d)"
                     % (len(want), len(news.accepted())), step=0.2)
    got = news.accepted()
    check(sorted(got) == want, "downstream accepted %d (%d distinct), want %d: missing %s, "
          "extra %s" % (len(got), len(set(got)), len(want), sorted(set(want) - set(got))[:5],
                        sorted(set(got) - set(want))[:5]))
    check(news.refused() == [], "downstream refused %s" % news.refused()[:5])
    st = w.stats()
    check(st.get("nntp_defer_inflight", 0) >= n431,
          "floodgate counted %s in-flight deferrals" % st.get("nntp_defer_inflight"))
    w.stop_dp()
    w.check_logs()
    log("downstream: %d articles, each once; second run: %d x 438, backlog 0" %
        (len(got), len(again)))
    fgdp.passed("10_innfeed")


main()
