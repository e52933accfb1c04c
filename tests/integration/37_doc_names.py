#!/usr/bin/env python3
# timeout: 60
"""Every name the documentation gives exists in the tree
(tools/check-docnames.py): on README.md and docs/ the check passes; a
document made here that names only real things passes too, with every
kind of name counted (the check had its chance at each); and each kind of
unknown name planted in it (a counter, a counter-like name only a test
holds, a metric, a function, a config key, section, table row or example
line, a floodctl command in backticks or in an example, a path, a file,
a link, a test) fails the check, naming the place."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgkit  # noqa: E402
from fgkit import TOP, check  # noqa: E402

CHECKER = os.path.join(TOP, "tools", "check-docnames.py")

# Real names of each kind (each exists in the tree; the test fails if one
# of them goes, which is the checker doing its job).
DOC = """# A document

`nntp_defer_inflight` and `floodgate_history_entries`, `floodgate_nntp_check_total`,
`net_to_kernel*`, `fg_history_set_policy()`. `[history] capacity 8G`,
`floodctl status --json`. See dataplane/nntp/lines.h and `tools/bench/`,
`qsink.c`, [the index](self.md), test `84_nic_exception`.

### [history]

| key | type |
| --- | --- |
| `capacity` | size |

```
[history]
capacity         4M
```

```sh
build/release/bin/floodctl peers --json
```

## Tests

| 39_powerloss_shim | the shim |
"""

KINDS = ("config keys", "counters, metrics and identifiers", "file names",
         "floodctl commands", "links", "paths", "tests")

CASES = [
    ("an unknown counter", "`nntp_defer_inflight`", "`nntp_defer_@P@`",
     "name `nntp_defer_@P@` is no counter"),
    # a word of this test, so of tests/ only: a counter gone from the
    # product that a test still names does not pass for one
    ("a counter-like name only a test holds", "`nntp_defer_inflight`",
     "`nntp_stale_in_tests`", "name `nntp_stale_in_tests` looks like a counter (nntp_...)"),
    ("an unknown metric", "`floodgate_history_entries`", "`floodgate_history_@P@`",
     "name `floodgate_history_@P@` is no counter"),
    ("an unknown function", "`fg_history_set_policy()`", "`fg_history_@P@()`",
     "name `fg_history_@P@` is no counter"),
    ("a counter glob matching nothing", "`net_to_kernel*`", "`net_to_@P@*`",
     "name `net_to_@P@*` matches no counter"),
    ("an unknown config key", "`[history] capacity 8G`", "`[history] @P@ 8G`",
     "config key `[history] @P@` is no key of that section"),
    ("an unknown config section", "`[history] capacity 8G`", "`[@P@] capacity 8G`",
     "config section `[@P@]` is no section"),
    ("an unknown key in a section's table", "| `capacity` | size |", "| `@P@` | size |",
     "config key `[history] @P@` is no key of that section"),
    ("an unknown floodctl command", "`floodctl status --json`", "`floodctl @P@ --json`",
     "floodctl command `@P@` is no command"),
    ("an unknown key in a configuration example", "capacity         4M", "@P@         4M",
     "config key `[history] @P@` is no key of that section"),
    ("an unknown floodctl command in an example", "bin/floodctl peers", "bin/floodctl @P@",
     "floodctl command `@P@` is no command"),
    ("a path that is not there", "dataplane/nntp/lines.h", "dataplane/nntp/@P@.h",
     "path `dataplane/nntp/@P@.h` is not in the tree"),
    ("a source file that is not there", "`qsink.c`", "`@P@.c`",
     "file `@P@.c` is no file of the tree"),
    ("a link to no file", "[the index](self.md)", "[the index](@P@.md)",
     "link `@P@.md` is no file"),
    ("a test that is not there", "test `84_nic_exception`", "test `84_nic_@P@`",
     "test `84_nic_@P@` is no file"),
    ("a test row that is not there", "| 39_powerloss_shim |", "| 39_powerloss_@P@ |",
     "test `39_powerloss_@P@` is no file"),
]


# The planted word is made here, so that this file does not hold it (the
# check reads tests/ as sources).
P = "plant%d" % os.getpid()


def run(*docs):
    r = subprocess.run([sys.executable, CHECKER, "--top", TOP] + list(docs),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    rc, out = run()
    check(rc == 0 and "PASS" in out, "README.md and docs/ name what the tree lacks:\n" + out)
    m = re.search(r"PASS \((\d+) documents", out)
    check(m and int(m.group(1)) >= 15, "the check read README.md and docs/*.md:\n" + out)

    d = tempfile.mkdtemp(prefix="fg-docnames-%d-" % os.getpid())
    try:
        path = os.path.join(d, "self.md")
        with open(path, "w") as f:
            f.write(DOC)
        rc, out = run(path)
        check(rc == 0, "a document of real names fails:\n" + out)
        for k in KINDS:
            check(re.search(r"\b[1-9]\d* %s\b" % re.escape(k), out),
                  "the check counted no %s in the planted document:\n%s" % (k, out))
        for what, good, planted, want in CASES:
            planted, want = planted.replace("@P@", P), want.replace("@P@", P)
            check(DOC.count(good) == 1, "the case %r plants into one place" % what)
            with open(path, "w") as f:
                f.write(DOC.replace(good, planted))
            rc, out = run(path)
            check(rc == 1 and want in out and "self.md:" in out,
                  "%s: want a failure saying %r, got rc %d:\n%s" % (what, want, rc, out))
    finally:
        if not os.environ.get("FG_KEEP_TMP"):
            shutil.rmtree(d, True)
    fgkit.passed("37_doc_names")


main()
