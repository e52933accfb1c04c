# SPDX-License-Identifier: MIT
"""promkit.py — the monitoring files of contrib/monitoring as tests read
them (not a test): the alert rules' expressions, the dashboard's
expressions, and the metric names a PromQL expression selects.

metric_names() is a rough PromQL tokenizer, enough for what we ship:
strings, label matchers {...} and ranges [...] are skipped, a name
followed by "(" is a function, an aggregation's name is none, the list after by,
without, on, ignoring, group_left and group_right holds labels, keywords
and numbers (durations too) are no names, and Grafana's variables ($x,
${x}) are skipped. What is left is a metric name.

start() runs /usr/bin/prometheus (Debian's package) on 127.0.0.1:9090 of
the caller's network namespace, scraping floodctld every second as job
"floodgate" (docs/operations.md's scrape configuration); api() and query()
read its HTTP API. Python stdlib only.
"""
import json
import os
import re
import urllib.parse

import fgkit
from ctlkit import http_get
from fgkit import TOP

PROM = "http://127.0.0.1:9090"

MON = os.path.join(TOP, "contrib", "monitoring")
RULES = os.path.join(MON, "floodgate.rules.yml")
RULE_TESTS = os.path.join(MON, "floodgate.rules.test.yml")
DASHBOARD = os.path.join(MON, "floodgate-dashboard.json")

KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end"}
# aggregations may put their by/without before the parenthesis
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
NUMBER = re.compile(r"(0x[0-9a-fA-F]+|[0-9][0-9.]*([eE][+-]?[0-9]+)?[a-zA-Z]*)")
CLOSING = {"{": "}", "[": "]", "(": ")"}


def _skip_string(e, i):
    q = e[i]
    i += 1
    while i < len(e) and e[i] != q:
        i += 2 if e[i] == "\\" else 1
    return i + 1


def _skip_group(e, i):
    """From the opening bracket at i to just past its match (strings inside
    skipped)."""
    depth, open_, close = 0, e[i], CLOSING[e[i]]
    while i < len(e):
        c = e[i]
        if c in "\"'`":
            i = _skip_string(e, i)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %s in %r" % (open_, e))


def _next_char(e, i):
    while i < len(e) and e[i].isspace():
        i += 1
    return (e[i] if i < len(e) else ""), i


def metric_names(expr):
    """The metric names an expression selects, in order of appearance."""
    e, i, names = expr, 0, []
    while i < len(e):
        c = e[i]
        if c in "\"'`":
            i = _skip_string(e, i)
        elif c in "{[":
            i = _skip_group(e, i)
        elif c == "$":
            i += 1
            if i < len(e) and e[i] == "{":
                i = _skip_group(e, i)
            else:
                m = IDENT.match(e, i)
                i = m.end() if m else i
        elif c.isdigit() or (c == "." and i + 1 < len(e) and e[i + 1].isdigit()):
            i = NUMBER.match(e, i).end() if c != "." else NUMBER.match(e, i + 1).end()
        elif IDENT.match(e, i):
            m = IDENT.match(e, i)
            word, i = m.group(0), m.end()
            nxt, j = _next_char(e, i)
            if word.lower() in GROUPING:
                if nxt == "(":
                    i = _skip_group(e, j)
            elif word.lower() in KEYWORDS or word in AGGREGATIONS:
                pass
            elif nxt == "(":
                pass        # a function or an aggregation
            elif word not in names:
                names.append(word)
        else:
            i += 1
    return names


def rule_exprs(path=RULES):
    """{alert name: expression} of a rules file (one-line exprs and folded
    `expr: >-` blocks; the layout of contrib/monitoring's file)."""
    out, alert, lines = {}, None, open(path).read().splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        m = re.match(r"^\s*- alert:\s*(\S+)", line)
        if m:
            alert = m.group(1)
        m = re.match(r"^(\s*)expr:\s*(.*)$", line)
        if m and alert:
            indent, rest = len(m.group(1)), m.group(2).strip()
            if rest in (">-", ">", "|", "|-"):
                body = []
                k += 1
                while k < len(lines) and (not lines[k].strip()
                                          or len(lines[k]) - len(lines[k].lstrip()) > indent):
                    body.append(lines[k].strip())
                    k += 1
                rest = " ".join(b for b in body if b)
                out[alert] = rest
                continue
            out[alert] = rest
        k += 1
    return out


def dashboard_exprs(path=DASHBOARD):
    """[(where, expression)] of every panel target and every query variable
    of a Grafana dashboard (label_values(SELECTOR, label): the selector)."""
    with open(path) as f:
        d = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append(("panel %r" % p.get("title"), t["expr"]))
            walk(p.get("panels", []))
    walk(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.match(r"^\s*label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$", q)
        out.append(("variable %r" % v["name"], m.group(1) if m else q))
    return out


def grafana_to_promql(expr, rate="1m"):
    """A dashboard expression as Prometheus itself takes it: Grafana's
    $__rate_interval a fixed range, the dashboard's variables "any"."""
    expr = expr.replace("$__rate_interval", rate)
    return re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", ".+", expr)


def start(pdir, target="127.0.0.1:9119", rule_files=()):
    """Prometheus with its configuration and data in pdir (made here),
    once its query API answers."""
    os.makedirs(pdir)
    pconf = os.path.join(pdir, "prometheus.yml")
    with open(pconf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n")
        if rule_files:
            f.write("rule_files:\n" + "".join("  - %s\n" % r for r in rule_files))
        f.write("scrape_configs:\n  - job_name: floodgate\n"
                "    static_configs:\n      - targets: ['%s']\n" % target)
    prom = fgkit.spawn(["prometheus", "--config.file=" + pconf,
                        "--storage.tsdb.path=" + os.path.join(pdir, "data"),
                        "--web.listen-address=127.0.0.1:9090"],
                       os.path.join(pdir, "prometheus.log"))

    def ready():
        fgkit.check(prom.poll() is None, "prometheus exited:\n" + fgkit.slurp(prom.logp))
        return query("up")[0] == "success"
    fgkit.wait_until(ready, 60, "Prometheus to answer its query API")
    return prom


def api(path, **params):
    """The API's JSON answer (errors too: a refused query is JSON), or None
    while Prometheus is not serving it (not up, or 503 while starting)."""
    st, body = http_get(PROM + path + "?" + urllib.parse.urlencode(params), timeout=10)
    try:
        return json.loads(body) if st else None
    except ValueError:
        return None


def query(expr):
    """(status, error or None, result list) of an instant query."""
    r = api("/api/v1/query", query=expr)
    if r is None:
        return "unreachable", None, []
    return r["status"], r.get("error"), (r.get("data") or {}).get("result", [])


def value(expr):
    """The first sample's value of an instant query, or None."""
    st, _, res = query(expr)
    return float(res[0]["value"][1]) if st == "success" and res else None
