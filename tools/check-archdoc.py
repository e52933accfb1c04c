#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-archdoc.py [--top DIR] [--doc FILE] — docs/architecture.md's
module table matches the tree (run by `make test`: integration test
36_arch_doc, which also shows that it fails when they part).

  1. Every module directory — a directory right under lib/, dataplane/,
     control/ or tools/ — is named in the table's module column.
  2. Every directory the module column names exists. A cell lists
     `a/b`, `c`, `d`: the first with its folder, the others as its
     siblings (`dataplane/msgid`, `date` is dataplane/msgid and
     dataplane/date).
  3. Every file the table's other columns name exists: a bare `x.c` or
     `x.h` in one of its row's module directories, a path (`tbl/x.h`,
     `include/floodgate/x.h`) from the top or under include/floodgate/.
  4. A row's tier is the tier its directories belong to: lib/ and
     control/ their own, tools/ tools, dataplane/ engine or dataplane as
     the Makefile's ENGINE_DIRS says.
  5. Outside the table too (the path of an offer, where a newcomer adds):
     every path of the tree the text names (`dataplane/nntp/lines.h`)
     exists, and every bare source file name (`qsink.c`) is a file
     somewhere in the tree.
A name may be a glob (`bench_*.c`).

Exit 0 and one PASS line, or 1 with one line per mismatch. Python
stdlib only; reads the Makefile for ENGINE_DIRS, builds nothing.
"""
import argparse
import glob
import os
import re
import sys

TIER_ROOTS = ("lib", "dataplane", "control", "tools")
TABLE_HEAD = "| tier | module (directory) |"


def engine_dirs(top):
    """ENGINE_DIRS of the Makefile (a continued assignment)."""
    text = open(os.path.join(top, "Makefile")).read()
    m = re.search(r"^ENGINE_DIRS :=((?:.*\\\n)*.*)$", text, re.M)
    if not m:
        sys.exit("check-archdoc: no ENGINE_DIRS in the Makefile")
    return set(m.group(1).replace("\\\n", " ").split())


def tree_modules(top):
    out = set()
    for root in TIER_ROOTS:
        for d in sorted(os.listdir(os.path.join(top, root))):
            if os.path.isdir(os.path.join(top, root, d)) and not d.startswith("."):
                out.add(root + "/" + d)
    return out


def table_rows(lines):
    """(line number, [cells]) of the module table's body rows."""
    start = next((i for i, l in enumerate(lines) if l.startswith(TABLE_HEAD)), None)
    if start is None:
        sys.exit("check-archdoc: no module table (%s...)" % TABLE_HEAD)
    rows = []
    for i in range(start + 2, len(lines)):
        if not lines[i].startswith("|"):
            break
        rows.append((i + 1, [c.strip() for c in lines[i].strip().strip("|").split("|")]))
    return rows


def source_names(top):
    """The base names of the tree's C sources and headers."""
    out = set()
    for root in TIER_ROOTS + ("include",):
        for _, _, files in os.walk(os.path.join(top, root)):
            out.update(f for f in files if f.endswith((".c", ".h")))
    return out


def check_text(top, doc, lines, table):
    """Rule 5 over the lines outside the table."""
    errors, names = [], source_names(top)
    path = re.compile(r"^(?:%s|include|tests|docs)/[\w.*/-]+$" % "|".join(TIER_ROOTS))
    for ln, line in enumerate(lines, 1):
        if ln in table:
            continue
        for tok in re.findall(r"`([^`\s]+)`", line):
            tok = tok.rstrip("/")
            if path.match(tok):
                if not glob.glob(os.path.join(top, tok)):
                    errors.append("%s:%d: `%s` is not in the tree" % (doc, ln, tok))
            elif re.match(r"^[\w-]+\.[ch]$", tok) and tok not in names:
                errors.append("%s:%d: `%s` is no source file of the tree" % (doc, ln, tok))
    return errors


def module_cell(cell):
    """The directories a module cell names."""
    dirs, parent = [], None
    for name in re.findall(r"`([^`]+)`", cell):
        if "/" in name:
            parent = name.rsplit("/", 1)[0]
            dirs.append(name)
        elif parent:
            dirs.append(parent + "/" + name)
        else:
            dirs.append(name)	# a bare name without a folder: reported as missing
    return dirs


def tier_of(d, engine):
    root = d.split("/", 1)[0]
    if root == "dataplane":
        return "engine" if d in engine else "dataplane"
    return root


def check(top, doc):
    errors = []
    engine = engine_dirs(top)
    named = set()
    lines = open(doc).read().split("\n")
    rows = table_rows(lines)
    for ln, cells in rows:
        if len(cells) < 3:
            errors.append("%s:%d: a row of fewer than three cells" % (doc, ln))
            continue
        tier, dirs = cells[0], module_cell(cells[1])
        if not dirs:
            errors.append("%s:%d: names no module directory" % (doc, ln))
        for d in dirs:
            named.add(d)
            if not os.path.isdir(os.path.join(top, d)):
                errors.append("%s:%d: `%s` is not a directory of the tree" % (doc, ln, d))
            elif tier_of(d, engine) != tier:
                errors.append("%s:%d: `%s` is in the %s tier, the row says %s"
                              % (doc, ln, d, tier_of(d, engine), tier))
        for cell in cells[2:]:
            for name in re.findall(r"`([^`]+\.[ch])`", cell):
                if "/" in name:
                    where = [name, os.path.join("include", "floodgate", name)]
                else:
                    where = [os.path.join(d, name) for d in dirs]
                if not any(glob.glob(os.path.join(top, w)) for w in where):
                    errors.append("%s:%d: `%s` is not a file of the tree (looked at %s)"
                                  % (doc, ln, name, ", ".join(where)))
    for d in sorted(tree_modules(top) - named):
        errors.append("%s: module directory %s is not in the module table" % (doc, d))
    return errors + check_text(top, doc, lines, {ln for ln, _ in rows})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--top", default=top)
    ap.add_argument("--doc", default=None)
    a = ap.parse_args()
    doc = a.doc or os.path.join(a.top, "docs", "architecture.md")
    errors = check(a.top, doc)
    for e in errors:
        print("check-archdoc: " + e, file=sys.stderr)
    if errors:
        print("check-archdoc: FAIL (%d)" % len(errors), file=sys.stderr)
        return 1
    print("check-archdoc: PASS (%d module directories)" % len(tree_modules(a.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
