#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 180
"""83_nic_counters — the port's own figures in floodctld's /metrics.

floodgate on a tap port publishes what the port counts (tbl/nic.h) in its
region slot; floodctld exports it. promtool accepts the scrape; the link
is up; a session's exchanges move the port's and its queue's received and
sent frames by at least as many as the session exchanged; `floodctl
status` shows the port. Then a forced drop: the kernel side of the tap
goes down while a session is open, its idle timeout makes floodgate send
(the 400 and the FIN), the port refuses those frames, and /metrics shows
the link down, the port's transmit errors and floodgate's own drops on the
queue; the status page (/) shows the port's row as /stats.json has it and
the link down as an alert. The link comes back up: link_up is 1 again and
a new session is served, the sign that the counters recorded a drop, not
a dead port.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from ctlkit import http_get, prom_parse, prom_value  # noqa: E402
from fgdp import check, log, wait_until  # noqa: E402
from pagekit import Page, num, ports_agree, stats  # noqa: E402
from pagekit import page as status_page  # noqa: E402

METRICS = "http://127.0.0.1:9119/metrics"
PORT = dict(port="net_tap0", role="port")
QUEUE0 = dict(port="net_tap0", queue="0")
EXCHANGES = 20


def scrape():
    st, body = http_get(METRICS)
    check(st == 200, "GET /metrics: %d" % st)
    return body


def metric(name, **labels):
    return prom_value(prom_parse(scrape()), name, **labels)


def nic(name):
    return metric("floodgate_nic_" + name, **PORT)


def wait_metric(pred, what, timeout=30):
    """The first scrape whose samples satisfy pred."""
    return wait_until(lambda: (lambda s: s if pred(s) else None)(prom_parse(scrape())),
                      timeout, what)


def session_exchanges(n):
    """n CHECKs, each answered before the next: each is at least one frame
    received and one sent by the port."""
    s = fgdp.connect("198.18.0.1")
    r = fgdp.Lines(s)
    check(r.line().startswith("200"), "greeting")
    s.sendall(b"MODE STREAM\r\n")
    check(r.line().startswith("203"), "MODE STREAM")
    for i in range(n):
        s.sendall(b"CHECK <nic-%d@test>\r\n" % i)
        line = r.line()
        check(line.startswith("238 "), "CHECK %d answered %r" % (i, line))
    s.sendall(b"QUIT\r\n")
    check(r.line().startswith("205"), "QUIT")
    s.close()


def main():
    w = fgdp.World("nic")
    with open(w.conf) as f:
        text = f.read()
    # a short idle timeout: a session the test leaves idle makes floodgate send
    text = text.replace("clock-skew-limit 0\n", "clock-skew-limit 0\nidle-timeout 2s\n")
    text = text.replace("[stats]\n", "[stats]\nhttp 127.0.0.1:9119\n")
    with open(w.conf, "w") as f:
        f.write(text)
    w.start_ctld()
    w.start_dp()

    body = wait_until(lambda: (lambda b: b if "floodgate_nic_link_up" in b else None)(scrape()),
                      30, "the port's figures in /metrics")
    p = subprocess.run(["promtool", "check", "metrics"], input=body.encode(), capture_output=True)
    check(p.returncode == 0, "promtool check metrics: %s %s" % (p.stdout, p.stderr))
    doc = open(os.path.join(fgdp.TOP, "docs/operations.md")).read()
    for fam in re.findall(r"^# HELP (floodgate_nic_\S+) ", body, re.M):
        check("`%s{" % fam in doc, "docs/operations.md lists %s" % fam)
    s = prom_parse(body)
    check(prom_value(s, "floodgate_nic_link_up", **PORT) == 1, "link up at start")
    for name in ("rx_missed_total", "rx_nombuf_total", "rx_errors_total", "tx_errors_total",
                 "tx_dropped_total"):
        check(prom_value(s, "floodgate_nic_" + name, **PORT) == 0, "%s is 0 at start" % name)

    # traffic moves the port's and the queue's counters
    before = prom_parse(scrape())
    session_exchanges(EXCHANGES)

    def moved(s):
        def d(name, labels):
            return (prom_value(s, name, **labels) or 0) - (prom_value(before, name, **labels) or 0)
        return all(d("floodgate_nic_%s_total" % n, PORT) >= EXCHANGES and
                   d("floodgate_nic_queue_%s_total" % n, QUEUE0) >= EXCHANGES
                   for n in ("rx_packets", "tx_packets")) and \
            d("floodgate_nic_rx_bytes_total", PORT) > 0 and d("floodgate_nic_tx_bytes_total", PORT) > 0
    after = wait_metric(moved, "the port's frames to move by the session's %d exchanges" % EXCHANGES)
    log("port: rx %d tx %d frames after %d exchanges" % (
        prom_value(after, "floodgate_nic_rx_packets_total", **PORT),
        prom_value(after, "floodgate_nic_tx_packets_total", **PORT), EXCHANGES))
    rc, out, err = w.ctl("status")
    check(rc == 0 and "nic net_tap0 (port): link up" in out, "floodctl status: %s %s" % (out, err))
    rc, out, err = w.ctl("status", "--json")
    check(rc == 0 and '"nic"' in out and '"rx_missed"' in out, "status --json: %s" % out)

    # a forced drop: the link goes down under an open session
    s = fgdp.connect("198.18.0.1")
    r = fgdp.Lines(s)
    check(r.line().startswith("200"), "greeting")
    subprocess.run(["ip", "link", "set", "fgd0", "down"], check=True)
    down = wait_metric(lambda s: prom_value(s, "floodgate_nic_link_up", **PORT) == 0 and
                       prom_value(s, "floodgate_nic_tx_errors_total", **PORT) > 0 and
                       prom_value(s, "floodgate_nic_queue_tx_dropped_total", **QUEUE0) > 0,
                       "link down, the port's transmit errors and the queue's drops in /metrics")
    log("link down: tx errors %d, dropped %d (port), %d (queue 0)" % (
        prom_value(down, "floodgate_nic_tx_errors_total", **PORT),
        prom_value(down, "floodgate_nic_tx_dropped_total", **PORT),
        prom_value(down, "floodgate_nic_queue_tx_dropped_total", **QUEUE0)))
    check(prom_value(down, "floodgate_nic_tx_dropped_total", **PORT) >=
          prom_value(down, "floodgate_nic_queue_tx_dropped_total", **QUEUE0),
          "the port's drops include its queues'")
    rc, out, err = w.ctl("status")
    check("link DOWN" in out, "floodctl status shows the link down: %s" % out)
    # the status page: the port's row as /stats.json has it, the link down an alert
    a, page, b = stats(), Page(status_page()), stats()
    check(ports_agree(a, page, b) == ["net_tap0"], "the port on the status page")
    check(num(page.fig[(("port", "net_tap0"), "link_up")]) == 0 and "link-down" in page.alerts,
          "the page says the link is down: %r" % page.alerts)
    s.close()

    # back up: the link, and service
    subprocess.run(["ip", "link", "set", "fgd0", "up"], check=True)
    for a in fgdp.KERNEL_ADDRS:
        subprocess.run(["ip", "addr", "replace", a + "/24", "dev", "fgd0"], check=True)
    wait_metric(lambda s: prom_value(s, "floodgate_nic_link_up", **PORT) == 1, "the link up again")
    w.wait_tcp()
    session_exchanges(3)
    p = subprocess.run(["promtool", "check", "metrics"], input=scrape().encode(),
                       capture_output=True)
    check(p.returncode == 0, "promtool check metrics after the drop: %s %s" % (p.stdout, p.stderr))

    w.stop_dp()
    wait_until(lambda: metric("floodgate_nic_link_up", **PORT) is None, 30,
               "the port's figures gone with the dataplane")
    w.check_logs()
    fgdp.passed("83_nic_counters")


if __name__ == "__main__":
    main()
