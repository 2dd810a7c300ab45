#!/usr/bin/env bash
# make test-install: what make dist makes runs where no Swift toolchain is.
#
# 1. A fresh Debian 12 root (debootstrap: minbase and PostgreSQL 15's packages, nothing else; cached as a tarball in
#    .build-install/) gets the archive unpacked in /opt and Examples/basic in /tmp/basic; inside it (chroot, with /proc
#    and /dev) orchestrate finds every library it loads and runs the example on its embedded cluster: 16 scenarios,
#    one genuine failure, exit 1, its JUnit written.
# 2. That root becomes an image (buildah, no Docker engine) standing for a suite's own image; Deploy/Containerfile adds
#    the archive to it; the image built runs the example the same way (buildah run: OCI isolation with runc when this
#    machine allows it, else chroot isolation; it says which ran).
#
# Root only (debootstrap, chroot, buildah). Takes a few minutes the first time (the Debian packages are downloaded once).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "make test-install needs root (debootstrap, chroot, buildah)" >&2; exit 2; }
for tool in debootstrap buildah; do
  command -v "$tool" >/dev/null || { echo "needs $tool: apt-get install debootstrap buildah runc" >&2; exit 2; }
done
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=.build-install
mkdir -p "$cache"
tarball="$PWD/$cache/bookworm-postgresql.tgz"
if [ ! -s "$tarball" ]; then
  echo "== downloading Debian 12 minbase with postgresql-15 (once, into $tarball)"
  rm -rf "$cache/tarball-work"
  debootstrap --variant=minbase --include=postgresql-15 --make-tarball="$tarball.tmp" bookworm "$PWD/$cache/tarball-work" "$mirror"
  mv "$tarball.tmp" "$tarball"
  rm -rf "$cache/tarball-work"
fi

echo "== make dist"
archive=$(./scripts/dist.sh "$cache/dist" | tail -1)
(cd "$(dirname "$archive")" && sha256sum -c "$(basename "$archive").sha256")

work=$(mktemp -d /var/tmp/orchestrate-install.XXXXXX)
root="$work/root"
container=""
cleanup() {
  # The example's PostgreSQL, when a check stopped the script before it was stopped.
  pid_file="$root/tmp/basic/.orchestrate/postgres/postmaster.pid"
  if [ -f "$pid_file" ]; then kill "$(head -1 "$pid_file")" 2>/dev/null || true; fi
  for mount in "$root/dev" "$root/proc"; do if mountpoint -q "$mount"; then umount -l "$mount"; fi; done
  if [ -n "$container" ]; then buildah rm "$container" >/dev/null 2>&1 || true; fi
  buildah rmi -f localhost/orchestrate-install-suite localhost/orchestrate-install-base >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== a fresh Debian root without Swift"
debootstrap --variant=minbase --include=postgresql-15 --unpack-tarball="$tarball" bookworm "$root" "$mirror" >/dev/null
swift_files=$(find "$root" \( -name 'libswiftCore*' -o -name 'swift' -type f \) -print -quit)
[ -z "$swift_files" ] || { echo "the root holds a Swift toolchain: $swift_files" >&2; exit 1; }
mkdir -p "$root/tmp/basic"
cp -r Examples/basic/. "$root/tmp/basic/"
rm -rf "$root/tmp/basic/.orchestrate"

# The example run in a root (the archive in /opt): the summary's scenario count, the exit code, the JUnit.
check_run() {
  local where=$1 code=$2 output=$3 junit=$4
  grep -q "finished in .*: 16 scenarios" <<<"$output" || { echo "$where: no finished run of 16 scenarios" >&2; echo "$output" >&2; exit 1; }
  [ "$code" = 1 ] || { echo "$where: exit $code, not 1 (the example has a genuine failure)" >&2; echo "$output" >&2; exit 1; }
  grep -q '<testsuites name="orchestrate" tests="16"' "$junit" || { echo "$where: no JUnit of 16 tests" >&2; exit 1; }
  echo "$where: 16 scenarios, exit 1 (payment-declined-message fails by design), JUnit written"
}

echo "== the archive in that root"
tar -xzf "$archive" -C "$root/opt"
mount --bind /dev "$root/dev"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/opt/orchestrate/bin:/usr/bin:/bin HOME=/root CI=true "$@"; }
if in_root ldd /opt/orchestrate/bin/orchestrate | grep 'not found'; then echo "a library is missing" >&2; exit 1; fi
in_root orchestrate --help >/dev/null
set +e
output=$(in_root sh -c 'cd /tmp/basic && orchestrate run --progress none --junit junit.xml' 2>&1)
code=$?
set -e
check_run "chroot" "$code" "$output" "$root/tmp/basic/junit.xml"
in_root sh -c 'cd /tmp/basic && orchestrate db stop' >/dev/null
umount -l "$root/proc" "$root/dev"
rm -rf "$root/tmp/basic/.orchestrate" "$root/tmp/basic/junit.xml" "$root/opt/orchestrate"

echo "== Deploy/Containerfile on an image of that root (buildah)"
base=$(buildah from scratch)
container=$base
mount=$(buildah mount "$base")
tar -C "$root" -cf - . | tar -C "$mount" -xf -
buildah umount "$base" >/dev/null
buildah config --cmd /bin/sh --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$base"
buildah commit -q "$base" localhost/orchestrate-install-base >/dev/null
buildah rm "$base" >/dev/null
container=""
context="$work/context"
mkdir -p "$context"
cp "$archive" "$context/"
buildah bud -q --pull=never --build-arg SUITE_IMAGE=localhost/orchestrate-install-base \
  --build-arg ORCHESTRATE_ARCHIVE="$(basename "$archive")" -f Deploy/Containerfile -t localhost/orchestrate-install-suite \
  "$context" >/dev/null
container=$(buildah from localhost/orchestrate-install-suite)
isolation=oci
set +e
output=$(buildah run --isolation oci --env CI=true "$container" -- sh -c 'cd /tmp/basic && orchestrate run --progress none --junit junit.xml' 2>&1)
code=$?
if [ "$code" != 1 ] && grep -qiE 'runc|oci runtime|cgroup|namespace|permission denied' <<<"$output"; then
  isolation=chroot
  output=$(buildah run --isolation chroot --env CI=true "$container" -- sh -c 'cd /tmp/basic && orchestrate run --progress none --junit junit.xml' 2>&1)
  code=$?
fi
set -e
mount=$(buildah mount "$container")
check_run "image (buildah run, $isolation isolation)" "$code" "$output" "$mount/tmp/basic/junit.xml"
buildah run --isolation "$isolation" "$container" -- sh -c 'cd /tmp/basic && orchestrate db stop' >/dev/null 2>&1 || true
buildah umount "$container" >/dev/null
echo "make test-install: passed"
