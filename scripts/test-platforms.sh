#!/usr/bin/env bash
# make test-platforms: what can run here runs, what cannot is checked structurally.
#  - the Python vectors, transcripts and a smoke test of each integration against the manylinux2014
#    aarch64 wheel, in an arm64 Debian root (debootstrap's first stage, its packages unpacked, run
#    through qemu-user-static; made once per machine, scripts/cache.sh)
#  - auditwheel: the tag it computes for each Linux wheel equals the file's tag
#  - pip resolves each wheel for its platform tag (--dry-run --only-binary=:all: --platform)
#  - no GLIBC symbol version newer than 2.17 in the manylinux2014 and the jar's Linux libraries
#  - Mach-O and PE headers: architecture, and the exported entry point (PyInit__native, uniffi)
#  - the jar: five native libraries, class files for Java 11 (major <= 55), and byte for byte the
#    classes and Linux library the Kotlin suite ran against (make test-kotlin)
#  - the sdist builds and imports with pip where Rust is installed
source "$(dirname "$0")/common.sh"
PY=$ROOT/.build/venv/bin
D=$ROOT/dist
V=$VERSION
fail() { echo "test-platforms: $*" >&2; exit 1; }
whl() { ls "$D"/royaltykit-"$V"-cp310-abi3-"$1"*.whl; }

echo "== wheels: auditwheel and pip platform resolution =="
for w in "$D"/royaltykit-"$V"-*.whl; do
  name=$(basename "$w")
  tags=${name#royaltykit-$V-cp310-abi3-}; tags=${tags%.whl}
  case $tags in
    manylinux*)
      shown=$("$PY/auditwheel" show "$w" 2>&1)
      # auditwheel names the most compatible tag; the file carries it (first, or as the PEP 600 alias)
      tag=$(tr '\n' ' ' <<<"$shown" | sed -n 's/.*consistent with the following platform tag: *"\([^"]*\)".*/\1/p')
      [ -n "$tag" ] || { echo "$shown" >&2; fail "auditwheel gave no tag for $name"; }
      [[ ".$tags." == *".$tag."* ]] || fail "$name: auditwheel computes $tag"
      ;;
  esac
  first=${tags%%.*}
  out=$("$PY/pip" install --dry-run --quiet --report - --no-index --find-links "$D" --only-binary=:all: \
    --platform "$first" --python-version 3.10 --implementation cp --target "$WORK/pip-$first" "royaltykit==$V" 2>&1) \
    || { echo "$out" >&2; fail "pip does not resolve $name for $first"; }
  grep -q "$name" <<<"$out" || fail "pip resolved another file than $name for $first"
  printf '  %-80s %7d B  auditwheel %s, pip %s\n' "$name" "$(stat -c %s "$w")" "${tag:-n/a}" "$first"
  tag=
done

echo "== Linux libraries: glibc symbol versions (manylinux2014 and the jar: at most 2.17) =="
mkdir -p "$WORK/x"
newest() { readelf --version-info -W "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1; }
for arch in x86_64 aarch64; do
  (cd "$WORK/x" && rm -rf w && "$PY/python" -m zipfile -e "$(whl "manylinux2014_$arch")" w)
  so=$WORK/x/w/royaltykit/_native.abi3.so
  python3 scripts/check_binaries.py "$so" elf "$arch" PyInit__native
  n=$(newest "$so"); printf '  manylinux2014 %s: newest GLIBC_%s\n' "$arch" "$n"
  [ "$(printf '%s\n2.17\n' "$n" | sort -V | tail -1)" = 2.17 ] || fail "manylinux2014 $arch needs GLIBC_$n"
done
(cd "$WORK/x" && rm -rf jar && mkdir jar && cd jar && unzip -q "$D/royaltykit-kotlin-$V.jar")
J=$WORK/x/jar
for pair in linux-x86-64:x86_64 linux-aarch64:aarch64; do
  so=$J/${pair%%:*}/libroyaltykit_kotlin.so
  python3 scripts/check_binaries.py "$so" elf "${pair##*:}" 'uniffi_royaltykit_kotlin_fn_*'
  n=$(newest "$so"); printf '  jar %s: newest GLIBC_%s\n' "${pair%%:*}" "$n"
  [ "$(printf '%s\n2.17\n' "$n" | sort -V | tail -1)" = 2.17 ] || fail "jar ${pair%%:*} needs GLIBC_$n"
done
for w in musllinux_1_2_x86_64:x86_64 musllinux_1_2_aarch64:aarch64; do
  (cd "$WORK/x" && rm -rf m && "$PY/python" -m zipfile -e "$(whl "${w%%:*}")" m)
  python3 scripts/check_binaries.py "$WORK/x/m/royaltykit/_native.abi3.so" elf "${w##*:}" PyInit__native
  # auditwheel cannot analyse musllinux wheels on this glibc host (it parses glibc's libc.so
  # linker script as ELF and crashes); the musl ABI is checked here instead: no glibc symbol
  # versions, and libc.so (musl's soname) the only library needed.
  ! readelf --version-info -W "$WORK/x/m/royaltykit/_native.abi3.so" | grep -q GLIBC_ || fail "${w%%:*} wheel refers to glibc"
  needed=$(readelf -d "$WORK/x/m/royaltykit/_native.abi3.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  [ "$needed" = "libc.so " ] || fail "${w%%:*} wheel needs: $needed"
  echo "  ${w%%:*}: no glibc symbols, needs only libc.so (musl)"
done

echo "== macOS and Windows: headers and entry points (cannot run here) =="
for w in macosx_10_12_x86_64:x86_64 macosx_11_0_arm64:arm64; do
  (cd "$WORK/x" && rm -rf mac && "$PY/python" -m zipfile -e "$(whl "${w%%:*}")" mac)
  python3 scripts/check_binaries.py "$WORK/x/mac/royaltykit/_native.abi3.so" macho "${w##*:}" PyInit__native
done
(cd "$WORK/x" && rm -rf win && "$PY/python" -m zipfile -e "$(whl win_amd64)" win)
python3 scripts/check_binaries.py "$WORK/x/win/royaltykit/_native.pyd" pe x86_64 PyInit__native
# abi3 on Windows: python3.dll, never python3X.dll, and no mingw runtime DLL a user would lack.
dlls=$(x86_64-w64-mingw32-objdump -p "$WORK/x/win/royaltykit/_native.pyd" | sed -n 's/.*DLL Name: //p' | sort | tr '\n' ' ')
for dll in $dlls; do
  case ${dll,,} in
    python3.dll|kernel32.dll|msvcrt.dll|ntdll.dll|bcryptprimitives.dll|api-ms-win-*) ;;
    *) fail "win_amd64 .pyd imports $dll" ;;
  esac
done
echo "  win_amd64 imports: $dlls"
python3 scripts/check_binaries.py "$J/darwin-x86-64/libroyaltykit_kotlin.dylib" macho x86_64 'uniffi_royaltykit_kotlin_fn_*'
python3 scripts/check_binaries.py "$J/darwin-aarch64/libroyaltykit_kotlin.dylib" macho arm64 'uniffi_royaltykit_kotlin_fn_*'
python3 scripts/check_binaries.py "$J/win32-x86-64/royaltykit_kotlin.dll" pe x86_64 'uniffi_royaltykit_kotlin_fn_*'
# Every jar library: the JNI entry points (NativeLoader.kt, src/jni.rs) and the
# "<sha256> <size>" record NativeLoader keys its per-user cache by, matching the library.
for lib in linux-x86-64/libroyaltykit_kotlin.so:elf:x86_64 linux-aarch64/libroyaltykit_kotlin.so:elf:aarch64 \
    darwin-x86-64/libroyaltykit_kotlin.dylib:macho:x86_64 darwin-aarch64/libroyaltykit_kotlin.dylib:macho:arm64 \
    win32-x86-64/royaltykit_kotlin.dll:pe:x86_64; do
  IFS=: read -r f fmt arch <<<"$lib"
  for entry in verifyPacked newVerifier freeVerifier receiptOpen receiptReport receiptState receiptFree windowFree \
      dedupCall release callOpen callStep; do
    python3 scripts/check_binaries.py "$J/$f" "$fmt" "$arch" "Java_dev_royaltykit_NativeFast_$entry"
  done
  [ "$(cat "$J/$f.sha256")" = "$(sha256sum < "$J/$f" | cut -d' ' -f1) $(stat -c %s "$J/$f")" ] || fail "$f.sha256 does not match $f"
done
echo "  jar libraries: JNI entry points exported, cache records match"

echo "== jar: class files for Java 11, POM, sources =="
python3 - "$D/royaltykit-kotlin-$V.jar" <<'PY'
import struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
majors = {struct.unpack(">H", z.read(n)[6:8])[0] for n in z.namelist() if n.endswith(".class")}
if not majors or max(majors) > 55:
    sys.exit(f"class file major versions {sorted(majors)}: Java 11 needs <= 55")
print(f"  {sum(n.endswith('.class') for n in z.namelist())} classes, major {sorted(majors)}")
PY
grep -q '<artifactId>jna</artifactId>' "$D/royaltykit-jvm-$V.pom" || fail "POM without JNA"
unzip -Z1 "$D/royaltykit-jvm-$V-sources.jar" > "$WORK/sources.txt"
grep -qx 'dev/royaltykit/RoyaltyKit.kt' "$WORK/sources.txt" && grep -qx 'dev/royaltykit/royaltykit_kotlin.kt' "$WORK/sources.txt" \
  || fail "sources jar without the Kotlin sources"
echo "  royaltykit-jvm-$V.pom (dev.royaltykit:royaltykit-jvm, JNA), sources jar"

echo "== aarch64 wheel: the Python suite in an arm64 Debian root (qemu-user-static) =="
R=$ROOT/.build/arm64-root
if [ ! -x /proc/sys/fs/binfmt_misc/register ] && [ ! -f /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
[ -f /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || fail "qemu-aarch64 binfmt is not registered"
# The root is made once per machine (scripts/cache.sh) and copied into .build/ for a fresh clone.
# debootstrap's first stage downloads Python's packages and unpacks the essential ones (about 30 s);
# its second stage would run every maintainer script under qemu (about 6 minutes), which Python
# does not need: every downloaded package is unpacked instead (dpkg-deb -x, a few seconds).
source "$ROOT/scripts/cache.sh"
root_key=arm64-root-$(printf 'bookworm minbase python3,libsqlite3-0 unpacked v2' | sha256sum | cut -c1-16)
if [ ! -x "$R/usr/bin/python3" ] && ! { from_cache "$root_key" "$R" && [ -x "$R/usr/bin/python3" ]; }; then
  start=$SECONDS
  rm -rf "$R"
  debootstrap --foreign --arch arm64 --variant=minbase --include=python3,libsqlite3-0 bookworm "$R" \
    http://deb.debian.org/debian > "$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; }
  for deb in "$R"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$R"; done
  rm -f "$R"/var/cache/apt/archives/*.deb
  to_cache "$root_key" "$R"
  echo "  arm64 root made in $((SECONDS - start)) s (cached in .build/arm64-root and for this machine)"
fi
rm -rf "$R/tmp/t" && mkdir -p "$R/tmp/t/w"
"$PY/pip" download --quiet --only-binary=:all: --platform manylinux2014_aarch64 --python-version 3.11 \
  --implementation cp -d "$R/tmp/t/w" $(grep -E '^(pytest|httpx|requests)==' tools/requirements-test.txt)
cp "$(whl manylinux2014_aarch64)" "$R/tmp/t/w/"
cp -r bindings-python/tests "$R/tmp/t/tests" && cp -r tests/vectors "$R/tmp/t/vectors" && cp -r README.md docs "$R/tmp/t/"
mkdir -p "$R/tmp/t/tests/fakeapi" && cp tests/fakeapi/server.py "$R/tmp/t/tests/fakeapi/"  # the clients' fake API
# pip installs the wheel and the test tools for the arm64 interpreter (here, for its platform: pip
# under qemu would take a minute); the interpreter finds them on PYTHONPATH.
"$PY/pip" install --quiet --disable-pip-version-check --no-index --find-links "$R/tmp/t/w" --only-binary=:all: \
  --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp --target "$R/tmp/t/site-packages" \
  royaltykit pytest httpx requests
ARM=(chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin PYTHONPATH=/tmp/t/site-packages ROYALTYKIT_VECTORS=/tmp/t/vectors ROYALTYKIT_ROOT=/tmp/t /usr/bin/python3)
"${ARM[@]}" -c 'import platform, royaltykit; assert platform.machine() == "aarch64", platform.machine(); print("  running on", platform.machine(), platform.libc_ver(), "from", royaltykit.__file__)'
# What proves the arm64 wheel works (make test-python runs the whole suite on x86_64): every
# shared vector and transcript, and a smoke test of each integration — the clients over httpx and
# requests (the whole ETL job against the fake API, every fault on the way), the transactional
# store on SQLite (a receiver killed mid-transaction), the in-memory receiver, and the README's
# examples.
"${ARM[@]}" -m pytest -q -p no:cacheprovider /tmp/t/tests/test_vectors.py /tmp/t/tests/test_machines.py \
  /tmp/t/tests/test_client.py /tmp/t/tests/test_stores.py /tmp/t/tests/test_loops.py /tmp/t/tests/test_readme.py \
  -k "test_vector or test_transcript or (test_the_etl_job and not async) or (sqlite and killed_before and after_mark) or receiver_processes or readme" \
  | tail -1

echo "== the five-platform jar carries the very classes the Kotlin suite ran against =="
# make test-kotlin ran the suite against the jar make jar built from target/kotlin/classes; the
# five-platform jar must hold every one of those files byte for byte (classes, the Linux x86-64
# library and its cache record), and nothing else but the other four platforms' libraries.
python3 - "$D/royaltykit-kotlin-$V.jar" "$ROOT/target/kotlin/classes" <<'PY'
import os, sys, zipfile
jar, tested = zipfile.ZipFile(sys.argv[1]), sys.argv[2]
names = {n for n in jar.namelist() if not n.endswith("/") and n != "META-INF/MANIFEST.MF"}  # the manifest is jar's own
want = {os.path.relpath(os.path.join(d, f), tested) for d, _, fs in os.walk(tested) for f in fs}
missing = sorted(want - names)
differ = sorted(n for n in want & names if jar.read(n) != open(os.path.join(tested, n), "rb").read())
extra = sorted(n for n in names - want if n.split("/")[0] not in ("linux-aarch64", "darwin-x86-64", "darwin-aarch64", "win32-x86-64"))
if missing or differ or extra:
    sys.exit(f"test-platforms: the five-platform jar differs from the tested one: missing {missing[:5]}, different {differ[:5]}, extra {extra[:5]}")
print(f"  {len(want)} files identical to the tested jar's ({sum(n.endswith('.class') for n in want)} classes, the linux-x86-64 library), plus {len(names - want)} other-platform files")
PY

echo "== sdist: pip builds it where Rust is installed =="
python3 -m venv "$WORK/sdist-venv"
start=$SECONDS
"$WORK/sdist-venv/bin/pip" install --quiet --disable-pip-version-check "$D/royaltykit-$V.tar.gz"
"$WORK/sdist-venv/bin/python" -c '
import royaltykit as rk
h = rk.sign_webhook("whsec_s", b"{\"event\":\"x\",\"resource\":{\"type\":\"t\",\"reference\":\"r\",\"url\":\"/u\"},\"occurred_at\":\"2026-11-22T00:00:00Z\"}", timestamp=1000, delivery_id="d1")
print("  sdist installed and verified", rk.verify_webhook(h, b"{\"event\":\"x\",\"resource\":{\"type\":\"t\",\"reference\":\"r\",\"url\":\"/u\"},\"occurred_at\":\"2026-11-22T00:00:00Z\"}", "whsec_s", now=1000).delivery_id)'
echo "  (built from source in $((SECONDS - start)) s)"
echo "test-platforms: all checks passed"
