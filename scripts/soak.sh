#!/usr/bin/env bash
# make soak: SOAK_DELIVERIES real HTTP deliveries (default 100,000) to two Node and two Python
# receiver processes sharing one redis-server on 127.0.0.1, with redeliveries racing first
# attempts and handler failures; every delivery must be applied exactly once
# (tests/receivers/soak.mjs). Bounded by SOAK_MAX_SECONDS (default 900).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/receivers-env.sh"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/redis"
redis-server --bind 127.0.0.1 --port "$PORT" --dir "$WORK/redis" --save '' --appendonly no --daemonize no \
  > "$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null || true; rm -rf "$WORK"' EXIT
until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.1; done
cd "$WORK"
node "$ROOT/tests/receivers/soak.mjs" "$PORT" "$WORK/effects.txt"
