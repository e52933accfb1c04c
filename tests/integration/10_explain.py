#!/usr/bin/env python3
# timeout: 300
"""10_explain — `floodctl explain` and `floodctl msgid` as an operator runs them.

Articles whose article date sits exactly on, one second inside and one
second outside the cutoff and the 24 h future edge, with Date alone and with
Injection-Date (then with a Date far outside the window, which must not
matter), in wire and plain form, with --now as an RFC 5322 date and as
epoch seconds; the JSON verdict, reason, date_used and article_date of each,
and the exit status (0 accepted, 1 rejected). Then the usage and I/O errors
that must exit 2, a configuration that moves the edges, stdin, the sample
feed through tools/demo/explain-sample.sh, and floodctl msgid; the
downstreams an accepted article would go to (feeds) and what decided. date-syntax:
inn (the default) accepts a CEST date and says how it read it, rfc5322 (by
option or config) refuses it; an innd misreading keeps its written instant.
"""
import calendar
import json
import os
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("FG_TOP") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("FG_BUILD") or os.path.join(TOP, "build", "release")
FLOODCTL = os.path.join(BUILD, "bin", "floodctl")

NOW = calendar.timegm((2026, 1, 1, 0, 0, 0))
DAY = 86400
CUTOFF = 10 * DAY      # the embedded default configuration's
MARGIN = 24 * 3600

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL", what)


def rfc5322(t):
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(t))


def article(date=None, injection=None, msgid="<edge@example.org>", plain=False,
            subject="edges"):
    head = [
        "Path: feeder.example.org!.POSTED!not-for-mail",
        "From: Tester <tester@example.org>",
        "Newsgroups: misc.test",
        "Subject: " + subject,
        "Message-ID: " + msgid,
    ]
    if date is not None:
        head.append("Date: " + date)
    if injection is not None:
        head.append("Injection-Date: " + injection)
    lines = head + ["", "body", ".. a stuffed line"]
    if plain:
        return ("\n".join(l[1:] if l.startswith("..") else l for l in lines) + "\n").encode()
    return ("\r\n".join(lines) + "\r\n.\r\n").encode()


def run(args, data=None):
    p = subprocess.run([FLOODCTL] + args, input=data, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def explain(tmp, data, name, now=NOW, extra=()):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    rc, out, err = run(["explain", "--json", "--now", str(now)] + list(extra) + [path])
    try:
        j = json.loads(out)
    except ValueError:
        j = None
    check(j is not None, "%s: no JSON (rc %d, stderr %r)" % (name, rc, err))
    return rc, j or {}


def expect(tmp, name, data, verdict, reason, date_used, article_date, now=NOW, extra=()):
    rc, j = explain(tmp, data, name, now, extra)
    got = (j.get("verdict"), j.get("reason"), j.get("date_used"), j.get("article_date"))
    want = (verdict, reason, date_used, article_date)
    check(got == want, "%s: got %s, want %s" % (name, got, want))
    check(rc == (0 if verdict == "accepted" else 1), "%s: exit %d for %s" % (name, rc, verdict))


FEEDS_CONF = """[downstream binaries]
address 127.0.0.1:11191
newsgroups alt.binaries.*
[downstream text]
address 127.0.0.1:11192
newsgroups *,!alt.binaries.*,@alt.spam.*,!control,!control.*
distributions !local
exclude-path reader.example.org
"""


def feeds(tmp):
    """Which downstreams an article would go to, and the pattern that decided."""
    conf = os.path.join(tmp, "feeds.conf")
    with open(conf, "w") as f:
        f.write(FEEDS_CONF)

    def go(name, groups, extra_headers=(), path="feeder.example.org!not-for-mail"):
        data = article(date=rfc5322(NOW - 60), msgid="<%s@feeds.test>" % name)
        data = data.replace(b"Newsgroups: misc.test", ("Newsgroups: " + groups).encode())
        data = data.replace(b"Path: feeder.example.org!.POSTED!not-for-mail", ("Path: " + path).encode())
        for h in extra_headers:
            data = data.replace(b"Subject:", (h + "\r\nSubject:").encode(), 1)
        rc, j = explain(tmp, data, name, extra=("-c", conf))
        check(rc == 0, "%s: accepted" % name)
        return {d["name"]: d for d in j.get("downstreams", [])}

    d = go("bin", "alt.binaries.pictures")
    check(d["binaries"]["sent"] and d["binaries"]["pattern"] == "alt.binaries.*" and
          not d["text"]["sent"] and d["text"]["why"] == "no-group" and
          d["text"]["pattern"] == "!alt.binaries.*", "binaries only: %r" % d)
    d = go("cross", "alt.binaries.sounds,alt.music")
    check(d["binaries"]["sent"] and d["text"]["sent"] and d["text"]["group"] == "alt.music",
          "a crosspost goes to both: %r" % d)
    d = go("poison", "alt.music,alt.spam.pills")
    check(not d["text"]["sent"] and d["text"]["why"] == "poisoned" and
          d["text"]["group"] == "alt.spam.pills" and d["text"]["pattern"] == "@alt.spam.*",
          "poisoned: %r" % d)
    d = go("cancel", "comp.lang.c", ["Control: cancel <x@y>"])
    check(d["text"]["sent"], "a control article of a fed group: %r" % d)
    d = go("local", "comp.lang.c", ["Distribution: local"])
    check(not d["text"]["sent"] and d["text"]["why"] == "distribution" and
          d["text"]["item"] == "local", "distribution: %r" % d)
    d = go("seen", "comp.lang.c", path="a.example!reader.example.org!x")
    check(not d["text"]["sent"] and d["text"]["why"] == "excluded-path", "exclude-path: %r" % d)
    # the text form says the same
    rc, out, err = run(["explain", "-c", conf, "--now", str(NOW), os.path.join(tmp, "poison")])
    check("text: not sent (poisoned" in out and "pattern @alt.spam.*" in out,
          "text form: %r" % out)


def edge_cases(tmp):
    """Each date edge, one second either side, Date alone and with Injection-Date."""
    edges = [
        (-CUTOFF - 1, "rejected", "too-old"),
        (-CUTOFF, "accepted", None),
        (-CUTOFF + 1, "accepted", None),
        (0, "accepted", None),
        (MARGIN - 1, "accepted", None),
        (MARGIN, "accepted", None),
        (MARGIN + 1, "rejected", "too-far-future"),
    ]
    for delta, verdict, reason in edges:
        d = NOW + delta
        for plain in (False, True):
            form = "plain" if plain else "wire"
            expect(tmp, "date%+d.%s" % (delta, form), article(rfc5322(d), plain=plain),
                   verdict, reason, "date", d)
            # Injection-Date decides; a Date far outside the window does not
            far = NOW - 40 * DAY if delta > 0 else NOW + 40 * DAY
            expect(tmp, "inj%+d.%s" % (delta, form),
                   article(rfc5322(far), rfc5322(d), plain=plain),
                   verdict, reason, "injection-date", d)
    # --now as RFC 5322 text gives the same answers as epoch seconds
    d = NOW - CUTOFF
    expect(tmp, "now-as-text", article(rfc5322(d)), "accepted", None, "date", d,
           now=rfc5322(NOW))
    expect(tmp, "now-as-text-1", article(rfc5322(d - 1)), "rejected", "too-old", "date", d - 1,
           now=rfc5322(NOW))


def date_faults(tmp):
    good = rfc5322(NOW - 60)
    expect(tmp, "no-date", article(None, good), "rejected", "missing-date",
           "injection-date", NOW - 60)
    expect(tmp, "bad-injection", article(good, "Mon, 30 Feb 2026 10:00:00 +0000"),
           "rejected", "bad-date", None, None)
    # the article date is still reported: it is Injection-Date's
    expect(tmp, "bad-date-good-injection", article("not a date", good),
           "rejected", "bad-date", "injection-date", NOW - 60)
    expect(tmp, "no-dates", article(), "rejected", "missing-date", None, None)
    # zones: the same instant written in another zone
    expect(tmp, "zone", article("Wed, 31 Dec 2025 19:00:00 -0500"), "accepted", None,
           "date", NOW)


def date_syntax(tmp):
    """date-syntax inn (the default) takes what innd takes and says how it read
    it; --date-syntax rfc5322 and a config with date-syntax rfc5322 refuse."""
    cest = article("Thu, 01 Jan 2026 01:00:00 CEST")
    expect(tmp, "cest", cest, "accepted", None, "date", NOW - 3600)
    rc, j = explain(tmp, cest, "cest-reading")
    r = (j.get("date") or {}).get("reading") or {}
    check(j.get("date_syntax") == "inn", "date_syntax %r" % j.get("date_syntax"))
    check(r.get("words") == "zone name CEST read as +0200, as INN does" and
          r.get("notes") == "zone-name" and r.get("clock_sample") is True, "reading %r" % r)
    rc, out, err = run(["explain", "--now", str(NOW), os.path.join(tmp, "cest")])
    check(rc == 0 and "  read:         zone name CEST read as +0200, as INN does" in out and
          "date syntax:    inn" in out, "text reading: %d %r" % (rc, out))
    expect(tmp, "cest-rfc", cest, "rejected", "bad-date", None, None,
           extra=("--date-syntax", "rfc5322"))
    conf = os.path.join(tmp, "strict.conf")
    with open(conf, "w") as f:
        f.write("[rules]\ndate-syntax rfc5322\n[peer tests]\naddress 192.0.2.1\n"
                "[downstream inn]\naddress 127.0.0.1:119\n")
    rc, j = explain(tmp, cest, "cest-conf", extra=("-c", conf))
    check(rc == 1 and j.get("reason") == "bad-date" and j.get("why") == "bad-zone" and
          j.get("date_syntax") == "rfc5322" and j["date"]["reading"] is None,
          "config rfc5322: %d %r" % (rc, j))
    # innd's misreading: accepted, the instant as written, kept from the clock guard
    rc, j = explain(tmp, article("Wed, 31 Dec 2025 18:00:00 -0800 PST8PDT"), "pst8pdt")
    r = (j.get("date") or {}).get("reading") or {}
    check(rc == 0 and j.get("article_date") == NOW + 2 * 3600 and
          r.get("innd_zone") == 0 and r.get("zone") == -8 * 3600 and
          r.get("clock_sample") is False and "misread-reset" in r.get("notes", ""),
          "PST8PDT: %d %r" % (rc, j))
    # what innd refuses is refused
    expect(tmp, "pre-1970", article("Wed, 31 Dec 1969 23:00:00 +0000"), "rejected",
           "bad-date", None, None)
    rc, out, err = run(["explain", "--date-syntax", "strict", os.path.join(tmp, "cest")])
    check(rc == 2 and "inn or rfc5322" in err, "--date-syntax strict: %d %r" % (rc, err))


def options(tmp):
    d = NOW - 60
    data = article(rfc5322(d))
    expect(tmp, "msgid-match", data, "accepted", None, "date", d,
           extra=["--msgid", "<edge@example.org>"])
    expect(tmp, "msgid-mismatch", data, "rejected", "message-id-mismatch", "date", d,
           extra=["--msgid", "<other@example.org>"])
    expect(tmp, "msgid-bad", data, "rejected", "bad-message-id", "date", d,
           extra=["--msgid", "edge@example.org"])
    # a configuration that moves the edges: cutoff 7d, margin 1h
    conf = os.path.join(tmp, "edges.conf")
    with open(conf, "w") as f:
        f.write("[site]\npath-identity news.example.net\n[rules]\ncutoff 7d\n"
                "future-margin 1h\nretention 8d\n[peer tests]\naddress 192.0.2.1\n"
                "newsgroups comp.*\n")
    for delta, verdict, reason in [(-7 * DAY, "accepted", None),
                                   (-7 * DAY - 1, "rejected", "too-old"),
                                   (3600, "accepted", None),
                                   (3601, "rejected", "too-far-future")]:
        expect(tmp, "conf%+d" % delta, article(rfc5322(NOW + delta)), verdict, reason, "date",
               NOW + delta, extra=["-c", conf])
    expect(tmp, "peer-groups", data, "rejected", "unwanted-newsgroup", "date", d,
           extra=["-c", conf, "--peer", "tests"])
    # stdin, text output
    rc, out, err = run(["explain", "--now", str(NOW), "-"], data)
    check(rc == 0 and "verdict:        accepted" in out, "stdin text: rc %d %r" % (rc, out))
    # a file holding only a header section is read as if the empty line followed
    rc, j = explain(tmp, b"Message-ID: <h@x>\nDate: " + rfc5322(d).encode() +
                    b"\nFrom: a@b\nSubject: s\nNewsgroups: misc.test\nPath: a!b", "header-only")
    check(rc == 0 and j.get("ended_in_header") is True and j.get("form") == "plain",
          "header-only: rc %d %s" % (rc, j))


def usage_errors(tmp):
    data = os.path.join(tmp, "u.art")
    with open(data, "wb") as f:
        f.write(article(rfc5322(NOW)))
    bad_conf = os.path.join(tmp, "bad.conf")
    with open(bad_conf, "w") as f:
        f.write("[rules]\nno-such-key 1\n")
    cases = [
        (["explain", "--now", "yesterday", data], "--now"),
        (["explain", "--bogus", data], ""),
        (["explain", "--now", str(NOW), os.path.join(tmp, "missing.art")], "missing.art"),
        (["explain", "--now", str(NOW), data, data], "one article"),
        (["explain", "--now", str(NOW), "--peer", "nobody", data], "nobody"),
        (["explain", "--now", str(NOW), "-c", bad_conf, data], "no-such-key"),
        (["explain", "--now", str(NOW), "-c", os.path.join(tmp, "nope.conf"), data], ""),
        (["explain", "--now", str(NOW), tmp], ""),
        (["nosuchcommand"], "no command"),
        ([], "usage"),
        (["msgid"], "exactly one"),
        (["msgid", "<a@b>", "<c@d>"], "exactly one"),
    ]
    for args, needle in cases:
        rc, out, err = run(args)
        check(rc == 2, "%s: exit %d, want 2" % (args, rc))
        check(needle in err, "%s: stderr %r lacks %r" % (args, err, needle))
    rc, out, err = run(["--help"])
    check(rc == 0 and "explain" in out and "msgid" in out, "--help: %d %r" % (rc, out))
    rc, out, err = run(["explain", "--help"])
    check(rc == 0 and "--now" in out, "explain --help: %d" % rc)


def msgid():
    rc, out, err = run(["msgid", "--json", "<foo$v=3$XYZ@faq.example>"])
    j = json.loads(out)
    check(rc == 0 and j["form"] == "header" and j["version"] == 3 and
          j["base"] == "<foo@faq.example>", "msgid versioned: %d %s" % (rc, j))
    succ = j["successor"] or ""
    check(succ.startswith("<foo$v=4$") and succ.endswith("@faq.example>"), "successor %r" % succ)
    tail = succ[len("<foo$v=4$"):-len("@faq.example>")]
    check(len(tail) >= 2 and not (tail[0].isalpha() and tail[1] == "="), "random tail %r" % tail)
    rc, out, err = run(["msgid", "--json", "<foo@faq.example>"])
    j = json.loads(out)
    check(rc == 0 and j["has_version"] is False and
          (j["successor"] or "").startswith("<foo$v=1$"), "unversioned: %s" % j)
    rc, out, err = run(["msgid", "<no-at>"])
    check(rc == 1 and "wire form only" in out and "no-at" in out, "wire only: %d %r" % (rc, out))
    rc, out, err = run(["msgid", "no brackets"])
    check(rc == 1 and "invalid" in out, "invalid: %d %r" % (rc, out))


def demo():
    p = subprocess.run([os.path.join(TOP, "tools", "demo", "explain-sample.sh")],
                       capture_output=True,
                       timeout=120, env=dict(os.environ, FLOODCTL=FLOODCTL))
    out = p.stdout.decode()
    check(p.returncode == 0, "explain-sample.sh exit %d: %s" % (p.returncode, p.stderr.decode()))
    check("15 articles: 4 accepted, 11 rejected" in out, "run-demo total: %r" % out[-300:])
    for line in ("03-accepted-at-cutoff.art        accepted",
                 "04-too-old.art                   rejected  too-old",
                 "05-too-far-future.art            rejected  too-far-future"):
        check(line in out, "run-demo lacks %r" % line)


def main():
    if not os.access(FLOODCTL, os.X_OK):
        print("FAIL floodctl not built at", FLOODCTL)
        return 1
    with tempfile.TemporaryDirectory(prefix="fg-explain-") as tmp:
        edge_cases(tmp)
        date_faults(tmp)
        date_syntax(tmp)
        options(tmp)
        usage_errors(tmp)
        feeds(tmp)
    msgid()
    demo()
    if failures:
        print("FAIL %d of %d checks" % (len(failures), checks))
        return 1
    print("PASS %d checks" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
