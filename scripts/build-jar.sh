#!/usr/bin/env bash
# Builds dist/royaltykit-kotlin-<version>.jar: uniffi-generated Kotlin (packages dev.royaltykit
# and dev.royaltykit.types) compiled with kotlinc, plus the native library under JNA's resource
# path (linux-x86-64/), so no -Djna.library.path is needed. Needs JNA at run time.
# Also builds target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar, the same with the
# `test-hooks` feature (a deliberate panic, FFI floors), for the panic test and `make bench`
# only; the shipped jar exports none of them.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
KOTLINC=$ROOT/.build/node/node_modules/kotlin-compiler/bin/kotlinc
cargo build --quiet -p uniffi-bindgen

# jar OUT_DIR JAR_PATH [cargo feature args...]
jar_for() {
  local out=$1 jar=$2; shift 2
  cargo build --quiet --release -p royaltykit-kotlin "$@"
  rm -rf "$out" && mkdir -p "$out/gen" "$out/classes/linux-x86-64" "$(dirname "$jar")"
  "$ROOT/target/debug/uniffi-bindgen" generate --library "$ROOT/target/release/libroyaltykit_kotlin.so" \
    --language kotlin --no-format --out-dir "$out/gen" >/dev/null
  "$KOTLINC" -nowarn -jvm-target 17 -cp /usr/share/java/jna.jar -d "$out/classes" \
    $(find "$out/gen" bindings-kotlin/kotlin -name '*.kt') 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
  test -f "$out/classes/dev/royaltykit/WebhookVerifier.class"
  cp "$ROOT/target/release/libroyaltykit_kotlin.so" "$out/classes/linux-x86-64/"
  strip "$out/classes/linux-x86-64/libroyaltykit_kotlin.so"
  rm -f "$jar"
  (cd "$out/classes" && jar cf "$jar" .)
}

jar_for "$ROOT/target/kotlin-hooks" "$ROOT/target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar" --features test-hooks
jar_for "$ROOT/target/kotlin" "$ROOT/dist/royaltykit-kotlin-$VERSION.jar"
ls -l "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" >&2
