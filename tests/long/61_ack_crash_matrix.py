#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 3600
"""61_ack_crash_matrix — the crash rounds of end-to-end mode
(tests/integration/ackcrashkit.py) at many more kill moments than `make
test`'s one per point: floodgate-host killed at every failpoint on its
2nd, 50th, 150th and 400th pass (innd throttled for ack-spilled: its 10th,
60th and 200th), each round with the checks of 51_relay_innd_ack_crash
(the in-flight IDs answered within the offer timeout after the restart,
nothing relayed again after innd's 239 was recorded, every ID in innd's
history once).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("FG_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "../..")), "tests", "integration"))
import ackcrashkit  # noqa: E402
import relaykit  # noqa: E402

relaykit.in_netns()

ROUNDS = [(p, n, False) for p in ("ack-before-forward", "ack-forwarded", "ack-answered")
          for n in (2, 50, 150, 400)] + [("ack-spilled", n, True) for n in (10, 60, 200)]

if __name__ == "__main__":
    ackcrashkit.main("61_ack_crash_matrix", ackcrashkit.HostTarget(), rounds=ROUNDS,
                     innd_port=11196, per_client=500)
