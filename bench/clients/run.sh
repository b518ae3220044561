#!/usr/bin/env bash
# make bench, clients (issue 44, point 3): the cost per call of each royaltykit client's request()
# — a GET with its token already cached — against the same GET made directly with the HTTP library
# it runs over: httpx, httpx async and requests (Python), fetch (Node), java.net.http and OkHttp (JVM).
# Usage: bench/clients/run.sh OUTDIR → OUTDIR/clients.json, a list of
# {language, client, contender: "royaltykit"|"direct", min_us, median_us}.
# Artifacts from ${BENCH_DIST:-$ROOT/dist}; installs under .build/bench/clients. One loopback server
# (bench/clients/server.mjs) answers every contender. BENCH_CLIENT_ROUNDS (31) and
# BENCH_CLIENT_BATCH_MS (40) trade time for stability.
OUTDIR=$(mkdir -p "${1:?usage: run.sh OUTDIR}" && cd "$1" && pwd)
source "$(dirname "$0")/../../scripts/common.sh"
DIST=${BENCH_DIST:-$ROOT/dist}
B=$ROOT/.build/bench/clients
KC=$ROOT/.build/node/node_modules/kotlin-compiler
mkdir -p "$B"
SERVER_PID=
trap '[ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

echo "== bench clients: setup (artifacts from $DIST) ==" >&2
# Python: a venv with the pinned HTTP libraries, then the wheel
[ -x "$B/venv/bin/python" ] || python3 -m venv "$B/venv"
if ! cmp -s bench/clients/requirements.txt "$B/venv/.requirements"; then
  "$B/venv/bin/pip" install --quiet --disable-pip-version-check -r bench/clients/requirements.txt
  cp bench/clients/requirements.txt "$B/venv/.requirements"
fi
"$B/venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  "$(ls "$DIST"/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)"
# Node: the packed npm package (the client uses the global fetch: nothing else to install)
mkdir -p "$B/node"
printf '{"name":"royaltykit-bench-clients","private":true}\n' > "$B/node/package.json"
(cd "$B/node" && npm install --no-save --no-audit --no-fund --loglevel=error "$DIST/royaltykit-$VERSION.tgz" >/dev/null)
# JVM: OkHttp 4.12.0 and Okio 3.6.0 from Maven Central — the jars make setup fetched
# (.build/maven/okhttp, pinned by tools/jvm/pom.xml), else downloaded here; checked either way.
mkdir -p "$B/maven"
OKHTTP_CP=
while read -r sum group artifact version; do
  jar=$artifact-$version.jar
  if [ -f "$ROOT/.build/maven/okhttp/$jar" ]; then
    cp "$ROOT/.build/maven/okhttp/$jar" "$B/maven/$jar"
  elif [ ! -f "$B/maven/$jar" ]; then
    curl -fsSL -o "$B/maven/$jar.tmp" "https://repo1.maven.org/maven2/${group//.//}/$artifact/$version/$jar"
    mv "$B/maven/$jar.tmp" "$B/maven/$jar"
  fi
  echo "$sum  $B/maven/$jar" | sha256sum -c --quiet - >&2
  OKHTTP_CP=$OKHTTP_CP:$B/maven/$jar
done <<'JARS'
b1050081b14bb7a3a7e55a4d3ef01b5dcfabc453b4573a4fc019767191d5f4e0 com.squareup.okhttp3 okhttp 4.12.0
67543f0736fc422ae927ed0e504b98bc5e269fda0d3500579337cb713da28412 com.squareup.okio okio-jvm 3.6.0
JARS
CP="$DIST/royaltykit-kotlin-$VERSION.jar:$DIST/royaltykit-okhttp-$VERSION.jar:/usr/share/java/jna.jar:$KC/lib/kotlin-stdlib.jar$OKHTTP_CP"
rm -rf "$B/jvm"
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$B/jvm" bench/clients/Bench.kt bench/jvm/Interleave.kt 2>&1 \
  | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
[ -f "$B/jvm/BenchKt.class" ] || { echo "bench/clients/Bench.kt did not compile" >&2; exit 1; }

# The server: one for every contender, started once.
node bench/clients/server.mjs > "$WORK/server.out" </dev/null &
SERVER_PID=$!
for _ in $(seq 100); do grep -q '^listening ' "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/^listening /{print $2}' "$WORK/server.out")
[ -n "$PORT" ] || { echo "the bench server did not start" >&2; exit 1; }
URL=http://127.0.0.1:$PORT

echo "== bench clients: Python ==" >&2
"$B/venv/bin/python" bench/clients/bench.py "$URL" "$WORK/python.json"
echo "== bench clients: Node ==" >&2
(cd "$B/node" && node "$ROOT/bench/clients/bench.mjs" "$URL" "$WORK/node.json")
echo "== bench clients: JVM ==" >&2
java -cp "$CP:$B/jvm" BenchKt "$URL" "$WORK/jvm.json"

python3 - "$OUTDIR/clients.json" "$WORK/python.json" "$WORK/node.json" "$WORK/jvm.json" <<'PY'
import json, sys
rows = [r for f in sys.argv[2:] for r in json.load(open(f))]
json.dump(rows, open(sys.argv[1], "w"), indent=1)
PY
echo "wrote $OUTDIR/clients.json" >&2
