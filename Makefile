# swift-ble: the two commands of the README, plus the benchmark and housekeeping targets.
# Every target installs the Debian packages it needs (sudo only when not root).

SWIFT ?= swift
SWIFTC ?= swiftc
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libdbus-1-dev dbus pkg-config gcc python3 python3-venv
BLEAK_VENV := .build/bleak-venv
BENCH_DIR := .build/bench

.PHONY: deps demo dbus-demo test test-bluez test-under-load build bench bench-dbus lint clean conformance ci-examples \
	bleak-venv \
	docs docs-check soak sanitize sanitize-thread sanitize-address fuzz fuzz-corpus dist test-dist

## Install missing system packages (libdbus-1-dev, dbus-daemon, pkg-config, a C compiler).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

## The main job: scan → connect → discover → read → subscribe → write → disconnect, on the
## embedded BlueZ simulator unless `ARGS=--real` (see `ble demo --help`).
demo: deps
	$(SWIFT) build --product ble
	$(SWIFT) run ble demo $(ARGS)

## The D-Bus layer on its own: export an object on a private bus, call it.
dbus-demo: deps
	$(SWIFT) run dbus-demo

## The whole suite, on private dbus-daemons started and stopped by the tests, then the same
## RealBlueZTests against the real bluetoothd 5.66 in a qemu guest (`test-bluez`), the
## conformance check with a client nobody here wrote (bleak, from PyPI), the docs check, the
## lint, and 20 s of fuzzing the decoders of outside data (so neither target rots unseen).
test: deps
	$(SWIFT) build --build-tests
	timeout 1800 $(SWIFT) test --skip-build
	$(MAKE) test-bluez
	$(MAKE) conformance
	$(MAKE) ci-examples
	$(MAKE) docs-check
	$(MAKE) lint
	$(MAKE) fuzz FUZZ_SECONDS=20

## RealBlueZTests against the real bluetoothd 5.66 with two emulated controllers in a qemu
## guest (Tests/RealBlueZ/run.sh; `swift test` runs the same tests against the simulator).
test-bluez: deps
	$(SWIFT) build --build-tests
	Tests/RealBlueZ/run.sh

## The whole suite 5 times in a row (UNDER_LOAD_RUNS) while a CPU load keeps every core busy:
## stress-ng, installed here when missing, else one `yes` loop per core (Tests/UnderLoad/run.sh).
## One line per run and a summary; fails when a run failed. No test may depend on the machine's speed.
UNDER_LOAD_RUNS ?= 5
test-under-load: deps
	$(SWIFT) build --build-tests
	@command -v stress-ng >/dev/null 2>&1 \
		|| { $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng; } \
			>/dev/null 2>&1 \
		|| echo "stress-ng could not be installed: one yes loop per core instead"
	SWIFT="$(SWIFT)" Tests/UnderLoad/run.sh $(UNDER_LOAD_RUNS)

bleak-venv: deps
	@[ -x $(BLEAK_VENV)/bin/python ] && $(BLEAK_VENV)/bin/python -c "import bleak" 2>/dev/null || { \
		python3 -m venv $(BLEAK_VENV) && $(BLEAK_VENV)/bin/pip install -q --disable-pip-version-check bleak; }

## bleak scans, connects, reads, writes and subscribes through ble-sim, on both BlueZ profiles.
conformance: bleak-venv
	$(SWIFT) build --product ble-sim
	$(BLEAK_VENV)/bin/python Tests/Conformance/bleak_conformance.py .build/debug/ble-sim Scenarios/heart-rate-monitor.json --profile 5.66
	$(BLEAK_VENV)/bin/python Tests/Conformance/bleak_conformance.py .build/debug/ble-sim Scenarios/heart-rate-monitor.json --profile 5.87

## ble and ble-sim with the Swift runtime linked statically, as a Debian package and a tarball
## in .build/dist (Packaging/dist.sh); test-dist installs the package in a Debian 12 root with no
## Swift (debootstrap) and runs bleak's conformance flow against it (Packaging/test-dist.sh).
dist: deps
	sh Packaging/dist.sh $(SWIFT) .build/dist

test-dist: dist
	$(SUDO) sh Packaging/test-dist.sh .build/dist

## The examples of "Testing any BLE client with ble-sim" (Examples/ble-sim-ci), run as another
## project's CI would: pytest with bleak, bluetoothctl from Debian's bluez package, a C client.
ci-examples: bleak-venv
	@dpkg -s bluez >/dev/null 2>&1 || { $(SUDO) apt-get update -qq \
		&& $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bluez; }
	@$(BLEAK_VENV)/bin/python -c "import pytest" 2>/dev/null \
		|| $(BLEAK_VENV)/bin/pip install -q --disable-pip-version-check pytest
	$(SWIFT) build --product ble-sim
	sh Examples/ble-sim-ci/run.sh .build/debug/ble-sim $(BLEAK_VENV)/bin/python .build/examples

## The long fault soak (the short one is part of `make test`): 100 simulated peripherals,
## 10,000 mixed operations under injected faults. SOAK_SEED=<seed> replays a run.
soak: deps
	$(SWIFT) build --build-tests
	SOAK_PERIPHERALS=100 SOAK_OPERATIONS=10000 SOAK_WORKERS=16 timeout 3600 \
		$(SWIFT) test --skip-build --filter FaultSoakTests

## The suite under ThreadSanitizer, then AddressSanitizer with LeakSanitizer, each in its own
## build directory; any report fails the run. SWIFT_BLE_SANITIZER tells the tests which sanitizer
## runs, so that the few that wait on wall-clock time (the soak) allow for its slowdown. Two
## tests at a time: at Swift Testing's default width the instrumented suite overran its time limits
## on 2 cores. SANITIZE_FILTER=<suite> narrows both runs.
SANITIZE_FILTER ?=
SANITIZE_ARGS := $(if $(SANITIZE_FILTER),--filter '$(SANITIZE_FILTER)',)
SANITIZE_ENV := SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=2
sanitize: sanitize-thread sanitize-address

sanitize-thread: deps
	$(SWIFT) build --build-tests --sanitize=thread --build-path .build/tsan
	$(SANITIZE_ENV) SWIFT_BLE_SANITIZER=thread TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Sanitizers/tsan.supp" \
		timeout 5400 $(SWIFT) test --skip-build --sanitize=thread --build-path .build/tsan $(SANITIZE_ARGS)

sanitize-address: deps
	$(SWIFT) build --build-tests --sanitize=address --build-path .build/asan
	$(SANITIZE_ENV) SWIFT_BLE_SANITIZER=address ASAN_OPTIONS="detect_leaks=1" \
		LSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp:print_suppressions=0" \
		timeout 5400 $(SWIFT) test --skip-build --sanitize=address --build-path .build/asan $(SANITIZE_ARGS)

## libFuzzer on the decoders of outside data for FUZZ_SECONDS (default 60); new inputs go to
## .build/fuzz/corpus, crashes to .build/fuzz/crash-*: copy those to Tests/Fuzz/regressions.
FUZZ_SECONDS ?= 60
fuzz: deps
	sh Tests/Fuzz/build.sh .build/fuzz
	mkdir -p .build/fuzz/corpus
	ASAN_OPTIONS=detect_leaks=0 .build/fuzz/fuzz-decoding -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -detect_leaks=0 \
		-artifact_prefix=.build/fuzz/ .build/fuzz/corpus Tests/Fuzz/corpus Tests/Fuzz/regressions

## Rewrites the seed corpus (Tests/BLETests/Fuzz/FuzzSeeds.swift) into Tests/Fuzz/corpus.
fuzz-corpus: deps
	sh Tests/Fuzz/build.sh .build/fuzz
	FUZZ_WRITE_CORPUS=Tests/Fuzz/corpus .build/fuzz/fuzz-decoding

## DocC documentation from the toolchain's own docc (no plugin): a static site in .build/docs/site.
docs: deps
	# dump-symbol-graph extracts every module of the package, the test modules too, and fails
	# for those not built yet (make docs straight after make demo did): build them first.
	$(SWIFT) build --build-tests
	$(SWIFT) package dump-symbol-graph --minimum-access-level public >/dev/null
	rm -rf .build/docs && mkdir -p .build/docs/graphs
	cp "$$(dirname "$$($(SWIFT) build --show-bin-path)")/symbolgraph/BLE.symbols.json" .build/docs/graphs/
	docc convert DocsSource/BLE.docc --additional-symbol-graph-dir .build/docs/graphs \
		--fallback-display-name BLE --fallback-bundle-identifier org.swiftble.BLE \
		--output-path .build/docs/site --transform-for-static-hosting --warnings-as-errors
	@echo "docs: python3 -m http.server -d .build/docs/site 8000, then open http://localhost:8000/documentation/ble/"

## Every public symbol has a doc comment, article code matches the compiled snippets, and the
## catalog builds without a warning (broken links included).
docs-check: docs
	python3 Tests/Docs/check_docs.py "$$(dirname "$$($(SWIFT) build --show-bin-path)")/symbolgraph"

## Benchmarks (not part of `make test`); results land in Benchmarks/results/.
bench: bench-dbus bench-gatt

bench-dbus: deps
	$(SWIFT) build -c release --product ble-bench
	sh Benchmarks/floor/build.sh $(BENCH_DIR)
	python3 Benchmarks/run_dbus_calls.py --floor $(BENCH_DIR)/dbus_floor \
		--swift ".build/release/ble-bench dbus-calls" --rounds 5 --out Benchmarks/results

.PHONY: bench-gatt bench-scenarios bench-lock bench-l2cap

## GATT writes without response against an L2CAP channel on the same link, through the real
## bluetoothd and the kernel in the qemu guest (Benchmarks/run_l2cap.py; Tests/RealBlueZ).
bench-l2cap: deps
	$(SWIFT) build -c release --product ble-bench
	python3 Benchmarks/run_l2cap.py --out Benchmarks/results $(BENCH_ARGS)

## What a datagram costs its receiver in Swift, layer by layer, without swift-ble: the least an
## AcquireNotify value delivered to a `for await` loop can cost (Benchmarks/run_datagram_floor.py).
.PHONY: bench-datagram-floor
bench-datagram-floor: deps
	$(SWIFT) build -c release --product ble-bench
	python3 Benchmarks/run_datagram_floor.py --out Benchmarks/results $(BENCH_ARGS)

## PosixMutex against Synchronization.Mutex, uncontended (why the project locks with PosixMutex: README).
bench-lock:
	mkdir -p $(BENCH_DIR)
	$(SWIFTC) -swift-version 6 -O -wmo Sources/DBus/Concurrency/PosixMutex.swift Benchmarks/lock/main.swift \
		-o $(BENCH_DIR)/lock-bench
	$(BENCH_DIR)/lock-bench | tee Benchmarks/results/lock.md

## Generated scenarios too large to commit: beacon crowds and 100 peripherals with the 5 x 4 tree.
bench-scenarios:
	mkdir -p $(BENCH_DIR)
	python3 Scenarios/tools/make_beacon_crowd.py $(BENCH_DIR)/beacons-1000.json --count 1000
	python3 Scenarios/tools/make_beacon_crowd.py $(BENCH_DIR)/beacons-10000.json --count 10000
	python3 Scenarios/tools/make_bench_gatt.py $(BENCH_DIR)/gatt-5x4-100.json --count 100

## GATT: swift-ble vs the C floor vs bleak on ble-sim (BENCH_ARGS="--rounds 3 --quick" for a short run).
BENCH_ARGS ?= --rounds 5
bench-gatt: deps bleak-venv bench-scenarios
	$(SWIFT) build -c release --product ble-bench
	$(SWIFT) build -c release --product ble-sim
	sh Benchmarks/floor/build.sh $(BENCH_DIR)
	python3 Benchmarks/run_gatt.py --floor $(BENCH_DIR)/gatt_floor --swift ".build/release/ble-bench gatt" \
		--bleak "$(BLEAK_VENV)/bin/python Benchmarks/bleak_bench.py" --sim .build/release/ble-sim \
		--scenarios $(BENCH_DIR) --out Benchmarks/results $(BENCH_ARGS)

## Warnings fail it (--strict): `make test` runs it, so the code stays as swift-format wants it.
lint:
	swift-format lint --strict --recursive --configuration .swift-format Sources Tests Benchmarks

clean:
	rm -rf .build

## The simulator: GATT reads against the C floor, and a crowd of 10,000 advertisers.
.PHONY: bench-sim
bench-sim: deps
	$(SWIFT) build -c release --product ble-sim
	$(SWIFT) build -c release --product ble-bench
	sh Benchmarks/floor/build.sh $(BENCH_DIR)
	python3 Benchmarks/run_sim_read.py --floor $(BENCH_DIR)/dbus_floor --bin .build/release --rounds 15 \
		--json Benchmarks/results/simulator-read.json
	python3 Benchmarks/run_sim_scan.py --floor $(BENCH_DIR)/dbus_floor --bin .build/release
