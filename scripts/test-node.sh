#!/usr/bin/env bash
# Installs dist/royaltykit-<version>.tgz into an empty temporary project (as a user would) and
# runs the node --test suite there.
source "$(dirname "$0")/common.sh"
install_npm_package
cp "$ROOT"/bindings-wasm/tests/*.test.js "$ROOT"/bindings-wasm/tests/*.cjs .
# pg and better-sqlite3 for stores.test.js (compiled once by make setup), and a throw-away
# PostgreSQL cluster on 127.0.0.1.
cp -r "$ROOT"/.build/node-sql/node_modules/. node_modules/
# @opentelemetry/api and the SDK's in-memory exporter for otel.test.js (tools/package.json, as a
# user of royaltykit/otel installs them beside the package).
cp -r "$ROOT"/.build/node/node_modules/@opentelemetry node_modules/
source "$ROOT/scripts/postgres.sh"
start_postgres
node --test --test-reporter=spec *.test.js > report.txt 2>&1 || { cat report.txt; exit 1; }
grep -E '^ℹ (tests|pass|fail|skipped)' report.txt
# Types, with tsc --strict against the installed package: a consumer that names every runtime
# export (derived from the package itself, so an undeclared export fails) and a typed usage file,
# both without @types/node (the declarations must not need Node's globals); then every
# documented Node example (README.md, docs/*.md), checked as JavaScript with Node's types.
TSC="$ROOT/.build/node/node_modules/typescript/bin/tsc"
node -e "const rk = require('royaltykit'); console.log(\"import * as rk from 'royaltykit';\\nexport const all = [\\n\" + Object.keys(rk).map((k) => '  rk.' + k + ',').join('\\n') + '\\n];')" > exports.ts
cp "$ROOT/bindings-wasm/tests-types/usage.ts" .
printf '{"compilerOptions":{"strict":true,"noEmit":true,"module":"commonjs","moduleResolution":"node10","target":"es2022","lib":["es2022"],"types":[]},"files":["exports.ts","usage.ts"]}\n' > tsconfig.json
"$TSC" -p tsconfig.json
python3 - "$ROOT/README.md" "$ROOT"/docs/*.md <<'PY'
import re, sys
text = "\n".join(open(f, encoding="utf-8").read() for f in sys.argv[1:])
blocks = re.findall(r"<!-- example:(node[\w-]*) -->\s*```js\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("the documentation has no Node example")
for name, code in blocks:
    open(f"readme-{name}.js", "w", encoding="utf-8").write(code)
PY
printf '{"compilerOptions":{"strict":true,"noEmit":true,"allowJs":true,"checkJs":true,"module":"commonjs","moduleResolution":"node10","target":"es2022","lib":["es2022"],"types":["node"],"typeRoots":["%s"]},"include":["readme-*.js"]}\n' "$ROOT/.build/node/node_modules/@types" > tsconfig.readme.json
"$TSC" -p tsconfig.readme.json
echo "types: tsc --strict passed for $(grep -c 'rk\.' exports.ts) exports, the typed usage file and $(ls readme-*.js | wc -l) documented examples"
# The panic test and the hot path against the core JSON, with the test-hooks build of the same module.
cp "$ROOT"/bindings-wasm/tests-hooks/*.test.js .
ROYALTYKIT_HOOKS_NATIVE="$ROOT/target/npm-hooks/native/royaltykit_wasm.js" \
  node --test --test-reporter=spec panic.test.js hotpath.test.js > hooks.txt 2>&1 || { cat hooks.txt; exit 1; }
grep -E '^ℹ (tests|pass|fail)' hooks.txt
