#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""51_relay_innd_ack_crash — floodgate-host (with floodctld) in end-to-end
mode (`acknowledges on`, docs/relay.md) in front of a real innd, killed at
each of the four crash points of the path by its failpoint
(include/floodgate/failpoint.h, FG_FAILPOINT=NAME:N), then started again:

  ack-before-forward  an article for innd, before the relay sends it
  ack-forwarded       an article written whole to innd, no answer read
  ack-answered        innd's 239 read, the peer's 239 not yet sent
  ack-spilled         innd throttled (`ctlinnd throttle`: it refuses
                      articles), so the articles are spilled — the peers
                      get 239 for every one, never a 439 for innd's state;
                      one synced, its 239 not yet sent

Each round (tests/integration/ackcrashkit.py has its steps): two peers
stream TAKETHIS until the failpoint kills the process (proven by its
stderr line and SIGKILL); after the restart the in-flight IDs are answered
within the offer timeout, what got 239 before the kill is answered 439 by
floodgate and never relayed to innd again, and every ID is in innd's
history, stored once.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ackcrashkit  # noqa: E402
import relaykit  # noqa: E402

relaykit.in_netns()

if __name__ == "__main__":
    ackcrashkit.main("51_relay_innd_ack_crash", ackcrashkit.HostTarget())
