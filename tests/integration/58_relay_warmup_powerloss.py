#!/usr/bin/env python3
# timeout: 300
"""58_relay_warmup_powerloss — a power loss during a warm-up does not end it.

floodctld starts cold (an empty data directory) under the power-loss shim
and writes where the warm-up ends (warmup.fgw: temp file, fsync, rename,
directory fsync); then the power cut: SIGKILL, the directory reverted to
its durable state, the shared memory wiped. floodctld restarts (a restore
from the journal: not a cold start, so no new warm-up), and floodgate-host
--floodctld, once its outbound queue is open, says the warm-up goes on.
With the file's fsync skipped (the shim's FG_PL_SKIP_SYNC) the warm-up is
forgotten — the restarted filter would answer unknown IDs alone; with the
rename's directory fsync skipped it is not, because the directory fsync of
the journal segment floodctld creates next covers it (docs/operations.md,
"Durability points").
"""
import os
import signal
import subprocess

import relaykit

relaykit.in_netns()

import hostlib  # noqa: E402 (after the namespace switch)
from ctlkit import BUILD, Ctl, check, log, passed, wait_until  # noqa: E402

HOST = os.path.join(BUILD, "bin/floodgate-host")


def host_log_after_open(c, name):
    """floodgate-host --floodctld until its outbound queue is open (the
    warm-up has been read by then); its log."""
    logp = os.path.join(c.dir, "host-%s.log" % name)
    p = subprocess.Popen([HOST, "-c", c.conf, "--floodctld"], stdout=subprocess.DEVNULL,
                         stderr=open(logp, "w"))
    c.procs.append(p)
    def opened():
        text = open(logp).read()
        check(p.poll() is None or "records on disk" in text, "floodgate-host exited:\n" + text)
        return "records on disk" in text and text
    text = wait_until(opened, 60, lambda: "floodgate-host to open its queue:\n" +
                      open(logp).read())
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    return text


def warmup_survives(name, rule):
    c = Ctl("warmpl-" + name)
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer local]\naddress 127.0.0.1\nnewsgroups *\n"
             "[persistence]\nsnapshot-interval 1h\nwarmup 1d\n"
             "[downstream down]\naddress 127.0.0.1:1\n" % hostlib.PORT)
    c.start(powerloss=True, env={"FG_PL_SKIP_SYNC": rule} if rule else None,
            args=["--expire-interval", "3600"])
    text = c.log()
    check("cold start: warm-up" in text, "%s: floodctld began a warm-up:\n%s" % (name, text))
    if rule:
        check("powerloss: skipping the sync of" in text,
              "%s: the shim met a sync matching %s:\n%s" % (name, rule, text))
    c.kill()
    c.powerloss()
    c.wipe_shm()
    c.start(args=["--expire-interval", "3600"])
    check("cold start: warm-up" not in c.log() and "restored from" in c.log(),
          "%s: the restart is a restore, no new warm-up:\n%s" % (name, c.log()))
    host = host_log_after_open(c, name)
    c.stop()
    return "warm-up goes on" in host


def main():
    cases = [("baseline", None, True),
             ("file-fsync", "*/warmup.fgw.tmp", False),
             ("rename-dir", "dir+:*/warmup.fgw", True)]
    for name, rule, want in cases:
        goes_on = warmup_survives(name, rule)
        log("%-11s %-20s warm-up after the power loss: %s" %
            (name, rule or "(no sync skipped)", "goes on" if goes_on else "forgotten"))
        check(goes_on == want, "%s: the warm-up %s, expected it to %s" %
              (name, "goes on" if goes_on else "was forgotten",
               "go on" if want else "be forgotten (the skipped fsync alone protects it)"))
    passed("58_relay_warmup_powerloss")


main()
