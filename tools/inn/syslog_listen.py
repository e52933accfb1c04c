#!/usr/bin/env python3
"""syslog_listen.py SOCKET OUTFILE — a minimal syslog receiver (stdlib only).

Binds a Unix datagram socket (normally /dev/log), and appends every message
it receives to OUTFILE as one line: "<time> <facility>.<severity> <text>".
There is no syslogd on the build machines, and innd reports why it stops
only through syslog(3); this makes those reasons visible. Ends on SIGTERM,
removing the socket it made.
"""
import os
import signal
import socket
import sys
import time

FAC = ["kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
       "uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
       "local0", "local1", "local2", "local3", "local4", "local5", "local6",
       "local7"]
SEV = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]


def decode(data):
    text = data.decode("utf-8", "replace").rstrip("\n\0")
    prio = 13
    if text.startswith("<") and ">" in text[:5]:
        end = text.index(">")
        try:
            prio = int(text[1:end])
            text = text[end + 1:]
        except ValueError:
            pass
    fac = FAC[prio >> 3] if (prio >> 3) < len(FAC) else str(prio >> 3)
    return "%s.%s %s" % (fac, SEV[prio & 7], text)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    path, out = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    os.chmod(path, 0o666)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sock.settimeout(0.2)
    with open(out, "a", buffering=1) as f:
        while not stop:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            f.write("%s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), decode(data)))
    sock.close()
    os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
