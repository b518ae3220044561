#!/usr/bin/env bash
# make aar: dist/royaltykit-android-<version>.aar and its POM (dev.royaltykit:royaltykit-android).
#   jni/<abi>/libroyaltykit_kotlin.so for arm64-v8a, armeabi-v7a, x86_64 and x86, minSdk 24:
#     with ANDROID_NDK_HOME set, linked by the NDK's clang (the official way); otherwise linked
#     here by zig (PyPI ziglang) against stub libc/libm/libdl/liblog holding exactly the symbols
#     bionic exports at API <= 24 (scripts/android.py, from ../shared/android/bionic-exports.tsv),
#     with --no-undefined, so a symbol newer than minSdk fails the link. Either way the libraries
#     are checked by scripts/test-android.sh (make test).
#   classes.jar: the uniffi Kotlin of the JVM jar (scripts/build-jar.sh; Java 11 class files).
#   AndroidManifest.xml (minSdk 24), proguard.txt (consumer rules for JNA and the generated
#   classes), R.txt (no resources), aar-metadata.properties.
source "$(dirname "$0")/common.sh"
export PATH=$ROOT/.build/venv/bin:$PATH
A=$ROOT/.build/android
OUT=$ROOT/target/aar
MIN_SDK=24
ABIS="arm64-v8a:aarch64-linux-android armeabi-v7a:armv7-linux-androideabi x86_64:x86_64-linux-android x86:i686-linux-android"

# Stubs and linker wrappers, rebuilt when the exports list or the script changes (the stubs also
# serve scripts/test-android.sh's own tests of the check, with or without the NDK).
stamp=$(cat "$ROOT/../shared/android/bionic-exports.tsv" scripts/android.py | sha256sum | cut -c1-16)
if [ "$(cat "$A/stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$A" && mkdir -p "$A/bin"
  python3 scripts/android.py stubs "$A/stubs" >&2
  for pair in $ABIS; do
    printf '#!/bin/sh\nexec python3 "%s/scripts/android.py" link %s "$@"\n' "$ROOT" "${pair%%:*}" > "$A/bin/${pair%%:*}-clang"
    chmod +x "$A/bin/${pair%%:*}-clang"
  done
  echo "$stamp" > "$A/stamp"
fi
export ROYALTYKIT_ANDROID_STUBS=$A/stubs
if [ -n "${ANDROID_NDK_HOME:-}" ]; then
  NDK_BIN=$(echo "$ANDROID_NDK_HOME"/toolchains/llvm/prebuilt/*/bin)
  echo "make aar: linking with the NDK at $ANDROID_NDK_HOME" >&2
fi

rm -rf "$OUT" && mkdir -p "$OUT/aar/jni" "$OUT/classes"
# abi ABI:RUST_TARGET: one library into the AAR's jni/<abi>/, built in $CARGO_TARGET_DIR.
abi() {
  local abi=${1%%:*} target=${1#*:} var clang
  var=CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$target")_LINKER
  if [ -n "${NDK_BIN:-}" ]; then
    clang=$NDK_BIN/${target/armv7-linux-androideabi/armv7a-linux-androideabi}$MIN_SDK-clang
    export "$var=$clang"
    # NDKs before r28 align LOAD segments to 4 KB unless told (16 KB-page devices need 16 KB)
    export "CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$target")_RUSTFLAGS=-C link-arg=-Wl,-z,max-page-size=16384"
  else
    export "$var=$A/bin/$abi-clang"
  fi
  local start=$SECONDS
  # Size over speed on phones (opt-level z: 10% smaller on arm64); stripped, exports kept.
  CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo build --quiet --release -p royaltykit-kotlin --target "$target"
  mkdir -p "$OUT/aar/jni/$abi"
  cp "$CARGO_TARGET_DIR/$target/release/libroyaltykit_kotlin.so" "$OUT/aar/jni/$abi/"
  echo "  $abi ($target): $(stat -c %s "$OUT/aar/jni/$abi/libroyaltykit_kotlin.so") B in $((SECONDS - start)) s" >&2
}
# Two lanes of two ABIs (two_lanes, scripts/common.sh). The second lane's target directory is
# make release-artifacts' second lane's, so the build tools both compile for the host
# (proc-macros, build scripts) are compiled once.
lane() { # target-dir abi...
  export CARGO_TARGET_DIR=$1; shift
  for pair in "$@"; do abi "$pair"; done
}
read -ra abis <<<"$ABIS"
lane_a() { lane "$ROOT/target" "${abis[@]:0:2}"; }
lane_b() { lane "$ROOT/target/lane-b" "${abis[@]:2}"; }
two_lanes aar-lane lane_a lane_b

# classes.jar: the JVM jar's classes (the same generated Kotlin), without its desktop libraries.
[ -d target/kotlin/classes/dev ] || { echo "make aar: run make jar first (the Kotlin classes)" >&2; exit 1; }
cp -r target/kotlin/classes/dev "$OUT/classes/"
# java.net.http is not on Android: its transport stays out (OkHttp is the Android one).
rm -f "$OUT"/classes/dev/royaltykit/client/JavaHttpTransport*.class
(cd "$OUT/classes" && jar cf "$OUT/aar/classes.jar" .)
cat > "$OUT/aar/AndroidManifest.xml" <<XML
<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="dev.royaltykit">
    <uses-sdk android:minSdkVersion="$MIN_SDK" />
</manifest>
XML
cp bindings-kotlin/android/proguard.txt "$OUT/aar/proguard.txt"
: > "$OUT/aar/R.txt"
mkdir -p "$OUT/aar/META-INF/com/android/build/gradle"
printf 'aarFormatVersion=1.0\naarMetadataVersion=1.0\nminCompileSdk=1\nminAndroidGradlePluginVersion=1.0.0\n' \
  > "$OUT/aar/META-INF/com/android/build/gradle/aar-metadata.properties"
mkdir -p dist
rm -f "dist/royaltykit-android-$VERSION.aar"
(cd "$OUT/aar" && jar cfM "$ROOT/dist/royaltykit-android-$VERSION.aar" AndroidManifest.xml classes.jar R.txt proguard.txt jni META-INF)
sed "s/@VERSION@/$VERSION/" bindings-kotlin/android/pom.xml > "dist/royaltykit-android-$VERSION.pom"
ls -l "dist/royaltykit-android-$VERSION.aar" >&2
