#!/usr/bin/env bash
# Builds tuf-repo, the go-tuf v2 tool the tests make their TUF repositories with (test/tuf-repo),
# into a cache outside the repository, keyed by the module's own files:
#
#   ${AGENT_UPGRADE_TUF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/tuf-repo}/<stamp prefix>/tuf-repo
#
# Outside the repository because CI runs in a fresh clone on the same machine, and a build is
# skipped when the cached binary was built from the same go.mod, go.sum and *.go files.
#
# Usage: scripts/build-tuf-repo-tool.sh           build when needed
#        scripts/build-tuf-repo-tool.sh --check   print the binary's path; exit 1 when not built
set -euo pipefail
# One brace group, parsed whole before it runs, so editing this file mid-build cannot derail it.
{
repo="$(cd "$(dirname "$0")/.." && pwd)"
module="$repo/test/tuf-repo"
cache_root="${AGENT_UPGRADE_TUF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-upgrade/tuf-repo}"
mode="${1:-build}"
case "$mode" in build | --check) ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac

# The directory is named by the sources, so a changed main.go or go.sum looks in a new place
# instead of running a stale binary; the full stamp inside guards against a prefix collision.
stamp="$(cd "$module" && cat go.mod go.sum $(find . -maxdepth 1 -name '*.go' | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
out="$cache_root/${stamp:0:16}"
binary="$out/tuf-repo"
built() { [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && [ -x "$binary" ]; }
if [ "$mode" = --check ]; then
  echo "$binary"
  built || exit 1
  # Marks the build as in use, so the pruning below never removes one a test run still uses.
  touch "$out" 2>/dev/null || true
  exit 0
fi

start=$(date +%s%N)
# Tenths of a second: a skip takes a few milliseconds, a cold build minutes.
took() { local ms=$(( ($(date +%s%N) - start) / 1000000 )); printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "build-tuf-repo-tool: no go on PATH (nor /usr/local/go/bin)" >&2; exit 1; }

mkdir -p "$cache_root"
# One build at a time per cache (two CI runs, or a developer and a test run).
exec 9>"$cache_root/.lock"
flock -w 600 9 || { echo "build-tuf-repo-tool: timed out waiting for another build's lock" >&2; exit 1; }

if built; then
  echo "build-tuf-repo-tool: skipped, $binary is up to date ($(took))"
  exit 0
fi

tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cd "$module"
# -mod=readonly: a go.mod or go.sum that needs tidying fails the build instead of changing.
# -buildvcs=false: the binary depends on the module files only, not on the clone's git state.
CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -ldflags "-s -w" -o "$tmp/tuf-repo" .
echo "$stamp" > "$tmp/.stamp"
# Moved in whole, so an interrupted build never leaves a binary that --check accepts.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
# Builds for other sources (older commits, other clones) stay while in use, so switching back
# and forth does not rebuild; two weeks after their last build or --check they go.
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/[0-9a-f]{16}' -mtime +14 -exec rm -rf {} + || true
echo "build-tuf-repo-tool: built $binary in $(took) ($(go version | cut -d' ' -f3), $(nproc) cores)"
exit 0
}
