#!/usr/bin/env bash
# The JVM app of the end-to-end receiver benchmark (bench/e2e/jvm/ReceiverBench.kt): compiles it
# with the kotlinc of make setup (.build/node/node_modules/kotlin-compiler) against the packaged
# jar (${BENCH_DIST:-$ROOT/dist}/royaltykit-kotlin-<version>.jar, copied beside the classes so a
# rebuild of dist/ does not change what runs), JNA, the Kotlin stdlib, Jedis and gson
# (.build/maven/lib) and pgjdbc (.build/maven/jdbc), all from make setup; into
# .build/bench/e2e/jvm. Recompiles only when the source, the jar or the classpath changed. Writes
# .build/bench/e2e/apps-jvm.json (bench/e2e/run.py starts the app from it).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' "$ROOT/Cargo.toml")
DIST=${BENCH_DIST:-$ROOT/dist}
OUT=$ROOT/.build/bench/e2e/jvm
KC=$ROOT/.build/node/node_modules/kotlin-compiler
SRC=$ROOT/bench/e2e/jvm/ReceiverBench.kt

JAR=$DIST/royaltykit-kotlin-$VERSION.jar
[ -f "$JAR" ] || { echo "bench/e2e/jvm: $JAR is missing (make jar)" >&2; exit 1; }
[ -x "$KC/bin/kotlinc" ] || { echo "bench/e2e/jvm: kotlinc is missing (make setup)" >&2; exit 1; }
[ -f /usr/share/java/jna.jar ] || { echo "bench/e2e/jvm: /usr/share/java/jna.jar is missing (make setup)" >&2; exit 1; }
PGJDBC=$(find "$ROOT/.build/maven" -path "$ROOT/.build/maven/m2" -prune -o -name 'postgresql-*.jar' -print | sort | tail -1)
[ -n "$PGJDBC" ] || { echo "bench/e2e/jvm: pgjdbc is missing under .build/maven (make setup)" >&2; exit 1; }
LIBS=$(ls "$ROOT"/.build/maven/lib/*.jar | paste -sd: -)  # Jedis and its dependencies, gson
case ":$LIBS:" in *jedis-*) ;; *) echo "bench/e2e/jvm: Jedis is missing in .build/maven/lib (make setup)" >&2; exit 1 ;; esac
case ":$LIBS:" in *gson-*) ;; *) echo "bench/e2e/jvm: gson is missing in .build/maven/lib (make setup)" >&2; exit 1 ;; esac

mkdir -p "$OUT/lib"
cmp -s "$JAR" "$OUT/lib/royaltykit-kotlin.jar" || cp "$JAR" "$OUT/lib/royaltykit-kotlin.jar"
CP="$OUT/lib/royaltykit-kotlin.jar:/usr/share/java/jna.jar:$KC/lib/kotlin-stdlib.jar:$LIBS:$PGJDBC"

stamp=$(cat "$SRC" "$OUT/lib/royaltykit-kotlin.jar" "$KC/build.txt" | sha256sum | cut -c1-32)-$(echo "$CP" | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/stamp" 2>/dev/null)" != "$stamp" ] || [ ! -f "$OUT/classes/ReceiverBenchKt.class" ]; then
  echo "bench/e2e/jvm: compiling ReceiverBench.kt" >&2
  rm -rf "$OUT/classes" "$OUT/stamp"
  log=$("$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$OUT/classes" "$SRC" 2>&1) || { echo "$log" >&2; exit 1; }
  [ -z "$log" ] || echo "$log" | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
  [ -f "$OUT/classes/ReceiverBenchKt.class" ] || { echo "bench/e2e/jvm: kotlinc wrote no ReceiverBenchKt" >&2; exit 1; }
  echo "$stamp" > "$OUT/stamp"
fi

python3 - "$ROOT/.build/bench/e2e/apps-jvm.json" "$CP:$OUT/classes" <<'PY'
import json, sys
path, cp = sys.argv[1:3]
apps = {"jvm-httpserver": {
    "argv": ["java", "-Xmx512m", "-Dsun.net.httpserver.nodelay=true", "-cp", cp, "ReceiverBenchKt"],
    "env": {},
    "language": "JVM",
    "integration": "com.sun.net.httpserver",
}}
with open(path, "w") as f:
    json.dump(apps, f, indent=2)
    f.write("\n")
PY
echo "bench/e2e/jvm: wrote .build/bench/e2e/apps-jvm.json" >&2
