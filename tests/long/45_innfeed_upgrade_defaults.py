#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 600
"""45_innfeed_upgrade_defaults — tests/interop/50_innfeed_upgrade with
innfeed's own defaults (initial-reconnect-time 30, max-reconnect-time
3600): the outage a site sees before it changes innfeed.conf, measured and
logged (at least 30 s: innfeed sleeps that long after any close it did
not ask for). The steps and checks are tests/interop/upgradekit.py's.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import upgradekit  # noqa: E402
import fgkit  # noqa: E402

upgradekit.run("upgrade-defaults", "", 30)
fgkit.passed("45_innfeed_upgrade_defaults")
