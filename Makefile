# swift-ble: the two commands of the README, plus the benchmark and housekeeping targets.
# Every target installs the Debian packages it needs (sudo only when not root).

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := libdbus-1-dev dbus pkg-config gcc python3 python3-venv
BLEAK_VENV := .build/bleak-venv
BENCH_DIR := .build/bench

.PHONY: deps demo dbus-demo test build bench bench-dbus lint clean conformance bleak-venv

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

## The whole suite, on private dbus-daemons started and stopped by the tests, then the
## conformance check with a client nobody here wrote (bleak, from PyPI).
test: deps
	$(SWIFT) build --build-tests
	timeout 1800 $(SWIFT) test --skip-build
	$(MAKE) conformance

bleak-venv: deps
	@[ -x $(BLEAK_VENV)/bin/python ] && $(BLEAK_VENV)/bin/python -c "import bleak" 2>/dev/null || { \
		python3 -m venv $(BLEAK_VENV) && $(BLEAK_VENV)/bin/pip install -q --disable-pip-version-check bleak; }

## bleak scans, connects, reads, writes and subscribes through ble-sim, on both BlueZ profiles.
conformance: bleak-venv
	$(SWIFT) build --product ble-sim
	$(BLEAK_VENV)/bin/python Tests/Conformance/bleak_conformance.py .build/debug/ble-sim Scenarios/heart-rate-monitor.json --profile 5.66
	$(BLEAK_VENV)/bin/python Tests/Conformance/bleak_conformance.py .build/debug/ble-sim Scenarios/heart-rate-monitor.json --profile 5.87

## Benchmarks (not part of `make test`); results land in Benchmarks/results/.
bench: bench-dbus

bench-dbus: deps
	$(SWIFT) build -c release --product ble-bench
	sh Benchmarks/floor/build.sh $(BENCH_DIR)
	python3 Benchmarks/run_dbus_calls.py --floor $(BENCH_DIR)/dbus_floor \
		--swift ".build/release/ble-bench dbus-calls" --rounds 5 --out Benchmarks/results

lint:
	swift-format lint --recursive --configuration .swift-format Sources Tests Benchmarks

clean:
	rm -rf .build

## The simulator: GATT reads against the C floor, and a crowd of 10,000 advertisers.
.PHONY: bench-sim
bench-sim: deps
	$(SWIFT) build -c release --product ble-sim
	$(SWIFT) build -c release --product ble-bench
	sh Benchmarks/floor/build.sh $(BENCH_DIR)
	python3 Benchmarks/run_sim_read.py --floor $(BENCH_DIR)/dbus_floor --bin .build/release
	python3 Benchmarks/run_sim_scan.py --floor $(BENCH_DIR)/dbus_floor --bin .build/release
