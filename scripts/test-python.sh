#!/usr/bin/env bash
# Installs dist/royaltykit-<version>-*.whl into a fresh venv (as a user would) and runs pytest,
# mypy --strict on a typed usage file, and mypy.stubtest against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
# pytest and mypy come from the build venv's pinned wheels cache-free: install the same pins.
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check \
  "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-*.whl)" -r "$ROOT/tools/requirements-test.txt"
cp -r "$ROOT/bindings-python/tests" "$WORK/tests"
cd "$WORK/tests"
ROYALTYKIT_VECTORS="${ROYALTYKIT_VECTORS:-$ROOT/tests/vectors}" ROYALTYKIT_ROOT="$ROOT" \
  "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider .
"$WORK/venv/bin/python" -m mypy --strict --no-incremental typed_usage.py
"$WORK/venv/bin/python" -m mypy.stubtest royaltykit
