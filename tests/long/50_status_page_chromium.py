#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""50_status_page_chromium — the status page in a real browser.

The world of 49_ctl_status_page (floodctld with a point of the graphs
every second, floodgate-host, peers near, far and idle, a downstream):
far sends a few articles an hour late, near feeds in bursts for about a
minute (so the graphs have a shape), then far is paused by the operator
(an alert, and a lever in force).
Headless Chromium, from Debian's package (make test-long installs it:
tools/deps.sh long), loads the page from floodctld as a person would:
  - its DOM (--dump-dom), parsed with html.parser, has every figure the
    served page has, with the same text: the browser read the page as the
    test does, and no text became markup (no script element anywhere);
  - a screenshot (--screenshot), a PNG of the window's size whose pixels
    are not all one colour (a page, not a blank or an error screen), is
    written to build/test-logs/status-page.png, and to
    docs/img/status-page.png when FG_UPDATE_DOCS_IMG=1 (docs/operations.md
    shows that one).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import relaykit  # noqa: E402
from fgkit import TOP, check, log, passed, skip, wait_until  # noqa: E402
from pagekit import PORT, Page, far_articles, near_articles, page, rate, stats, world  # noqa: E402

CHROMIUM = shutil.which("chromium")
WIDTH, HEIGHT = 1360, 1000


def png_pixels(path):
    """(width, height, distinct colours of a sample of rows) of an 8-bit
    RGB or RGBA, non-interlaced PNG, decoded with zlib (stdlib only)."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is a PNG" % path)
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            check(depth == 8 and ctype in (2, 6) and interlace == 0,
                  "PNG depth %d colour type %d interlace %d" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):       # PNG filters (RFC 2083 6.)
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 37 == 0:
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, colours


def chromium(args, profile):
    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--hide-scrollbars", "--user-data-dir=" + profile, "--window-size=%d,%d" % (WIDTH, HEIGHT)]
    p = subprocess.run(cmd + args + ["http://127.0.0.1:9119/"], capture_output=True, timeout=120)
    check(p.returncode == 0, "chromium %s: exit %d: %s" % (args, p.returncode, p.stderr[-2000:]))
    return p.stdout.decode()


def main():
    if not CHROMIUM:
        skip("no chromium (make test-long installs it: tools/deps.sh long)")
    c, countd, host = world("pagechromium", args=["--graph-period", "1"])
    far_articles()
    wait_until(lambda: "downstreams" in stats(), 30, "the host's first downstreams.status")

    # near in bursts: 8 s feeding at about 200 articles a second (the
    # downstream keeps up), 4 s quiet, for about a minute
    stop = threading.Event()
    t0 = time.time()

    def pace(i):
        time.sleep(0.005)
        while (time.time() - t0) % 12 > 8 and not stop.is_set():
            time.sleep(0.1)
    answers = []
    feeder = threading.Thread(target=lambda: relaykit.feed(near_articles(stop, every=pace),
                                                           answers=answers, src="127.0.0.1",
                                                           addr=("127.0.0.1", PORT)))
    feeder.start()
    wait_until(lambda: time.time() - t0 > 62 or not feeder.is_alive(), 120, "a minute of feed",
               step=1)
    stop.set()
    feeder.join(60)
    check(not feeder.is_alive() and len(answers) > 100, "the feed: %d answers" % len(answers))
    rc, out, err = c.ctl("pause", "far", "--for", "2h")
    check(rc == 0, "floodctl pause far: %r" % err)
    wait_until(lambda: Page(page()).rows["pause"] == ["far"], 30, "the pause on the page")
    # quiet: the downstream has caught up and the rates are back to 0
    wait_until(lambda: (lambda j: j["downstreams"][0]["lag"]["records"] == 0)(stats()), 120,
               "the downstream to catch up", step=0.5)
    wait_until(lambda: rate(Page(page()), "near") == 0, 30, "near's rate back to 0", step=0.5)

    profile = tempfile.mkdtemp(prefix="fg-chromium-")
    try:
        served = Page(page())
        dom = Page(chromium(["--dump-dom"], profile))
        check("script" not in dom.tags, "no script element in the browser's DOM")
        # the figures move between the two fetches only where the feed
        # left them moving; with the feed over, they are the same
        differ = [k for k in served.fig if k not in dom.fig or
                  dom.fig[k]["text"] != served.fig[k]["text"] and
                  k[1] not in ("last_seen", "remaining_seconds", "time")]
        check(not differ, "figures the browser read otherwise: %r" % [
            (k, served.fig[k]["text"], dom.fig.get(k, {}).get("text")) for k in differ[:5]])
        check(sorted(dom.rows["peer"]) == ["far", "idle", "near"], "peer rows in the DOM")
        check("paused" in dom.alerts, "the pause is an alert in the DOM: %r" % dom.alerts)
        check(rate(dom, "idle") in (None, 0), "idle's rate")
        shot = os.path.join(TOP, "build", "test-logs", "status-page.png")
        os.makedirs(os.path.dirname(shot), exist_ok=True)
        if os.path.exists(shot):
            os.unlink(shot)
        cwd = os.getcwd()
        os.chdir(profile)
        try:
            chromium(["--screenshot=" + shot], profile)
        finally:
            os.chdir(cwd)
        w, h, colours = png_pixels(shot)
        check((w, h) == (WIDTH, HEIGHT), "screenshot %dx%d" % (w, h))
        check(len(colours) > 20, "the screenshot has %d colours in its sampled rows" %
              len(colours))
        log("screenshot %s: %dx%d, %d colours sampled" % (shot, w, h, len(colours)))
        if os.environ.get("FG_UPDATE_DOCS_IMG") == "1":
            shutil.copyfile(shot, os.path.join(TOP, "docs", "img", "status-page.png"))
            log("copied to docs/img/status-page.png")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    host.terminate()
    check(host.wait(timeout=20) == 0, "the host stopped cleanly")
    countd.stop()
    c.stop()
    passed("50_status_page_chromium")


main()
