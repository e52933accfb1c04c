#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# timeout: 1200
"""30_package — the Debian packages, built, installed, run, upgraded, purged.

1. `make deb` twice into a private directory: version 0.1.0 (debian/
   changelog) and a rebuilt higher one; lintian must report no error
   (tools/deb/build.sh fails otherwise).
2. The contents: every program, man page, unit, the conffile and the
   logrotate file where Debian policy puts them; feedgen only in
   floodgate-tools.
3. dpkg -i on this machine: the system user and group floodgate, the data
   and log directories, the conffile root:floodgate 0640; the man pages
   render without a warning under `groff -ww -z`; `systemd-analyze verify`
   is clean for the three installed units; `floodctl config --check
   /etc/floodgate/floodgate.conf` passes. The monitoring examples are
   contrib/monitoring's files byte for byte: the dashboard is JSON, and
   `promtool check rules` and `promtool test rules` pass where they are
   installed.
4. An operator's change to the conffile (the verdict log to
   /var/log/floodgate/verdict.log). floodctld and floodgate-host run from
   the installed units' own ExecStart lines, as their User= and Group=,
   with their AmbientCapabilities= and RuntimeDirectory= done the way
   systemd would, in a network namespace of this test holding the default
   configuration's listen address (10.99.0.1); floodctld's READY=1 comes
   through a $NOTIFY_SOCKET this test binds. feedgen (from floodgate-tools)
   feeds 20 articles; all are accepted and queued (no downstream yet).
   logrotate -f with the package's /etc/logrotate.d/floodgate moves the
   verdict log to a dated name and its postrotate's `floodctl
   reopen-logs` has floodctld open a new one.
5. Both stopped, the region deleted (a reboot during the upgrade), the
   higher version installed over the first: the conffile keeps the change,
   the new floodctld rebuilds the history from the old files, every ID of
   the verdict log is in it, and once a downstream (countd.py on the
   default's 127.0.0.1:11119) is there the relay delivers the 20 articles
   queued before the upgrade, each once. floodgate.service's ExecStart
   (the DPDK dataplane, as floodgate with CAP_NET_ADMIN only) comes up on
   the default tap port and answers 438 for an ID from before the upgrade.
6. dpkg --purge: no file of the package, no data, log or runtime
   directory, no region left. The user and group stay (Debian keeps
   system users); this test removes them if it created them.

It takes about 2.5 minutes here, most of it the two package builds: a
long test. The machine is left as it was found, also when the test fails: daemons
killed, packages purged, the user and group removed if this test made
them. It refuses to run if floodgate is installed or its directories
exist (it would have to destroy them).
"""
import ctypes
import json
import os
import pwd
import grp
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import fgkit  # noqa: E402
from ctlkit import TOP, check, fail, log, passed  # noqa: E402

CLONE_NEWNET = 0x40000000
PID = os.getpid()
WORK = os.path.join(fgkit.scratch_root(), "fg-pkg-%d" % PID)
RUN_TMP = "/run/fg-pkgtest-%d" % PID          # the notify socket: reachable by the daemons' user
V1 = "0.1.0"
V2 = "0.1.0+pkgtest1"
CONF = "/etc/floodgate/floodgate.conf"
UNITS = ["floodctld.service", "floodgate.service", "floodgate-host.service"]
PACKAGE_DIRS = ["/etc/floodgate", "/var/lib/floodgate", "/var/log/floodgate", "/run/floodgate"]
REGION = "/dev/shm/floodgate"
PATHS_V1 = [
    "/usr/sbin/floodgate", "/usr/sbin/floodgate-host", "/usr/sbin/floodctld", "/usr/bin/floodctl",
    "/etc/floodgate/floodgate.conf", "/etc/logrotate.d/floodgate",
    "/lib/systemd/system/floodctld.service", "/lib/systemd/system/floodgate.service",
    "/lib/systemd/system/floodgate-host.service",
    "/usr/share/man/man8/floodgate.8.gz", "/usr/share/man/man8/floodgate-host.8.gz",
    "/usr/share/man/man8/floodctld.8.gz", "/usr/share/man/man8/floodctl.8.gz",
    "/usr/share/man/man5/floodgate.conf.5.gz",
    "/usr/share/doc/floodgate/examples/systemd/vfio.conf",
]
# the dashboard and the alert rules with their tests, as contrib/monitoring has
# them (uncompressed: Grafana imports the JSON, promtool reads the YAML)
MONITORING = "/usr/share/doc/floodgate/examples/monitoring"
MONITORING_FILES = ["floodgate-dashboard.json", "floodgate.rules.yml", "floodgate.rules.test.yml"]
PATHS_V1 += [MONITORING + "/" + f for f in MONITORING_FILES]
PATHS_TOOLS = ["/usr/bin/feedgen", "/usr/share/man/man1/feedgen.1.gz"]
FEED = ["--host", "10.99.0.1", "--port", "119", "--peers", "2", "--articles", "20", "--dups", "2",
        "--old", "0", "--future", "0", "--path-loop", "0", "--bad-id", "0", "--offline", "0",
        "--versions", "0", "--near-future", "0", "--id-prefix", "pkgtest", "--timeout", "120"]

procs = []
created_user = False
installed = False


def run(cmd, ok=(0,), timeout=600, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode not in ok:
        fail("%s: exit %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def wait_for(what, cond, timeout=60):
    """cond()'s first true value (fgkit.wait_until: the deadline is a
    failure bound only, stretched by FG_TIMEOUT_SCALE)."""
    return fgkit.wait_until(cond, timeout, what)


# ---------------------------------------------------------------- the machine

def preflight():
    check(os.geteuid() == 0, "the package test installs packages: run it as root")
    if not shutil.which("promtool"):
        fgkit.skip("promtool is not installed (Debian's prometheus package)", deps=True)
    st = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "floodgate", "floodgate-tools"],
                        capture_output=True, text=True).stdout
    check("installed" not in st and "config-files" not in st,
          "floodgate is already on this machine (%r): the test would replace it" % st)
    for d in PACKAGE_DIRS + [REGION]:
        check(not os.path.exists(d), "%s exists: the test would destroy it" % d)


def cleanup():
    global created_user
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if installed or subprocess.run(["dpkg-query", "-W", "floodgate"], capture_output=True).returncode == 0:
        subprocess.run(["dpkg", "--purge", "floodgate-tools", "floodgate"], capture_output=True)
    for d in PACKAGE_DIRS:
        shutil.rmtree(d, ignore_errors=True)
    for f in (REGION, "/dev/hugepages/floodgate"):
        if os.path.exists(f):
            os.unlink(f)
    shutil.rmtree(RUN_TMP, ignore_errors=True)
    if created_user:
        subprocess.run(["deluser", "--system", "--quiet", "floodgate"], capture_output=True)
        subprocess.run(["delgroup", "--system", "--quiet", "floodgate"], capture_output=True)
        created_user = False
    if fgkit.failed or os.environ.get("FG_KEEP_TMP"):
        log("kept %s" % WORK)
    else:
        shutil.rmtree(WORK, ignore_errors=True)


def user_exists():
    try:
        pwd.getpwnam("floodgate")
        return True
    except KeyError:
        return False


def group_exists():
    try:
        grp.getgrnam("floodgate")
        return True
    except KeyError:
        return False


# ---------------------------------------------------------------- packages

def build(version, out):
    env = dict(os.environ, DEB_OUT=out)
    args = ["make", "--no-print-directory", "-C", TOP, "deb"]
    if version != V1:
        args.append("DEB_VERSION=" + version)
    p = run(args, env=env, timeout=1200)
    check("deb: lintian reports no error" in p.stdout, "lintian verdict missing:\n" + p.stdout[-2000:])
    tags = [l for l in p.stdout.splitlines() if re.match(r"^[EW]: ", l)]
    check(not [t for t in tags if t.startswith("E: ")], "lintian errors: %s" % tags)
    debs = {n.split("_")[0]: os.path.join(out, n) for n in os.listdir(out)
            if n.endswith("_amd64.deb") and "dbgsym" not in n}
    check(set(debs) == {"floodgate", "floodgate-tools"}, "packages built: %s" % sorted(debs))
    for name, path in debs.items():
        v = run(["dpkg-deb", "-f", path, "Version"]).stdout.strip()
        check(v == version, "%s is version %s, wanted %s" % (name, v, version))
    log("built %s: %s; lintian: %d warnings, no error" % (version, " ".join(sorted(debs)), len(tags)))
    return debs


def contents(debs):
    files = {}
    for name, path in debs.items():
        files[name] = {l.split()[-1].lstrip(".") for l in run(["dpkg-deb", "-c", path]).stdout.splitlines()}
    for f in PATHS_V1:
        check(f in files["floodgate"], "floodgate ships %s" % f)
    for f in PATHS_TOOLS:
        check(f in files["floodgate-tools"] and f not in files["floodgate"],
              "%s only in floodgate-tools" % f)
    deps = run(["dpkg-deb", "-f", debs["floodgate"], "Depends"]).stdout
    for d in ("librte-net-tap23", "librte-net-af-packet23", "librte-net-memif23", "librte-net-pcap23",
              "librte-net-bond23", "librte-eal23", "adduser"):
        check(d in deps, "floodgate depends on %s: %s" % (d, deps))
    log("contents: %d files in floodgate, feedgen in floodgate-tools; PMDs in Depends" % len(files["floodgate"]))


def install(debs, what):
    global installed
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = run(["dpkg", "-i", debs["floodgate"], debs["floodgate-tools"]], env=env)
    installed = True
    check("dpkg-new" not in p.stdout + p.stderr and "dpkg-dist" not in p.stdout + p.stderr,
          "%s: dpkg spoke of a conffile: %s" % (what, p.stdout + p.stderr))
    st = run(["dpkg-query", "-W", "-f=${Status} ${Version}\\n", "floodgate", "floodgate-tools"]).stdout
    return st


def check_installed():
    pw = pwd.getpwnam("floodgate")
    check(pw.pw_uid < 1000 and pw.pw_shell in ("/usr/sbin/nologin", "/bin/false"),
          "floodgate is a system user without a shell: %s" % (pw,))
    check(grp.getgrgid(pw.pw_gid).gr_name == "floodgate", "its group is floodgate")
    for d in ("/var/lib/floodgate", "/var/log/floodgate"):
        st = os.stat(d)
        check(st.st_uid == pw.pw_uid and stat.S_IMODE(st.st_mode) == 0o750, "%s floodgate 0750" % d)
    st = os.stat(CONF)
    check(st.st_uid == 0 and st.st_gid == pw.pw_gid and stat.S_IMODE(st.st_mode) == 0o640,
          "the conffile is root:floodgate 0640")
    with open(CONF) as f:
        conf = f.read()
    dflt = run(["/usr/bin/floodctl", "config", "--default"]).stdout
    check(conf == dflt, "the conffile is the embedded default")
    run(["/usr/bin/floodctl", "config", "--check", CONF])
    for page in ("floodgate.8", "floodgate-host.8", "floodctld.8", "floodctl.8", "floodgate.conf.5",
                 "feedgen.1"):
        path = run(["man", "-w", page.rsplit(".", 1)[1], page.rsplit(".", 1)[0]]).stdout.strip()
        check(path.startswith("/usr/share/man/"), "man finds %s: %s" % (page, path))
        text = subprocess.run("zcat %s | LC_ALL=C groff -ww -z -man" % shlex.quote(path), shell=True,
                              capture_output=True, text=True)
        check(text.returncode == 0 and not text.stderr, "groff -ww on %s: %s" % (page, text.stderr))
    keys = run(["man", "5", "floodgate.conf"], env=dict(os.environ, MANWIDTH="200")).stdout
    check("verdict-log-keep" in keys and "timestamps" in keys, "floodgate.conf(5) lists the keys")
    p = run(["systemd-analyze", "verify"] + ["/lib/systemd/system/" + u for u in UNITS], ok=(0, 1))
    ours = [l for l in (p.stdout + p.stderr).splitlines()
            if any(u.split(".")[0] in l for u in UNITS)]
    check(p.returncode == 0 and not ours, "systemd-analyze verify: exit %d\n%s" % (p.returncode,
                                                                                    p.stdout + p.stderr))
    check_monitoring()
    log("installed: user and group floodgate, directories, conffile, 6 man pages clean under "
        "groff -ww, units clean under systemd-analyze verify, config --check ok")


def check_monitoring():
    for f in MONITORING_FILES:
        with open(os.path.join(MONITORING, f), "rb") as a, \
                open(os.path.join(TOP, "contrib", "monitoring", f), "rb") as b:
            check(a.read() == b.read(), "%s/%s is contrib/monitoring/%s" % (MONITORING, f, f))
    with open(os.path.join(MONITORING, "floodgate-dashboard.json")) as f:
        dash = json.load(f)
    check(dash.get("uid") == "floodgate" and len(dash.get("panels", [])) > 20,
          "the installed dashboard: %r, %d panels" % (dash.get("title"), len(dash.get("panels", []))))
    p = run(["promtool", "check", "rules", "floodgate.rules.yml"], cwd=MONITORING)
    check("SUCCESS" in p.stdout, "promtool check rules: %s" % p.stdout)
    p = run(["promtool", "test", "rules", "floodgate.rules.test.yml"], cwd=MONITORING)
    check("SUCCESS" in p.stdout, "promtool test rules: %s" % p.stdout)
    log("monitoring examples: as in the tree; the dashboard's %d panels; promtool passes the "
        "rules and their tests where they are installed" % len(dash["panels"]))


# ---------------------------------------------------------------- running

def unit(name):
    """The [Service] settings of an installed unit: {key: [values]}."""
    out = {}
    for line in open("/lib/systemd/system/" + name):
        line = line.strip()
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out.setdefault(k, []).append(v)
    return out


def as_unit(name, env=None):
    """Start the unit's ExecStart line the way systemd would run it: its
    User=, Group=, AmbientCapabilities=, RuntimeDirectory=, stderr to a log."""
    u = unit(name)
    pw = pwd.getpwnam(u["User"][0])
    gid = grp.getgrnam(u["Group"][0]).gr_gid
    for rd in u.get("RuntimeDirectory", []):
        d = os.path.join("/run", rd)
        os.makedirs(d, exist_ok=True)
        os.chown(d, pw.pw_uid, gid)
        os.chmod(d, int(u.get("RuntimeDirectoryMode", ["0755"])[0], 8))
    caps = [c.lower()[len("cap_"):] for c in " ".join(u.get("AmbientCapabilities", [])).split()]
    capspec = ",".join("+" + c for c in caps) or "-all"
    cmd = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % gid, "--init-groups",
           "--inh-caps=" + capspec, "--ambient-caps=" + capspec, "--"] + shlex.split(u["ExecStart"][0])
    logp = os.path.join(WORK, "%s.%d.log" % (name, len(procs)))
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen(cmd, stdout=open(logp, "w"), stderr=subprocess.STDOUT, env=e)
    p.logp = logp
    procs.append(p)
    return p


def slurp(p):
    with open(p) as f:
        return f.read()


def into_netns():
    """This process (and so every daemon it starts) into a network namespace
    of its own holding the default configuration's addresses: the listen
    address 10.99.0.1 and loopback for the stats endpoint and the downstream."""
    libc = ctypes.CDLL(None, use_errno=True)
    check(libc.unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): errno %d" % ctypes.get_errno())
    run(["ip", "link", "set", "lo", "up"])
    run(["ip", "addr", "add", "10.99.0.1/24", "dev", "lo"])


def start_floodctld():
    nsock = os.path.join(RUN_TMP, "notify.sock")
    if os.path.exists(nsock):
        os.unlink(nsock)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(nsock)
    os.chmod(nsock, 0o666)
    s.settimeout(60)            # a failure bound: floodctld is ready in well under a second
    d = as_unit("floodctld.service", env={"NOTIFY_SOCKET": nsock})
    # STATUS= lines (the history's restore) may come first; READY=1 ends it
    msgs = []
    while not msgs or msgs[-1] != "READY=1":
        try:
            msgs.append(s.recv(4096).decode())
        except socket.timeout:
            fail("no READY=1 from floodctld (got %r):\n%s" % (msgs, slurp(d.logp)))
        check(msgs[-1] == "READY=1" or msgs[-1].startswith("STATUS="),
              "floodctld's notifications: %r" % msgs)
    s.close()
    ctl("status")               # ready means it answers, at the first try
    return d


def ctl(*args, ok=(0,)):
    return run(["/usr/bin/floodctl", args[0], "-c", CONF] + list(args[1:]), ok=ok)


def start_host():
    h = as_unit("floodgate-host.service")

    def listening():
        if h.poll() is not None:
            fail("floodgate-host exited %s:\n%s" % (h.returncode, slurp(h.logp)))
        try:
            socket.create_connection(("10.99.0.1", 119), timeout=2).close()
            return True
        except OSError:
            return False
    wait_for("floodgate-host on 10.99.0.1:119", listening)
    return h


def stop(p, what):
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=120)
    check(rc == 0, "%s exit %d:\n%s" % (what, rc, slurp(p.logp)))
    text = slurp(p.logp)
    check("runtime error" not in text and "assertion failed" not in text, "%s log:\n%s" % (what, text))


def dataplane_on_tap(ids):
    """floodgate.service's own ExecStart, as the user floodgate with the unit's
    one capability (CAP_NET_ADMIN), on the default configuration's tap port:
    it comes up, and a peer on the tap's host side gets 438 for an ID
    accepted before the upgrade."""
    run(["ip", "addr", "del", "10.99.0.1/24", "dev", "lo"])
    caps = unit("floodgate.service")["AmbientCapabilities"]
    check(caps == ["CAP_NET_ADMIN"], "floodgate.service holds CAP_NET_ADMIN only: %s" % caps)
    fg = as_unit("floodgate.service")

    def tap_up():
        if fg.poll() is not None:
            fail("floodgate exited %s:\n%s" % (fg.returncode, slurp(fg.logp)))
        # /sys shows the namespace that mounted it, not ours: ask ip
        return "ready" in slurp(fg.logp) and subprocess.run(
            ["ip", "link", "show", "fg0"], capture_output=True).returncode == 0
    wait_for("floodgate ready on fg0", tap_up)
    run(["ip", "addr", "add", "10.99.0.2/24", "dev", "fg0"])
    run(["ip", "link", "set", "fg0", "up"])
    one = sorted(ids)[0]
    s = socket.create_connection(("10.99.0.1", 119), timeout=30)
    f = s.makefile("rwb")
    greeting = f.readline()
    f.write(b"MODE STREAM\r\nCHECK " + one.encode() + b"\r\n")
    f.flush()
    mode, ans = f.readline(), f.readline()
    s.close()
    check(greeting.startswith(b"200 ") and mode.startswith(b"203 ") and
          ans.strip() == b"438 " + one.encode(),
          "floodgate on the tap: %r %r %r" % (greeting, mode, ans))
    stop(fg, "floodgate")
    log("floodgate.service as floodgate with CAP_NET_ADMIN only: up on fg0, 438 for %s" % one)


def verdict_ids(path="/var/log/floodgate/verdict.log"):
    ids = set()
    if not os.path.exists(path):
        return ids
    for line in open(path):
        r = json.loads(line)
        if r["verdict"] == "accept":
            ids.add(r["id"])
    return ids


def feed_and_check():
    p = run(["/usr/bin/feedgen"] + FEED + ["--json"], timeout=300)
    rep = json.loads(p.stdout)
    log("feedgen: %s" % {k: rep[k] for k in rep if not isinstance(rep[k], (dict, list))})
    st = json.loads(ctl("stats", "--json").stdout)
    return rep, st


# ---------------------------------------------------------------- the test

def main():
    global created_user
    preflight()
    created_user = not user_exists() and not group_exists()
    os.makedirs(WORK)
    os.makedirs(RUN_TMP, mode=0o755)
    try:
        t0 = time.time()
        debs1 = build(V1, os.path.join(WORK, "v1"))
        debs2 = build(V2, os.path.join(WORK, "v2"))
        log("two package builds: %.0f s" % (time.time() - t0))
        contents(debs1)
        st = install(debs1, "install")
        check(st.count("install ok installed %s" % V1) == 2, "installed: %s" % st)
        check_installed()

        # the operator's change to the conffile, which the upgrade must keep
        change = ("\n# pkgtest: the operator's change, kept across the upgrade\n"
                  "[stats]\nverdict-log /var/log/floodgate/verdict.log\n")
        with open(CONF, "a") as f:
            f.write(change)
        run(["/usr/bin/floodctl", "config", "--check", CONF])

        into_netns()
        d = start_floodctld()
        h = start_host()
        feed_and_check()
        ids = wait_for("20 accepts in the verdict log",
                       lambda: (lambda s: s if len(s) >= 20 else None)(verdict_ids()))
        check(len(ids) == 20, "20 distinct IDs accepted: %d" % len(ids))
        status = json.loads(ctl("status", "--json").stdout)
        log("before the upgrade: %d IDs accepted, history %s" % (len(ids), status.get("history")))

        # the package's logrotate file: the file moves to a dated name and
        # floodctld's reopen (its postrotate) makes the new verdict.log
        run(["logrotate", "-f", "-s", os.path.join(WORK, "logrotate.state"),
             "/etc/logrotate.d/floodgate"])
        rotated = [n for n in os.listdir("/var/log/floodgate") if n.startswith("verdict.log-")]
        check(len(rotated) == 1 and verdict_ids(os.path.join("/var/log/floodgate", rotated[0])) == ids,
              "logrotate moved the 20 lines to a dated file: %s" % rotated)
        vst = os.stat("/var/log/floodgate/verdict.log")
        check(vst.st_uid == pwd.getpwnam("floodgate").pw_uid and vst.st_size == 0,
              "floodctld opened a new verdict.log (reopen-logs from postrotate)")
        log("logrotate: verdict.log -> %s, floodctld reopened verdict.log" % rotated[0])
        stop(h, "floodgate-host")
        stop(d, "floodctld")
        # a reboot during the upgrade: the new floodctld must read the old files
        os.unlink(REGION)
        data_before = sorted(os.listdir("/var/lib/floodgate"))

        st = install(debs2, "upgrade")
        check(st.count("install ok installed %s" % V2) == 2, "upgraded: %s" % st)
        with open(CONF) as f:
            check(f.read().endswith(change), "the conffile keeps the operator's change")
        check(not [n for n in os.listdir("/etc/floodgate") if "dpkg" in n], "no .dpkg-* conffile copies")
        data_after = sorted(os.listdir("/var/lib/floodgate"))
        check(set(data_before) <= set(data_after), "data files kept: %s -> %s" % (data_before, data_after))

        d = start_floodctld()
        status = json.loads(ctl("status", "--json").stdout)
        log("after the upgrade: floodctld started from %r" % status.get("startup"))
        check(status.get("startup") in ("snapshot", "journal"), "rebuilt from the old files: %s" % status)
        for i in sorted(ids):
            p = ctl("lookup", "--json", i, ok=(0, 1))
            r = json.loads(p.stdout)
            check(p.returncode == 0 and r.get("state") == "accepted", "%s after the upgrade: %s" % (i, r))
        h = start_host()
        record = os.path.join(WORK, "countd.record")
        cd = subprocess.Popen([sys.executable, os.path.join(TOP, "tests/integration/countd.py"),
                               "--port", "11119", "--record", record],
                              stdout=open(os.path.join(WORK, "countd.log"), "w"), stderr=subprocess.STDOUT)
        cd.logp = os.path.join(WORK, "countd.log")
        procs.append(cd)

        def delivered():
            if not os.path.exists(record):
                return None
            got = [l.split() for l in open(record) if l.strip()]
            return got if len(got) >= 20 else None
        got = wait_for("the relay to deliver the 20 queued articles", delivered, timeout=120)
        got_ids = [g[1] for g in got]
        check(sorted(got_ids) == sorted(ids) and all(g[4] == "accepted" for g in got),
              "delivered once each, the IDs accepted before the upgrade: %s" % got)
        log("after the upgrade: all %d IDs in history, the %d queued articles relayed once each"
            % (len(ids), len(got_ids)))
        stop(h, "floodgate-host")
        dataplane_on_tap(ids)
        stop(d, "floodctld")
        cd.send_signal(signal.SIGTERM)
        cd.wait(timeout=30)

        run(["dpkg", "--purge", "floodgate-tools", "floodgate"])
        left = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "floodgate"], capture_output=True,
                              text=True).stdout
        check("installed" not in left and "config-files" not in left, "purged: %r" % left)
        for f in PATHS_V1 + PATHS_TOOLS + PACKAGE_DIRS + [REGION]:
            check(not os.path.exists(f), "%s is gone after the purge" % f)
        check(user_exists(), "the system user stays after the purge (Debian policy)")
        log("purged: no file, data, log, runtime directory or region left")
    finally:
        cleanup()
    check(not user_exists() or not created_user, "the user this test created is removed")
    passed("30_package")


main()
