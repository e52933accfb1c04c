#!/usr/bin/env bash
# reloc_table.sh [SLOTS] — docs/history.md's relocation table, made by a
# tool rather than typed: builds tools/bench/reloc_fill.c once per longest
# relocation path (0 to 5 moves, -DFG_HBFS_DEPTH; the product uses 4),
# each in a build directory of its own (build/reloc-d<N>), fills a table of
# SLOTS slots (default 10 M, one shard, one thread) until its first failed
# insert, and writes the rows between docs/history.md's reloc-table
# markers, with the commit, date and processor of the run.
set -euo pipefail
FG_TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$FG_TOP"
slots=${1:-10000000}
doc=docs/history.md
grep -q '<!-- reloc-table:begin' "$doc" || { echo "reloc_table.sh: no reloc-table markers in $doc" >&2; exit 1; }
out=$(mktemp /tmp/fg-reloc.XXXXXX)
trap 'rm -f "$out"' EXIT
for d in 0 1 2 3 4 5; do
	v=reloc-d$d
	# (-Wno-type-limits: at 0 moves the search's depth test is always false)
	make --no-print-directory -s -j"$(nproc)" VARIANT=$v EXTRA_CFLAGS="-O2 -Wno-type-limits" \
		EXTRA_CPPFLAGS=-DFG_HBFS_DEPTH=${d}u "build/$v/bench/reloc_fill" >&2
	"build/$v/bench/reloc_fill" --slots "$slots" | tee -a "$out" >&2
done
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain --untracked-files=no -- . ':!docs' 2>/dev/null)" ] || commit="$commit+"
python3 - "$out" "$doc" "$commit" <<'PY'
import json, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
doc, commit = sys.argv[2], sys.argv[3]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "unknown")
used = 4  # FG_HBFS_DEPTH's default, dataplane/history/history_int.h
body = ["Measured by tools/bench/reloc_table.sh (commit %s, %s, %s): a table of %d slots "
        "(one shard), filled from one thread until its first failed insert, once per longest "
        "path." % (commit, time.strftime("%Y-%m-%d", time.gmtime()), cpu, rows[0]["slots"]), "",
        "| longest path | load at the first failed insert | bytes per entry |",
        "| --- | --- | --- |"]
for r in rows:
    name = "no relocation" if r["depth"] == 0 else "%d move%s" % (r["depth"], "s" * (r["depth"] > 1))
    cells = [name, "%.1f %%" % (100 * r["load"]), "%.1f" % r["bytes_per_entry"]]
    if r["depth"] == used:
        cells = ["**%s (used)**" % cells[0]] + ["**%s**" % c for c in cells[1:]]
    body.append("| %s |" % " | ".join(cells))
text = open(doc).read()
a = text.index("\n", text.index("<!-- reloc-table:begin")) + 1
b = text.index("<!-- reloc-table:end -->")
open(doc, "w").write(text[:a] + "\n".join(body) + "\n" + text[b:])
PY
echo "reloc_table.sh: $doc updated" >&2
