"""A pytest fixture that gives each test its own bluetoothd: ble-sim on a private bus.

Any client that talks to BlueZ over D-Bus (bleak here) finds the simulator through
DBUS_SYSTEM_BUS_ADDRESS, which the fixture sets for the test and takes back after it.
BLE_SIM names the ble-sim binary and BLE_SIM_SCENARIO the scenario to serve.
"""

import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BLE_SIM = os.environ.get("BLE_SIM", "ble-sim")
SCENARIO = os.environ.get(
    "BLE_SIM_SCENARIO", os.path.join(HERE, "..", "..", "..", "Scenarios", "heart-rate-monitor.json"))


class Simulator:
    """The running simulator and its control interface (org.swiftble.Simulator1)."""

    def __init__(self, address):
        self.address = address

    def control(self, method, *arguments):
        """Calls a control method with dbus-send's typed arguments (string:…, uint32:…)."""
        subprocess.run(
            ["dbus-send", f"--bus={self.address}", "--print-reply", "--dest=org.swiftble.Simulator",
             "/org/swiftble/Simulator", f"org.swiftble.Simulator1.{method}", *arguments],
            check=True, capture_output=True, timeout=30)

    def inject_fault(self, fault_json):
        self.control("InjectFault", f"string:{fault_json}")


@pytest.fixture
def ble_sim(monkeypatch):
    process = subprocess.Popen(
        [BLE_SIM, "--scenario", SCENARIO], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # The first line, written once the simulator is ready: DBUS_SYSTEM_BUS_ADDRESS=<address>
        name, _, address = process.stdout.readline().strip().partition("=")
        assert name == "DBUS_SYSTEM_BUS_ADDRESS", f"ble-sim printed {name!r}"
        monkeypatch.setenv(name, address)
        yield Simulator(address)
    finally:
        process.terminate()
        process.wait(timeout=30)
