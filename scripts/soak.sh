#!/usr/bin/env bash
# make soak, SOAK_DELIVERIES real HTTP deliveries each (default 100,000) on 127.0.0.1:
#  1. to the Node demo receiver and a Python stdlib receiver, each alone with in-memory dedup
#     windows: duplicates, replays under a new id, tampered and stale deliveries; exact counts
#     and bounded memory (bindings-wasm/demo/soak-sender.js)
#  2. to two Node and two Python receiver processes sharing one redis-server, with redeliveries
#     racing first attempts and handler failures: every delivery applied exactly once
#     (tests/receivers/soak.mjs)
#  3. to two Python receiver processes on the transactional PostgresDedupStore (one throw-away
#     PostgreSQL), one of them SIGKILLed and restarted every 1.5 s: every delivery applied
#     exactly once, none lost, none doubled (bindings-python/soak/soak_pg.py)
# Each bounded by SOAK_MAX_SECONDS.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/receivers-env.sh"
cp "$ROOT"/bindings-wasm/demo/*.js .
node soak-sender.js node node soak-receiver.js
node soak-sender.js python "$WORK/venv/bin/python" "$ROOT/bindings-python/soak/soak_receiver.py"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/redis"
redis-server --bind 127.0.0.1 --port "$PORT" --dir "$WORK/redis" --save '' --appendonly no --daemonize no \
  > "$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null || true; rm -rf "$WORK"' EXIT
until redis-cli -p "$PORT" ping >/dev/null 2>&1; do sleep 0.1; done
cd "$WORK"
node "$ROOT/tests/receivers/soak.mjs" "$PORT" "$WORK/effects.txt"
kill $REDIS 2>/dev/null || true
source "$ROOT/scripts/postgres.sh"
start_postgres
"$WORK/venv/bin/python" "$ROOT/bindings-python/soak/soak_pg.py" "$WORK/venv/bin/python" "$ROOT/bindings-python/soak/soak_pg_receiver.py"
