#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 300
"""50_innfeed_upgrade — a real innfeed, with the innfeed.conf that
docs/operations.md ("Upgrading") recommends behind floodgate
(initial-reconnect-time 2, max-reconnect-time 60), through a drain and
restart of floodgate: nothing lost, and the time innfeed is without a
server, measured and logged. upgradekit.py has the steps and checks;
tests/long/45_innfeed_upgrade_defaults.py runs the same with innfeed's
defaults (30 s and more).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import upgradekit  # noqa: E402
import fgkit  # noqa: E402

upgradekit.run("upgrade", upgradekit.RECOMMENDED, 2)
fgkit.passed("50_innfeed_upgrade")
