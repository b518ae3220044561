#!/usr/bin/env bash
# make bench, end-to-end receivers: the Python apps (bench/e2e/python/app.py: ASGI, Flask,
# Django). Installs a venv in .build/bench/e2e/python/venv with the pinned frameworks, servers
# and clients (requirements.txt) and the royaltykit wheel from ${BENCH_DIST:-$ROOT/dist}, then
# writes .build/bench/e2e/apps-python.json (bench/e2e contract). Idempotent: pip runs again only
# when requirements.txt or the wheel changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
ROOT=$PWD
DIST=${BENCH_DIST:-$ROOT/dist}
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
B=$ROOT/.build/bench/e2e
V=$B/python/venv
HERE=$ROOT/bench/e2e/python

wheel=$(ls "$DIST"/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "no royaltykit $VERSION manylinux x86_64 wheel in $DIST (make package, or BENCH_DIST=...)" >&2; exit 1; }

mkdir -p "$B/python"
[ -x "$V/bin/python" ] || python3 -m venv "$V"
if ! cmp -s "$HERE/requirements.txt" "$V/.requirements"; then
  echo "== bench e2e python: pip install -r bench/e2e/python/requirements.txt ==" >&2
  "$V/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$V/.requirements"
fi
stamp="$(sha256sum "$wheel" | cut -d' ' -f1)"
if [ "$stamp" != "$(cat "$V/.wheel" 2>/dev/null)" ]; then
  echo "== bench e2e python: $(basename "$wheel") ==" >&2
  "$V/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  echo "$stamp" > "$V/.wheel"
fi
"$V/bin/python" -c 'import royaltykit, starlette, uvicorn, uvloop, httptools, flask, django, gunicorn, redis, psycopg'

"$V/bin/python" - "$V/bin/python" "$HERE/app.py" "$B/apps-python.json" <<'PY'
import json, sys
python, app, out = sys.argv[1:4]
apps = {f"python-{name}": {"argv": [python, app, name], "env": {"PYTHONUNBUFFERED": "1"}, "language": "Python",
                           "integration": integration}
        for name, integration in (("asgi", "ASGI"), ("flask", "Flask"), ("django", "Django"))}
with open(out, "w") as f:
    json.dump(apps, f, indent=2)
    f.write("\n")
PY
echo "wrote $B/apps-python.json" >&2
