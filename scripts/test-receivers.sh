#!/usr/bin/env bash
# make test-receivers: every receiver integration from the packaged artifacts, over real HTTP on
# 127.0.0.1, two processes of each sharing one real redis-server (tests/receivers).
#   Node: royaltykit/express, royaltykit/fastify, the fetch handler (node-redis and ioredis)
#   Python: royaltykit.asgi (Starlette, FastAPI), royaltykit.flask (sync, async),
#           royaltykit.django (WSGI sync, ASGI async), with redis-py (sync and asyncio)
#   JVM: WebhookReceiver in com.sun.net.httpserver, RedisDedupStore over a test RESP client
# RECEIVER_TESTS_K=<expr> runs a subset (pytest -k).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/receivers-env.sh"
cd "$WORK"  # node resolves royaltykit and the frameworks from here
# The integrations, then the documentation's receiver examples as written (Bun runs the fetch one).
RECEIVER_WORK=$WORK BUN=$ROOT/.build/node/node_modules/.bin/bun "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$ROOT/tests/receivers/test_receivers.py" "$ROOT/tests/receivers/test_readme_receivers.py" "$ROOT/tests/receivers/test_cross_resume.py" ${RECEIVER_TESTS_K:+-k "$RECEIVER_TESTS_K"}
# The integration modules typed and stubbed as installed, with the frameworks present:
# mypy --strict over the whole package, and stubtest including royaltykit.flask and .django.
cd "$ROOT/bindings-python/tests"
"$WORK/venv/bin/python" -m mypy --strict --no-incremental --cache-dir /dev/null --config-file mypy.ini -p royaltykit
"$WORK/venv/bin/python" -m mypy.stubtest --mypy-config-file mypy.ini royaltykit
