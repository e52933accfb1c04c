#!/usr/bin/env python3
# timeout: 60
"""docs/protocol.md matches the engine: every response line of
dataplane/nntp/lines.h is quoted there, every nntp counter and every verb
and response code of the engine's tables is named there."""
import os
import re
import sys

TOP = os.environ.get("FG_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


def read(path):
    with open(os.path.join(TOP, path)) as f:
        return f.read()


def main():
    doc = read("docs/protocol.md")
    lines_h = read("dataplane/nntp/lines.h")
    bad = []
    # every string constant: each CRLF-separated piece must be in the doc
    defines = re.findall(r'#define (FG_L_\w+)((?:\s*\\?\s*"[^"]*")+)', lines_h)
    impl = re.search(r'#define FG_NNTP_IMPLEMENTATION "([^"]*)"', lines_h).group(1)
    checked = 0
    for name, body in defines:
        text = "".join(re.findall(r'"([^"]*)"', body))
        text = text.replace('" FG_NNTP_IMPLEMENTATION "', impl)
        for piece in text.split("\\r\\n"):
            piece = piece.strip()
            if not piece or name.startswith("FG_L_ECHO"):
                continue
            if piece.startswith("IMPLEMENTATION"):
                piece = "IMPLEMENTATION " + impl
            checked += 1
            if piece not in doc:
                bad.append("%s: %r not in docs/protocol.md" % (name, piece))
    for code in re.findall(r'FG_L_ECHO_(\d+)', lines_h):
        checked += 1
        if "%s <arg>" % code not in doc:
            bad.append("echo line %s <arg> not in docs/protocol.md" % code)
    counters = re.findall(r'FG_COUNTER\(NNTP_\w+, "(nntp_\w+)"', read("include/floodgate/tbl/counters.h"))
    for c in counters:
        if "`%s`" % c not in doc:
            bad.append("counter %s is not in docs/protocol.md" % c)
    for c in re.findall(r"`(nntp_[a-z_]+)`", doc):
        if c not in counters:
            bad.append("docs/protocol.md names counter %s, which does not exist" % c)
    for code in re.findall(r"FG_NNTP_CODE\(\w+, (\d+),", read("include/floodgate/tbl/nntp_codes.h")):
        if not re.search(r"\b%s\b" % code, doc):
            bad.append("response code %s is not in docs/protocol.md" % code)
    if bad or checked < 25:
        print("FAIL: docs/protocol.md and the engine disagree (%d lines checked):" % checked)
        print("\n".join(bad))
        return 1
    print("PASS: 32_protocol_doc (%d lines, %d counters)" % (checked, len(counters)))
    return 0


sys.exit(main())
