#!/usr/bin/env bash
# make soak: the Node demo receiver and a Python stdlib receiver, each sent SOAK_DELIVERIES real
# HTTP deliveries on 127.0.0.1 (default 100,000; bounded by SOAK_MAX_SECONDS, default 600).
source "$(dirname "$0")/common.sh"
install_npm_package
cp "$ROOT"/bindings-wasm/demo/*.js .
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)"
status=0
node soak-sender.js node node soak-receiver.js || status=1
node soak-sender.js python "$WORK/venv/bin/python" "$ROOT/bindings-python/soak/soak_receiver.py" || status=1
exit $status
