# SPDX-License-Identifier: MIT
"""restartkit.py — a filter SIGKILLed mid-feed and restarted at once must
stall no peer (issue 25), shared by 57_host_kill_restart and
74_dp_kill_restart; not a test.

The shape of one round (run_round):
  1. four clients stream TAKETHIS of new articles (their own IDs) into the
     filter, which relays to a real innd, each with WINDOW of them in
     flight, so at any moment the filter holds some ACCEPTING: written to
     the queue or not yet, not answered (the group commit batches for at
     most COMMIT_MS);
  2. once every client has seen answers and still has TAKETHIS
     unanswered (both observed, not timed), the filter is SIGKILLed and
     started again at once — the new process attaches while floodctld
     may not have reaped the dead one yet;
  3. every client reconnects and re-offers first what was in flight at
     the kill (sent, never answered), then what it had not sent yet. The
     in-flight ones are answered within the offer timeout: 239 (the
     article had not reached the queue: accepted now) or 439 (it had:
     settled as accepted from the queue, a "recovery" line in the
     verdict log — or the dead writer had accepted it, and its 239 was
     lost with the connection);
  4. the queue holds every ID exactly once (its records counted, checksums
     and all), innd — started only now — stores every ID exactly once (its
     news log's `+` lines), no ID got 239 twice,
     and, where floodctld keeps a verdict log, each ID has exactly one
     accept line (its 239, or its recovery).
Python stdlib only.
"""
import json
import os
import socket
import struct
import subprocess
import threading
import time

import fgdp
import fgkit
import hostlib
import relaykit
from fgdp import check, log

CLIENTS = 4
# enough that every client is still streaming when the last one has its
# first answers: with group commit a 239 follows within a sync, so a short
# list could be done before the kill point
PER_CLIENT = 1600
WINDOW = 24
COMMIT_MS = 400
OFFER_TIMEOUT = 10		# [session] offer-timeout, seconds (the default)
INND_PORT = 11190


# log lines a round causes on purpose: innd is away until the feed is over,
# and stops at the end; the writers the kill leaves behind are reaped
RELAY_AWAY = (r"^warn relay: down#(\d+|ask): "
              r"(connect: Connection refused|connection closed by the server)$")


def reaped(name):
    """floodctld's line for a dead writer whose slot name matches `name`."""
    return r"^warn region: writer '%s' \(slot \d+, pid \d+\) died; draining its journal ring$" % name


def world(name, prefix, commit_ms=COMMIT_MS):
    """An fgdp.World for a round: innd as the downstream (started later),
    127.0.0.1 a peer too (for floodgate-host), the queue committing every
    commit_ms, floodctld's verdict log in the world's directory."""
    w = fgdp.World(name, prefix=prefix)
    w.write_config(extra="[session]\noffer-timeout %ds\n" % OFFER_TIMEOUT +
                   "[persistence]\nqueue-commit %dms\n" % commit_ms +
                   "[peer local]\naddress 127.0.0.1\n"
                   "[downstream down]\naddress 127.0.0.1:%d\nconnections 1\n" % INND_PORT +
                   "[stats]\nverdict-log %s\n" % os.path.join(w.dir, "verdicts.log"))
    os.chmod(w.dir, 0o755)		# innd runs as news
    return w


def innd_news(innd_dir):
    """{message-id: [marks]} from innd's news log ('+' accepted, '-' refused)."""
    out = {}
    path = os.path.join(innd_dir, "log", "news")
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                p = line.split()
                if len(p) >= 6 and p[3] in ("+", "-"):
                    out.setdefault(p[5], []).append(p[3])
    return out


class Client:
    """One peer connection's worth of articles, fed with TAKETHIS."""

    def __init__(self, prefix, addr, src):
        self.addr, self.src = addr, src
        self.mids = ["<%s.%d@restart.test>" % (prefix, i) for i in range(PER_CLIENT)]
        body = ["%070d" % i for i in range(20)]
        self.wire = {m: hostlib.article(m, groups="fg.test.text", body=body) for m in self.mids}
        self.codes = {}			# mid -> [codes], over every connection
        self.sent = []			# mids sent on the current connection
        self.error = None
        self.lock = threading.Lock()

    def answered(self):
        with self.lock:
            return len(self.codes)

    def pending(self):
        with self.lock:
            return [m for m in self.sent if m not in self.codes]

    def feed(self, mids, timeout=5, latency=None):
        """TAKETHIS each of mids, WINDOW pipelined; stops quietly when the
        connection dies (the filter was killed) or is ended with a 400
        (a shutdown: 76_dp_drain_restart). latency: {mid: seconds
        from its send to its answer}, filled when given."""
        self.error = None
        try:
            s = socket.socket()
            s.bind((self.src, 0))
            s.settimeout(timeout)
            s.connect(self.addr)
            r = fgdp.Lines(s)
            check(r.line().startswith("200 "), "greeting")
            inflight, sent_at, nxt = [], {}, 0
            while nxt < len(mids) or inflight:
                while nxt < len(mids) and len(inflight) < WINDOW:
                    m = mids[nxt]
                    nxt += 1
                    with self.lock:
                        self.sent.append(m)
                    sent_at[m] = time.time()
                    s.sendall(b"TAKETHIS " + m.encode() + b"\r\n" + self.wire[m])
                    inflight.append(m)
                line = r.line()
                code, _, arg = line.partition(" ")
                if code == "400":
                    # a shutdown ends the session (RFC 3977 5.1.1: come
                    # back later): what was in flight is offered again
                    raise EOFError(line)
                m = inflight.pop(0)
                check(arg == m, "answer %r for %s" % (line, m))
                with self.lock:
                    self.codes.setdefault(m, []).append(int(code))
                if latency is not None:
                    latency[m] = time.time() - sent_at[m]
            s.sendall(b"QUIT\r\n")
            s.close()
        except (OSError, EOFError) as e:
            self.error = e


def start_clients(clients, lists):
    threads = [threading.Thread(target=c.feed, args=(ms,)) for c, ms in zip(clients, lists)]
    for t in threads:
        t.start()
    return threads


def wait_kill_point(clients, threads, timeout=120):
    """Until every client has answers and TAKETHIS still unanswered."""
    def there():
        check(all(t.is_alive() for t in threads),
              "a client finished before the kill point (PER_CLIENT too small for this "
              "machine's pace)")
        return all(c.answered() > 0 and c.pending() for c in clients)

    fgkit.wait_until(there, timeout, lambda: "the kill point: (answered, pending) %s"
                     % [(c.answered(), len(c.pending())) for c in clients], step=0.002)


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def queue_ids(data_dir):
    """{message-id: sound records} over every queue segment on disk, read
    as the queue's own scan does (include/floodgate/queue.h, both record
    versions): a record counts only whole, with its checksum; the first
    that is not ends its segment."""
    out = {}
    for name in sorted(os.listdir(data_dir)):
        if not (name.startswith("queue-") and name.endswith(".fgq")):
            continue
        with open(os.path.join(data_dir, name), "rb") as f:
            data = f.read()
        off = 64
        # version 1 records ("FGQR") have a 32-octet header; version 2
        # ("FGQD") 40 octets and 8 per downstream it is routed to
        while off + 32 <= len(data) and data[off:off + 4] in (b"FGQR", b"FGQD"):
            crc, = struct.unpack_from("<I", data, off + 4)
            art_len, id_len = struct.unpack_from("<IH", data, off + 24)
            hdr = 32 if data[off:off + 4] == b"FGQR" else 40 + 8 * data[off + 32]
            end = off + hdr + id_len + art_len
            if off + hdr > len(data) or end > len(data) or crc32c(data[off + 8:end]) != crc:
                break
            mid = data[off + hdr:off + hdr + id_len].decode("latin-1")
            out[mid] = out.get(mid, 0) + 1
            off = (end + 7) & ~7
    return out


def reoffer(clients, inflight, offer_timeout=OFFER_TIMEOUT):
    """Every client offers again what was in flight at the kill (first) and
    then what it never sent; the in-flight IDs must be answered 239 or 439
    within the offer timeout. Returns the slowest of those answers (s)."""
    latency = [dict() for _ in clients]
    rest = [[m for m in c.mids if m not in c.sent] for c in clients]
    threads = [threading.Thread(target=c.feed, args=(inf + r,),
                                kwargs={"timeout": 3 * offer_timeout, "latency": lat})
               for c, inf, r, lat in zip(clients, inflight, rest, latency)]
    for c in clients:
        c.sent = []
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        check(not t.is_alive(), "a client hung after the restart")
    for c, inf, lat in zip(clients, inflight, latency):
        check(c.error is None, "re-offer: %s" % c.error)
        slow = {m: round(lat[m], 2) for m in inf if lat.get(m, 1e9) >= offer_timeout}
        check(not slow, "in-flight IDs answered after the offer timeout: %s"
              % dict(list(slow.items())[:5]))
        codes = {c.codes[m][-1] for m in inf}
        check(codes <= {239, 439}, "in-flight IDs answered %s" % codes)
    return max([lat[m] for inf, lat in zip(inflight, latency) for m in inf] or [0])


def check_settled(clients):
    """No ID got 239 twice, and every ID got 239 or 439."""
    for c in clients:
        twice = [m for m, cs in c.codes.items() if cs.count(239) > 1]
        check(not twice, "239 twice: %s" % twice[:5])
        unsettled = [m for m in c.mids if not {239, 439} & set(c.codes.get(m, []))]
        check(not unsettled, "IDs never settled: %s" % unsettled[:5])


def run_round(name, w, clients, kill, restart, vlog=None, all_inflight=True):
    """Steps 1-4 above, in world w (fgdp.World). kill() SIGKILLs the filter
    and waits for it to be gone; restart() starts it again (at once). innd
    starts only once the feed is over, so that the queue still holds every
    record when it is counted: each ID exactly once. all_inflight: every
    client must have had TAKETHIS unanswered when the connection ended (a
    kill); a clean stop may answer what it has read first, so then only
    one client must."""
    innd_dir = os.path.join(w.dir, "innd")
    threads = start_clients(clients, [c.mids for c in clients])
    wait_kill_point(clients, threads)
    kill()
    restart()
    for t in threads:
        t.join(60)
        check(not t.is_alive(), "a client hung after the kill")
    inflight = [c.pending() for c in clients]
    answered_before = sum(c.answered() for c in clients)
    check(all(inflight) if all_inflight else any(inflight),
          "every client (or, all_inflight False, one) had TAKETHIS in flight at the kill")
    log("%s: killed with %d answered, %d in flight" % (name, answered_before,
                                                      sum(len(i) for i in inflight)))

    # 3. re-offer: the in-flight ones first, then what was never sent
    worst = reoffer(clients, inflight)
    settled = sum(1 for c, inf in zip(clients, inflight) for m in inf if c.codes[m][-1] == 439)
    log("%s: the %d in-flight IDs answered within %.2fs (%d accepted now, %d settled from "
        "the queue)" % (name, sum(len(i) for i in inflight), worst,
                        sum(len(i) for i in inflight) - settled, settled))

    # 4. exactly once, end to end
    all_mids = [m for c in clients for m in c.mids]
    check_settled(clients)
    queued = queue_ids(w.data)
    bad = [(m, queued.get(m, 0)) for m in all_mids if queued.get(m, 0) != 1]
    check(not bad, "IDs not queued exactly once: %s" % bad[:5])
    relaykit.innd("start", innd_dir, str(INND_PORT))
    try:
        resent = wait_innd(all_mids, innd_dir)
    finally:
        relaykit.innd("stop", innd_dir)
    if vlog:
        def all_logged():
            accepts = vlog_accepts(vlog)[0]
            return all(m in accepts for m in all_mids)

        fgkit.poll_until(all_logged, 30)	# the checks below say what failed
        accepts, recovered = vlog_accepts(vlog)
        # exactly one accept line each — but the verdict log is a log, not
        # state: a writer killed after it made an entry ACCEPTED and before
        # it handed over the line leaves none, and its ID is answered 439
        # on the re-offer (queued once and stored once all the same, above)
        in439 = {m for c, inf in zip(clients, inflight) for m in inf if c.codes[m][-1] == 439}
        bad = [(m, accepts.get(m, 0)) for m in all_mids
               if accepts.get(m, 0) != 1 and not (m in in439 and accepts.get(m, 0) == 0)]
        check(not bad, "IDs without exactly one accept line in the verdict log: %s" % bad[:5])
        # an in-flight ID answered 439 was accepted by the dead writer
        # (its 239 lost with the connection) or settled from the queue
        # (a recovery line): never more recoveries than 439s
        check(recovered <= settled, "recovery lines %d <= in-flight IDs answered 439 %d"
              % (recovered, settled))
        extra = vlog_recovered(vlog) - in439
        check(not extra, "recovery lines for IDs not in flight or not answered 439: %s"
              % sorted(extra)[:5])
    else:
        recovered = None
    log("%s: %d IDs, each accepted once; %d in-flight IDs answered 439 (%s recovered "
        "from the queue); innd stored each once (%d sent again after the kill)"
        % (name, len(all_mids), settled, "?" if recovered is None else recovered, resent))
    return recovered


class Held:
    """IDs a peer has a 238 for and has not sent when the filter stops
    cleanly (an in-flight CHECK; 76_dp_drain_restart, 57_host_stop_restart):
    check() CHECKs them before the stop, start_again() after the restart,
    join() judges. After the restart the same peer offers them again,
    CHECK after CHECK (a 431 offered again after RETRY_S), then sends
    them. Each must be answered 238 at the latest on the first CHECK once
    the offer timeout has passed since its first 238 (the transient entry
    lapses then, if the stop did not end it at once), then 239, and be
    accepted once in the verdict log."""

    N = 20
    RETRY_S = 0.2

    def __init__(self, connect):
        self.connect = connect		# a new connection to the filter, as this peer
        self.mids = ["<held.%d.%d@restart.test>" % (i, os.getpid()) for i in range(self.N)]
        self.thread = None
        self.error = None
        self.n431 = 0

    def check(self):
        self.s = self.connect()
        r = fgdp.Lines(self.s)
        check(r.line().startswith("200 "), "held: greeting")
        self.s.sendall("".join("CHECK %s\r\n" % m for m in self.mids).encode())
        for m in self.mids:
            got = r.line()
            check(got == "238 " + m, "held: CHECK %s -> %r" % (m, got))
        self.t238 = time.time()

    def start_again(self):
        self.s.close()
        self.thread = threading.Thread(target=self._again)
        self.thread.start()

    def _again(self):
        try:
            s = self.connect()
            r = fgdp.Lines(s)
            if not r.line().startswith("200 "):
                raise AssertionError("greeting after the restart")
            for m in self.mids:
                while True:
                    asked = time.time()
                    s.sendall(b"CHECK %s\r\n" % m.encode())
                    got = r.line()
                    if got == "238 " + m:
                        break
                    if got != "431 " + m or asked > self.t238 + OFFER_TIMEOUT + 1:
                        raise AssertionError("CHECK %s %.1f s after its first 238: %r"
                                             % (m, asked - self.t238, got))
                    self.n431 += 1
                    time.sleep(self.RETRY_S)
                s.sendall(b"TAKETHIS " + m.encode() + b"\r\n" + fgdp.article(m))
                got = r.line()
                if got != "239 " + m:
                    raise AssertionError("TAKETHIS %s: %r" % (m, got))
            s.sendall(b"QUIT\r\n")
            s.close()
        except (OSError, EOFError, AssertionError) as e:
            self.error = e

    def join(self, vlog):
        self.thread.join(3 * OFFER_TIMEOUT + 30)
        check(not self.thread.is_alive() and self.error is None,
              "held IDs after the restart: %s" % self.error)
        fgkit.poll_until(lambda: all(m in vlog_accepts(vlog)[0] for m in self.mids), 30)
        acc = vlog_accepts(vlog)[0]
        check(all(acc.get(m) == 1 for m in self.mids), "held IDs' accept lines: %s"
              % [acc.get(m) for m in self.mids])
        log("%d IDs held with a 238 across the restart, answered 238 again after "
            "%d 431s, then 239" % (self.N, self.n431))


def wait_innd(mids, innd_dir, timeout=180):
    """Until innd has stored every one of mids; each exactly once. Returns
    how many were offered to it again (refused as duplicates)."""
    def all_stored():
        news = innd_news(innd_dir)
        return all("+" in news.get(m, []) for m in mids)

    fgkit.poll_until(all_stored, timeout, step=0.2)	# the checks below say what failed
    news = innd_news(innd_dir)
    missing = [m for m in mids if "+" not in news.get(m, [])]
    check(not missing, "%d IDs never reached innd, e.g. %s" % (len(missing), missing[:5]))
    dups = [m for m in mids if news[m].count("+") != 1]
    check(not dups, "IDs innd stored more than once: %s" % [(m, news[m]) for m in dups[:5]])
    return sum(len(news[m]) - 1 for m in mids)


def vlog_lines(path, strict=False):
    """The JSON objects of a verdict log, one per line. Every whole line
    must parse (a line that does not fails the test: it is a torn or
    corrupt record, not noise). While a test polls a log that floodctld is
    still writing (strict False), a missing file and a last line without
    its newline are "not written yet"; strict, both fail."""
    if not os.path.exists(path):
        check(not strict, "the verdict log %s is missing" % path)
        return
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.endswith("\n"):
                check(not strict, "%s line %d has no newline: %r" % (path, n, line[:200]))
                return
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            check(isinstance(rec, dict), "%s line %d does not parse: %r" % (path, n, line[:200]))
            yield rec


def vlog_recovered(path, strict=False):
    """The IDs of a verdict log's recovery lines (settled from the queue)."""
    return {r["id"] for r in vlog_lines(path, strict)
            if r.get("verdict") == "accept" and r.get("cmd") == "recovery"}


def vlog_accepts(path, strict=False):
    """({message-id: accept lines}, recovery lines) of a verdict log."""
    accepts, recovered = {}, 0
    for r in vlog_lines(path, strict):
        if r.get("verdict") == "accept":
            accepts[r["id"]] = accepts.get(r["id"], 0) + 1
            recovered += r.get("cmd") == "recovery"
    return accepts, recovered


def require_inn():
    fgkit.need_inn("innd")
    fgkit.need_inn("grephistory")


def floodctl_counter(w, name):
    """floodctld's counter floodgate_<name>_total (stats --prom)."""
    rc, out, err = w.ctl("stats", "--prom")
    check(rc == 0, "floodctl stats --prom: %s" % err)
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "floodgate_%s_total" % name:
            return int(float(p[1]))
    check(False, "no counter floodgate_%s_total in:\n%s" % (name, out[:2000]))


def spawn_host(w, args, env=None):
    """floodgate-host on 127.0.0.1:1119 with the world's configuration
    (env: variables added to its environment)."""
    p = w._spawn("host", [os.path.join(fgdp.BIN, "floodgate-host"), "-c", w.conf,
                          "-l", "127.0.0.1:1119", "--log-level", "notice",
                          "--stats-file", os.path.join(w.dir, "host.stats")] + list(args), env)
    def listening():
        check(p.poll() is None, "floodgate-host exited:\n" + fgdp.slurp(p.logp))
        try:
            socket.create_connection(("127.0.0.1", 1119), timeout=1).close()
            return True
        except OSError:
            return False

    fgkit.wait_until(listening, 30, "floodgate-host to listen on 127.0.0.1:1119")
    return p


def sigkill(p):
    p.kill()
    p.wait()


def quiet(cmd):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
