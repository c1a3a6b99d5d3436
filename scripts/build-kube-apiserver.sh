#!/usr/bin/env bash
# Builds the real kube-apiserver, etcd and kubectl that test/kube-real runs against, from the Go
# module in test/kube-apiserver, into a cache outside the repository keyed by Kubernetes version:
#
#   ${AGENT_UPGRADE_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/kube-apiserver}/<version>/
#
# Outside the repository because CI runs in a fresh clone on the same machine: a cache there (with
# Go's own module and build caches, also outside) turns a 2-core cold build into a no-op. A build
# is skipped when the cached binaries were built from the same module files (go.mod, go.sum, the
# main packages).
#
# Usage: scripts/build-kube-apiserver.sh           build when needed
#        scripts/build-kube-apiserver.sh --check   print the directory; exit 1 when not built or stale
set -euo pipefail
# One brace group, parsed whole before it runs, so editing this file mid-build cannot derail it.
{
repo="$(cd "$(dirname "$0")/.." && pwd)"
module="$repo/test/kube-apiserver"
version="$(tr -d '[:space:]' < "$module/VERSION")"
cache_root="${AGENT_UPGRADE_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/kube-apiserver}"
out="$cache_root/$version"
mode="${1:-build}"
case "$mode" in build | --check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

binaries=(kube-apiserver etcd kubectl)
# The stamp ties the binaries to the exact module sources, so editing main.go or regenerating
# go.mod rebuilds instead of testing a stale binary.
stamp="$(cd "$module" && cat VERSION go.mod go.sum $(find cmd -name '*.go' | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
have_all() {
  [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] || return 1
  for b in "${binaries[@]}"; do [ -x "$out/$b" ] || return 1; done
}
if [ "$mode" = --check ]; then
  echo "$out"
  have_all
  exit
fi

command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "build-kube-apiserver: no go on PATH (nor /usr/local/go/bin)" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache (two CI runs, or a developer and a test run).
exec 9>"$cache_root/.lock"
flock -w 3600 9 || { echo "build-kube-apiserver: timed out waiting for another build's lock" >&2; exit 1; }

if have_all; then
  echo "build-kube-apiserver: $version already built in $out (skipped)"
  exit 0
fi

start=$(date +%s)
echo "build-kube-apiserver: building kube-apiserver, etcd and kubectl $version into $out ($(go version | cut -d' ' -f3), $(nproc) cores)"
cd "$module"
t0=$(date +%s)
go mod download
echo "build-kube-apiserver: modules ready in $(( $(date +%s) - t0 ))s ($(du -sh "$(go env GOMODCACHE)" 2>/dev/null | cut -f1) module cache)"

tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
# The version strings upstream's release build stamps in; without them the server reports
# v0.0.0-master and kubectl warns about version skew.
minor="$(echo "$version" | cut -d. -f2)"
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags="$ldflags -X $pkg.buildDate=1970-01-01T00:00:00Z"
for b in "${binaries[@]}"; do
  t0=$(date +%s)
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/$b" "./cmd/$b"
  echo "build-kube-apiserver: built $b in $(( $(date +%s) - t0 ))s ($(du -h "$tmp/$b" | cut -f1))"
done
echo "$stamp" > "$tmp/.stamp"
# Moved in only when every binary is built, so an interrupted build leaves no half set.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "build-kube-apiserver: $version built in $(( $(date +%s) - start ))s into $out"
exit 0
}
