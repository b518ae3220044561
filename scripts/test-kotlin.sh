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
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$WORK/test-classes" \
  $(find "$ROOT/bindings-kotlin/tests" -name '*.kt') 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
classes=$(cd "$WORK/test-classes" && find . -name '*Test.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
[ -n "$classes" ] || { echo "no Kotlin test classes compiled" >&2; exit 1; }
cd "$WORK"
ROYALTYKIT_VECTORS="$ROOT/tests/vectors" ROYALTYKIT_ROOT="$ROOT" \
  java -cp "$CP:$WORK/test-classes" org.junit.runner.JUnitCore $classes
