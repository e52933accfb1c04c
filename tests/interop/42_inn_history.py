#!/usr/bin/env python3
# timeout: 300
"""42_inn_history — a site switching from INN brings INN's history.

In its own namespace (fg-iop-innhist-<pid>):
  1. A real innd (tools/inn/innd.sh) is fed 300 articles by TAKETHIS: 200
     whose Message-IDs have a domain in capitals (INN folds a domain's
     case in its hash), 80 in lowercase, and 20 dated 15 days ago (innd
     refuses them as too old; what it remembers of them is in its history
     without a token). innd is stopped, so its history file is complete.
  2. floodctl import-inn-history reads innd's db/history into floodgate's
     data directory; its counts must equal the file's lines.
  3. floodgate-host starts on that data directory (an empty history of
     its own). Every ID innd's history holds (grephistory says which) is
     re-offered by CHECK: every one 438, the capitals ones offered with
     their domain in lowercase; TAKETHIS of 20 of them: 439 each. IDs innd
     does not hold: 238. A new article: CHECK 238, TAKETHIS 239.
  4. The counter nntp_inn_history_hits equals the refusals: the answers
     came from INN's history, not from floodgate's own.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgkit  # noqa: E402
import hostlib  # noqa: E402
import relaykit  # noqa: E402
from hostlib import check  # noqa: E402

hostlib.in_netns("fg-iop-innhist")

INND_PORT = 11191
FLOODCTL = os.path.join(hostlib.BUILD, "bin", "floodctl")


def ask(c, line):
    c.send(line)
    return c.line().decode("latin-1").rstrip("\r\n")


def main():
    fgkit.need_inn()
    work = tempfile.mkdtemp(prefix="fg-iop-40-")
    os.chmod(work, 0o755)
    hostlib.KEEP.append(work)
    innd_dir = os.path.join(work, "innd")
    data = os.path.join(work, "data")
    os.makedirs(data)

    # 1. innd takes the feed
    arts = []
    for i in range(300):
        if i < 200:
            mid = "<inn%d.Q@Origin.FG.Test>" % i
            arts.append((mid, hostlib.article(mid, groups="fg.test.text")))
        elif i < 280:
            mid = "<inn%d.q@origin.fg.test>" % i
            arts.append((mid, hostlib.article(mid, groups="fg.test.text")))
        else:
            mid = "<old%d@origin.fg.test>" % i
            arts.append((mid, hostlib.article(mid, age=15 * 86400, inj_age=15 * 86400,
                                              groups="fg.test.text")))
    relaykit.innd("start", innd_dir, str(INND_PORT))
    try:
        answers = relaykit.first_answers(relaykit.feed(arts, addr=("127.0.0.1", INND_PORT)))
        held = set(m for m, _ in arts) - relaykit.not_in_history(innd_dir, [m for m, _ in arts])
    finally:
        relaykit.innd("stop", innd_dir)
    took = [m for m, c in answers.items() if c == 239]
    check(len(took) == 280, "innd took the 280 recent articles: %d" % len(took))
    check(set(took) <= held, "every article innd took is in its history")
    history = os.path.join(innd_dir, "db", "history")
    with open(history) as f:
        lines = [l for l in f.read().splitlines() if l]
    check(len(lines) == len(held), "innd's history: %d lines for %d IDs" % (len(lines), len(held)))
    check(all(re.match(r"^\[[0-9A-F]{32}\]\t\d+~", l) for l in lines), "hisv6 text lines")

    # 2. the import
    r = subprocess.run([FLOODCTL, "import-inn-history", "--data-dir", data, "--json", history],
                       capture_output=True, text=True)
    check(r.returncode == 0, "import: %s %s" % (r.stdout, r.stderr))
    import json
    got = json.loads(r.stdout)
    check(got["lines"] == len(lines) and got["taken"] == len(lines) and got["malformed"] == 0
          and got["ids"] == len(held), "import counts: %s" % got)

    # 3. floodgate-host on that data directory re-offers every article
    host = hostlib.Host(extra="[persistence]\ndata-dir %s\n" % data)
    c = hostlib.Client(timeout=60)
    check(c.line().startswith(b"200"), "greeting")
    refused = 0
    for mid, _ in arts:
        offered = mid.replace("Origin.FG.Test", "origin.fg.test")
        a = ask(c, "CHECK %s\r\n" % offered)
        want = "438" if mid in held else "238"
        check(a == "%s %s" % (want, offered), "CHECK %s: %r, want %s" % (offered, a, want))
        refused += mid in held
    check(refused == len(held) and refused >= 280, "%d re-offers refused" % refused)
    for mid, wire in arts[200:220]:
        a = ask(c, "TAKETHIS %s\r\n" % mid + wire.decode("latin-1"))
        check(a == "439 %s" % mid, "TAKETHIS %s: %r" % (mid, a))
    new = "<brand.new@origin.fg.test>"
    check(ask(c, "CHECK %s\r\n" % new) == "238 %s" % new, "a new article: 238")
    a = ask(c, "TAKETHIS %s\r\n" % new + hostlib.article(new, groups="fg.test.text")
            .decode("latin-1"))
    check(a == "239 %s" % new, "a new article's TAKETHIS: %r" % a)
    c.send("QUIT\r\n")
    c.close()

    # 4. the refusals came from INN's history
    st = host.stop()
    check(st.get("nntp_inn_history_hits") == refused + 20,
          "nntp_inn_history_hits %s, want %d" % (st.get("nntp_inn_history_hits"), refused + 20))
    print("PASS: 42_inn_history (%d IDs imported from innd; %d re-offers 438, 20 TAKETHIS 439, "
          "a new article 238/239)" % (got["ids"], refused))


main()
