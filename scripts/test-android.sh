#!/usr/bin/env bash
# Checks of dist/royaltykit-android-<version>.aar (part of make test). Android cannot run here,
# so the AAR is checked structurally; .github/workflows/release.yml runs the Kotlin tests on an
# emulator (not run here).
#  - the AAR's entries: AndroidManifest.xml (minSdk 24), classes.jar (Java 11 class files, the
#    uniffi bindings), proguard.txt, R.txt, jni/<abi>/libroyaltykit_kotlin.so for four ABIs
#  - each library (scripts/android.py check): ELF class and machine; DT_NEEDED within libc.so,
#    libm.so, libdl.so, liblog.so; every undefined dynamic symbol exported by those on that ABI
#    at API <= 24 (../shared/android/bionic-exports.tsv); no GLIBC or musl symbol versions; LOAD
#    segments aligned to 16 KB; every native symbol classes.jar binds exported; its size
#  - the POM: dev.royaltykit:royaltykit-android, depending on JNA's AAR
source "$(dirname "$0")/common.sh"
AAR=$ROOT/dist/royaltykit-android-$VERSION.aar
POM=$ROOT/dist/royaltykit-android-$VERSION.pom
fail() { echo "test-android: $*" >&2; exit 1; }
[ -f "$AAR" ] || fail "$AAR is missing (make aar)"
echo "== Android AAR: $(basename "$AAR") ($(stat -c %s "$AAR") B) =="
cd "$WORK" && mkdir aar && cd aar && unzip -q "$AAR"
for f in AndroidManifest.xml classes.jar proguard.txt R.txt; do [ -f "$f" ] || fail "no $f in the AAR"; done
grep -q 'android:minSdkVersion="24"' AndroidManifest.xml || fail "the manifest does not say minSdk 24"
grep -q 'com.sun.jna' proguard.txt && grep -q 'dev.royaltykit' proguard.txt || fail "proguard.txt does not keep JNA and dev.royaltykit"
python3 - classes.jar "$WORK/calls.txt" <<'PY'
import re, struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
classes = [n for n in z.namelist() if n.endswith(".class")]
majors = {struct.unpack(">H", z.read(n)[6:8])[0] for n in classes}
if not classes or max(majors) > 55:
    sys.exit(f"classes.jar: major versions {sorted(majors)}; Java 11 needs <= 55")
for needed in ("dev/royaltykit/WebhookVerifier.class", "dev/royaltykit/types/VerifiedWebhook.class"):
    if needed not in classes:
        sys.exit(f"classes.jar lacks {needed}")
if any(not n.startswith(("dev/", "META-INF/")) for n in z.namelist() if not n.endswith("/")):
    sys.exit("classes.jar carries files outside dev/ (native libraries belong in jni/)")
# The native symbols the classes bind by name (JNA): each library must export every one.
calls = {m.decode() for n in classes for m in re.findall(rb"(?:uniffi|ffi)_royaltykit_kotlin_[A-Za-z0-9_]+", z.read(n))}
if not any("_fn_" in c for c in calls):
    sys.exit("classes.jar binds no uniffi function")
open(sys.argv[2], "w").write("\n".join(sorted(calls)))
print(f"  classes.jar: {len(classes)} classes, major {sorted(majors)}, {len(calls)} native symbols bound")
PY
for abi in arm64-v8a armeabi-v7a x86_64 x86; do
  [ -f "jni/$abi/libroyaltykit_kotlin.so" ] || fail "no jni/$abi/libroyaltykit_kotlin.so"
  python3 "$ROOT/scripts/android.py" check --calls "$WORK/calls.txt" "$abi" "jni/$abi/libroyaltykit_kotlin.so"
done
extra=$(find jni -type f | grep -v '/libroyaltykit_kotlin.so$' || true)
[ -z "$extra" ] || fail "unexpected files in jni/: $extra"
grep -q '<artifactId>royaltykit-android</artifactId>' "$POM" && grep -q '<type>aar</type>' "$POM" \
  || fail "the POM does not name royaltykit-android with JNA's AAR"
echo "  $(basename "$POM"): dev.royaltykit:royaltykit-android, net.java.dev.jna:jna:5.13.0@aar"

# The check must refuse what it exists to catch: tiny libraries built to break one rule each.
echo "== the check refuses a library that breaks a rule =="
cd "$WORK" && mkdir bad && cd bad
export PATH=$ROOT/.build/venv/bin:$PATH
S=$ROOT/.build/android/stubs/arm64-v8a
printf 'void uniffi_royaltykit_kotlin_fn_x(void) {}\n' > ok.c
printf 'extern int *__errno_location(void);\nint uniffi_royaltykit_kotlin_fn_x(void) { return *__errno_location(); }\n' > musl.c
printf 'extern long getrandom(void *, unsigned long, unsigned);\nlong uniffi_royaltykit_kotlin_fn_x(void) { char b[4]; return getrandom(b, 4, 0); }\n' > newer.c
printf 'int nothing(void) { return 0; }\n' > noentry.c
so() { python3 -m ziglang cc -target aarch64-linux-musl -shared -nostdlib -Wl,--allow-shlib-undefined "$@"; }
so -Wl,-z,max-page-size=16384 -o musl.so musl.c "$S/libc.so"
so -Wl,-z,max-page-size=16384 -o newer.so newer.c "$S/libc.so"
so -Wl,-z,max-page-size=4096 -o pages.so ok.c "$S/libc.so"
so -Wl,-z,max-page-size=16384 -o noentry.so noentry.c "$S/libc.so"
so -Wl,-z,max-page-size=16384 -o unbound.so ok.c "$S/libc.so"
printf 'uniffi_royaltykit_kotlin_fn_x\nuniffi_royaltykit_kotlin_fn_y\n' > calls.txt
printf 'void f(void) {}\n' > other.c && so -Wl,-soname,libc++_shared.so -o libc++_shared.so other.c
so -Wl,-z,max-page-size=16384 -o needed.so ok.c "$S/libc.so" -Wl,--no-as-needed libc++_shared.so
refuses() { # library, expected text, options of the check
  local out
  if out=$(python3 "$ROOT/scripts/android.py" check "${@:3}" arm64-v8a "$1" 2>&1); then fail "the check accepted $1"; fi
  grep -q "$2" <<<"$out" || fail "the check refused $1 for another reason: $out"
  echo "  refused $1: $(grep -o "$2[^;]*" <<<"$out" | head -1)"
}
printf '#include <string.h>\nvoid uniffi_royaltykit_kotlin_fn_x(char *a, const char *b) { strcpy(a, b); }\n' > glibc.c
python3 -m ziglang cc -target aarch64-linux-gnu.2.17 -shared -Wl,-z,max-page-size=16384 -o glibc.so glibc.c
refuses glibc.so "symbol versions \['GLIBC_2.17'\]"
refuses musl.so "undefined symbol __errno_location (not exported by bionic"
refuses newer.so "undefined symbol getrandom (libc at API 28"
refuses pages.so "LOAD alignment"
refuses noentry.so "no uniffi entry point"
refuses unbound.so "1 symbols the Kotlin classes call are not exported" --calls calls.txt
python3 "$ROOT/scripts/android.py" check arm64-v8a unbound.so >/dev/null || fail "the check refused unbound.so without --calls"
refuses needed.so "DT_NEEDED \['libc++_shared.so'\]"
echo "test-android: all checks passed"
