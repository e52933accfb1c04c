#!/usr/bin/env python3
# timeout: 300
"""40_ctl_json — every floodctl command with --json prints JSON that parses,
as docs/floodctl.md promises: the commands are read from `floodctl --help`,
so a new command without a case here fails the test.

A floodctld (ctlkit) with a few IDs written by histwriter answers the
daemon's commands; explain, msgid and config need none. `top --json` must
give one object per sample, a line each; `config --check --json` each
problem with its file, line, key and message. The dataplane's verbs (peers,
drain, shutdown) find no dataplane here: floodctld's error reply must be
JSON too (tests/interop/30_levers.py has them with a dataplane). A negative
answer (exit 1) is JSON like a positive one.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctlkit import FLOODCTL, Ctl, check, log, passed  # noqa: E402

ARTICLE = ("Path: a!not-for-mail\nFrom: x@y.example\nNewsgroups: misc.test\nSubject: t\n"
           "Message-ID: <json@ctl.test>\nDate: Thu, 01 Jan 2026 00:00:00 CEST\n\nbody\n")


def objects(text, what):
    """Every non-empty line of text as one JSON object."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            check(False, "%s: not JSON: %r" % (what, line[:300]))
    check(out, "%s: no JSON at all" % what)
    return out


def run(args):
    p = subprocess.run([FLOODCTL] + args, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def main():
    c = Ctl("json")
    c.config("[peer alpha]\naddress 192.0.2.1\n")
    c.start()
    c.run_writer("--count", "10", "--state", "mixed", "--peer", "alpha")
    art = os.path.join(c.dir, "a.art")
    with open(art, "w") as f:
        f.write(ARTICLE)
    bad = os.path.join(c.dir, "bad.conf")
    with open(bad, "w") as f:
        f.write("[rules]\ncutoff 1x\n[nosuch]\n")
    shadow = os.path.join(c.dir, "shadow.status")
    with open(shadow, "w") as f:
        f.write("floodgate-shadow 1 1767225600\ncount agree 7\ncount timing 1\n"
                "sample timing 238 431 none <t@ctl.test>\n")
    s = ["-s", c.sock]
    # each command: (arguments, exit statuses allowed, JSON lines wanted)
    cases = {
        "status": (s + ["--json"], (0,), 1),
        "stats": (s + ["--json"], (0,), 1),
        "top": (s + ["--json", "--count", "3", "--interval", "0.1"], (0,), 3),
        "lookup": (s + ["--json", "<hw-2@histwriter.test>"], (0,), 1),
        "forget": (s + ["--json", "<hw-2@histwriter.test>"], (0,), 1),
        "remember": (s + ["--json", "<hw-2@histwriter.test>", "rejected"], (0,), 1),
        "explain": (["--json", "--now", "1767225600", art], (0,), 1),
        "msgid": (["--json", "<a$v=2$xyz@ctl.test>"], (0,), 1),
        "expire": (s + ["--json", "--dry-run"], (0,), 1),
        "snapshot": (s + ["--json"], (0,), 1),
        "reload": (s + ["--json"], (0,), 1),
        "peers": (s + ["--json"], (1,), 1),
        "drain": (s + ["--json"], (1,), 1),
        "shutdown": (s + ["--json"], (1,), 1),
        "throttle": (s + ["--json", "maintenance"], (1,), 1),
        "go": (s + ["--json"], (1,), 1),
        "pause": (s + ["--json", "--for", "1h", "alpha"], (1,), 1),
        "resume": (s + ["--json", "alpha"], (1,), 1),
        "downstreams": (s + ["--json"], (0,), 1),
        "report": (s + ["--json", "--since", "1h"], (0,), 1),
        "downstream": (s + ["--json", "pause", "inn"], (1,), 1),
        "config": (["--check", bad, "--json"], (1,), 1),
        "shadow": (["--json", "--file", shadow], (0,), 1),
    }
    out = run(["--help"])[1]
    cmds = re.findall(r"^  (\w+) ", out, re.M)
    check(len(cmds) >= 15, "--help lists %d commands" % len(cmds))
    got = {}
    for name in cmds:
        check(name in cases, "no --json case for `floodctl %s`: add one" % name)
        args, codes, lines = cases[name]
        rc, o, e = run([name] + args)
        check(rc in codes, "floodctl %s: exit %d (want %s): %r %r" % (name, rc, codes, o, e))
        objs = objects(o if o.strip() else e, "floodctl %s --json" % name)
        check(len(objs) == lines, "floodctl %s: %d JSON lines, want %d" % (name, len(objs), lines))
        got[name] = objs
    # a few fields each, so that "parses" means the right document
    check(got["status"][0].get("startup") == "empty", "status: %r" % got["status"][0])
    check(all("elapsed_ms" in t and "history" in t and t.get("dataplane") is False
              for t in got["top"]), "top: %r" % got["top"])
    check(got["lookup"][0].get("state") in ("accepted", "rejected"), "lookup %r" % got["lookup"])
    check(got["forget"][0].get("journaled") is True, "forget %r" % got["forget"])
    check(got["remember"][0].get("state") == "rejected", "remember %r" % got["remember"])
    check(got["explain"][0].get("date", {}).get("reading", {}).get("notes") == "zone-name",
          "explain %r" % got["explain"])
    check(got["downstreams"][0].get("written", 0) is None and
          got["downstreams"][0].get("downstreams") == [],
          "downstreams without a dataplane: %r" % got["downstreams"])
    check(got["report"][0].get("samples", 0) >= 1 and "total" in got["report"][0],
          "report: %r" % got["report"])
    for name in ("peers", "drain", "shutdown", "throttle", "go", "pause", "resume", "downstream"):
        check("error" in got[name][0], "%s without a dataplane: %r" % (name, got[name]))
    sh = got["shadow"][0]
    check(sh.get("refused_took") == 0 and sh["classes"]["agree"]["count"] == 7 and
          sh["classes"]["timing"]["samples"][0]["message_id"] == "<t@ctl.test>",
          "shadow %r" % sh)
    cfg = got["config"][0]
    errs = cfg.get("errors", [])
    check(cfg.get("ok") is False and cfg.get("errors_total") == 2 and
          {(e["line"], e["key"]) for e in errs} == {(2, "cutoff"), (3, "[nosuch]")} and
          all(e["file"] == bad and e["message"] for e in errs), "config --check --json: %r" % cfg)
    rc, o, e = run(["config", "--check", c.conf, "--json"])
    check(rc == 0 and json.loads(o)["ok"] is True, "config --check --json of a good file: %d %r"
          % (rc, o))
    rc, o, e = run(["lookup", "-s", c.sock, "--json", "<absent@ctl.test>"])
    check(rc == 1 and json.loads(o).get("state") == "absent", "a negative answer in JSON: %r" % o)
    c.stop()
    log("%d commands, each with --json" % len(cmds))
    passed("40_ctl_json")


main()
