#!/usr/bin/env bash
# Builds the npm package: core -> wasm32 -> wasm-bindgen (nodejs) -> wasm-opt -> npm pack.
# Output: dist/royaltykit-<version>.tgz
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/npm/royaltykit
cargo build --quiet -p royaltykit-wasm --release --target wasm32-unknown-unknown
rm -rf "$OUT" && mkdir -p "$OUT/native" "$ROOT/dist"
"$ROOT/.build/tools/bin/wasm-bindgen" --target nodejs --weak-refs --no-typescript \
  --out-dir "$OUT/native" "$ROOT/target/wasm32-unknown-unknown/release/royaltykit_wasm.wasm"
"$ROOT/.build/node/node_modules/.bin/wasm-opt" -Oz \
  "$OUT/native/royaltykit_wasm_bg.wasm" -o "$OUT/native/royaltykit_wasm_bg.wasm"
cp bindings-wasm/js/index.js bindings-wasm/js/index.d.ts bindings-wasm/js/package.json bindings-wasm/README.md "$OUT/"
(cd "$ROOT/dist" && npm pack --silent "$OUT" >/dev/null)
ls -l "$ROOT"/dist/royaltykit-*.tgz >&2
