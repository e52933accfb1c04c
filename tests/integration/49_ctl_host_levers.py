#!/usr/bin/env python3
# timeout: 300
"""49_ctl_host_levers — the operator's levers on floodgate-host (issue 16).

In a network namespace of its own: floodctld and floodgate-host
--floodctld with peers "near" (127.0.0.1) and "far" (127.0.0.2). The
levers go through floodctld to the host's control socket
(dataplane.sock), as they go to floodgate's:
  - `pause near --for 1h`: near's CHECK gets 431, IHAVE 436, a TAKETHIS
    is read and answered 400 with the session closed; far is untouched;
    /metrics shows the pause's time left (floodgate_peer_paused_seconds)
    and the count; the pause survives a restart of the host (levers
    journal); `resume near` ends it;
  - `throttle disk full`: an open session gets "400 disk full" and is
    closed, a new one is greeted so; `go` ends it (floodgate_throttled,
    floodgate_throttle_info);
  - a reload through floodctld, then SIGHUP, reach the host: a new peer
    added to the file is served after each, without a restart.
"""
import signal

from ctlkit import Ctl, check, http_get, log, passed, prom_parse, prom_value, wait_for
from hostlib import Client, article

PORT = 1119
BASE = "http://127.0.0.1:9119"
PEERS = ("[peer near]\naddress 127.0.0.1\nnewsgroups *\n"
         "[peer far]\naddress 127.0.0.2\nnewsgroups *\n")


def nntp(source, greeting=b"200 "):
    cl = Client(src=source, addr=("127.0.0.1", PORT))
    first = cl.line()
    check(first.startswith(greeting), "greeting to %s: %r" % (source, first))
    return cl


def cmd(cl, line, data=b""):
    cl.send(line.encode() + b"\r\n" + data)
    return cl.line().decode().rstrip("\r\n")




def stop_host(p):
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=20) == 0, "the host stopped cleanly")


def metrics():
    st, body = http_get(BASE + "/metrics")
    check(st == 200, "GET /metrics: %d" % st)
    return prom_parse(body)


def lever(c, *args):
    rc, out, err = c.ctl(*args)
    check(rc == 0 and "done, journaled" in out, "floodctl %s: %d %r %r" % (args, rc, out, err))


def main():
    c = Ctl("hostlevers")
    c.netns()
    c.config("[site]\npath-identity filter.test.example\nlisten 127.0.0.1:%d\n" % PORT + PEERS,
             http="127.0.0.1:9119")
    c.start(args=["--expire-interval", "3600"])
    host, hlog = c.start_host(PORT)

    # pause: near's new offers deferred, far's not
    lever(c, "pause", "near", "--for", "1h")
    near, far = nntp("127.0.0.1"), nntp("127.0.0.2")
    for cl in (near, far):
        check(cmd(cl, "MODE STREAM").startswith("203"), "MODE STREAM")
    check(cmd(near, "CHECK <p1@levers.test>") == "431 <p1@levers.test>", "431 while paused")
    check(cmd(near, "IHAVE <p2@levers.test>") == "436 Try again later", "436 while paused")
    check(cmd(far, "CHECK <p1@levers.test>") == "238 <p1@levers.test>", "far is not paused")
    r = cmd(near, "TAKETHIS <p3@levers.test>", article("<p3@levers.test>"))
    check(r == "400 Feed paused by the operator, try again later", "TAKETHIS while paused: %r" % r)
    check(near.eof(), "the paused TAKETHIS session closed")
    m = metrics()
    left = prom_value(m, "floodgate_peer_paused_seconds", peer="near")
    check(3500 < left <= 3600, "near's pause has %r s left" % left)
    check(prom_value(m, "floodgate_peer_paused_seconds", peer="far") == 0 and
          prom_value(m, "floodgate_paused_peers") == 1, "one peer paused")
    rc, st = c.ctl_json("stats")
    check(rc == 0 and [p["peer"] for p in st["levers"]["paused"]] == ["near"],
          "stats --json levers: %r" % st.get("levers"))

    # the pause is journaled: a restarted host keeps it
    stop_host(host)
    host, hlog = c.start_host(PORT)
    near = nntp("127.0.0.1")
    check(cmd(near, "CHECK <p4@levers.test>") == "431 <p4@levers.test>",
          "still paused after a restart")
    lever(c, "resume", "near")
    check(cmd(near, "CHECK <p4@levers.test>") == "238 <p4@levers.test>", "238 after resume")
    rc, out, err = c.ctl("resume", "near")
    check(rc == 1 and "not paused" in out + err, "resume of a peer not paused: %r" % (out + err))
    check(prom_value(metrics(), "floodgate_peer_paused_seconds", peer="near") == 0,
          "no pause left")

    # throttle: open sessions closed with the reason, new ones greeted so
    lever(c, "throttle", "disk", "full")
    check(near.line() == b"400 disk full\r\n" and near.eof(), "an open session throttled")
    cl = nntp("127.0.0.2", greeting=b"400 disk full")
    check(cl.eof(), "a new session greeted 400 and closed")
    m = metrics()
    check(prom_value(m, "floodgate_throttled") == 1 and
          prom_value(m, "floodgate_throttle_info", reason="disk full") == 1, "throttle gauges")
    lever(c, "go")
    far = nntp("127.0.0.2")
    check(cmd(far, "CHECK <g1@levers.test>") == "238 <g1@levers.test>", "238 after go")
    check(prom_value(metrics(), "floodgate_throttled") == 0, "not throttled")
    wait_for(lambda: (prom_value(metrics(), "floodgate_peer_nntp_defer_paused_total",
                                 peer="near") or 0) >= 4 and
             (prom_value(metrics(), "floodgate_nntp_throttle_closed_total") or 0) >= 2,
             "the levers' counters published")

    # reload through floodctld and on SIGHUP: a peer added is served
    with open(c.conf, "a") as f:
        f.write("[peer third]\naddress 127.0.0.3\nnewsgroups *\n")
    nntp("127.0.0.3", greeting=b"502 ")
    rc, out, err = c.ctl("reload")
    check(rc == 0 and "workers switched" in out, "floodctl reload reaches the host: %r %r" %
          (out, err))
    third = nntp("127.0.0.3")
    check(cmd(third, "MODE STREAM").startswith("203"), "the new peer is served")
    with open(c.conf, "a") as f:
        f.write("[peer fourth]\naddress 127.0.0.4\nnewsgroups *\n")
    host.send_signal(signal.SIGHUP)
    wait_for(lambda: "SIGHUP reload: 1 workers switched" in open(hlog).read(),
             "the host reloaded on SIGHUP")
    nntp("127.0.0.4")

    stop_host(host)
    c.stop()
    log("levers on floodgate-host: pause, resume, throttle, go, journaled; reload and SIGHUP")
    passed("49_ctl_host_levers")


main()
