#!/usr/bin/env python3
# timeout: 300
"""49_ctl_host_restoring — floodgate-host while floodctld restores.

A region in state BUILDING is a history being restored. floodctld's
region is put back into BUILDING (the state word of its header, as it is
during a restore, owner alive), then floodgate-host --floodctld starts:
it listens, and every new session gets "400 ... being restored ..." and is
closed before any command is answered — a client that sends MODE STREAM
and a TAKETHIS at once reads that one line and EOF, never a 431 (nor a
239 or 439) from a half-restored history. Once the region is READY again
the host attaches by itself: the next session is greeted 200, and a CHECK
of an ID floodctld's history holds is refused 438 (the real table).
"""
import os
import signal
import socket
import struct
import subprocess
import time

from ctlkit import BUILD, Ctl, check, log, passed, wait_for
from hostlib import article

HOST = os.path.join(BUILD, "bin/floodgate-host")
PORT = 1119
STATE_OFF = 32          # region header: state (0 BUILDING, 1 READY)


def set_state(c, v):
    fd = os.open(c.shm, os.O_RDWR)
    os.pwrite(fd, struct.pack("<I", v), STATE_OFF)
    os.close(fd)


def session(payload=b""):
    """Connect, send payload at once, read to EOF (or 5 s): the lines."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    if payload:
        try:
            s.sendall(payload)
        except OSError:
            pass        # closed already: what it read is what counts
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
            if data.startswith(b"200 "):
                break
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return data.decode(errors="replace").splitlines()


def main():
    c = Ctl("hostrest")
    c.netns()
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n"
             "[peer local]\naddress 127.0.0.1\nnewsgroups *\n" % PORT)
    c.start(args=["--expire-interval", "3600"])
    c.run_writer("--prefix", "r", "--count", "10", name="r")
    set_state(c, 0)

    logp = os.path.join(c.dir, "host.log")
    host = subprocess.Popen([HOST, "-c", c.conf, "--floodctld"], stdout=subprocess.DEVNULL,
                            stderr=open(logp, "w"))
    c.procs.append(host)

    def listening():
        check(host.poll() is None, "floodgate-host exited:\n" + open(logp).read())
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            return True
        except OSError:
            return False
    wait_for(listening, "floodgate-host to listen while the history is restored")
    check("floodctld is restoring the history" in open(logp).read(),
          "the host says why it greets 400")

    mid = "<r-3@histwriter.test>"
    new = "<new-1@restoring.test>"
    lines = session(b"MODE STREAM\r\nTAKETHIS " + new.encode() + b"\r\n" +
                    article(new) + b"CHECK " + mid.encode() + b"\r\n")
    log("while restoring: %r" % lines)
    check(len(lines) == 1 and lines[0].startswith("400 ") and "being restored" in lines[0],
          "one line, 400 with the reason: %r" % lines)
    check(not any(l[:3] in ("431", "438", "239", "439", "203") for l in lines),
          "no answer to a command from a half-restored history")

    set_state(c, 1)
    greeting = []

    def served():
        # between the restore's listeners closing and the workers' binding
        # theirs a connection may be refused: not served yet, try again
        try:
            greeting[:] = session()
        except ConnectionRefusedError:
            return False
        return bool(greeting) and greeting[0].startswith("200 ")
    wait_for(served, "floodgate-host to attach once the history is ready", timeout=30)
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    f = s.makefile("rb")
    check(f.readline().startswith(b"200 "), "greeting")
    s.sendall(b"MODE STREAM\r\nCHECK " + mid.encode() + b"\r\n")
    check(f.readline().startswith(b"203 "), "MODE STREAM")
    ans = f.readline().decode().rstrip("\r\n")
    check(ans == "438 " + mid, "the restored history's entry refuses it: %r" % ans)
    s.sendall(b"QUIT\r\n")
    f.readline()
    s.close()
    check("sessions were greeted with 400 meanwhile" in open(logp).read(),
          "the host says the restore is over")

    host.send_signal(signal.SIGTERM)
    check(host.wait(timeout=30) == 0, "floodgate-host stopped:\n" + open(logp).read())
    c.stop()
    passed("49_ctl_host_restoring")


main()
