#!/usr/bin/env bash
# Installs dist/royaltykit-<version>.tgz into an empty temporary project (as a user would) and
# runs the node --test suite there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
printf '{"name":"royaltykit-node-tests","private":true}\n' > package.json
npm install --no-audit --no-fund --loglevel=error "$ROOT/dist/royaltykit-$VERSION.tgz" >/dev/null
cp "$ROOT"/bindings-wasm/test/*.test.js .
ROYALTYKIT_VECTORS="${ROYALTYKIT_VECTORS:-$ROOT/tests/vectors}" ROYALTYKIT_ROOT="$ROOT" node --test --test-reporter=spec *.test.js > report.txt 2>&1 || { cat report.txt; exit 1; }
grep -E '^ℹ (tests|pass|fail|skipped)' report.txt
