#!/usr/bin/env python3
# timeout: 60
"""55_relay_doc — docs/relay.md matches the code: every queue_ and relay_
counter of include/floodgate/tbl/counters.h is named there and nothing
else by those prefixes; the stats lines it and docs/protocol.md name are
the ones dataplane/outbound/outbound.c writes (for floodgate-host and
floodgate alike), and docs/dataplane.md names them too."""
import os
import re
import sys

TOP = os.environ.get("FG_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


def read(path):
    with open(os.path.join(TOP, path)) as f:
        return f.read()


def main():
    doc = read("docs/relay.md")
    bad = []
    counters = re.findall(r'FG_COUNTER\(\w+, "((?:queue|relay)_\w+)"',
                          read("include/floodgate/tbl/counters.h"))
    for c in counters:
        if "`%s`" % c not in doc:
            bad.append("counter %s is not in docs/relay.md" % c)
    for c in set(re.findall(r"`((?:queue|relay)_[a-z_0-9]+)`", doc)):
        if c not in counters and c not in ("queue_records_on_disk", "queue_bytes_on_disk",
                                           "queue_refusing"):
            bad.append("docs/relay.md names %s, which is not a counter" % c)
    outbound = read("dataplane/outbound/outbound.c")
    proto = read("docs/protocol.md")
    dpdoc = read("docs/dataplane.md")
    keys = re.findall(r'(?:"|\\n)downstream:%s:([a-z_]+) ', outbound)
    if len(keys) < 10:
        bad.append("outbound.c writes only %d downstream lines" % len(keys))
    for key in keys:
        if "`%s`" % key not in proto:
            bad.append("stats line downstream:<name>:%s is not in docs/protocol.md" % key)
        if "`%s`" % key not in dpdoc:
            bad.append("stats line downstream:<name>:%s is not in docs/dataplane.md" % key)
    for key in ("queue_records_on_disk", "queue_bytes_on_disk", "queue_refusing",
                "warmup_active", "warmup_until"):
        if key not in outbound:
            bad.append("outbound.c no longer writes %s" % key)
        if "`%s`" % key not in proto + doc:
            bad.append("stats line %s is in neither doc" % key)
        if "`%s`" % key not in dpdoc:
            bad.append("stats line %s is not in docs/dataplane.md" % key)
    if bad or len(counters) < 20:
        print("FAIL: docs and code disagree:\n" + "\n".join(bad))
        return 1
    print("PASS: 55_relay_doc (%d counters)" % len(counters))
    return 0


sys.exit(main())
