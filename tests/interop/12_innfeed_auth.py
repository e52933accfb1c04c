#!/usr/bin/env python3
# timeout: 240
"""12_innfeed_auth — INN's innfeed authenticating to floodgate (RFC 4643).

The world of 10_innfeed without a downstream: floodgate (DPDK, net_tap
port, 198.18.0.2) with floodctld; its peer feeder-b (198.18.0.3) has
`credentials FILE` (a username, and a password with a blank, mode 600).
An origin innd takes N articles through rnews and writes innfeed's batch;
innfeed's peer block names floodgate from 198.18.0.3 with a username and
a password, so it sends AUTHINFO USER and PASS right after the greeting.

1. A plain client from feeder-b's address: greeted 200 as any peer; its
   CHECK before AUTHINFO gets 480; a wrong password 381 then 481.
2. innfeed with a password floodgate does not have: floodgate answers its
   USER 381 and its PASS 481 (innfeed's debug log has "Processing authinfo
   pass response: 481" — it really tried), counted in nntp_auth_failed, also feeder-b's;
   nothing is offered or accepted; stopped, innfeed keeps every article
   in its backlog. floodctld's /metrics has the refusals, in all and for
   feeder-b.
3. The operator writes innfeed's password into floodgate's credentials
   file and runs `floodctl reload`: listed as applied, no restart.
4. innfeed again, the same password: 281 (in its debug log),
   every article answered 238 then 239, its backlog empty, floodgate's
   nntp_auth_accepted for feeder-b and every article accepted.
5. innfeed with a username and password from feeder-c, which has no
   credentials: floodgate answers its AUTHINFO USER 502 and innfeed goes
   on as it does with innd (every article 438: floodgate has them all),
   exiting with an empty backlog. The logs are clean.
"""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import fgdp  # noqa: E402
import fgkit  # noqa: E402
from fgdp import check, log  # noqa: E402
import innkit  # noqa: E402
from ctlkit import http_get, prom_parse, prom_value  # noqa: E402

ORIGIN_PORT = 11194
N = 40
USER = "feeder-b-user"
RIGHT, WRONG = "open sesame 34", "not the password"
INNFEED_ADDR = fgdp.KERNEL_ADDRS[1]     # 198.18.0.3: feeder-b
OTHER_ADDR = fgdp.KERNEL_ADDRS[2]       # 198.18.0.4: feeder-c, no credentials
METRICS = "http://127.0.0.1:9119/metrics"   # floodctld's default [stats] http


def write_cred(path, password):
    """floodgate's credentials file: the service's user's alone."""
    fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("# feeder-b's innfeed.conf: username and password\n"
                "username %s\npassword \"%s\"\n" % (USER, password))
    os.rename(path + ".new", path)


def posts():
    now = fgdp.rfc5322(time.time() - 600)
    body = ["Through innfeed, after AUTHINFO.", ".a line with a leading dot"]
    return [innkit.plain_article("<auth%d.%d@iop-auth.test>" % (i, os.getpid()), now,
                                 body * (1 + i % 5)) for i in range(N)]


def plain_client():
    """Step 1: 480 before AUTHINFO, 381 and 481 for a wrong password."""
    s = fgdp.connect(INNFEED_ADDR)
    r = fgdp.Lines(s)
    check(r.line().startswith("200 "), "feeder-b is greeted 200")
    s.sendall(b"CHECK <plain@iop-auth.test>\r\nAUTHINFO USER %s\r\nAUTHINFO PASS %s\r\n"
              b"QUIT\r\n" % (USER.encode(), WRONG.encode()))
    for want in ("480 ", "381 ", "481 ", "205 "):
        got = r.line()
        check(got.startswith(want), "plain client: want %s..., got %r" % (want, got))
    s.close()


def log_has(feed, text):
    return feed.log is not None and os.path.exists(feed.log) and \
        text in fgkit.slurp(feed.log)


def main():
    w = fgdp.World("auth", prefix="fg-iop")
    cred = os.path.join(w.dir, "feeder-b.credentials")
    write_cred(cred, RIGHT)
    with open(w.conf) as f:
        text = f.read()
    peer_b = "[peer feeder-b]\naddress %s\n" % INNFEED_ADDR
    check(peer_b in text, "feeder-b in the world's configuration")
    with open(w.conf, "w") as f:
        f.write(text.replace(peer_b, peer_b + "credentials %s\n" % cred))
    work = tempfile.mkdtemp(prefix="fg-iop-auth-")
    os.chmod(work, 0o755)
    origin = innkit.Origin(os.path.join(work, "origin"), ORIGIN_PORT, "floodgate", 30)
    try:
        origin.rnews(posts())
    finally:
        origin.stop()
    batch = origin.batch()
    check(len(batch) == N, "origin's batch: %d lines" % len(batch))
    try:
        scenario(w, work, cred, batch)
    finally:
        if not fgkit.failed and not os.environ.get("FG_KEEP_TMP"):
            import shutil
            shutil.rmtree(work, ignore_errors=True)


def scenario(w, work, cred, batch):
    w.start_ctld()
    w.start_dp()
    plain_client()
    ids = sorted(m for _, m in batch)

    # 2: innfeed with a password floodgate does not have
    feed = innkit.Innfeed(os.path.join(work, "innfeed"),
                          os.path.join(work, "origin", "etc", "inn.conf"),
                          "floodgate", fgdp.DP_ADDR, INNFEED_ADDR, auth=(USER, WRONG))
    feed.start(batch)
    st = w.wait_stats(lambda c: c.get("peer:feeder-b:nntp_auth_failed", 0) >= 2 and
                      log_has(feed, "Processing authinfo pass response: 481"),
                      "innfeed's AUTHINFO PASS refused (481 counted, in its log)", 60)
    rc = feed.stop()
    check(rc == 0, "innfeed's first run exited %s" % rc)
    check(st.get("nntp_response:381", 0) >= 2, "381 to innfeed's USER: %s"
          % st.get("nntp_response:381"))
    st = w.stats()
    check(st.get("nntp_offers", 0) == 0 and st.get("nntp_articles_accepted", 0) == 0 and
          st.get("nntp_auth_accepted", 0) == 0,
          "nothing offered or accepted with the wrong password: %s"
          % {k: v for k, v in st.items() if k.startswith("nntp_")})
    check(feed.answers() == {}, "innfeed got answers: %s" % list(feed.answers().items())[:3])
    check(sorted(feed.backlog()) == ids, "innfeed's backlog after the refusal: %d of %d"
          % (len(feed.backlog()), len(ids)))
    failed = st.get("nntp_auth_failed")

    def published():
        code, body = http_get(METRICS)
        m = prom_parse(body) if code == 200 else {}
        return (prom_value(m, "floodgate_nntp_auth_failed_total") or 0) >= failed and \
            (prom_value(m, "floodgate_peer_nntp_auth_failed_total", peer="feeder-b") or 0) \
            >= failed
    fgkit.wait_until(published, 30, "floodctld's /metrics to show the %d refusals" % failed)
    log("wrong password: %d AUTHINFO PASS refused (481; the plain client's one among them), "
        "nothing offered, %d in the backlog" % (failed, len(ids)))

    # 3: the operator gives floodgate innfeed's password, reload
    write_cred(cred, WRONG)
    rc, out, err = w.ctl("reload", w.conf)
    check(rc == 0 and "[peer feeder-b] credentials (the file's content)" in out + err,
          "reload: %s%s" % (out, err))

    # 4: innfeed again: authenticated, every article 238 then 239
    feed.start()
    rc = feed.wait(120)
    check(rc == 0, "innfeed's second run exited %s (log %s)" % (rc, feed.log))
    check(log_has(feed, "Processing authinfo pass response: 281"),
          "innfeed's log has the 281 to its AUTHINFO PASS")
    answers = feed.answers()
    for m in ids:
        check(answers.get(m) == [238, 239], "%s: %s, not [238, 239]" % (m, answers.get(m)))
    check(feed.backlog() == [], "innfeed's backlog: %s" % feed.backlog()[:5])
    st = w.stats()
    check(st.get("peer:feeder-b:nntp_auth_accepted", 0) >= 1 and
          st.get("nntp_articles_accepted") == N and
          st.get("nntp_auth_failed") == failed,
          "after the reload: %s" % {k: v for k, v in st.items() if "auth" in k or
                                     k == "nntp_articles_accepted"})
    log("right password: %d AUTHINFO accepted, %d articles 238 then 239"
        % (st["peer:feeder-b:nntp_auth_accepted"], N))

    # 5: innfeed with credentials to a peer that has none: 502, and on
    other = innkit.Innfeed(os.path.join(work, "innfeed-c"),
                           os.path.join(work, "origin", "etc", "inn.conf"),
                           "floodgate", fgdp.DP_ADDR, OTHER_ADDR, auth=(USER, RIGHT))
    other.start(batch)
    rc = other.wait(120)
    check(rc == 0, "innfeed from feeder-c exited %s (log %s)" % (rc, other.log))
    check(log_has(other, "Processing authinfo user response: 502"),
          "innfeed's log has the 502 to its AUTHINFO USER")
    answers = other.answers()
    check(all(answers.get(m) == [438] for m in ids) and other.backlog() == [],
          "feeder-c's innfeed: %s, backlog %s" % (list(answers.items())[:3], other.backlog()[:3]))
    st = w.stats()
    check(st.get("peer:feeder-c:nntp_response:502", 0) >= 1 and
          st.get("peer:feeder-c:nntp_auth_accepted", 0) == 0, "feeder-c: %s"
          % {k: v for k, v in st.items() if k.startswith("peer:feeder-c:")})
    log("no credentials for feeder-c: innfeed's AUTHINFO USER 502, then %d x 438" % N)
    w.stop_dp()
    w.check_logs()
    fgdp.passed("12_innfeed_auth")


if __name__ == "__main__":
    main()
