# Sourced by scripts/test-receivers.sh and scripts/soak.sh (after common.sh): installs every
# receiver app beside the packaged artifacts in $WORK and exports RECEIVER_APPS (JSON: name ->
# [argv, env]) saying how to start each.
#   Node: bindings-wasm/tests-receivers/app.mjs (express, fastify, fetch; node-redis or ioredis)
#   Python: bindings-python/tests-receivers/app.py (Starlette, FastAPI, Flask, Django)
#   JVM: bindings-kotlin/tests-receivers/ReceiverApp.kt (com.sun.net.httpserver; Jedis)
command -v redis-server >/dev/null || { echo "redis-server is missing (make setup)" >&2; exit 1; }
install_npm_package
# The frameworks and clients at the versions bindings-wasm/tests-receivers/package.json pins.
npm install --no-audit --no-fund --loglevel=error $(node -e "const d = require('$ROOT/bindings-wasm/tests-receivers/package.json').dependencies; console.log(Object.entries(d).map(([k, v]) => k + '@' + v).join(' '))") >/dev/null
cp "$ROOT/bindings-wasm/tests-receivers/app.mjs" "$ROOT/bindings-wasm/tests-receivers/resume-child.mjs" "$WORK/"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check \
  "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)" -r "$ROOT/tools/requirements-receivers.txt"
mkdir -p "$WORK/py" && cp "$ROOT/bindings-python/tests-receivers/app.py" "$ROOT/bindings-python/tests-receivers/resume_child.py" "$WORK/py/"
KC=$ROOT/.build/node/node_modules/kotlin-compiler
# Jedis and its dependencies from Maven Central (make setup: tools/jvm/pom.xml -> .build/maven/lib)
JEDIS_CP=$(ls "$ROOT"/.build/maven/lib/*.jar | paste -sd: -)
KOTLIN_CP="$ROOT/dist/royaltykit-kotlin-$VERSION.jar:/usr/share/java/jna.jar:$KC/lib/kotlin-stdlib.jar:$JEDIS_CP"
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$KOTLIN_CP" -d "$WORK/kotlin-receiver" \
  "$ROOT/bindings-kotlin/tests-receivers/ReceiverApp.kt" "$ROOT/bindings-kotlin/tests-receivers/ResumeApp.kt" 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
export RECEIVER_APPS
RECEIVER_APPS=$(python3 - "$WORK" "$KOTLIN_CP" <<'PY'
import json, sys
work, cp = sys.argv[1:3]
node = lambda fw, client: [["node", f"{work}/app.mjs"], {"FRAMEWORK": fw, "CLIENT": client}]
py = lambda fw: [[f"{work}/venv/bin/python", f"{work}/py/app.py"], {"FRAMEWORK": fw}]
print(json.dumps({
    "node-express": node("express", "node-redis"),
    "node-fastify": node("fastify", "ioredis"),
    "node-fetch": node("fetch", "node-redis"),
    **{f"python-{fw}": py(fw) for fw in ("starlette", "fastapi", "flask", "flask-async", "django", "django-async")},
    "kotlin-httpserver": [["java", "-cp", f"{cp}:{work}/kotlin-receiver", "ReceiverAppKt"], {}],
}))
PY
)
# The export workers of tests/receivers/test_cross_resume.py: language -> argv.
export RESUME_CHILDREN
RESUME_CHILDREN=$(python3 - "$WORK" "$KOTLIN_CP" <<'PY'
import json, sys
work, cp = sys.argv[1:3]
print(json.dumps({
    "python": [f"{work}/venv/bin/python", f"{work}/py/resume_child.py"],
    "node": ["node", f"{work}/resume-child.mjs"],
    "kotlin": ["java", "-cp", f"{cp}:{work}/kotlin-receiver", "ResumeAppKt"],
}))
PY
)
