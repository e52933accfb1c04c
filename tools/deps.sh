#!/bin/sh
# Install, with apt, only the Debian packages floodgate needs that are missing.
# Runs as root on Debian 12. Idempotent: when nothing is missing it does nothing.
# `deps.sh long` adds what only the long tests use (make test-long): chromium,
# about 300 MB with its libraries, renders the status page
# (tests/long/50_status_page_chromium.py), so make test does not pull it in.
set -eu

PKGS="build-essential pkg-config libdpdk-dev dpdk libjemalloc-dev check \
libpcap-dev clang llvm libclang-rt-14-dev iproute2 ethtool inn2 inn2-dev python3 \
tcpdump netcat-openbsd prometheus gnuplot-nox procps psmisc util-linux faketime \
dpkg-dev debhelper lintian scdoc groff-base man-db logrotate adduser linux-perf \
redis-server redis-tools libhiredis-dev"
if [ "${1:-}" = long ]; then
	PKGS="$PKGS chromium fonts-dejavu-core"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing (run 'make deps' as root)" >&2
	exit 1
fi

# INN's postinst stops at configure when the hostname has no dot and inn.conf
# names no domain. Give the unpacked inn.conf one and finish configuring.
inn_domain() {
	f=/etc/news/inn.conf
	[ -f "$f" ] || { [ -f "$f.dpkg-new" ] && cp "$f.dpkg-new" "$f"; } || return 0
	grep -q '^domain:' "$f" || echo "domain: localdomain" >> "$f"
}

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
apt-get update -qq
if ! $APT install $missing; then
	inn_domain
	dpkg --force-confdef --force-confold --configure -a
	$APT install $missing
fi
