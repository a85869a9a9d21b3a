#!/usr/bin/env python3
"""make_bench_gatt.py - writes the GATT scenarios of the benchmark suite (issue 8): peripherals
with a 5 x 4 GATT tree (5 vendor services of 4 characteristics, each with a User Description
2901), MTU 517, zero simulated delays.

Service 0 is the one the benchmarks use, the same in every peripheral:

    char 1  b0b00001-…  read, 20-byte value          (ReadValue 20 B)
    char 2  b0b00002-…  read, 512-byte value         (ReadValue 512 B)
    char 3  b0b00003-…  write, write-without-response (WriteValue request / command)
    char 4  b0b00004-…  notify                        (StartNotify, AcquireNotify)

Services 1-4 fill the tree with every other access pattern. The peripherals leave out the
standard GAP/GATT services ("standardServices": false), so the tree the benchmarks discover and
count is exactly 5 x 4, as in the results recorded before the simulator served them. Standard
library only and deterministic. Usage: make_bench_gatt.py [--count N] OUTPUT
    --count 1    Benchmarks/scenarios/gatt-5x4.json        (latency, throughput, connect)
    --count 100  Benchmarks/scenarios/gatt-5x4-100.json    (memory per connected peripheral)
"""

import argparse
import json
import pathlib

SERVICES = 5
CHARACTERISTICS = 4
FILLER_FLAGS = [["read"], ["read", "write"], ["read", "notify"], ["read", "indicate"]]
BENCH_FLAGS = [["read"], ["read"], ["write", "write-without-response"], ["notify"]]
BENCH_VALUES = [bytes(range(20)).hex(), bytes(i % 256 for i in range(512)).hex(), "00", "00"]


def uuid(service, characteristic):
    """b0b0<service><characteristic>-…; characteristic 0 names the service."""
    return f"b0b0{service:02x}{characteristic:02x}-5b1e-4d2a-9f00-62656e636800"


def characteristic(s, c):
    flags = BENCH_FLAGS[c] if s == 0 else FILLER_FLAGS[c]
    value = BENCH_VALUES[c] if s == 0 else f"{s:02x}{c:02x}"
    return {"uuid": uuid(s, c + 1), "flags": flags, "value": value,
            "descriptors": [{"uuid": "2901", "value": {"utf8": f"s{s}c{c}"}}]}


def peripheral(index):
    return {
        "address": f"B0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}",
        "name": f"Bench {index}",
        "advertisingIntervalMs": 100,
        "mtu": 517,
        "serviceUUIDs": [uuid(0, 0)],
        "standardServices": False,
        "services": [{"uuid": uuid(s, 0), "characteristics": [characteristic(s, c) for c in range(CHARACTERISTICS)]}
                     for s in range(SERVICES)],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=pathlib.Path)
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args()
    scenario = {"profile": "5.66", "timing": {"temporaryTimeoutMs": 3600000},
                "peripherals": [peripheral(i + 1) for i in range(args.count)]}
    args.output.write_text(json.dumps(scenario, indent=1) + "\n")
    print(f"wrote {args.count} peripherals with a {SERVICES} x {CHARACTERISTICS} tree to {args.output}")


if __name__ == "__main__":
    main()
