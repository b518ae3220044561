#!/usr/bin/env bash
# Builds dist/royaltykit-kotlin-<version>.jar: uniffi-generated Kotlin (packages dev.royaltykit
# and dev.royaltykit.types) compiled with kotlinc for Java 11 (class files major 55) and Kotlin
# 2.0 metadata (the oldest kotlinc 2.4 writes; Kotlin 1.9 compilers read it), plus the native
# library under JNA's resource path, so no -Djna.library.path is needed. Needs JNA at run time.
# The Linux x86-64 library is linked by zig against glibc 2.17 (cargo-zigbuild).
# Also builds target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar, the same with the
# `test-hooks` feature (a deliberate panic, FFI floors), for the panic test and `make bench`
# only; the shipped jar exports none of them.
# With JAR_PLATFORMS=all (after make jar) the jar the Kotlin suite ran against gets the
# linux-aarch64, darwin-x86-64, darwin-aarch64 and win32-x86-64 libraries added, its classes
# untouched (built once: scripts/test-platforms.sh compares their bytes), and dist/ gets its POM
# and sources jar; make release-artifacts runs the same in stages (prepare, native, assemble).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
KOTLINC=$ROOT/.build/node/node_modules/kotlin-compiler/bin/kotlinc
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}  # make release-artifacts builds in a second one

export PATH=$ROOT/.build/venv/bin:$PATH  # cargo-zigbuild and ziglang (PyPI)

# native RUST_TARGET JNA_DIR LIBRARY_FILE OUT_CLASSES [cargo feature args...]: one stripped library.
native() {
  local target=$1 dir=$2 file=$3 classes=$4; shift 4
  # Stripped by rustc (exported symbols stay); no macOS SDK here, zig brings libSystem's stubs.
  CARGO_PROFILE_RELEASE_STRIP=symbols cargo zigbuild --quiet --release -p royaltykit-kotlin --target "$target" "$@" 2>&1 \
    | grep -v 'Compiler family detection failed\|xcrun\|^ *|$\|the SDK is needed\|DEVELOPER_DIR\|^$' >&2 || true
  mkdir -p "$classes/$dir"
  cp "$TARGET_DIR/${target%.2.17}/release/$file" "$classes/$dir/$file"
  # "<sha256> <size>": NativeLoader.kt's key for its per-user cache of the extracted library.
  echo "$(sha256sum < "$classes/$dir/$file" | cut -d' ' -f1) $(stat -c %s "$classes/$dir/$file")" > "$classes/$dir/$file.sha256"
}

# jar OUT_DIR JAR_PATH PLATFORMS [cargo feature args...]
jar_for() {
  local out=$1 jar=$2; shift 2
  rm -rf "$out" && mkdir -p "$out/gen" "$out/classes" "$(dirname "$jar")"
  native x86_64-unknown-linux-gnu.2.17 linux-x86-64 libroyaltykit_kotlin.so "$out/classes" "$@"
  # The Kotlin is generated from a native build: zig's linker keeps uniffi's metadata symbols
  # only in the dynamic table, and uniffi-bindgen reads the static one. The metadata is the same
  # in every profile, so the quick one (dev, which `cargo test` already built) serves.
  cargo build --quiet -p royaltykit-kotlin "$@"
  "$TARGET_DIR/debug/uniffi-bindgen" generate --library "$TARGET_DIR/debug/libroyaltykit_kotlin.so" \
    --language kotlin --no-format --out-dir "$out/gen" >/dev/null
  # Each generated component asks NativeLoader first, so JNA opens the cached library (one
  # extraction per machine) and JNI gets the same file.
  local sig='^private fun findLibraryName(componentName: String): String {$'
  for f in "$out/gen/dev/royaltykit/royaltykit_kotlin.kt" "$out/gen/dev/royaltykit/types/royaltykit.kt"; do
    [ "$(grep -c "$sig" "$f")" = 1 ] || { echo "build-jar: uniffi's findLibraryName changed in $f" >&2; exit 1; }
    sed -i "s/$sig/&\n    dev.royaltykit.NativeLoader.prepare()/" "$f"
  done
  # WebhookVerifier's constructor and verify through JNI without starting JNA (the cold start).
  python3 scripts/patch_kotlin_bindings.py "$out/gen/dev/royaltykit/royaltykit_kotlin.kt"
  # Lambdas as classes and string templates through StringBuilder: invokedynamic's bootstraps
  # (LambdaMetafactory, StringConcatFactory) cost a cold JVM ~15 ms on the first WebhookVerifier.
  "$KOTLINC" -nowarn -jvm-target 11 -language-version 2.0 -api-version 2.0 \
    -Xlambdas=class -Xsam-conversions=class -Xstring-concat=inline -cp /usr/share/java/jna.jar -d "$out/classes" \
    $(find "$out/gen" bindings-kotlin/kotlin -name '*.kt') 2>&1 \
    | grep -v '^warning: unable to find kotlin-stdlib\|^warning: language version 2.0 is deprecated\|^warning: API version 2.0 is deprecated' >&2 || true
  test -f "$out/classes/dev/royaltykit/WebhookVerifier.class"
  rm -f "$jar"
  (cd "$out/classes" && jar cf "$jar" .)
}

# The four platforms added to the tested jar: Rust target, JNA resource folder, library file.
OTHERS=("aarch64-unknown-linux-gnu.2.17 linux-aarch64 libroyaltykit_kotlin.so"
  "x86_64-apple-darwin darwin-x86-64 libroyaltykit_kotlin.dylib"
  "aarch64-apple-darwin darwin-aarch64 libroyaltykit_kotlin.dylib"
  "x86_64-pc-windows-gnu win32-x86-64 royaltykit_kotlin.dll")
ALL=$ROOT/target/kotlin-all
# The multi-platform jar in stages: `prepare` copies the tested jar's classes and Linux x86-64
# library, `native TARGET` adds one of the other platforms' libraries (make release-artifacts
# builds each beside the same target's wheel, in one cargo target directory, so the dependencies
# compile once per target), `assemble` writes the jar, its POM and its sources jar. `all` is the
# three in order.
all_prepare() {
  [ -f "$ROOT/target/kotlin/classes/dev/royaltykit/WebhookVerifier.class" ] \
    || { echo "build-jar: JAR_PLATFORMS=all adds platforms to the jar make jar built: run make jar first" >&2; exit 1; }
  rm -rf "$ALL" && mkdir -p "$ALL" && cp -a "$ROOT/target/kotlin/classes" "$ALL/classes"
}
all_native() { # rust-target
  local entry
  for entry in "${OTHERS[@]}"; do
    if [ "${entry%% *}" = "$1" ]; then native $entry "$ALL/classes"; return; fi
  done
  echo "build-jar: no jar platform for $1" >&2; exit 1
}
all_assemble() {
  local entry dir file
  for entry in "${OTHERS[@]}"; do
    read -r _ dir file <<<"$entry"
    [ -f "$ALL/classes/$dir/$file" ] || { echo "build-jar: $dir/$file was not built (JAR_PLATFORMS=native)" >&2; exit 1; }
  done
  rm -f "$ROOT/dist/royaltykit-kotlin-$VERSION.jar"
  (cd "$ALL/classes" && jar cf "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" .)
  # Maven coordinates dev.royaltykit:royaltykit-jvm, JNA as a dependency; and the sources jar.
  sed "s/@VERSION@/$VERSION/" bindings-kotlin/pom.xml > "$ROOT/dist/royaltykit-jvm-$VERSION.pom"
  cp "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" "$ROOT/dist/royaltykit-jvm-$VERSION.jar"
  rm -f "$ROOT/dist/royaltykit-jvm-$VERSION-sources.jar"
  (cd "$ROOT/target/kotlin/gen" && jar cf "$ROOT/dist/royaltykit-jvm-$VERSION-sources.jar" .)
  (cd "$ROOT/bindings-kotlin/kotlin" && jar uf "$ROOT/dist/royaltykit-jvm-$VERSION-sources.jar" .)
  ls -l "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" >&2
}
case "${JAR_PLATFORMS:-linux}" in
  all)
    all_prepare
    for entry in "${OTHERS[@]}"; do all_native "${entry%% *}"; done
    all_assemble
    exit 0 ;;
  prepare) all_prepare; exit 0 ;;
  native) all_native "$1"; exit 0 ;;
  assemble) all_assemble; exit 0 ;;
  linux) ;;
  *) echo "build-jar: JAR_PLATFORMS is linux (default), all, prepare, native or assemble" >&2; exit 1 ;;
esac
cargo build --quiet -p uniffi-bindgen
jar_for "$ROOT/target/kotlin-hooks" "$ROOT/target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar" --features test-hooks
jar_for "$ROOT/target/kotlin" "$ROOT/dist/royaltykit-kotlin-$VERSION.jar"
# The clients' add-ons, each a small jar of its own with its POM (their dependencies are never the
# core jar's), compiled against the pinned jars in .build/maven/<name>: royaltykit-okhttp (the
# OkHttp transport, OkHttp 4.12), royaltykit-coroutines (suspend functions, kotlinx-coroutines) and
# royaltykit-otel (OpenTelemetry spans, opentelemetry-api).
addon() { # name class-that-must-exist [jar-name-patterns of .build/maven/<name> to compile against; default all]
  local out=$ROOT/target/kotlin-$1 deps
  rm -rf "$out" && mkdir -p "$out/classes"
  deps=$(cd "$ROOT/.build/maven/$1" && ls ${3:-*.jar} | sed "s|^|$ROOT/.build/maven/$1/|" | paste -sd: -)
  "$KOTLINC" -nowarn -jvm-target 11 -language-version 2.0 -api-version 2.0 \
    -cp "$ROOT/dist/royaltykit-kotlin-$VERSION.jar:/usr/share/java/jna.jar:$deps" \
    -d "$out/classes" $(find "bindings-kotlin/$1" -name '*.kt') 2>&1 \
    | grep -v '^warning: unable to find kotlin-stdlib\|^warning: language version 2.0 is deprecated\|^warning: API version 2.0 is deprecated' >&2 || true
  test -f "$out/classes/$2"
  rm -f "$ROOT/dist/royaltykit-$1-$VERSION.jar"
  (cd "$out/classes" && jar cf "$ROOT/dist/royaltykit-$1-$VERSION.jar" .)
  sed "s/@VERSION@/$VERSION/" "bindings-kotlin/$1/pom.xml" > "$ROOT/dist/royaltykit-$1-$VERSION.pom"
}
addon okhttp dev/royaltykit/okhttp/OkHttpTransport.class
addon coroutines dev/royaltykit/coroutines/SuspendingKt.class
# royaltykit-otel: compiled against opentelemetry-api (and its context) only, the one dependency its
# POM names; the SDK in the same folder is for the tests.
addon otel dev/royaltykit/otel/OpenTelemetryTelemetry.class 'opentelemetry-api-[0-9]*.jar opentelemetry-context-*.jar opentelemetry-common-*.jar'
ls -l "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" "$ROOT"/dist/royaltykit-{okhttp,coroutines,otel}-"$VERSION".jar >&2
