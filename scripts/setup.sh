#!/usr/bin/env bash
# Idempotent set-up for `make test` / `make demo` / `make package` on a fresh machine of
# this project's kind. Everything lands in ignored folders inside the repo (.build/, target/)
# except the rustup targets and the Debian jars, which have no repo-local form.
# A second run only checks and returns in a few seconds. What is slow to make (wasm-bindgen-cli
# compiled, better-sqlite3 compiled, the npm tools, the Maven jars) is also kept in a cache of
# this machine's earlier set-ups (scripts/cache.sh, keyed by what pins each), so a fresh clone
# on a machine that ran make setup before copies it instead of making it again.
# The parts are independent (network-bound downloads beside two compilations), so they run at
# the same time, each logging to .build/setup-logs/<part>.log; a part that fails prints its log.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/.build
mkdir -p "$BUILD"

log() { printf '[setup] %s\n' "$*" >&2; }
source "$ROOT/scripts/cache.sh"

# 1. Rust targets: wasm for the npm package, the release artifacts' platforms (linked by zig:
#    make release-artifacts) and Android's four ABIs (make aar).
rust_targets() {
installed_targets=$(rustup target list --installed)
for t in wasm32-unknown-unknown aarch64-unknown-linux-gnu x86_64-unknown-linux-musl \
         aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu \
         aarch64-linux-android armv7-linux-androideabi x86_64-linux-android i686-linux-android; do
  if ! grep -qx "$t" <<<"$installed_targets"; then
    log "rustup target add $t"
    rustup target add "$t"
  fi
done
}

# 2. Debian packages, then (6.) the Maven jars, whose mvn may come from them.
debian() {
# Debian jars for the Kotlin suite: JNA (runtime), JUnit 4 + hamcrest (tests), Gson (test-only vector reader).
need_apt=()
[ -f /usr/share/java/jna.jar ] || need_apt+=(libjna-java)
[ -f /usr/share/java/junit4.jar ] || need_apt+=(junit4)
[ -f /usr/share/java/hamcrest-core.jar ] || [ -f /usr/share/java/hamcrest.jar ] || need_apt+=(libhamcrest-java)
[ -f /usr/share/java/gson.jar ] || need_apt+=(libgoogle-gson-java)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)  # the npm package's browser test (headless)
command -v redis-server >/dev/null || need_apt+=(redis-server)  # the receivers' shared dedup store (make test-receivers)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)  # the transactional dedup store's tests
# the arm64 Debian root for the aarch64 wheel's suite (make test-platforms)
[ -x /usr/bin/qemu-aarch64-static ] || need_apt+=(qemu-user-static binfmt-support)
command -v debootstrap >/dev/null || need_apt+=(debootstrap)
# the win_amd64 wheel's linker (make release-artifacts)
command -v x86_64-w64-mingw32-gcc >/dev/null || need_apt+=(gcc-mingw-w64-x86-64-win32 binutils-mingw-w64-x86-64)
command -v mvn >/dev/null || need_apt+=(maven)  # the JVM test libraries from Maven Central (step 6)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  log "apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
}

# 3. wasm-bindgen-cli at exactly the version of the wasm-bindgen crate in Cargo.lock.
wasm_bindgen() {
wb_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
if [ -z "$wb_version" ]; then echo "setup: wasm-bindgen not found in Cargo.lock" >&2; exit 1; fi
if ! "$BUILD/tools/bin/wasm-bindgen" --version 2>/dev/null | grep -q " $wb_version\$" \
   && ! { from_cache "wasm-bindgen-$wb_version" "$BUILD/tools" \
          && "$BUILD/tools/bin/wasm-bindgen" --version 2>/dev/null | grep -q " $wb_version\$"; }; then
  log "cargo install wasm-bindgen-cli $wb_version (about 150 s cold)"
  # --locked fails here: the CLI's own lockfile pins a crate version the registry lacks.
  cargo install wasm-bindgen-cli --version "=$wb_version" --root "$BUILD/tools" --quiet
  to_cache "wasm-bindgen-$wb_version" "$BUILD/tools"
fi
}

# 4. npm tools: binaryen (wasm-opt), kotlin-compiler (kotlinc + kotlin-test jars), esbuild, attw and
#    the Bun, Deno and workerd runtimes, pinned by tools/package-lock.json.
node_tools() {
node_tools_ready() {
  [ -x "$BUILD/node/node_modules/.bin/wasm-opt" ] && [ -f "$BUILD/node/node_modules/kotlin-compiler/bin/kotlinc" ] \
    && [ -x "$BUILD/node/node_modules/.bin/workerd" ] && [ -x "$BUILD/node/node_modules/.bin/deno" ] \
    && cmp -s tools/package.json "$BUILD/node/package.json"
}
node_key=node-tools-$(cat tools/package.json tools/package-lock.json | sha256sum | cut -c1-16)
if ! node_tools_ready && ! { from_cache "$node_key" "$BUILD/node" && node_tools_ready; }; then
  log "npm install (binaryen, kotlin-compiler, esbuild, attw, bun, deno, workerd)"
  mkdir -p "$BUILD/node"
  cp tools/package.json tools/package-lock.json "$BUILD/node/"
  # npm install, not ci: npm 11 leaves the other platforms' optional packages (deno, workerd) out of
  # the lockfile and then refuses `npm ci`; exact versions in package.json and the lockfile still pin.
  (cd "$BUILD/node" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  to_cache "$node_key" "$BUILD/node"
fi
chmod +x "$BUILD/node/node_modules/kotlin-compiler/bin/"* 2>/dev/null || true
}
node_sql() {
# The SQL drivers of the Node transactional stores' tests (pg, better-sqlite3: compiled once here).
node_sql_ready() {
  cmp -s tools/node-sql/package.json "$BUILD/node-sql/package.json" \
    && [ -f "$BUILD/node-sql/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]
}
# better-sqlite3 is compiled for this Node: the key names both.
sql_key=node-sql-$( (cat tools/node-sql/package.json; node --version) | sha256sum | cut -c1-16)
if ! node_sql_ready && ! { from_cache "$sql_key" "$BUILD/node-sql" && node_sql_ready; }; then
  log "npm install pg better-sqlite3 (better-sqlite3 compiles from source, about 2 min)"
  rm -rf "$BUILD/node-sql" && mkdir -p "$BUILD/node-sql"
  cp tools/node-sql/package.json "$BUILD/node-sql/"
  (cd "$BUILD/node-sql" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  cp tools/node-sql/package.json "$BUILD/node-sql/package.json"
  to_cache "$sql_key" "$BUILD/node-sql"
fi
}

# 5. Python venv with maturin, pytest, mypy (pinned in tools/requirements-dev.txt).
python_venv() {
if [ ! -x "$BUILD/venv/bin/python" ]; then
  log "python venv"
  python3 -m venv "$BUILD/venv"
fi
if ! cmp -s tools/requirements-dev.txt "$BUILD/venv/.requirements"; then
  log "pip install -r tools/requirements-dev.txt"
  "$BUILD/venv/bin/pip" install --quiet --disable-pip-version-check -r tools/requirements-dev.txt
  cp tools/requirements-dev.txt "$BUILD/venv/.requirements"
fi
}
# 6. JVM libraries from Maven Central, pinned by tools/jvm/pom.xml: Jedis (the JVM receiver app)
#    to .build/maven/lib, OkHttp and Okio (royaltykit-okhttp) to .build/maven/okhttp,
#    kotlinx-coroutines (royaltykit-coroutines) to .build/maven/coroutines, the JDBC drivers of
#    JdbcDedupStore's tests (pgjdbc, sqlite-jdbc) to .build/maven/jdbc, OpenTelemetry's API, SDK and
#    in-memory exporter (royaltykit-otel and its tests) to .build/maven/otel; the local repository
#    and the copied jars stay in .build/maven.
maven() {
maven_ready() {
  cmp -s tools/jvm/pom.xml "$BUILD/maven/pom.xml" && [ -d "$BUILD/maven/lib" ] && [ -d "$BUILD/maven/okhttp" ] \
    && [ -d "$BUILD/maven/coroutines" ] && [ -d "$BUILD/maven/jdbc" ] \
    && ls "$BUILD"/maven/otel/opentelemetry-api-*.jar "$BUILD"/maven/otel/opentelemetry-sdk-testing-*.jar >/dev/null 2>&1
}
maven_key=maven-$(sha256sum < tools/jvm/pom.xml | cut -c1-16)
if ! maven_ready && ! { from_cache "$maven_key" "$BUILD/maven" && maven_ready; }; then
  log "mvn dependency:copy-dependencies (tools/jvm/pom.xml: Jedis, OkHttp, kotlinx-coroutines, JDBC drivers, OpenTelemetry)"
  rm -rf "$BUILD/maven/lib" "$BUILD/maven/okhttp" "$BUILD/maven/coroutines" "$BUILD/maven/jdbc" "$BUILD/maven/otel"
  mkdir -p "$BUILD/maven"
  OKHTTP_GROUPS=com.squareup.okhttp3,com.squareup.okio,org.jetbrains.kotlin,org.jetbrains,org.jetbrains.kotlinx
  JDBC_GROUPS=org.postgresql,org.xerial,org.checkerframework
  OTEL_GROUPS=io.opentelemetry
  mvn -q -B -Dstyle.color=never -f tools/jvm/pom.xml dependency:copy-dependencies -DoutputDirectory="$BUILD/maven/lib" \
    -DexcludeGroupIds="$OKHTTP_GROUPS,$JDBC_GROUPS,$OTEL_GROUPS" -Dmaven.repo.local="$BUILD/maven/m2" >&2
  mvn -q -B -Dstyle.color=never -f tools/jvm/pom.xml dependency:copy-dependencies -DoutputDirectory="$BUILD/maven/okhttp" \
    -DincludeGroupIds=com.squareup.okhttp3,com.squareup.okio -Dmaven.repo.local="$BUILD/maven/m2" >&2
  mvn -q -B -Dstyle.color=never -f tools/jvm/pom.xml dependency:copy-dependencies -DoutputDirectory="$BUILD/maven/coroutines" \
    -DincludeGroupIds=org.jetbrains.kotlinx -Dmaven.repo.local="$BUILD/maven/m2" >&2
  mvn -q -B -Dstyle.color=never -f tools/jvm/pom.xml dependency:copy-dependencies -DoutputDirectory="$BUILD/maven/jdbc" \
    -DincludeGroupIds="$JDBC_GROUPS" -Dmaven.repo.local="$BUILD/maven/m2" >&2
  mvn -q -B -Dstyle.color=never -f tools/jvm/pom.xml dependency:copy-dependencies -DoutputDirectory="$BUILD/maven/otel" \
    -DincludeGroupIds="$OTEL_GROUPS" -Dmaven.repo.local="$BUILD/maven/m2" >&2
  cp tools/jvm/pom.xml "$BUILD/maven/pom.xml"
  to_cache "$maven_key" "$BUILD/maven"
fi
}

# Run the parts side by side; wait for all, and fail with the log of each part that failed.
LOGS=$BUILD/setup-logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
declare -A pids=()
part() { # name function...
  local name=$1; shift
  ( set -euo pipefail; start=$SECONDS; for f in "$@"; do "$f"; done; log "$name done in $((SECONDS - start)) s" ) \
    > "$LOGS/$name.log" 2>&1 &
  pids[$name]=$!
}
part rust-targets rust_targets
part debian+maven debian maven
part wasm-bindgen wasm_bindgen
part node-tools node_tools
part node-sql node_sql
part python python_venv
failed=()
for name in "${!pids[@]}"; do
  wait "${pids[$name]}" || failed+=("$name")
done
for name in "${!pids[@]}"; do grep -h '^\[setup\]' "$LOGS/$name.log" >&2 || true; done
for name in "${failed[@]}"; do
  echo "setup: $name failed; its log (.build/setup-logs/$name.log):" >&2
  tail -40 "$LOGS/$name.log" >&2
done
[ ${#failed[@]} -eq 0 ] || exit 1
log "ok"
