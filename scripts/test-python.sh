#!/usr/bin/env bash
# Installs dist/royaltykit-<version>-*.whl into a fresh venv (as a user would) and runs pytest
# and mypy --strict on a typed usage file (stubtest: make test-receivers).
source "$(dirname "$0")/common.sh"
# A throw-away PostgreSQL cluster on 127.0.0.1 for the transactional store's tests (test_stores.py).
source "$ROOT/scripts/postgres.sh"
start_postgres
python3 -m venv "$WORK/venv"
# The wheel, plus the pinned test tools (pytest, mypy).
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check \
  "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)" -r "$ROOT/tools/requirements-test.txt"
cp -r "$ROOT/bindings-python/tests" "$WORK/tests"
cd "$WORK/tests"
"$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider .
"$WORK/venv/bin/python" -m mypy --strict --no-incremental typed_usage.py
# mypy --strict over the whole package and stubtest run once, in make test-receivers, where the
# frameworks the integration modules import are installed.
# The panic test, against the test-hooks build of the same code (unpacked ahead of the installed
# wheel on the path).
mkdir "$WORK/hooks" && (cd "$WORK/hooks" && "$WORK/venv/bin/python" -m zipfile -e "$(ls "$ROOT"/target/wheel-hooks/royaltykit-*.whl)" .)
cp "$ROOT"/bindings-python/tests-hooks/test_*.py "$WORK/hooks/"
cd "$WORK/hooks" && PYTHONPATH="$WORK/hooks" "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider test_panic.py
