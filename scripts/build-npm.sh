#!/usr/bin/env bash
# Builds the npm package: core -> wasm32 -> wasm-bindgen (nodejs, with the TypeScript
# declarations tsify derives from the core's types) -> wasm-opt -> npm pack.
# Output: dist/royaltykit-<version>.tgz. Also target/npm-hooks/native/: the same module built
# with the `test-hooks` feature (a deliberate panic, the memory size), for the panic test and
# `make bench` only; the package exports none of it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/npm/royaltykit
WASM=$ROOT/target/wasm32-unknown-unknown/release/royaltykit_wasm.wasm
bindgen() { "$ROOT/.build/tools/bin/wasm-bindgen" --target nodejs --weak-refs "$@"; }

cargo build --quiet -p royaltykit-wasm --release --target wasm32-unknown-unknown --features test-hooks
rm -rf "$ROOT/target/npm-hooks" && mkdir -p "$ROOT/target/npm-hooks/native"
bindgen --no-typescript --out-dir "$ROOT/target/npm-hooks/native" "$WASM"

cargo build --quiet -p royaltykit-wasm --release --target wasm32-unknown-unknown
rm -rf "$OUT" && mkdir -p "$OUT/native" "$ROOT/dist"
bindgen --out-dir "$OUT/native" "$WASM"
"$ROOT/.build/node/node_modules/.bin/wasm-opt" -Oz \
  "$OUT/native/royaltykit_wasm_bg.wasm" -o "$OUT/native/royaltykit_wasm_bg.wasm"
# The package's types: only the declarations tsify generated from the core's records, enums and
# error (the part before wasm-bindgen's own class and function declarations, which are internal
# and need lib esnext.disposable); index.d.ts re-exports them.
awk '/^export (class|function|const) /{exit} {print}' "$OUT/native/royaltykit_wasm.d.ts" > "$OUT/native/types.d.ts"
grep -q '^export interface VerifiedWebhook' "$OUT/native/types.d.ts"
rm -f "$OUT/native/royaltykit_wasm_bg.wasm.d.ts" "$OUT/native/royaltykit_wasm.d.ts"
cp bindings-wasm/js/index.js bindings-wasm/js/index.d.ts bindings-wasm/js/package.json bindings-wasm/README.md "$OUT/"
(cd "$ROOT/dist" && npm pack --silent "$OUT" >/dev/null)
ls -l "$ROOT"/dist/royaltykit-*.tgz >&2
