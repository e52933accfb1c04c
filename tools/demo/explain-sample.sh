#!/usr/bin/env bash
# explain-sample.sh — the admission rules on their own, no daemon needed
# (the first `make run`, before the live demo of tools/demo/demo.py):
# `floodctl explain` decides every article of the bundled sample feed
# (tests/data/sample-feed/: real INN-style articles, wire and plain form)
# under that feed's floodgate.conf, as sent by its peer "upstream", at a
# fixed time, so the verdicts are the same on every machine and every day.
# One line per article (file, verdict, reason, date used, age), then a
# total by reason. Exits non-zero if floodctl fails on any article.
set -u -o pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
floodctl=${FLOODCTL:-$top/build/release/bin/floodctl}
feed=${1:-$top/tests/data/sample-feed}
now="Mon, 02 Mar 2026 12:00:00 +0000"

[ -x "$floodctl" ] || { echo "explain-sample: $floodctl not built (make all)" >&2; exit 2; }
echo "floodctl explain -c $feed/floodgate.conf --peer upstream --now '$now'"
echo

for f in "$feed"/*.art; do
	"$floodctl" explain -c "$feed/floodgate.conf" --peer upstream --now "$now" --json "$f"
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "explain-sample: floodctl explain failed on $f (exit $rc)" >&2
		exit 2
	fi
done | python3 -c '
import json, sys
from collections import Counter

def age(s):
    if s is None:
        return "-"
    sign, s = ("-", -s) if s < 0 else ("", s)
    return "%s%dd %02dh %02dm %02ds" % (sign, s // 86400, s // 3600 % 24, s // 60 % 60, s % 60)

rows = [json.loads(line) for line in sys.stdin]
fmt = "%-32s %-9s %-20s %-15s %s"
print(fmt % ("article", "verdict", "reason", "date used", "age"))
for r in rows:
    print(fmt % (r["file"].rsplit("/", 1)[-1], r["verdict"], r["reason"] or "-",
                 r["date_used"] or "-", age(r["age"])))
by = Counter(r["reason"] for r in rows if r["reason"])
acc = sum(1 for r in rows if r["verdict"] == "accepted")
print()
print("%d articles: %d accepted, %d rejected (%s)" % (len(rows), acc, len(rows) - acc,
      ", ".join("%s %d" % kv for kv in sorted(by.items()))))
'
