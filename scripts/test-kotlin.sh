#!/usr/bin/env bash
# Runs the Kotlin JUnit 4 suite against dist/royaltykit-kotlin-<version>.jar copied into an
# empty temporary directory (no -Djna.library.path: the jar carries its native library).
source "$(dirname "$0")/common.sh"
KC=$ROOT/.build/node/node_modules/kotlin-compiler
cp "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" "$WORK/"
J=/usr/share/java
HAMCREST=$J/hamcrest-core.jar; [ -f "$HAMCREST" ] || HAMCREST=$J/hamcrest.jar
CP="$WORK/royaltykit-kotlin-$VERSION.jar:$J/jna.jar:$J/junit4.jar:$HAMCREST:$J/gson.jar:$KC/lib/kotlin-stdlib.jar"
# The README's Kotlin examples are compiled with the tests (each in package readme.<name>)
# and run by ReadmeTest.
python3 - "$ROOT/README.md" "$WORK/readme" <<'PY'
import os, re, sys
blocks = re.findall(r"<!-- example:(kotlin[\w-]*) -->\s*```kotlin\n(.*?)```", open(sys.argv[1], encoding="utf-8").read(), re.S)
if not blocks:
    sys.exit("README has no Kotlin example")
for name, code in blocks:
    pkg = name.replace("-", "_")
    os.makedirs(os.path.join(sys.argv[2], pkg))
    open(os.path.join(sys.argv[2], pkg, "Example.kt"), "w", encoding="utf-8").write(f"package readme.{pkg}\n\n{code}")
PY
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$WORK/test-classes" \
  $(find "$WORK/readme" "$ROOT/bindings-kotlin/tests" -name '*.kt') 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
classes=$(cd "$WORK/test-classes" && find . -name '*Test.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
[ -n "$classes" ] || { echo "no Kotlin test classes compiled" >&2; exit 1; }
cd "$WORK"
java -cp "$CP:$WORK/test-classes" org.junit.runner.JUnitCore $classes
