#!/usr/bin/env bash
# make dist: orchestrate as an archive that runs without a Swift toolchain on the target.
#
#   scripts/dist.sh [OUT_DIR]   → OUT_DIR/orchestrate-VERSION-linux-ARCH.tar.gz and its .sha256 (default OUT_DIR: dist)
#
# The Swift standard library and Foundation are linked in (--static-swift-stdlib, in a build folder of its own so that
# the usual release build is not rebuilt). The shared libraries the binary still loads beyond glibc's own (libcurl and
# what it loads, for FoundationNetworking; libxml2, for FoundationXML; libstdc++, ICU, zlib) go in lib/orchestrate/
# beside it, found through the binary's rpath ($ORIGIN/../lib/orchestrate; DT_RPATH, which the libraries' own
# dependencies are looked up by too, unlike DT_RUNPATH): the archive needs only glibc as new as the
# build machine's (Debian 12: 2.36). The README's Install section goes in as INSTALL.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
arch=$(uname -m)
version=$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
name="orchestrate-$version-linux-$arch"
build=.build-dist

echo "building $name (release, static Swift standard library and Foundation)" >&2
# Static FoundationNetworking and FoundationXML link against -lcurl and -lxml2: their unversioned names, which only the
# -dev packages install, are made here for the linker instead.
links="$PWD/$build/link-names"
mkdir -p "$links"
for library in curl xml2; do
  # (awk reads to the end: one that stopped early would leave ldconfig to die of SIGPIPE under pipefail)
  found=$(ldconfig -p | awk -v name="lib$library.so." '$1 ~ "^" name && found == "" { found = $NF } END { print found }')
  [ -n "$found" ] || { echo "lib$library is not installed (apt-get install libcurl4 libxml2)" >&2; exit 1; }
  ln -sf "$found" "$links/lib$library.so"
done
swift build -c release --product orchestrate --static-swift-stdlib --build-path "$build" \
  -Xlinker -L"$links" -Xlinker -lcurl -Xlinker -lxml2 -Xlinker -rpath -Xlinker '$ORIGIN/../lib/orchestrate' \
  -Xlinker --disable-new-dtags >&2
binary="$build/release/orchestrate"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/orchestrate"
mkdir -p "$root/bin" "$root/lib/orchestrate"
install -m 0755 "$binary" "$root/bin/orchestrate"
# Its debugging information goes (two thirds of its size); its symbols stay, for backtraces.
strip --strip-debug "$root/bin/orchestrate"
# Every shared library it loads but glibc's (and the loader), by the path this machine resolves it to.
missing=$(ldd "$binary" | awk '/not found/ { print $1 }')
[ -z "$missing" ] || { echo "libraries not found: $missing" >&2; exit 1; }
ldd "$binary" | awk '$3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
  case "$soname" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|ld-linux*|libutil.so.*) continue ;;
  esac
  cp -L "$path" "$root/lib/orchestrate/$soname"
done
if grep -q '^## Install' README.md; then
  awk '/^## Install/ { on = 1; print; next } on && /^## / { exit } on { print }' README.md > "$root/INSTALL.md"
fi
[ -f LICENSE ] && cp LICENSE "$root/"

mkdir -p "$out"
archive="$out/$name.tar.gz"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$archive.tmp" orchestrate
mv "$archive.tmp" "$archive"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256.tmp" && mv "$name.tar.gz.sha256.tmp" "$name.tar.gz.sha256")
echo "$archive"
