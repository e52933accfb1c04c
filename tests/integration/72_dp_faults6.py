#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 240
"""72_dp_faults6 — 72_dp_faults over IPv6: the same lossy wire (1 % drops,
duplicates and reordering both ways) and the same feeds, from the peers'
IPv6 addresses to the dataplane's."""
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
importlib.import_module("72_dp_faults").main(v6=True)
