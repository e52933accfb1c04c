#!/usr/bin/env bash
# run-demo.sh — `make run` (the Makefile has built everything): floodgate
# live in a network namespace, with floodctld, INN's innd as the downstream
# and a demo feed from feedgen. tools/demo/demo.py does the work and its
# head comment says how; docs/operations.md "The demo" says what to expect.
#
#   tools/run-demo.sh [--once] [--articles N] [--rate N] [--peers N] [--dups N] [--keep]
#   make run RUN_ARGS=--once     (or FG_DEMO_ONCE=1 make run)
exec python3 "$(dirname "$0")/demo/demo.py" "$@"
