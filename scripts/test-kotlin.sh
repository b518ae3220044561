#!/usr/bin/env bash
# Runs the Kotlin JUnit 4 suite against dist/royaltykit-kotlin-<version>.jar copied into an
# empty temporary directory (no -Djna.library.path: the jar carries its native library).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
KC=$ROOT/.build/node/node_modules/kotlin-compiler
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" "$WORK/"
J=/usr/share/java
HAMCREST=$J/hamcrest-core.jar; [ -f "$HAMCREST" ] || HAMCREST=$J/hamcrest.jar
CP="$WORK/royaltykit-kotlin-$VERSION.jar:$J/jna.jar:$J/junit4.jar:$HAMCREST:$J/gson.jar:$KC/lib/kotlin-stdlib.jar"
# The README's Kotlin example is compiled with the tests and run by ReadmeTest.
python3 - "$ROOT/README.md" "$WORK/Readme.kt" <<'PY'
import re, sys
m = re.search(r"<!-- example:kotlin -->\s*```kotlin\n(.*?)```", open(sys.argv[1], encoding="utf-8").read(), re.S)
if not m:
    sys.exit("README has no Kotlin example")
open(sys.argv[2], "w", encoding="utf-8").write(m.group(1))
PY
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$WORK/test-classes" \
  "$WORK/Readme.kt" $(find "$ROOT/bindings-kotlin/tests" -name '*.kt') 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
classes=$(cd "$WORK/test-classes" && find . -name '*Test.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
[ -n "$classes" ] || { echo "no Kotlin test classes compiled" >&2; exit 1; }
cd "$WORK"
ROYALTYKIT_VECTORS="${ROYALTYKIT_VECTORS:-$ROOT/tests/vectors}" ROYALTYKIT_ROOT="$ROOT" \
  java -cp "$CP:$WORK/test-classes" org.junit.runner.JUnitCore $classes
