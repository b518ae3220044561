#!/usr/bin/env bash
# Runs the Kotlin JUnit 4 suite against dist/royaltykit-kotlin-<version>.jar copied into an
# empty temporary directory (no -Djna.library.path: the jar carries its native library).
# JdbcDedupStore's tests (StoresTest) run against a throw-away PostgreSQL cluster started here
# (scripts/postgres.sh) and SQLite files, with the JDBC drivers from Maven Central.
source "$(dirname "$0")/common.sh"
source "$ROOT/scripts/postgres.sh"
KC=$ROOT/.build/node/node_modules/kotlin-compiler
cp "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" "$WORK/"
J=/usr/share/java
HAMCREST=$J/hamcrest-core.jar; [ -f "$HAMCREST" ] || HAMCREST=$J/hamcrest.jar
# the clients' add-ons (dist/royaltykit-okhttp, -coroutines) with OkHttp, Okio and kotlinx-coroutines
# from Maven Central
OKHTTP_CP="$ROOT/dist/royaltykit-okhttp-$VERSION.jar:$ROOT/dist/royaltykit-coroutines-$VERSION.jar"
OKHTTP_CP="$OKHTTP_CP:$(ls "$ROOT"/.build/maven/okhttp/*.jar "$ROOT"/.build/maven/coroutines/*.jar | paste -sd: -)"
# pgjdbc and sqlite-jdbc (.build/maven/jdbc, make setup), for StoresTest only: the jar needs none
JDBC_CP=$(ls "$ROOT"/.build/maven/jdbc/*.jar | paste -sd: -)
# royaltykit-otel with opentelemetry-api, and the SDK with its in-memory exporter (OtelTest), from
# Maven Central (.build/maven/otel)
OTEL_CP="$ROOT/dist/royaltykit-otel-$VERSION.jar:$(ls "$ROOT"/.build/maven/otel/*.jar | paste -sd: -)"
CP="$WORK/royaltykit-kotlin-$VERSION.jar:$J/jna.jar:$J/junit4.jar:$HAMCREST:$J/gson.jar:$KC/lib/kotlin-stdlib.jar:$OKHTTP_CP:$JDBC_CP:$OTEL_CP"
# The documentation's Kotlin examples (README.md, docs/*.md) are compiled with the tests (each in package readme.<name>)
# and run by ReadmeTest.
python3 - "$WORK/readme" "$ROOT/README.md" "$ROOT"/docs/*.md <<'PY'
import os, re, sys
text = "\n".join(open(f, encoding="utf-8").read() for f in sys.argv[2:])
blocks = re.findall(r"<!-- example:(kotlin[\w-]*) -->\s*```kotlin\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("the documentation has no Kotlin example")
for name, code in blocks:
    pkg = name.replace("-", "_")
    os.makedirs(os.path.join(sys.argv[1], pkg))
    open(os.path.join(sys.argv[1], pkg, "Example.kt"), "w", encoding="utf-8").write(f"package readme.{pkg}\n\n{code}")
PY
# kotlinc with its one harmless warning filtered out; a compile error fails the suite (it must
# never end as "OK (0 tests)").
kotlinc_or_fail() {
  local out rc=0
  out=$("$KC/bin/kotlinc" -nowarn -jvm-target 17 "$@" 2>&1) || rc=$?
  grep -v '^warning: unable to find kotlin-stdlib' <<<"$out" >&2 || true
  [ "$rc" = 0 ] || { echo "kotlinc failed (exit $rc)" >&2; exit 1; }
}
# The jar as a friend module: tests reach its `internal` helpers (NativeLoader's record reader).
kotlinc_or_fail -cp "$CP" -Xfriend-paths="$WORK/royaltykit-kotlin-$VERSION.jar" -d "$WORK/test-classes" \
  $(find "$WORK/readme" "$ROOT/bindings-kotlin/tests" "$ROOT/bindings-kotlin/tests-android" -name '*.kt')
test_classes() {
  local classes
  classes=$(cd "$1" && find . -name '*Test.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
  [ -n "$classes" ] || { echo "no Kotlin test classes compiled in $1" >&2; exit 1; }
  echo "$classes"
}
# No test-only name is exported by the shipped jar: its public Kotlin API (javap -public over
# every class) and its native library's exported symbols.
mkdir "$WORK/shipped" && (cd "$WORK/shipped" && jar xf "$WORK/royaltykit-kotlin-$VERSION.jar")
public_api=$(cd "$WORK/shipped" && javap -public $(find dev -name '*.class' | sed 's|\.class$||; s|/|.|g'))
exported=$(nm -D --defined-only "$WORK/shipped/linux-x86-64/libroyaltykit_kotlin.so" | awk '{print $3}' | grep '^uniffi_')
if grep -inE 'panic|floor|[ .]_[a-z]' <<<"$public_api$exported" | grep -v 'uniffi_rust_future\|rustbuffer\|boolean isPanic()'; then
  echo "the shipped jar exports a test-only name (above)" >&2; exit 1
fi
# exports ROYALTYKIT_PG_DSN and ROYALTYKIT_PG_RESTART; its EXIT trap stops the cluster and
# removes $WORK
start_postgres
cd "$WORK"
classes=$(test_classes "$WORK/test-classes")
# With the JNI hot path, the native library extracted into an empty per-run cache (NativeLoader.kt).
# InterruptTest starts child JVMs (dev.royaltykit.InterruptChild) with this JVM's class path and
# native cache, and sends them SIGINT.
java -Droyaltykit.native.dir="$WORK/native-cache" -cp "$CP:$WORK/test-classes" org.junit.runner.JUnitCore $classes
# Every verification suite, the in-process receivers and the clients' calls again on the JNA
# path only, so both crossings answer the same (MachinesTest runs each receipt transcript through
# both itself)
java -Droyaltykit.jni=false -cp "$CP:$WORK/test-classes" org.junit.runner.JUnitCore \
  dev.royaltykit.NativePathTest dev.royaltykit.VectorsTest dev.royaltykit.HostileTest dev.royaltykit.ApiTest \
  dev.royaltykit.RouterTest dev.royaltykit.UseSecretsTest dev.royaltykit.ClientTest dev.royaltykit.SeedTest
# The jar from plain Java: javac against it, then run.
javac -d "$WORK/java-classes" -cp "$CP" "$ROOT/bindings-kotlin/tests-java/JavaUse.java"
java -cp "$CP:$WORK/java-classes" JavaUse
# The panic test, against the test-hooks build of the same code.
HOOKS_CP="$ROOT/target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar:${CP#*:}"
kotlinc_or_fail -cp "$HOOKS_CP" -d "$WORK/hook-classes" $(find "$ROOT/bindings-kotlin/tests-hooks" -name '*.kt')
classes=$(test_classes "$WORK/hook-classes")
java -cp "$HOOKS_CP:$WORK/hook-classes" org.junit.runner.JUnitCore $classes
