#!/usr/bin/env bash
# make release-artifacts: every wheel, the sdist and the multi-platform JVM jar into dist/,
# cross-built here with the registries' tools (ziglang + cargo-zigbuild from PyPI as linkers,
# maturin's --zig). What cannot run here (macOS, Windows) is checked structurally by
# scripts/test-platforms.sh and run for real by .github/workflows/release.yml (not run here).
#   wheels (abi3, CPython >= 3.10): manylinux2014 x86_64 and aarch64 (glibc >= 2.17),
#     musllinux_1_2 x86_64 and aarch64, macOS x86_64 (10.12+) and arm64 (11+), win_amd64 (mingw-w64)
#   sdist: royaltykit-<version>.tar.gz (pip builds it where Rust is installed)
#   jar: scripts/build-jar.sh's JAR_PLATFORMS=all in stages (five native libraries, Java 11 classes)
# Built once: the manylinux2014 x86_64 wheel and the jar's classes and Linux x86-64 library are
# the very ones make wheel and make jar built and the suites ran against (make release-artifacts
# depends on both); this script adds the other platforms.
source "$(dirname "$0")/common.sh"
export PATH=$ROOT/.build/venv/bin:$PATH
cd "$ROOT/bindings-python"
# Wheels keep the workspace's opt-level 3: "z" made them ~20% smaller (486 KB against 600 KB) and
# verification 2.2x slower (docs/platforms.md); unwinding stays on, so a panic is a Python
# exception, never an abort.
rm -f "$ROOT"/dist/royaltykit-"$VERSION".tar.gz
ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl >/dev/null \
  || { echo "build-release: the manylinux2014 x86_64 wheel comes from make wheel: run it first" >&2; exit 1; }
wheel() { # rust-target [compatibility]
  local start=$SECONDS
  maturin build --release --strip --zig --quiet --target "$1" ${2:+--compatibility "$2"} -o "$ROOT/dist" 2>&1 \
    | grep -v '^📦\|^🍹\|^🐍\|^🔗\|^🛠\|^💻\|Compiler family detection failed\|xcrun\|^ *|$\|the SDK is needed\|DEVELOPER_DIR\|^$' >&2 || true
  echo "  wheel $1 ${2:-} ($((SECONDS - start)) s)" >&2
}
windows_wheel() {
  # Windows: Debian's mingw-w64 links it (maturin's zig path writes a .def naming
  # PyInit_royaltykit._native, which lld then cannot find); the import library for python3.dll is
  # generated (pyo3), so the .pyd imports only python3.dll and system DLLs.
  local start=$SECONDS
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc maturin build --release --strip --quiet \
    --target x86_64-pc-windows-gnu -o "$ROOT/dist" 2>&1 | grep -v '^📦\|^🍹\|^🐍\|^🔗\|^⚠️\|python.exe' >&2 || true
  echo "  wheel x86_64-pc-windows-gnu ($((SECONDS - start)) s)" >&2
}
# Two lanes side by side (two_lanes, scripts/common.sh). A target's wheel and jar library are built
# one after the other in the same lane, with the same profile (stripped by the profile, as
# build-jar.sh does; maturin's --strip too), so the dependencies they share compile once per
# target.
export CARGO_PROFILE_RELEASE_STRIP=symbols
jar_native() { # rust-target
  local start=$SECONDS
  (cd "$ROOT" && JAR_PLATFORMS=native bash scripts/build-jar.sh "$1")
  echo "  jar library $1 ($((SECONDS - start)) s)" >&2
}
lane_a() {
  wheel aarch64-unknown-linux-gnu manylinux2014
  jar_native aarch64-unknown-linux-gnu.2.17
  wheel x86_64-unknown-linux-musl musllinux_1_2
  wheel aarch64-unknown-linux-musl musllinux_1_2
  maturin sdist -o "$ROOT/dist" 2>&1 | grep -v '^📦\|^🍹\|^🐍\|^🔗' >&2 || true
}
lane_b() {
  export CARGO_TARGET_DIR=$ROOT/target/lane-b
  wheel x86_64-apple-darwin
  jar_native x86_64-apple-darwin
  wheel aarch64-apple-darwin
  jar_native aarch64-apple-darwin
  windows_wheel
  jar_native x86_64-pc-windows-gnu
}
(cd "$ROOT" && JAR_PLATFORMS=prepare bash scripts/build-jar.sh)
two_lanes release-lane lane_a lane_b
(cd "$ROOT" && JAR_PLATFORMS=assemble bash scripts/build-jar.sh)
cd "$ROOT"
ls -l dist/ >&2
