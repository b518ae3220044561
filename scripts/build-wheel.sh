#!/usr/bin/env bash
# make wheel: dist/royaltykit-<version>-cp310-abi3-manylinux2014_x86_64.whl (linked by zig against
# glibc 2.17), and target/wheel-hooks/: the same with the `test-hooks` feature (a deliberate
# panic), for the panic test only.
source "$(dirname "$0")/common.sh"
export PATH=$ROOT/.build/venv/bin:$PATH
rm -f "$ROOT"/dist/royaltykit-"$VERSION"-*.whl
rm -rf "$ROOT/target/wheel-hooks"
quiet() { grep -v '^📦\|^🍹\|^🐍\|^🔗\|^🛠' || true; }
cd "$ROOT/bindings-python"
# Stripped by the profile as well as by maturin's --strip: the jar's libraries are (build-jar.sh),
# and a profile setting is part of every crate's fingerprint, so with the same profile the jar's
# Linux x86-64 library reuses the dependencies compiled here.
export CARGO_PROFILE_RELEASE_STRIP=symbols
# Both for the same target with the same linker, so the hooks build reuses every dependency the
# shipped one compiled (measured: a separate quick profile would compile them all again, slower).
maturin build --release --strip --quiet --zig --compatibility manylinux2014 --target x86_64-unknown-linux-gnu \
  -o "$ROOT/dist" 2>&1 | quiet
maturin build --release --strip --quiet --zig --compatibility manylinux2014 --target x86_64-unknown-linux-gnu \
  --features test-hooks -o "$ROOT/target/wheel-hooks" 2>&1 | quiet
# maturin deflates at a fast level: the wheel is written again at level 9 (the same files, order,
# dates and modes; RECORD's hashes are of the contents, so they still hold). 25 KB smaller.
python3 - "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-*.whl)" <<'PY'
import os, sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as src, zipfile.ZipFile(path + ".tmp", "w") as dst:
    for info in src.infolist():
        info.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(info, src.read(info), compresslevel=9)
os.replace(path + ".tmp", path)
PY
ls -l "$ROOT"/dist/royaltykit-"$VERSION"-*.whl >&2
