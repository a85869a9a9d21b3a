#!/usr/bin/python3
"""The peripheral the real-BlueZ suite talks to: a GATT server and an advertisement on hci1.

Runs inside the test guest (dbus-python and GLib: python3-dbus, python3-gi), on the guest's system
bus. The suite drives it through org.swiftble.TestPeripheral1 on the bus name
org.swiftble.TestPeripheral: send notifications or indications, read what a central wrote, drop
the link from the peripheral's side. Prints PERIPHERAL-READY once BlueZ accepted the
application and the advertisement. Its GATT layout is RealBlueZTests/TestPeripheralLayout.swift.
"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
SERVICE_IFACE = "org.bluez.GattService1"
CHARACTERISTIC_IFACE = "org.bluez.GattCharacteristic1"
CONTROL_NAME = "org.swiftble.TestPeripheral"
CONTROL_IFACE = "org.swiftble.TestPeripheral1"
ADAPTER = "/org/bluez/" + (sys.argv[1] if len(sys.argv) > 1 else "hci1")
ROOT = "/org/swiftble/peripheral"

SERVICE_UUID = "5b1e0000-6d2c-4f4e-9a61-2f3b0c7d8e90"
LOCAL_NAME = "swift-ble-test"
READVERTISE_MS = 500
# uuid suffix, flags, initial value
CHARACTERISTICS = [
    ("0001", ["read", "write"], b"hello"),
    ("0002", ["read", "write-without-response"], b""),
    ("0003", ["read", "notify"], b""),
    ("0004", ["read", "indicate"], b""),
]


def uuid(suffix):
    return SERVICE_UUID[:4] + suffix + SERVICE_UUID[8:]


def log(*args):
    print("peripheral:", *args, flush=True)


class Characteristic(dbus.service.Object):
    def __init__(self, bus, index, suffix, flags, value):
        self.path = "%s/service0/char%d" % (ROOT, index)
        self.uuid = uuid(suffix)
        self.flags = flags
        self.initial = bytes(value)
        self.value = bytes(value)
        self.notifying = False
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {"UUID": self.uuid, "Service": dbus.ObjectPath(ROOT + "/service0"),
                "Flags": dbus.Array(self.flags, signature="s")}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.method(CHARACTERISTIC_IFACE, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        offset = int(options.get("offset", 0))
        return dbus.Array(self.value[offset:], signature="y")

    @dbus.service.method(CHARACTERISTIC_IFACE, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        offset = int(options.get("offset", 0))
        self.value = self.value[:offset] + bytes(value)

    @dbus.service.method(CHARACTERISTIC_IFACE)
    def StartNotify(self):
        self.notifying = True

    @dbus.service.method(CHARACTERISTIC_IFACE)
    def StopNotify(self):
        self.notifying = False

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def send(self, value):
        """bluetoothd turns each Value change into one notification or indication."""
        self.value = bytes(value)
        self.PropertiesChanged(CHARACTERISTIC_IFACE, {"Value": dbus.Array(self.value, signature="y")}, [])


class Application(dbus.service.Object):
    def __init__(self, bus):
        dbus.service.Object.__init__(self, bus, ROOT)
        self.characteristics = [Characteristic(bus, i, *spec) for i, spec in enumerate(CHARACTERISTICS)]

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        paths = [c.path for c in self.characteristics]
        objects = {dbus.ObjectPath(ROOT + "/service0"): {SERVICE_IFACE: {
            "UUID": SERVICE_UUID, "Primary": True, "Characteristics": dbus.Array(paths, signature="o")}}}
        for c in self.characteristics:
            objects[dbus.ObjectPath(c.path)] = {CHARACTERISTIC_IFACE: c.properties()}
        return objects


class Advertisement(dbus.service.Object):
    def __init__(self, bus):
        self.path = ROOT + "/advertisement0"
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE_UUID], signature="s"),
                "LocalName": LOCAL_NAME}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        log("advertisement released")


class Control(dbus.service.Object):
    """What the suite asks of the peripheral."""

    def __init__(self, bus, application):
        dbus.service.Object.__init__(self, bus, "/org/swiftble/TestPeripheral")
        self.bus = bus
        self.application = application
        self.queue = []

    def characteristic(self, wanted):
        for c in self.application.characteristics:
            if c.uuid == wanted.lower():
                return c
        raise dbus.exceptions.DBusException("no characteristic " + wanted,
                                            name="org.swiftble.TestPeripheral.Error.NotFound")

    @dbus.service.method(CONTROL_IFACE, in_signature="saay")
    def Send(self, wanted, values):
        """Notifies (or indicates) each value in order: a few per main-loop turn, so calls keep
        being answered during a long run."""
        c = self.characteristic(wanted)
        start = not self.queue
        self.queue.extend((c, bytes(v)) for v in values)

        def step():
            for _ in range(8):
                if not self.queue:
                    return False
                characteristic, value = self.queue.pop(0)
                characteristic.send(value)
            return bool(self.queue)
        if start:
            GLib.idle_add(step)

    @dbus.service.method(CONTROL_IFACE, in_signature="s", out_signature="ay")
    def Value(self, wanted):
        return dbus.Array(self.characteristic(wanted).value, signature="y")

    @dbus.service.method(CONTROL_IFACE, in_signature="s", out_signature="b")
    def Subscribed(self, wanted):
        return self.characteristic(wanted).notifying

    @dbus.service.method(CONTROL_IFACE)
    def Reset(self):
        """Initial values, no pending sends, no links, advertising."""
        self.set_quiet(False)
        self.queue.clear()
        for c in self.application.characteristics:
            c.value = c.initial
        self.DropLinks()

    @dbus.service.method(CONTROL_IFACE, in_signature="b")
    def Quiet(self, on):
        """Stops advertising (True) while another peripheral on the adapter is under test, so the
        two do not churn the controller's advertising at once; False (or Reset) resumes."""
        self.set_quiet(bool(on))

    @dbus.service.method(CONTROL_IFACE, out_signature="u")
    def DropLinks(self):
        """Disconnects every central from the peripheral's side."""
        manager = dbus.Interface(self.bus.get_object(BLUEZ, "/"), OBJECT_MANAGER)
        dropped = 0
        for path, interfaces in manager.GetManagedObjects().items():
            device = interfaces.get("org.bluez.Device1")
            if device and path.startswith(ADAPTER + "/") and device.get("Connected"):
                dbus.Interface(self.bus.get_object(BLUEZ, path), "org.bluez.Device1").Disconnect()
                dropped += 1
        return dbus.UInt32(dropped)


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter = bus.get_object(BLUEZ, ADAPTER)
    dbus.Interface(adapter, PROPERTIES).Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    application = Application(bus)
    advertisement = Advertisement(bus)
    control = Control(bus, application)
    loop = GLib.MainLoop()
    pending = {"application", "advertisement"}
    advertising = dbus.Interface(adapter, "org.bluez.LEAdvertisingManager1")

    chain = {"quiet": False, "running": False}

    def ignore(*_):
        pass

    def readvertise():
        """btvirt sends one advertising report per advertising or scanning enable, never
        periodically: re-registering the advertisement now and then makes the emulated
        peripheral visible the way a real one (advertising every few ms) is."""
        def again(*_):
            if not chain["quiet"]:
                GLib.timeout_add(READVERTISE_MS, readvertise)
                return
            chain["running"] = False
            # A registration that was under way when Quiet came.
            advertising.UnregisterAdvertisement(advertisement.path, reply_handler=ignore, error_handler=ignore)

        def register(*_):
            if chain["quiet"]:
                return again()
            advertising.RegisterAdvertisement(advertisement.path, {}, reply_handler=again, error_handler=failed_again)

        def failed_again(error):
            log("re-advertising failed:", error)
            again()
        # Registering again even when unregistering failed: it was not registered then.
        advertising.UnregisterAdvertisement(advertisement.path, reply_handler=register, error_handler=register)
        return False

    def set_quiet(on):
        chain["quiet"] = on
        if on:
            advertising.UnregisterAdvertisement(advertisement.path, reply_handler=ignore, error_handler=ignore)
        elif not chain["running"]:
            chain["running"] = True
            readvertise()
    control.set_quiet = set_quiet

    def registered(what):
        def done(*_):
            pending.discard(what)
            if not pending:
                name = dbus.service.BusName(CONTROL_NAME, bus)
                control.name = name
                chain["running"] = True
                GLib.timeout_add(READVERTISE_MS, readvertise)
                print("PERIPHERAL-READY", flush=True)
        return done

    def failed(what):
        def done(error):
            log("registering the", what, "failed:", error)
            loop.quit()
        return done
    dbus.Interface(adapter, "org.bluez.GattManager1").RegisterApplication(
        ROOT, {}, reply_handler=registered("application"), error_handler=failed("application"))
    advertising.RegisterAdvertisement(
        advertisement.path, {}, reply_handler=registered("advertisement"), error_handler=failed("advertisement"))
    loop.run()
    return 1


if __name__ == "__main__":
    sys.exit(main())
