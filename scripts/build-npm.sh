#!/usr/bin/env bash
# Builds the npm package: core -> wasm32 -> wasm-bindgen (web target without a default module
# path, with the TypeScript declarations tsify derives from the core's types) -> wasm-opt ->
# the glue as CommonJS (esbuild) and the wasm twice: embedded as base64 in native/wasm.cjs (every
# runtime and bundler, synchronously) and as native/royaltykit_wasm_bg.wasm (Cloudflare Workers,
# which may not compile wasm from bytes) -> the ESM entries re-exporting the CommonJS API -> npm pack.
# Output: dist/royaltykit-<version>.tgz. Also target/npm-hooks/native/: the same module built
# with the `test-hooks` feature (a deliberate panic, the memory size), for the panic test and
# `make bench` only; the package exports none of it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/npm/royaltykit
WASM=$ROOT/target/wasm32-unknown-unknown/release/royaltykit_wasm.wasm
BIN=$ROOT/.build/node/node_modules/.bin
bindgen() { "$ROOT/.build/tools/bin/wasm-bindgen" --weak-refs "$@"; }

cargo build --quiet -p royaltykit-wasm --release --target wasm32-unknown-unknown --features test-hooks
rm -rf "$ROOT/target/npm-hooks" && mkdir -p "$ROOT/target/npm-hooks/native"
bindgen --target nodejs --no-typescript --out-dir "$ROOT/target/npm-hooks/native" "$WASM"

cargo build --quiet -p royaltykit-wasm --release --target wasm32-unknown-unknown
WEB=$ROOT/target/npm-web
rm -rf "$OUT" "$WEB" && mkdir -p "$OUT/native" "$WEB" "$ROOT/dist"
bindgen --target web --omit-default-module-path --out-dir "$WEB" "$WASM"
"$BIN/wasm-opt" -Oz --enable-simd "$WEB/royaltykit_wasm_bg.wasm" -o "$OUT/native/royaltykit_wasm_bg.wasm"
"$BIN/esbuild" "$WEB/royaltykit_wasm.js" --format=cjs --platform=neutral --log-level=warning \
  --outfile="$OUT/native/royaltykit_wasm.cjs"
if grep -q 'import\.meta\|require(' "$OUT/native/royaltykit_wasm.cjs"; then
  echo "build-npm: the wasm glue must not load files (import.meta or require found)" >&2; exit 1
fi
node - "$OUT/native/royaltykit_wasm_bg.wasm" "$OUT/native/wasm.cjs" <<'JS'
const fs = require('node:fs');
const [wasm, out] = process.argv.slice(2);
const b64 = fs.readFileSync(wasm).toString('base64');
fs.writeFileSync(out, `'use strict';
// The wasm core, embedded so that loading it needs no file system or fetch (generated).
const b64 = '${b64}';
module.exports = typeof Uint8Array.fromBase64 === 'function' ? Uint8Array.fromBase64(b64)
  : typeof Buffer === 'function' ? Buffer.from(b64, 'base64')
  : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
`);
JS
# The package's types: only the declarations tsify generated from the core's records, enums and
# error (the part before wasm-bindgen's own class and function declarations, which are internal
# and need lib esnext.disposable); index.d.ts re-exports them.
awk '/^export (class|function|const) /{exit} {print}' "$WEB/royaltykit_wasm.d.ts" > "$OUT/native/types.d.ts"
grep -q '^export interface VerifiedWebhook' "$OUT/native/types.d.ts"
# The operation ids and each one's path and query parameters, from the core's catalog (types for
# royaltykit/client).
node - "$ROOT/target/npm-hooks/native/royaltykit_wasm.js" > "$OUT/native/operations.d.ts" <<'JS'
const native = require(process.argv[2]);
const ops = JSON.parse(native.operationsJson());
const union = (names) => (names.length ? names.map((n) => `'${n}'`).join(' | ') : 'never');
const lines = ['// Generated from the core\'s operation catalog by scripts/build-npm.sh: do not edit.', '',
  '/** The parameter names of every operation: its path parameters and, where the spec lists them all, its query parameters. */',
  'export interface OperationParameterNames {'];
for (const o of ops) {
  const path = [...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  lines.push(`  ${o.id}: { path: ${union(path)}; query: ${o.openQuery ? 'string' : union(o.query.map((q) => q.name))} };`);
}
lines.push('}', '/** Every operation id of both APIs. */', 'export type OperationId = keyof OperationParameterNames;', '');
console.log(lines.join('\n'));
JS
J=bindings-wasm/js
cp $J/index.cjs $J/lib.cjs $J/crypto.node.cjs $J/crypto.none.cjs $J/files.node.cjs $J/files.none.cjs $J/diagnostics.node.cjs $J/diagnostics.none.cjs $J/fetch.cjs $J/fetch.mjs $J/fetch.workerd.mjs \
  $J/express.cjs $J/express.mjs $J/fastify.cjs $J/fastify.mjs $J/index.d.ts $J/fetch.d.ts \
  $J/express.d.ts $J/fastify.d.ts $J/otel.cjs $J/otel.mjs $J/otel.d.ts $J/telemetry.cjs $J/client.cjs $J/client.lib.cjs $J/client.mjs $J/client.workerd.mjs $J/client.d.ts $J/package.json bindings-wasm/README.md "$OUT/"
cp $J/init.cjs $J/simd.cjs $J/init.workerd.mjs "$OUT/native/"
sed "s/@WASM_SHA256@/$(sha256sum "$OUT/native/royaltykit_wasm_bg.wasm" | cut -d' ' -f1)/" $J/wasm.node.cjs > "$OUT/native/wasm.node.cjs"
# The ESM declarations: the CommonJS ones, importing the ESM entry.
for d in index fetch express fastify client otel; do sed "s|'./index.js'|'./index.mjs'|" "$OUT/$d.d.ts" > "$OUT/$d.d.mts"; done
# The ESM entries: the CommonJS API's names, re-exported (one instance whichever way it is loaded).
names=$(node -e "console.log(Object.keys(require('$OUT/index.cjs')).join(', '))")
printf "import rk from './index.cjs';\n\nexport const { %s } = rk;\n" "$names" > "$OUT/index.mjs"
printf "import './native/init.workerd.mjs';\nimport rk from './lib.cjs';\n\nexport const { %s } = rk;\n" "$names" > "$OUT/index.workerd.mjs"
(cd "$ROOT/dist" && npm pack --silent "$OUT" >/dev/null)
ls -l "$ROOT"/dist/royaltykit-*.tgz >&2
