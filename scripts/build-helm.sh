#!/usr/bin/env bash
# Builds helm, which the chart's tests (test/deploy/helm-chart.test.ts, test/kube-real/helm-install.test.ts)
# lint, render and install deploy/chart with, from the Go module in test/helm into a cache outside
# the repository, keyed by helm's version:
#
#   ${AGENT_UPGRADE_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/helm}/<version>/helm
#
# Outside the repository because CI runs in a fresh clone on the same machine, and a build is
# skipped when the cached binary was built from the same go.mod and go.sum. The version is the one
# test/helm/go.mod requires, so moving helm is `go get -tool helm.sh/helm/v4/cmd/helm@<version>`
# and `go mod tidy` there, nothing else.
#
# Usage: scripts/build-helm.sh           build when needed
#        scripts/build-helm.sh --check   print the binary's path; exit 1 when not built or stale
set -euo pipefail
# One brace group, parsed whole before it runs, so editing this file mid-build cannot derail it.
{
repo="$(cd "$(dirname "$0")/.." && pwd)"
module="$repo/test/helm"
package=helm.sh/helm/v4
version="$(awk -v m="$package" '$1 == m { print $2 }' "$module/go.mod")"
[ -n "$version" ] || { echo "build-helm: $module/go.mod requires no $package" >&2; exit 1; }
cache_root="${AGENT_UPGRADE_HELM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/helm}"
out="$cache_root/$version"
binary="$out/helm"
mode="${1:-build}"
case "$mode" in build | --check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

# The stamp ties the binary to the exact module files: a go.sum regenerated at the same version
# (another dependency moved) rebuilds instead of testing with a stale binary.
stamp="$(cd "$module" && cat go.mod go.sum | sha256sum | cut -d' ' -f1)"
built() { [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && [ -x "$binary" ]; }
if [ "$mode" = --check ]; then
  echo "$binary"
  built
  exit
fi

start=$(date +%s%N)
# Tenths of a second: a skip takes a few milliseconds, a cold build minutes.
took() { local ms=$(( ($(date +%s%N) - start) / 1000000 )); printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "build-helm: no go on PATH (nor /usr/local/go/bin)" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache (two CI runs, or a developer and a test run); a waiter gives up
# after 20 minutes rather than hang behind a build that is stuck.
exec 9>"$cache_root/.lock"
flock -w 1200 9 || { echo "build-helm: timed out waiting for another build's lock" >&2; exit 1; }

if built; then
  echo "build-helm: skipped, $binary ($version) is up to date ($(took))"
  exit 0
fi

echo "build-helm: building helm $version into $out ($(go version | cut -d' ' -f3), $(nproc) cores)"
tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cd "$module"
# The version upstream's release build stamps in; without it `helm version` says only "v4.3".
ldflags="-s -w -X $package/internal/version.version=$version -X $package/internal/version.gitTreeState=clean"
# -mod=readonly: a go.mod or go.sum that needs tidying fails the build instead of changing.
# -buildvcs=false: the binary depends on the module files only, not on the clone's git state.
CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -ldflags "$ldflags" -o "$tmp/helm" "$package/cmd/helm"
echo "$stamp" > "$tmp/.stamp"
# Moved in whole, so an interrupted build never leaves a binary that --check accepts.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "build-helm: built $binary in $(took) ($(du -h "$binary" | cut -f1))"
exit 0
}
