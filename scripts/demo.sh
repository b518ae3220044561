#!/usr/bin/env bash
# make demo: installs the packed npm package into an empty directory and runs the receiver demo:
# one receiver over real HTTP, then two receiver processes sharing one redis-server.
source "$(dirname "$0")/common.sh"
install_npm_package
cp "$ROOT"/bindings-wasm/demo/*.js "$ROOT"/bindings-wasm/demo/*.mjs "$ROOT/bindings-wasm/tests-receivers/app.mjs" .
node demo.js
npm install --no-audit --no-fund --loglevel=error $(node -e "const d = require('$ROOT/bindings-wasm/tests-receivers/package.json').dependencies; console.log(['express', 'redis'].map((k) => k + '@' + d[k]).join(' '))") >/dev/null
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p redis
# Started on its own (not as `mkdir && redis-server &`, which would make $! a subshell and leave
# redis-server running after the trap's kill).
redis-server --bind 127.0.0.1 --port "$PORT" --dir "$WORK/redis" --save '' > redis.log 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null || true; rm -rf "$WORK"' EXIT
until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.1; done
node two-processes.mjs "$PORT" "$WORK/effects.txt"
