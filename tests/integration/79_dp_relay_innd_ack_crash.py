#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 400
"""79_dp_relay_innd_ack_crash — floodgate (DPDK, tap port, with floodctld)
in end-to-end mode in front of a real innd, killed by two of its
failpoints (include/floodgate/failpoint.h) and started again: ack-forwarded
(an article written to innd from the worker's held mbufs, no answer read
yet) and ack-spilled (innd throttled, an article spilled and synced, its
239 not yet sent). The rounds and their checks are ackcrashkit's (the same
as 51_relay_innd_ack_crash's for floodgate-host): the kill proven by its
stderr line, the in-flight IDs answered within the offer timeout after the
restart, what got 239 before the kill answered 439 by floodgate and never
relayed to innd again, every ID in innd's history once.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ackcrashkit  # noqa: E402

if __name__ == "__main__":
    ackcrashkit.main("79_dp_relay_innd_ack_crash", ackcrashkit.DpTarget(),
                     rounds=[r for r in ackcrashkit.ROUNDS
                             if r[0] in ("ack-forwarded", "ack-spilled")],
                     innd_port=11195)
