#!/bin/sh
# build.sh [VERSION] — `make deb`: the floodgate and floodgate-tools
# packages into build/deb/ (or $DEB_OUT), then lintian, which must report
# no error.
#
# 1. copy the tree as it is (uncommitted changes included; not build/, not
#    .git) to $out/src/floodgate, so that debian/rules' clean and the
#    package build never touch this tree's build/;
# 2. with VERSION, put a changelog entry of that version on top of the
#    copy's debian/changelog (the package test builds a higher version to
#    upgrade to);
# 3. dpkg-buildpackage -b (binary packages only, unsigned); its output is
#    moved up to $out;
# 4. lintian on the .changes: every tag is shown, an error fails.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${DEB_OUT:-$top/build/deb}
version=${1:-}
src=$out/src/floodgate

rm -rf "$out"
mkdir -p "$src"
tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -

if [ -n "$version" ]; then
	cl=$src/debian/changelog
	who=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$cl" | head -1)
	{
		printf 'floodgate (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Rebuilt from the tree as %s.\n\n' "$version"
		printf ' -- %s  %s\n\n' "$who" "$(date -R)"
		cat "$cl"
	} > "$cl.new"
	mv "$cl.new" "$cl"
fi

cd "$src"
dpkg-buildpackage -b -us -uc -j"$(nproc 2>/dev/null || echo 2)"
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
echo "deb: $(cd "$out" && ls ./*.deb | tr '\n' ' ')"
lintian --fail-on error --display-info "$out"/*.changes
echo "deb: lintian reports no error"
