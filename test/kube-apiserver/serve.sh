#!/usr/bin/env bash
# Runs the tests' real kube-apiserver (with etcd) by hand until Ctrl-C, the shipped CRD and RBAC
# applied, and prints a kubeconfig for the admin and for each node name given:
#
#   test/kube-apiserver/serve.sh [NODE_NAME…]
#
# It bundles test/support/kube/real-apiserver-by-hand.ts with esbuild (a dev dependency) so that
# Node 20 runs the very harness the tests use. Build the binaries first with
# scripts/build-kube-apiserver.sh.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
bundle="$(mktemp --suffix=.mjs)"
trap 'rm -f "$bundle"' EXIT
# import.meta.dirname is pinned to the source's folder: the harness finds the repository from it.
npx --no-install esbuild test/support/kube/real-apiserver-by-hand.ts --bundle --platform=node --format=esm \
  --log-level=warning "--define:import.meta.dirname=\"$repo/test/support/kube\"" \
  --outfile="$bundle"
node "$bundle" "$@"
