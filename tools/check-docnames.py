#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-docnames.py [--top DIR] [DOC...] — every name the documentation
gives exists in the tree (run by `make test`: integration test
37_doc_names, which also shows that it fails on a planted unknown name).

The documents are README.md and docs/*.md (docs/bench/ is generated and
not read), or the DOCs given. What counts as a name, and where it must be:

  1. A config key: a backticked `[section] key ...` (`[history] capacity`,
     `[peer NAME] address`), the first cell of each table row under a
     `### [section]` heading of a document, and each line of a fenced
     floodgate.conf example after its `[section]` line, are a row of the
     key table, dataplane/config/config_keys.c, in that section.
  2. A floodctl command: a backticked `floodctl <cmd> ...`, and one on a
     line of a fenced example, names a command of control/floodctl/
     (`.name = "<cmd>"`) or `help`.
  3. A path: a word that starts with one of the tree's top folders and a
     slash (`dataplane/nntp/lines.h`, `tools/bench/`, backticked or not)
     exists (a glob: `bench_*.c`); a relative link `[x](y.md)` names a
     file from its document's folder.
  4. A file name: a backticked bare `x.c`, `x.h`, `x.py`, `x.sh` is a file
     somewhere in the tree.
  5. A counter, metric or identifier: a backticked token of the form
     `a_b` (lower case, with an underscore: `nntp_defer_inflight`,
     `floodgate_clock_suspect`, `state_entries{state="offered"}`,
     `net_to_kernel*`), or `FG_...`, or `fg_...()`, is a counter of
     include/floodgate/tbl/counters.h, or a word of the tree's sources
     (C, Python, shell, the Makefile; not docs/), and one that starts
     like a counter (`nntp_`, `tcp_`: the first word of a counter's name)
     a counter or a word of the product (not of tests/, except libcheck's
     test case names). A metric
     `floodgate_[peer_]X[_total|_bucket|_sum|_count]` also counts when X
     is a counter, a quoted stem of the sources ("injection_delay_seconds"
     for "floodgate_%s"), or a family and a field: the family a quoted
     word or the fixed part of a format ("floodgate_nic_%s"), the field a
     word of the sources; `FG_CTR_X` when X is a counter's id. A
     token ending in `*` is a glob that must match one.
  6. A test's name (`84_nic_exception`, 84_nic_exception.py, a word of
     two digits, an underscore and a name) is a file of tests/integration,
     tests/interop or tests/long.

Words in fenced code blocks are read too, except rule 5 (examples of
output and configuration hold names that are not identifiers).

Exit 0 and one PASS line (with how many names of each kind were checked),
or 1 with one line per name that is not there. Python stdlib only.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

SRC_EXT = (".c", ".h", ".py", ".sh", ".in", ".conf", ".service", ".json", ".txt")
SKIP_DIRS = {".git", "build", "docs", "__pycache__", "corpus", "data"}


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def top_folders(top):
    return sorted(d for d in os.listdir(top)
                  if os.path.isdir(os.path.join(top, d)) and not d.startswith(".")
                  and d != "build")


def config_keys(top):
    """{section: {keys}} from the key table."""
    text = read(os.path.join(top, "dataplane", "config", "config_keys.c"))
    names = dict(re.findall(r'\[SEC_(\w+)\]\s*=\s*"([\w-]+)"', text))
    keys = {n: set() for n in names.values()}
    for sec, key in re.findall(r'\{\s*SEC_(\w+),\s*T_\w+,\s*[^,]*,\s*"([\w-]+)"', text):
        keys[names[sec]].add(key)
    if sum(len(v) for v in keys.values()) < 20:
        sys.exit("check-docnames: the key table of config_keys.c did not parse")
    return keys


def floodctl_commands(top):
    out = {"help"}
    for p in glob.glob(os.path.join(top, "control", "floodctl", "*.c")):
        out.update(re.findall(r'\.name\s*=\s*"([\w-]+)"', read(p)))
    if len(out) < 10:
        sys.exit("check-docnames: no floodctl command table in control/floodctl")
    return out


def counters(top):
    """{name: id} of every FG_COUNTER row."""
    text = read(os.path.join(top, "include", "floodgate", "tbl", "counters.h"))
    rows = re.findall(r'FG_COUNTER\((\w+),\s*"(\w+)"', text)
    if len(rows) < 50:
        sys.exit("check-docnames: the counter table did not parse")
    return {name: cid for cid, name in rows}


def tree_files(top):
    """(base names, source words, the product's words, quoted words,
    metric name prefixes) of the tree outside docs/. The product's words
    are those outside tests/, and the names of libcheck's test cases."""
    names, words, product, quoted, prefixes = set(), set(), set(), set(), set()
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not (rel == "." and d == "build")]
        for f in files:
            names.add(f)
            if f.endswith(SRC_EXT) or f in ("Makefile", "rules", "control") or "." not in f:
                p = os.path.join(root, f)
                try:
                    if os.path.getsize(p) > 4 << 20:
                        continue
                    text = re.sub(r"\\[nrt]", " ", read(p))	# "a %lu\nb %lu\n"
                    found = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
                    words.update(found)
                    if rel != "tests" and not rel.startswith("tests" + os.sep):
                        product.update(found)
                    product.update(re.findall(r"\bSTART_TEST\((\w+)\)", text))
                    quoted.update(re.findall(r'"([a-z0-9_]+)"', text))
                    prefixes.update(re.findall(r'"floodgate_([a-z0-9_]*)%s', text))
                except OSError:
                    pass
    # the build and the test folders of docs/ itself are named too
    for root, dirs, files in os.walk(os.path.join(top, "docs")):
        names.update(files)
    return names, words, product, quoted, prefixes


def tests(top):
    out = set()
    for d in ("integration", "interop", "long"):
        for p in glob.glob(os.path.join(top, "tests", d, "*")):
            out.add(os.path.splitext(os.path.basename(p))[0])
    return out


class Checker:
    def __init__(self, top):
        self.top = top
        self.folders = top_folders(top)
        self.keys = config_keys(top)
        self.cmds = floodctl_commands(top)
        self.ctrs = counters(top)
        self.ids = set(self.ctrs.values())
        self.names, self.words, self.product, self.quoted, self.prefixes = tree_files(top)
        self.families = {n.split("_")[0] for n in self.ctrs}
        self.tests = tests(top)
        self.counts = {}
        self.errors = []
        self.path_re = re.compile(r"(?<![\w./-])((?:%s)/[\w.*?/{},<>-]*[\w*?/>}])"
                                  % "|".join(map(re.escape, self.folders)))

    def bad(self, doc, ln, kind, what, why):
        self.errors.append("%s:%d: %s `%s` %s" % (doc, ln, kind, what, why))

    def seen(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    # rule 1
    def key(self, doc, ln, sec, key):
        self.seen("config keys")
        if sec not in self.keys:
            self.bad(doc, ln, "config section", "[%s]" % sec, "is no section of config_keys.c")
        elif key not in self.keys[sec]:
            self.bad(doc, ln, "config key", "[%s] %s" % (sec, key),
                     "is no key of that section in config_keys.c")

    # rule 2
    def command(self, doc, ln, cmd):
        self.seen("floodctl commands")
        if cmd not in self.cmds:
            self.bad(doc, ln, "floodctl command", cmd, "is no command of control/floodctl")

    # rule 3
    def path(self, doc, ln, p):
        self.seen("paths")
        p = p.rstrip("/.")
        brace = re.match(r"(.*)\{([^}]*)\}(.*)", p)
        if brace:	# a/{b,c}: each
            head, alts, tail = brace.groups()
            for a in alts.split(","):
                self.path(doc, ln, head + a + tail)
            self.counts["paths"] -= 1
            return
        p = re.sub(r"<[^>/]*>", "*", p.split("{", 1)[0])
        # a built file is named by its source (tests/unit/test_tcp,
        # tests/preload/powerloss.so), a numbered test by its number
        # (tests/integration/39)
        where = [p, p + ".c", p + ".py", p + ".sh", re.sub(r"\.so$", ".c", p)]
        if re.search(r"/\d\d$", p):
            where.append(p + "_*")
        if not any(glob.glob(os.path.join(self.top, w)) for w in where):
            self.bad(doc, ln, "path", p, "is not in the tree")

    # rule 5
    def word(self, w):
        if w in self.words or w in self.ctrs:
            return True
        m = re.match(r"floodgate_(?:peer_)?(\w+?)(?:_total|_bucket|_sum|_count)?$", w)
        if m and self.metric(m.group(1)):
            return True
        m = re.match(r"FG_CTR_(\w+)$", w)
        return bool(m and m.group(1) in self.ids)

    def metric(self, x):
        """floodgate_X (less peer_ and the series' suffix): X is a counter,
        a quoted stem ("injection_delay_seconds" in floodgate_%s), or a
        family and a field: the family a quoted word or the fixed part of
        a "floodgate_nic_%s" format, the field a word of the sources."""
        if x in self.ctrs or x in self.quoted:
            return True
        parts = x.split("_")
        for i in range(1, len(parts)):
            fam, field = "_".join(parts[:i]), "_".join(parts[i:])
            if (fam in self.quoted or fam + "_" in self.prefixes) and field in self.words:
                return True
        return False

    def ident(self, doc, ln, tok):
        self.seen("counters, metrics and identifiers")
        if tok.endswith("*"):
            pat = tok
            if any(fnmatch.fnmatchcase(w, pat) for w in self.ctrs) or \
               any(fnmatch.fnmatchcase(w, pat) for w in self.words):
                return
            self.bad(doc, ln, "name", tok, "matches no counter and no word of the sources")
        elif not self.word(tok):
            self.bad(doc, ln, "name", tok, "is no counter and no word of the sources")
        elif tok.split("_")[0] in self.families and tok not in self.ctrs and \
                tok not in self.product:
            # a counter's family (nntp_, tcp_...): a test's word is not
            # enough, since a test may still hold a counter that is gone
            self.bad(doc, ln, "name", tok, "looks like a counter (%s_...) but is no counter and "
                     "no word of the product's sources" % tok.split("_")[0])

    def doc(self, doc):
        rel = os.path.relpath(doc, self.top)
        section = None
        fenced, conf = False, None
        for ln, line in enumerate(read(doc).split("\n"), 1):
            if line.lstrip().startswith("```"):
                fenced, conf = not fenced, None
                continue
            if fenced:	# a command line of an example
                for cmd in re.findall(r"(?:^|[\s/])floodctl ([a-z][\w-]*)", line):
                    self.command(rel, ln, cmd)
            if fenced:	# a floodgate.conf example: its keys too
                s = re.match(r"^\[(\w+)(?: [\w.-]+)?\]\s*(?:#.*)?$", line)
                if s and s.group(1) in self.keys:
                    conf = s.group(1)
                elif conf and re.match(r"^[a-z][\w-]*\s", line + " "):
                    self.key(rel, ln, conf, line.split()[0])
                elif conf and line.strip() and not line.startswith("#"):
                    conf = None
            h = re.match(r"^#{2,4} \[(\w+)(?: NAME)?\]\s*$", line)
            if h:
                section = h.group(1)
            elif line.startswith("#"):
                section = None
            if section and not fenced and line.startswith("| `"):
                k = re.match(r"^\| `([\w-]+)`", line)
                if k:
                    self.key(rel, ln, section, k.group(1))
            for p in self.path_re.findall(line):
                self.path(rel, ln, p)
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue
                self.seen("links")
                if not os.path.exists(os.path.join(os.path.dirname(doc), target)):
                    self.bad(rel, ln, "link", target, "is no file")
            for name in ([] if fenced else
                         re.findall(r"(?<![\w/.-])(\d\d_[a-z][a-z0-9_]*)\b", line)):
                self.seen("tests")
                if name not in self.tests:
                    self.bad(rel, ln, "test", name,
                             "is no file of tests/integration, tests/interop or tests/long")
            for tok in re.findall(r"`([^`]+)`", line):
                self.token(rel, ln, tok.strip(), fenced)

    def token(self, rel, ln, tok, fenced):
        m = re.match(r"^\[(\w+)(?: [\w.-]+)?\] ([a-z][\w-]*)", tok)
        if m:
            self.key(rel, ln, m.group(1), m.group(2))
            return
        m = re.match(r"^(?:\S*/)?floodctl ([a-z][\w-]*)", tok)
        if m:
            self.command(rel, ln, m.group(1))
            return
        if fenced:
            return
        if re.match(r"^\d\d_[a-z][a-z0-9_]*(?:\.\w+)?$", tok):
            return	# a test: above
        if re.match(r"^[\w-]+\.(?:c|h|py|sh)$", tok):
            self.seen("file names")
            if tok not in self.names:
                self.bad(rel, ln, "file", tok, "is no file of the tree")
            return
        t = re.sub(r"\{[^}]*\}$", "", tok)
        t = re.sub(r"\(\)$", "", t)
        if re.match(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+\*?$", t) or \
           re.match(r"^(?:FG|fg)_\w+\*?$", t):
            self.ident(rel, ln, t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--top", default=top)
    ap.add_argument("docs", nargs="*")
    a = ap.parse_args()
    docs = a.docs or ([os.path.join(a.top, "README.md")]
                      + sorted(glob.glob(os.path.join(a.top, "docs", "*.md"))))
    c = Checker(a.top)
    for d in docs:
        c.doc(d)
    for e in c.errors:
        print("check-docnames: " + e, file=sys.stderr)
    if c.errors:
        print("check-docnames: FAIL (%d)" % len(c.errors), file=sys.stderr)
        return 1
    print("check-docnames: PASS (%d documents; %s)" % (
        len(docs), ", ".join("%d %s" % (n, k) for k, n in sorted(c.counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
