#!/usr/bin/env bash
# make demo: installs the packed npm package into an empty directory and runs the receiver demo.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
printf '{"name":"royaltykit-demo","private":true}\n' > package.json
npm install --no-audit --no-fund --loglevel=error "$ROOT/dist/royaltykit-$VERSION.tgz" >/dev/null
cp "$ROOT"/bindings-wasm/demo/*.js .
node demo.js
