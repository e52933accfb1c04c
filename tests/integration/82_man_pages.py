#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""82_man_pages — the man pages `make man` builds, and the generator that
keeps floodgate.conf(5) true to the parser.

Every page renders without a warning under `groff -ww -z`; floodctl(8)
has a subsection for every command `floodctl --help` lists, with that
command's own help; every key of the embedded default configuration is
in floodgate.conf(5). fg-mangen refuses a docs/configuration.md that
disagrees with the key table — a key without a row, a row for a key the
parser does not know, a default that is not the table's, a character
groff would warn about — naming what is wrong, and accepts the real one.
"""
import os
import re
import shutil
import subprocess
import sys

import fgkit
from ctlkit import BUILD, TOP, check, log, passed

PAGES = ["floodgate.8", "floodgate-host.8", "floodctld.8", "floodctl.8", "floodgate.conf.5",
         "feedgen.1"]
MANGEN = os.path.join(BUILD, "bin/fg-mangen")
FLOODCTL = os.path.join(BUILD, "bin/floodctl")
WORK = os.path.join(fgkit.scratch_root(), "fg-man-%d" % os.getpid())


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def mangen_on(doc_text):
    path = os.path.join(WORK, "configuration.md")
    with open(path, "w") as f:
        f.write(doc_text)
    return run([MANGEN, "config-keys", path])


def main():
    variant = os.path.basename(BUILD.rstrip("/"))
    p = run(["make", "--no-print-directory", "-C", TOP, "man"] +
            (["SANITIZE=1"] if variant == "asan" else []))
    check(p.returncode == 0, "make man: %s%s" % (p.stdout, p.stderr))
    mandir = os.path.join(BUILD, "man")
    for page in PAGES:
        path = os.path.join(mandir, page)
        check(os.path.exists(path), "%s built" % path)
        g = run(["groff", "-ww", "-z", "-man", path], env=dict(os.environ, LC_ALL="C"))
        check(g.returncode == 0 and not g.stderr, "groff -ww %s: %s" % (page, g.stderr))
    log("%d pages, no groff warning" % len(PAGES))

    roff = open(os.path.join(mandir, "floodctl.8")).read()
    text = run(["groff", "-man", "-Tascii", "-P-cbu", os.path.join(mandir, "floodctl.8")],
               env=dict(os.environ, LC_ALL="C")).stdout
    names = re.findall(r"^ +floodctl ([a-z][a-z-]*) ", run([FLOODCTL, "--help"]).stdout, re.M)
    check(len(names) >= 14 and "reopen-logs" in names, "floodctl --help lists: %s" % names)
    for n in names:
        check(re.search(r'^\.SS "?%s"?$' % re.escape(n), roff, re.M), "floodctl(8) has %s" % n)
        for line in run([FLOODCTL, "help", n]).stdout.splitlines():
            check(line.strip() in text, "floodctl(8) quotes `floodctl help %s`: %r" % (n, line))
    log("floodctl(8): all %d commands" % len(names))

    conf = open(os.path.join(mandir, "floodgate.conf.5")).read()
    default = run([FLOODCTL, "config", "--default"]).stdout
    keys = set(re.findall(r"^#?([a-z][a-z-]+)\s", default, re.M))
    for k in sorted(keys):
        check(re.search(r"^\\fB%s\\fR$" % re.escape(k.replace("-", "\\-")), conf, re.M) or
              re.search(r"^\\fB%s\\fR$" % re.escape(k), conf, re.M),
              "floodgate.conf(5) has the key %s" % k)
    for sec in ("site", "rules", "session", "history", "persistence", "stats", "dataplane", "log",
                "peer NAME", "downstream NAME"):
        check('.SS "[%s]"' % sec in conf or ".SS [%s]" % sec in conf, "floodgate.conf(5) has [%s]" % sec)
    log("floodgate.conf(5): the %d keys of the embedded default, every section" % len(keys))

    os.makedirs(WORK)
    try:
        doc = open(os.path.join(TOP, "docs/configuration.md")).read()
        p = mangen_on(doc)
        check(p.returncode == 0 and not p.stderr and "## [log]" in p.stdout, "the real page: %s" % p.stderr)
        # 1. a key without its row
        row = re.search(r"^\| `verdict-log-keep` \|.*\n", doc, re.M).group(0)
        p = mangen_on(doc.replace(row, ""))
        check(p.returncode == 1 and "[stats] verdict-log-keep: no row" in p.stderr, "no row: %s" % p.stderr)
        # 2. a row for a key the parser does not know
        p = mangen_on(doc.replace(row, row + row.replace("verdict-log-keep", "verdict-log-kept")))
        check(p.returncode == 1 and "`verdict-log-kept` is not a key the parser knows" in p.stderr,
              "unknown key: %s" % p.stderr)
        # 3. a default that is not the table's
        p = mangen_on(doc.replace(row, row.replace("| `8` |", "| `9` |")))
        check(p.returncode == 1 and "[stats] verdict-log-keep: the key table's default is `8`" in p.stderr,
              "wrong default: %s" % p.stderr)
        # 4. a character groff -ww would warn about, without a stand-in
        p = mangen_on(doc.replace(row, row.replace("files kept", "files kept \u2192 pruned")))
        check(p.returncode == 1 and "non-ASCII" in p.stderr, "non-ASCII: %s" % p.stderr)
        log("fg-mangen refuses a missing row, an unknown key, a wrong default, a stray character")
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    passed("82_man_pages")


main()
