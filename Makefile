# royaltykit — two commands matter: `make demo` and `make test`. Both set themselves up
# (scripts/setup.sh, idempotent) on a fresh machine of this project's kind.
SHELL := /bin/bash
.DEFAULT_GOAL := test
VERSION := $(shell awk -F'"' '/^version = /{print $$2; exit}' Cargo.toml)
# seeds of the simulator in make test, and for make simulate / make mutants
SIM_SEEDS ?= 5000
SEEDS ?= 100000
START ?= 0

# Each step of make test runs under scripts/timed.sh, which appends its wall time to
# target/timings.tsv; make test prints the table at its end (scripts/timings.py).
T := bash scripts/timed.sh

.PHONY: timings-start setup package npm wheel jar aar release-artifacts test test-rust test-node test-python test-kotlin test-android test-receivers test-platforms demo soak bench vectors fuzz ct-check simulate mutants clean

setup:
	@$(T) setup bash scripts/setup.sh

npm: setup
	@$(T) "build npm package" bash scripts/build-npm.sh

wheel: setup
	@$(T) "build wheel" bash scripts/build-wheel.sh

jar: setup
	@$(T) "build jar" bash scripts/build-jar.sh

## dist/royaltykit-android-<version>.aar + POM: four ABIs (minSdk 24), linked by zig against bionic's
## API-24 exports (or by the NDK when ANDROID_NDK_HOME is set)
aar: jar
	@$(T) "build aar" bash scripts/build-aar.sh

## dist/: the npm tarball, the abi3 wheel, the Kotlin jar
package: npm wheel jar

## every wheel (Linux glibc/musl x86_64/aarch64, macOS, Windows), the sdist, the five-platform JVM jar + POM -> dist/
release-artifacts: setup npm wheel jar
	@$(T) "build release artifacts" bash scripts/build-release.sh

## checks of the release artifacts: arm64 suite under qemu, auditwheel, pip platform resolution, symbol versions, headers
test-platforms: release-artifacts
	@$(T) "test platforms" bash scripts/test-platforms.sh

test-rust: setup
	@# the core's modules depend on each other without a circle (and the check itself finds one)
	python3 scripts/check_core_imports.py --self-test
	python3 scripts/check_core_imports.py core/src
	@# the documentation: links and anchors resolve, every marked example is run by a test, the README is a front page
	python3 scripts/check_docs.py
	@# the generated surface (forwarders, Node wrappers, .pyi and .d.ts regions) is what surface/functions.toml gives
	python3 scripts/gen_surface.py --check
	@# every host loop within 30 lines of code (issue 41)
	python3 scripts/host_loops.py --max 30 > /dev/null
	$(T) "rust: fmt, clippy" bash -c 'cargo fmt --all --check && cargo clippy --workspace --all-targets --quiet -- -D warnings'
	$(T) "rust: cargo test" cargo test --workspace --quiet -- --skip simulated_runs
	@# deterministic simulation of the machines against models of both services (SIM_SEEDS seeds)
	ROYALTYKIT_SIM_SEEDS=$(SIM_SEEDS) $(T) "rust: simulation" cargo test -p royaltykit --test simulation --quiet -- --nocapture
	@# the fuzz targets and the benchmarks live outside the workspace: keep them compiling (one
	@# target directory for both, so their common dependencies compile once)
	$(T) "rust: fuzz and bench check" bash -c 'cargo check --quiet --manifest-path fuzz/Cargo.toml --target-dir target/ext-check && cargo check --quiet --manifest-path bench/rust/Cargo.toml --benches --target-dir target/ext-check'

## the AAR's structure and its four native libraries against Android's exported symbols
test-android: aar
	@$(T) "test android" bash scripts/test-android.sh

test-node: npm
	@echo "== Node suite (installed npm package) =="
	@$(T) "test node" bash scripts/test-node.sh
	@$(T) "test js runtimes" bash scripts/test-js-runtimes.sh

test-python: wheel
	@echo "== Python suite (installed wheel) =="
	@$(T) "test python" bash scripts/test-python.sh

test-kotlin: jar
	@echo "== Kotlin suite (built jar) =="
	@$(T) "test kotlin" bash scripts/test-kotlin.sh

## everything CI runs
test: timings-start test-rust test-node test-python test-kotlin test-android test-receivers demo test-platforms
	@python3 scripts/timings.py target/timings.tsv "$$(cat target/timings.start)"
	@echo "make test: all suites passed"

# A new table of step times for this make test.
timings-start:
	@mkdir -p target && : > target/timings.tsv && date +%s > target/timings.start

## every receiver integration (Express, Fastify, fetch; ASGI, Flask, Django; JVM) over real HTTP,
## two processes each sharing a real redis-server
test-receivers: npm wheel jar
	@echo "== Receiver integrations (two processes each, one Redis) =="
	@$(T) "test receivers" bash scripts/test-receivers.sh

## the webhook receiver demo over real HTTP on 127.0.0.1
demo: npm setup
	@$(T) demo bash scripts/demo.sh

## 100,000 real HTTP deliveries each to the Node and a Python receiver, to Node and Python receivers sharing
## Redis, and to Python receivers on PostgreSQL (the transactional store) SIGKILLed as they run (SOAK_DELIVERIES)
soak: npm wheel
	@bash scripts/soak.sh

## benchmarks of every language against the alternatives users would pick -> bench/RESULTS.md
bench: package
	@bash scripts/bench.sh

## coverage-guided fuzzing of the parsers (nightly toolchain; FUZZ_SECONDS per target, default 60)
fuzz:
	@bash scripts/fuzz.sh

## the simulator over SEEDS seeds in release mode (make simulate SEEDS=1000000; START=first seed)
simulate:
	ROYALTYKIT_SIM_SEEDS=$(SEEDS) ROYALTYKIT_SIM_START=$(START) cargo test --release -p royaltykit --test simulation -- --nocapture

## the failures the simulator must catch, reintroduced one at a time (each must make it fail)
mutants:
	python3 scripts/mutants.py --seeds $(SEEDS)

## dudect timing test of signature comparison (CT_ITERATIONS x 100,000 measurements, default 30)
ct-check:
	@bash scripts/ct-check.sh

## regenerate tests/vectors/*.json from the stdlib-only generator
vectors:
	python3 tests/vectors/gen_vectors.py
	python3 tests/vectors/gen_retry_vectors.py
	python3 tests/vectors/gen_api_vectors.py
	python3 tests/vectors/gen_export_vectors.py
	python3 tests/vectors/gen_receiver_vectors.py
	python3 tests/vectors/gen_machine_vectors.py

clean:
	rm -rf target dist .build
