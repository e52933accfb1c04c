#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""89_dp_two_instances — a second floodgate whose control socket another
dataplane answers on (two instances sharing a socket directory) refuses
to start and exits cleanly, and the first is untouched.

The second instance has a [downstream], so it opens the outbound queue
and relay before it reaches its control socket: its exit used to read
the relay's status after freeing it (the last publication of a start
that never published), a segfault or, under ASan, a heap-use-after-free.
It runs as the ASan build when there is one (FG_BUILD_ASAN, or
FG_DP_BUILD), so that a read after free is caught, not left to luck.

Checks: the second exits with status 1 (not a signal), says "another
dataplane answers on it", no sanitizer report; the first still answers
on its control socket (the socket file is still its own) and on port 119.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgdp  # noqa: E402
from fgdp import check, log  # noqa: E402

DOWNSTREAM = "[downstream down]\naddress 127.0.0.1:11119\nwindow 8\n"


def second_floodgate():
    """The ASan floodgate when it is built, else this build's."""
    for build in (os.environ.get("FG_DP_BUILD"), os.environ.get("FG_BUILD_ASAN")):
        if build and os.access(os.path.join(build, "bin/floodgate"), os.X_OK):
            return os.path.join(build, "bin/floodgate")
    return os.path.join(fgdp.BUILD, "bin/floodgate")


def main():
    w = fgdp.World("two", extra=DOWNSTREAM)
    w.start_ctld()
    w.start_dp()
    conf2 = os.path.join(w.dir, "second.conf")
    with open(w.conf) as f:
        text = f.read()
    with open(conf2, "w") as f:
        f.write(text.replace("port net_tap0,iface=fgd0", "port net_tap1,iface=fgd1"))
    exe = second_floodgate()
    log("second instance: %s" % exe)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1")
    p = subprocess.run([exe, "-c", conf2], capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 1, "the second floodgate's exit status %d (want 1):\n%s"
          % (p.returncode, p.stderr[-4000:]))
    check("another dataplane answers on it" in p.stderr,
          "the second floodgate said why it refused:\n" + p.stderr[-4000:])
    check("Sanitizer" not in p.stderr, "a sanitizer report:\n" + p.stderr[-4000:])
    check(p.stdout.strip() != "ready", "the second floodgate said ready")
    # the first is untouched: its control socket (the file too) and its port
    rc, out = w.dp("status")
    check(rc and "floodgate active" in out, "the first floodgate's status: %r" % out)
    w.wait_tcp()
    w.stop_dp()
    # nothing listens on the downstream: the first instance says so
    w.check_logs(allow=r"relay: down#\w+: connect: Connection refused")
    fgdp.passed("89_dp_two_instances")


if __name__ == "__main__":
    main()
