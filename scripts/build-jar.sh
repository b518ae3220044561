#!/usr/bin/env bash
# Builds dist/royaltykit-kotlin-<version>.jar: uniffi-generated Kotlin compiled with kotlinc,
# plus the native library under JNA's resource path (linux-x86-64/), so no
# -Djna.library.path is needed. Needs JNA on the classpath at run time (Debian libjna-java).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
OUT=$ROOT/target/kotlin
KOTLINC=$ROOT/.build/node/node_modules/kotlin-compiler/bin/kotlinc
cargo build --quiet --release -p royaltykit-kotlin
cargo build --quiet -p uniffi-bindgen
rm -rf "$OUT" && mkdir -p "$OUT/gen" "$OUT/classes/linux-x86-64" "$ROOT/dist"
"$ROOT/target/debug/uniffi-bindgen" generate --library "$ROOT/target/release/libroyaltykit_kotlin.so" \
  --language kotlin --no-format --out-dir "$OUT/gen" >/dev/null
"$KOTLINC" -nowarn -jvm-target 17 -cp /usr/share/java/jna.jar -d "$OUT/classes" \
  $(find "$OUT/gen" bindings-kotlin/kotlin -name '*.kt') 2>&1 | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
test -f "$OUT/classes/dev/royaltykit/WebhookVerifier.class"
cp "$ROOT/target/release/libroyaltykit_kotlin.so" "$OUT/classes/linux-x86-64/"
strip "$OUT/classes/linux-x86-64/libroyaltykit_kotlin.so"
rm -f "$ROOT/dist/royaltykit-kotlin-$VERSION.jar"
(cd "$OUT/classes" && jar cf "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" .)
ls -l "$ROOT/dist/royaltykit-kotlin-$VERSION.jar" >&2
