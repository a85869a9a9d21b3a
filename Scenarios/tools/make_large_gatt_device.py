#!/usr/bin/env python3
"""make_large_gatt_device.py - writes Scenarios/large-gatt-device.json: one peripheral with 8
vendor services of 8 characteristics each, every characteristic with a User Description (2901),
for service-discovery and object-tree tests and benchmarks.

Standard library only and deterministic. Usage: make_large_gatt_device.py [OUTPUT]
"""

import argparse
import json
import pathlib

SERVICES = 8
CHARACTERISTICS = 8
# Cycled by characteristic index: every access pattern appears in every service.
FLAGS = [
    ["read"],
    ["read", "write"],
    ["read", "notify"],
    ["write-without-response"],
    ["read", "indicate"],
    ["read", "write", "write-without-response"],
    ["notify"],
    ["read", "write", "notify"],
]


def uuid(service, characteristic):
    """A vendor UUID: c0de<service><characteristic>-…, characteristic 0 naming the service."""
    return f"c0de{service:02x}{characteristic:02x}-5b1e-4d2a-9f00-6c6172676500"


def characteristic(s, c):
    return {
        "uuid": uuid(s, c + 1),
        "flags": FLAGS[c % len(FLAGS)],
        "value": f"{s:02x}{c:02x}",
        "descriptors": [{"uuid": "2901", "value": {"utf8": f"Service {s} characteristic {c}"}}],
    }


def render(peripheral):
    """Indented JSON with one characteristic per line, so the file stays readable."""
    one = lambda value: json.dumps(value, separators=(", ", ": "))
    head = {key: value for key, value in peripheral.items() if key != "services"}
    fields = [f'      "{key}": {one(value)}' for key, value in head.items()]
    services = []
    for service in peripheral["services"]:
        rows = ",\n".join("            " + one(c) for c in service["characteristics"])
        services.append(
            f'        {{\n          "uuid": {one(service["uuid"])},\n          "characteristics": [\n{rows}\n          ]\n        }}')
    fields.append('      "services": [\n' + ",\n".join(services) + "\n      ]")
    body = ",\n".join(fields)
    return '{\n  "profile": "5.66",\n  "peripherals": [\n    {\n' + body + "\n    }\n  ]\n}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = pathlib.Path(__file__).resolve().parent.parent / "large-gatt-device.json"
    parser.add_argument("output", nargs="?", type=pathlib.Path, default=default)
    args = parser.parse_args()
    peripheral = {
        "address": "C0:DE:00:00:00:01",
        "name": "Large GATT (sim)",
        "mtu": 517,
        "serviceUUIDs": [uuid(0, 0)],
        "services": [
            {"uuid": uuid(s, 0), "characteristics": [characteristic(s, c) for c in range(CHARACTERISTICS)]}
            for s in range(SERVICES)
        ],
    }
    args.output.write_text(render(peripheral))
    count = SERVICES * CHARACTERISTICS
    print(f"wrote {SERVICES} services, {count} characteristics, {count} descriptors to {args.output}")


if __name__ == "__main__":
    main()
