#!/usr/bin/env bash
# bench/e2e/node/setup.sh: installs the Node side of the end-to-end receiver bench into
# .build/bench/e2e/node and writes .build/bench/e2e/apps-node.json (see /bench/e2e/run.py).
#   - bench/e2e/package.json + package-lock.json (autocannon, express, fastify, node-redis,
#     ioredis, pg at pinned versions) by `npm ci`, plus the packed royaltykit from
#     $BENCH_DIST (default $ROOT/dist);
#   - app.mjs (every Node app) and ../load.mjs (the load driver run.py uses) copied beside
#     node_modules, so both resolve their packages from there.
# Idempotent: npm runs again only when the lock file or the royaltykit tarball changed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
DIST=${BENCH_DIST:-$ROOT/dist}
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' "$ROOT/Cargo.toml")
TGZ=$DIST/royaltykit-$VERSION.tgz
OUT=$ROOT/.build/bench/e2e/node
[ -f "$TGZ" ] || { echo "bench/e2e/node: $TGZ is missing (make npm, or BENCH_DIST=<dir with the tarball>)" >&2; exit 1; }
mkdir -p "$OUT"

STAMP=$(cat "$ROOT/bench/e2e/package-lock.json" "$TGZ" | sha256sum | cut -c1-64)
if [ "$(cat "$OUT/.stamp" 2>/dev/null)" != "$STAMP" ]; then
  cp "$ROOT/bench/e2e/package.json" "$ROOT/bench/e2e/package-lock.json" "$OUT/"
  (cd "$OUT" && npm ci --no-audit --no-fund --loglevel=error >/dev/null \
     && npm install --no-save --no-audit --no-fund --loglevel=error "$TGZ" >/dev/null)
  echo "$STAMP" > "$OUT/.stamp"
fi
cp "$ROOT/bench/e2e/node/app.mjs" "$ROOT/bench/e2e/load.mjs" "$OUT/"

# One entry per integration; the same argv serves both implementations and every store.
python3 - "$OUT" > "$ROOT/.build/bench/e2e/apps-node.json" <<'PY'
import json, sys
out = sys.argv[1]
app = lambda fw, name: {"argv": ["node", f"{out}/app.mjs"], "env": {"FRAMEWORK": fw}, "language": "Node", "integration": name}
print(json.dumps({"node-express": app("express", "Express"), "node-fastify": app("fastify", "Fastify"),
                  "node-fetch": app("fetch", "fetch handler (node:http)")}, indent=1))
PY
