#!/usr/bin/env python3
# timeout: 60
"""docs/architecture.md matches the tree (tools/check-archdoc.py): on
this tree the check passes; on a small tree made here it passes while
doc and tree agree, and fails, naming the place, for each way they can
part — a module directory the table does not name, a directory or a file
the table names that is not there, a row under the wrong tier, a path in
the text that is not there."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from fgkit import TOP, check  # noqa: E402

CHECKER = os.path.join(TOP, "tools", "check-archdoc.py")

MAKEFILE = "ENGINE_DIRS := dataplane/core \\\n\tdataplane/nntp\n"
FILES = ["lib/region/region.c", "dataplane/core/log.c", "dataplane/nntp/session.c",
         "dataplane/net/net.c", "control/floodctld/main.c", "tools/bench/bench_a.c",
         "include/floodgate/tbl/counters.h"]
DOC = """# Architecture

| tier | module (directory) | owns | may include |
| --- | --- | --- | --- |
| engine | `dataplane/core`, `nntp` | counters (`tbl/counters.h`), `session.c` | engine |
| lib | `lib/region` | the region (`region.c`) | engine, lib |
| dataplane | `dataplane/net` | `net.c` | engine, lib, dataplane |
| control | `control/floodctld` | the daemon | engine, lib, control |
| tools | `tools/bench` | `bench_*.c` | everything |

1. `dataplane/nntp/session.c` takes the line; `net.c` builds the frame.
"""


def run(top, doc=None):
    args = [sys.executable, CHECKER, "--top", top]
    if doc is not None:
        path = os.path.join(top, "doc.md")
        with open(path, "w") as f:
            f.write(doc)
        args += ["--doc", path]
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def small_tree():
    top = tempfile.mkdtemp(prefix="fg-archdoc-")
    with open(os.path.join(top, "Makefile"), "w") as f:
        f.write(MAKEFILE)
    for p in FILES:
        os.makedirs(os.path.join(top, os.path.dirname(p)), exist_ok=True)
        open(os.path.join(top, p), "w").close()
    return top


def main():
    rc, out = run(TOP)
    check(rc == 0 and "PASS" in out, "docs/architecture.md and this tree part:\n" + out)

    top = small_tree()
    try:
        rc, out = run(top, DOC)
        check(rc == 0 and "PASS (6 module directories)" in out,
              "the small tree and its doc agree, yet:\n" + out)
        cases = [
            ("a module directory the table does not name",
             DOC.replace("| control | `control/floodctld` | the daemon | engine, lib, control |\n",
                         ""), "module directory control/floodctld is not in the module table"),
            ("a directory the table names that is not there",
             DOC.replace("`dataplane/core`, `nntp`", "`dataplane/core`, `nntp`, `gone`"),
             "`dataplane/gone` is not a directory of the tree"),
            ("a file the table names that is not there",
             DOC.replace("the region (`region.c`)", "the region (`region.c`, `slot.c`)"),
             "`slot.c` is not a file of the tree"),
            ("a row under the wrong tier",
             DOC.replace("| dataplane | `dataplane/net`", "| engine | `dataplane/net`"),
             "`dataplane/net` is in the dataplane tier, the row says engine"),
            ("a path in the text that is not there",
             DOC.replace("`dataplane/nntp/session.c`", "`dataplane/nntp/cmd.c`"),
             "`dataplane/nntp/cmd.c` is not in the tree"),
            ("a source file in the text that is not there",
             DOC.replace("`net.c` builds", "`net_tx.c` builds"),
             "`net_tx.c` is no source file of the tree"),
        ]
        for what, doc, want in cases:
            rc, out = run(top, doc)
            check(rc == 1 and want in out, "%s: want a failure saying %r, got rc %d:\n%s"
                  % (what, want, rc, out))
        os.makedirs(os.path.join(top, "lib", "newmod"))
        rc, out = run(top, DOC)
        check(rc == 1 and "module directory lib/newmod is not in the module table" in out,
              "a new module directory in the tree, not in the doc: rc %d:\n%s" % (rc, out))
    finally:
        shutil.rmtree(top, True)
    fgkit.passed("36_arch_doc")


main()
