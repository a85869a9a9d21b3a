"""A heart-rate monitor, as an app's tests would check their BLE code: through bleak, against
ble-sim (conftest.py), with no radio and no bluetoothd."""

import asyncio

import pytest
from bleak import BleakClient, BleakScanner
from bleak.exc import BleakError

MONITOR = "C4:7C:8D:6A:11:22"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BODY_SENSOR_LOCATION = "00002a38-0000-1000-8000-00805f9b34fb"


async def connected_client():
    device = await BleakScanner.find_device_by_filter(
        lambda d, adv: HEART_RATE in adv.service_uuids, timeout=20.0, service_uuids=[HEART_RATE])
    assert device is not None, "the monitor advertises its heart-rate service"
    return BleakClient(device, timeout=20.0)


def test_reads_the_body_sensor_location(ble_sim):
    async def walk():
        async with await connected_client() as client:
            assert await client.read_gatt_char(BODY_SENSOR_LOCATION) == bytes([0x01])  # chest

    asyncio.run(walk())


def test_receives_heart_rate_measurements(ble_sim):
    async def walk():
        received = asyncio.Queue()
        async with await connected_client() as client:
            await client.start_notify(MEASUREMENT, lambda _, data: received.put_nowait(bytes(data)))
            # The simulated monitor sends what the test tells it to, through its control interface.
            for bpm in (72, 75, 80):
                await asyncio.to_thread(
                    ble_sim.control, "Notify", f"string:{MONITOR}", "string:2A37", f"array:byte:0,{bpm}")
                assert await asyncio.wait_for(received.get(), 20.0) == bytes([0, bpm])

    asyncio.run(walk())


def test_a_refused_read_is_an_error_the_app_sees(ble_sim):
    ble_sim.inject_fault(
        '{"operation": "read", "characteristic": "2A38", "action": {"attError": {"code": 2}}}')

    async def walk():
        async with await connected_client() as client:
            with pytest.raises(BleakError):
                await client.read_gatt_char(BODY_SENSOR_LOCATION)
            # The fault was for one read: the next one works.
            assert await client.read_gatt_char(BODY_SENSOR_LOCATION) == bytes([0x01])

    asyncio.run(walk())
