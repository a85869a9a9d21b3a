#!/usr/bin/env python3
"""bleak_conformance.py - a client nobody here wrote (bleak, from PyPI) against ble-sim.

Starts `ble-sim --scenario Scenarios/heart-rate-monitor.json`, points bleak at it through
DBUS_SYSTEM_BUS_ADDRESS, and walks the heart-rate monitor the way an app would: scan by service
UUID, connect, list services and characteristics, read, write with and without response, receive
notifications, disconnect. Every step is checked; the script prints one line per step and a
closing "N passed, N failed" line, and exits non-zero on any failure.

Usage: bleak_conformance.py BLE_SIM_BINARY SCENARIO_JSON [--profile 5.66|5.87]
"""

import asyncio
import os
import subprocess
import sys

HRM = "C4:7C:8D:6A:11:22"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"
CONTROL_POINT = "00002a39-0000-1000-8000-00805f9b34fb"
UART_RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}{(': ' + detail) if detail else ''}", flush=True)
    return ok


async def walk():
    from bleak import BleakClient, BleakScanner

    device = await BleakScanner.find_device_by_filter(
        lambda d, adv: HEART_RATE in [u.lower() for u in adv.service_uuids], timeout=10.0,
        service_uuids=[HEART_RATE])
    if not check("scan finds the heart-rate monitor by service UUID", device is not None):
        return
    check("scan reports the address", device.address.upper() == HRM, device.address)
    check("scan reports the name", (device.name or "").startswith("Polar H10"), str(device.name))

    async with BleakClient(device, timeout=10.0) as client:
        check("connect", client.is_connected)
        services = client.services
        uuids = [s.uuid for s in services]
        check("services listed", HEART_RATE in uuids, ", ".join(uuids))
        hr = services.get_service(HEART_RATE)
        characteristic_uuids = [c.uuid for c in hr.characteristics] if hr else []
        check("characteristics listed", MEASUREMENT in characteristic_uuids and BODY_SENSOR_LOCATION in characteristic_uuids,
              ", ".join(characteristic_uuids))
        measurement = hr.get_characteristic(MEASUREMENT) if hr else None
        check("properties of 2A37", measurement is not None and "notify" in measurement.properties,
              str(measurement.properties if measurement else None))
        check("CCC descriptor of 2A37", measurement is not None and any(
            d.uuid.startswith("00002902") for d in measurement.descriptors))

        value = await client.read_gatt_char(BODY_SENSOR_LOCATION)
        check("read 2A38", bytes(value) == b"\x01", bytes(value).hex())

        await client.write_gatt_char(CONTROL_POINT, b"\x01", response=True)
        check("write with response", True)
        await client.write_gatt_char(UART_RX, b"hello", response=False)
        check("write without response", True)

        received = []
        got_three = asyncio.Event()

        def on_notify(_, data):
            received.append(bytes(data))
            if len(received) >= 3:
                got_three.set()

        await client.start_notify(MEASUREMENT, on_notify)
        try:
            await asyncio.wait_for(got_three.wait(), timeout=10.0)
        except asyncio.TimeoutError:
            pass
        await client.stop_notify(MEASUREMENT)
        check("notifications received", len(received) >= 3, " ".join(d.hex() for d in received))
        check("notification payloads", all(len(d) == 2 and d[0] == 0 for d in received))
    check("disconnect", not client.is_connected)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    command = [sys.argv[1], "--scenario", sys.argv[2]] + sys.argv[3:]
    sim = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = sim.stdout.readline().strip()
        if not line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
            print(f"ble-sim did not start: {line!r}")
            return 1
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = line.split("=", 1)[1]
        try:
            asyncio.run(asyncio.wait_for(walk(), timeout=60))
        except Exception as error:  # any bleak failure is a conformance failure
            check("walk completed", False, f"{type(error).__name__}: {error}")
    finally:
        sim.terminate()
        try:
            sim.wait(timeout=10)
        except subprocess.TimeoutExpired:
            sim.kill()
    failed = results.count(False)
    print(f"conformance: {results.count(True)} passed, {failed} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
