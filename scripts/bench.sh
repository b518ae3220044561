#!/usr/bin/env bash
# make bench: every language's contenders, interleaved in one process per language, then
# bench/report.py writes bench/RESULTS.md. Needs the packaged artifacts (make package).
# BENCH_ROUNDS (default 15) and BENCH_BATCH_MS (default 20) trade time for stability.
source "$(dirname "$0")/common.sh"
B=$ROOT/.build/bench
OUT=$B/out
mkdir -p "$B/node" "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.txt
cat /proc/loadavg > "$OUT/loadavg-start.txt"

echo "== bench: Rust (criterion) ==" >&2
python3 bench/cases.py "$OUT/cases.json"
rm -rf "$ROOT/target/bench/criterion"
(cd bench/rust && CARGO_TARGET_DIR="$ROOT/target/bench" BENCH_CASES="$OUT/cases.json" \
  BENCH_OUT="$OUT/rust-dedup-memory.json" cargo bench --quiet --bench core -- --noplot >"$OUT/rust.txt" 2>&1) \
  || { tail -30 "$OUT/rust.txt" >&2; exit 1; }
command -v openssl >/dev/null || { apt-get install -y -qq openssl >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq openssl >/dev/null); }
for size in 200 1024 16384 262144; do
  openssl speed -seconds 2 -bytes "$size" -hmac sha256 2>/dev/null | awk -v s="$size" '/^hmac\(sha256\)/{print s, $2}' >> "$OUT/openssl.txt"
done
openssl version > "$OUT/openssl-version.txt"

echo "== bench: Node (packed npm package) ==" >&2
cp bench/node/package.json bench/node/package-lock.json "$B/node/"
(cd "$B/node" && npm ci --no-audit --no-fund --loglevel=error >/dev/null \
  && npm install --no-save --no-audit --no-fund --loglevel=error "$ROOT/dist/royaltykit-$VERSION.tgz" >/dev/null)
cp bench/node/bench.mjs "$B/node/"
python3 bench/cases.py "$OUT/cases.json"
(cd "$B/node" && ROYALTYKIT_HOOKS_NATIVE="$ROOT/target/npm-hooks/native/royaltykit_wasm.js" node --expose-gc bench.mjs "$OUT/cases.json" "$OUT/node.json")

echo "== bench: Python (built wheel) ==" >&2
[ -x "$B/venv/bin/python" ] || python3 -m venv "$B/venv"
"$B/venv/bin/pip" install --quiet --disable-pip-version-check -r bench/python/requirements.txt
"$B/venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)"
python3 bench/cases.py "$OUT/cases.json"
"$B/venv/bin/python" bench/python/bench.py "$OUT/cases.json" "$OUT/python.json"

echo "== bench: JVM (built jar) ==" >&2
KC=$ROOT/.build/node/node_modules/kotlin-compiler
CP="$ROOT/target/kotlin-hooks/royaltykit-kotlin-test-hooks.jar:/usr/share/java/jna.jar:/usr/share/java/gson.jar:$KC/lib/kotlin-stdlib.jar"
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$WORK/jvm" bench/jvm/Bench.kt bench/jvm/Interleave.kt 2>&1 \
  | grep -v '^warning: unable to find kotlin-stdlib' >&2 || true
python3 bench/cases.py "$OUT/cases.json"
java -cp "$CP:$WORK/jvm" BenchKt "$OUT/cases.json" "$OUT/jvm.json"

echo "== bench: receivers end to end (bench/e2e: autocannon against each framework integration) ==" >&2
python3 bench/e2e/run.py "$OUT" || echo "bench: some receiver combinations failed: see $OUT/receivers-logs (their rows are missing)" >&2

echo "== bench: clients, cost per call (bench/clients) ==" >&2
bash bench/clients/run.sh "$OUT"

echo "== bench: cold start ==" >&2
# Fresh processes; each prints the ns its import (and first verification) took.
cold() { for _ in 1 2 3 4 5 6 7; do "$@"; done | sort -n | sed -n 4p; }
secret=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["cases"][0]["royaltykit"]["secret"])' "$OUT/cases.json")
node_cold=$(cd "$B/node" && cold node -e 'const t=process.hrtime.bigint();const rk=require("royaltykit");new rk.WebhookVerifier("x");console.log(String(process.hrtime.bigint()-t))')
py_cold=$(cold "$B/venv/bin/python" -c 'import time;t=time.perf_counter_ns();import royaltykit;royaltykit.WebhookVerifier("x");print(time.perf_counter_ns()-t)')
# JVM: the first WebhookVerifier, and the first WebhookVerifier plus its first verification of
# the 200 B case (genuine; checked after the clock stops), each also with -Droyaltykit.jni=false
# (the JNA path, as on Android). The delivery is read before the clock starts.
python3 - "$OUT/cases.json" "$WORK/cold-delivery.txt" <<'PY_'
import json, sys
c = json.load(open(sys.argv[1]))["cases"][0]
lines = [c["royaltykit"]["secret"], str(c["timestamp"]), c["body"]]
for k, v in c["royaltykit"]["headers"].items():
    lines += [k, v]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY_
cat > "$WORK/Cold.kt" <<'KT'
import dev.royaltykit.WebhookVerifier
import dev.royaltykit.verify
fun main(args: Array<String>) {
    val lines = java.io.File(args[1]).readLines()
    val headers = HashMap<String, String>()
    for (i in 3 until lines.size - 1 step 2) headers[lines[i]] = lines[i + 1]
    val body = lines[2].toByteArray()
    val t = System.nanoTime()
    val verifier = WebhookVerifier(listOf(lines[0]))
    val verified = if (args[0] == "verify") verifier.verify(headers, body, lines[1].toLong()) else null
    val ns = System.nanoTime() - t
    check(args[0] != "verify" || verified?.deliveryId == headers["Service-Webhook-Id"]) { "not verified" }
    println(ns)
}
KT
"$KC/bin/kotlinc" -nowarn -jvm-target 17 -cp "$CP" -d "$WORK/cold" "$WORK/Cold.kt" 2>&1 | grep -v '^warning: unable' >&2 || true
jvm_cold=$(cold java -cp "$CP:$WORK/cold" ColdKt new "$WORK/cold-delivery.txt")
jvm_cold_verify=$(cold java -cp "$CP:$WORK/cold" ColdKt verify "$WORK/cold-delivery.txt")
jvm_cold_jna=$(cold java -Droyaltykit.jni=false -cp "$CP:$WORK/cold" ColdKt new "$WORK/cold-delivery.txt")
jvm_cold_verify_jna=$(cold java -Droyaltykit.jni=false -cp "$CP:$WORK/cold" ColdKt verify "$WORK/cold-delivery.txt")
so=$(mktemp -d); unzip -q -o "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)" -d "$so"
cat > "$OUT/sizes.json" <<JSON
{"cold_ns": {"node": $node_cold, "python": $py_cold, "jvm": $jvm_cold, "jvm_verify": $jvm_cold_verify,
  "jvm_jna": $jvm_cold_jna, "jvm_verify_jna": $jvm_cold_verify_jna},
 "bytes": {"wasm": $(stat -c %s "$ROOT/target/npm/royaltykit/native/royaltykit_wasm_bg.wasm"),
  "npm": $(stat -c %s "$ROOT/dist/royaltykit-$VERSION.tgz"),
  "wheel": $(stat -c %s "$(ls "$ROOT"/dist/royaltykit-"$VERSION"-cp310-abi3-manylinux2014_x86_64.*.whl)"),
  "python_so": $(stat -c %s "$(find "$so" -name '_native*.so' | head -1)"),
  "jar": $(stat -c %s "$ROOT/dist/royaltykit-kotlin-$VERSION.jar"),
  "kotlin_so": $(stat -c %s "$ROOT/target/kotlin/classes/linux-x86-64/libroyaltykit_kotlin.so")}}
JSON
rm -rf "$so"
# Where the .wasm's bytes go: code per crate, from the name section (before wasm-opt drops it).
"$ROOT/.build/tools/bin/wasm-bindgen" --target nodejs --no-typescript --out-dir "$WORK/wb" \
  "$ROOT/target/wasm32-unknown-unknown/release/royaltykit_wasm.wasm"
python3 bench/wasm_sizes.py "$WORK/wb/royaltykit_wasm_bg.wasm" > "$OUT/wasm-crates.json"
echo "== bench: npm package cold start per JavaScript runtime ==" >&2
bash scripts/coldstart-js.sh > "$OUT/js-coldstart.json"
cat /proc/loadavg > "$OUT/loadavg-end.txt"
python3 bench/report.py "$OUT" "$ROOT/target/bench/criterion" > bench/RESULTS.md
echo "wrote bench/RESULTS.md" >&2
