#!/usr/bin/env python3
# timeout: 3600
"""60_powerloss_matrix — the power-loss promise under many crash outcomes.

Runs the promise rounds of tests/integration/42_ctl_powerloss.py (floodctld
and a writer, SIGKILL, power loss, restore: every committed ID is back) and
tests/integration/53_relay_powerloss.py (floodgate-host's queue: every
article that got 239 is delivered, once; after a crash with everything
acknowledged, at most the re-send bound is offered again) once per seed,
FG_PL_SEEDS seeds (default 40) from FG_PL_SEED_BASE (default: random,
printed). Each seed picks the shim's outcome for everything not durable
at the crash: unsynced writes lost, kept, torn at 512-octet sectors or
zero-tailed, directory changes kept or undone (tests/preload/powerloss.c).
42 saves each seeded crash image (FG_PL_SAVE) in its kept directory, so a
failing seed replays exactly; the summary lists every failing seed and the
command that reruns it.
"""
import os
import random
import subprocess
import sys
import time

TOP = os.environ.get("FG_TOP") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
SUITES = ["tests/integration/42_ctl_powerloss.py", "tests/integration/53_relay_powerloss.py"]


def main():
    seeds = int(os.environ.get("FG_PL_SEEDS", "40"))
    base = int(os.environ.get("FG_PL_SEED_BASE") or random.randrange(1, 1 << 30))
    print("power-loss matrix: %d seeds from %d, suites %s" % (seeds, base, SUITES), flush=True)
    failed = []
    runs = 0
    t0 = time.time()
    for i in range(seeds):
        seed = base + 1000 * i
        for suite in SUITES:
            env = dict(os.environ, FG_PL_SEED=str(seed), FG_PL_MATRIX="1")
            p = subprocess.run([os.path.join(TOP, suite)], env=env, capture_output=True,
                               timeout=600)
            runs += 1
            out = (p.stdout + p.stderr).decode(errors="replace")
            last = [l for l in out.splitlines() if l.strip() and not l.startswith("kept ")]
            verdict = "ok" if p.returncode == 0 else "FAIL"
            print("seed %-11d %-40s %s  %s" % (seed, os.path.basename(suite), verdict,
                                               last[-1] if last else ""), flush=True)
            if p.returncode != 0:
                failed.append((seed, suite))
                print(out[-3000:], flush=True)
    print("%d runs in %.0f s, %d failed" % (runs, time.time() - t0, len(failed)))
    for seed, suite in failed:
        print("replay: FG_PL_SEED=%d FG_PL_MATRIX=1 %s" % (seed, suite))
    if failed:
        print("FAIL 60_powerloss_matrix")
        sys.exit(1)
    print("PASS 60_powerloss_matrix: %d seeds, %d runs" % (seeds, runs))


main()
