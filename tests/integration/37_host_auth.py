#!/usr/bin/env python3
# timeout: 120
"""37_host_auth — AUTHINFO (RFC 4643) on floodgate-host, over real sockets.

floodgate-host in its own namespace with the usual peer `local`
(127.0.0.1, no credentials) and a peer `secure` (127.0.0.3) whose
`credentials` file (mode 600) holds a username and a password with a
blank. Checked, each answer on the wire and each counter exact:

1. secure before AUTHINFO: greeted 200, CAPABILITIES lists AUTHINFO USER
   (no IHAVE, no STREAMING), CHECK and IHAVE 480, a TAKETHIS's article
   read to its end then 480 (the stream stays in step: MODE STREAM after
   it is 203); nothing reaches the history (a later CHECK of those IDs is
   238).
2. A wrong password 381 then 481, the right one after it 281; then CHECK
   238, TAKETHIS 239; AUTHINFO again 502.
3. Three wrong passwords on one connection: the third 481 closes it.
4. `local` (no credentials) gets 502 to AUTHINFO and offers at once.
5. The file rewritten with a new password and SIGHUP: the reload lists
   the credentials as applied; the session authenticated before it goes
   on; a new session's old password gets 481, the new one 281.
"""
import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import GREETING, Client, Host, article, check, in_netns, log  # noqa: E402
import fgkit  # noqa: E402

in_netns()

SECURE = "127.0.0.3"
USER, PASS1, PASS2 = "secure-feed", "first pass word", "second pass word"
CAPS_AUTH = [b"101 Capability list:\r\n", b"VERSION 2\r\n", b"AUTHINFO USER\r\n",
             b"IMPLEMENTATION floodgate 0.1\r\n", b".\r\n"]
L480 = "480 Authentication required for command\r\n"
L481 = "481 Authentication failed\r\n"


def write_cred(path, password):
    fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("username %s\npassword \"%s\"\n" % (USER, password))
    os.rename(path + ".new", path)


def login(c, password, want):
    c.send("AUTHINFO USER %s\r\nAUTHINFO PASS %s\r\n" % (USER, password))
    c.expect("381 Password required\r\n")
    c.expect(want)


def main():
    cred_dir = tempfile.mkdtemp(prefix="fg-eng-auth-")
    cred = os.path.join(cred_dir, "secure.credentials")
    write_cred(cred, PASS1)
    host = Host(extra="[peer secure]\naddress %s\ncredentials %s\n" % (SECURE, cred))

    # 1: nothing before AUTHINFO
    s = Client(src=SECURE)
    s.expect(GREETING)
    s.send("CAPABILITIES\r\nCHECK <a1@auth.test>\r\nIHAVE <a2@auth.test>\r\n")
    check(s.lines(5) == CAPS_AUTH, "CAPABILITIES before AUTHINFO")
    s.expect(L480)
    s.expect(L480)
    s.send(b"TAKETHIS <a3@auth.test>\r\n" + article("<a3@auth.test>") + b"MODE STREAM\r\n")
    s.expect(L480)
    s.expect("203 Streaming permitted\r\n")
    # 2: wrong, then right
    login(s, "first pass  word", L481)
    login(s, PASS1, "281 Authentication accepted\r\n")
    s.send("CHECK <a1@auth.test>\r\nCHECK <a3@auth.test>\r\n")
    s.expect("238 <a1@auth.test>\r\n")
    s.expect("238 <a3@auth.test>\r\n")
    s.send(b"TAKETHIS <a1@auth.test>\r\n" + article("<a1@auth.test>"))
    s.expect("239 <a1@auth.test>\r\n")
    s.send("AUTHINFO USER %s\r\n" % USER)
    s.expect("502 Already authenticated\r\n")

    # 3: the third wrong password closes
    t = Client(src=SECURE)
    t.expect(GREETING)
    login(t, "x", L481)
    login(t, "y", L481)
    login(t, "z", "481 Authentication failed, closing connection\r\n")
    check(t.eof(), "closed after the third 481")
    t.close()

    # 4: a peer without credentials
    p = Client()
    p.expect(GREETING)
    p.send("AUTHINFO USER %s\r\nCHECK <l1@auth.test>\r\n" % USER)
    p.expect("502 No authentication needed for this peer\r\n")
    p.expect("238 <l1@auth.test>\r\n")
    p.send("QUIT\r\n")
    p.expect("205 Bye\r\n")
    p.close()

    st = host.stats()
    want = {"nntp_auth_required": 3, "nntp_auth_failed": 4, "nntp_auth_accepted": 1,
            "nntp_auth_closed": 1, "peer:secure:nntp_auth_failed": 4,
            "peer:secure:nntp_auth_required": 3, "nntp_response:480": 3,
            "nntp_response:381": 5, "nntp_response:482": 0}
    got = {k: st.get(k, 0) for k in want}
    check(got == want, "counters: %s, want %s" % (got, want))
    check(st.get("peer:local:nntp_auth_failed", 0) == 0, "local's counters")

    # 5: a new password, reloaded on SIGHUP
    write_cred(cred, PASS2)
    host.proc.send_signal(signal.SIGHUP)
    fgkit.wait_until(lambda: "SIGHUP reload: 1 workers switched" in fgkit.slurp(host.log),
                     30, "the host reloaded on SIGHUP")
    check("applied        [peer secure] credentials (the file's content)"
          in fgkit.slurp(host.log), "the reload lists the credentials:\n%s"
          % fgkit.slurp(host.log))
    check(PASS1 not in fgkit.slurp(host.log) and PASS2 not in fgkit.slurp(host.log),
          "a password in the log")
    s.send("CHECK <a4@auth.test>\r\n")
    s.expect("238 <a4@auth.test>\r\n")
    n = Client(src=SECURE)
    n.expect(GREETING)
    login(n, PASS1, L481)
    login(n, PASS2, "281 Authentication accepted\r\n")
    n.send("CHECK <a5@auth.test>\r\nQUIT\r\n")
    n.expect("238 <a5@auth.test>\r\n")
    n.expect("205 Bye\r\n")
    n.close()
    s.send("QUIT\r\n")
    s.expect("205 Bye\r\n")
    s.close()
    st = host.stop()
    check(st.get("nntp_auth_accepted") == 2 and st.get("nntp_articles_accepted") == 1,
          "final counters: accepted %s, articles %s" % (st.get("nntp_auth_accepted"),
                                                        st.get("nntp_articles_accepted")))
    os.unlink(cred)
    os.rmdir(cred_dir)
    log("floodgate-host: 480 before AUTHINFO, 481 x%d, 281 x%d, closed after three, "
        "reloaded credentials" % (st["nntp_auth_failed"], st["nntp_auth_accepted"]))
    fgkit.passed("37_host_auth")


main()
