#!/usr/bin/env python3
"""make_beacon_crowd.py - writes Scenarios/beacon-crowd.json: 1,000 non-connectable iBeacon-style
advertisers, each advertising once a second, for scan-ingestion tests and benchmarks.

Standard library only, and deterministic (a fixed seed), so running it again reproduces the
committed file byte for byte. Usage: make_beacon_crowd.py [OUTPUT] [--count N]
"""

import argparse
import json
import pathlib
import random

# "SWIFT-BLE-SIM-01" in ASCII: the proximity UUID every beacon of the crowd shares.
PROXIMITY_UUID = "SWIFT-BLE-SIM-01".encode("ascii").hex()
# Apple's company identifier, the one iBeacon frames use (0x004C).
APPLE = 0x004C
# Calibrated RSSI at 1 m carried in the frame (-59 dBm), as a signed byte.
MEASURED_POWER = (-59) & 0xFF


def beacon(index, rng):
    """One beacon: a static random address, an iBeacon frame (major = group, minor = member)."""
    major, minor = index // 100 + 1, index % 100 + 1
    frame = "0215" + PROXIMITY_UUID + f"{major:04x}{minor:04x}{MEASURED_POWER:02x}"
    return {
        # D0: the two top bits set make it a static random address.
        "address": f"D0:B1:E5:00:{index >> 8:02X}:{index & 0xFF:02X}",
        "addressType": "random",
        "advertisingIntervalMs": 1000,
        "rssi": rng.randint(-95, -45),
        "rssiJitter": 4,
        "connectable": False,
        "manufacturerData": {str(APPLE): frame},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = pathlib.Path(__file__).resolve().parent.parent / "beacon-crowd.json"
    parser.add_argument("output", nargs="?", type=pathlib.Path, default=default)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(1000)
    peripherals = [beacon(index, rng) for index in range(args.count)]
    # One beacon per line: readable, and a change to one shows as a one-line diff.
    lines = [json.dumps(p, separators=(", ", ": ")) for p in peripherals]
    text = '{\n  "profile": "5.66",\n  "peripherals": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n"
    args.output.write_text(text)
    print(f"wrote {len(peripherals)} beacons to {args.output}")


if __name__ == "__main__":
    main()
