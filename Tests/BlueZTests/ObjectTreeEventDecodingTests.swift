import BlueZ
import DBus
import Foundation
import Testing

@Suite struct ObjectTreeEventDecodingTests {
    let characteristic: ObjectPath
    let service: ObjectPath

    init() throws {
        service = try Fixture.path(Fixture.deviceText + "/service0020")
        characteristic = try Fixture.path(Fixture.deviceText + "/service0020/char0021")
    }

    /// The `InterfacesAdded` of §12, built value by value as the bus delivers it.
    func interfacesAddedMessage() -> DBusMessage {
        let properties = DBusType.dictionary(key: .string, value: .variant)
        func entry(_ key: String, _ value: DBusValue) -> DBusDictionaryEntry {
            DBusDictionaryEntry(.string(key), .variant(value))
        }
        let characteristicProperties = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                entry("UUID", .string("00001a01-0000-1000-8000-00805f9b34fb")), entry("Service", .objectPath(service)),
                entry("Value", .bytes(Data())), entry("Notifying", .boolean(false)),
                entry("Flags", Fixture.strings(["read", "write", "notify"])), entry("NotifyAcquired", .boolean(false)),
                entry("MTU", .uint16(247)), entry("Handle", .uint16(0x0021)),
            ])
        let interfaces = DBusValue.dictionary(
            key: .string, value: properties,
            [
                DBusDictionaryEntry(
                    .string("org.freedesktop.DBus.Introspectable"), .dictionary(key: .string, value: .variant, [])),
                DBusDictionaryEntry(.string("org.bluez.GattCharacteristic1"), characteristicProperties),
                DBusDictionaryEntry(
                    .string("org.freedesktop.DBus.Properties"), .dictionary(key: .string, value: .variant, [])),
            ])
        return DBusMessage(
            kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesAdded,
            sender: try? BusName(":1.5"), body: [.objectPath(characteristic), interfaces])
    }

    @Test func interfacesAdded() throws {
        let event = try #require(try ObjectTreeEvent(signal: interfacesAddedMessage()))
        guard case .interfacesAdded(let path, let interfaces) = event else {
            Issue.record("wrong event \(event)")
            return
        }
        #expect(path == characteristic)
        #expect(
            interfaces.keys.sorted() == [BlueZInterface.gattCharacteristic1, .introspectable, .properties].sorted())
        #expect(interfaces[.introspectable] == [:])
        #expect(interfaces[.properties] == [:])
        let properties = try #require(interfaces[BlueZInterface.gattCharacteristic1])
        // Variants are unwrapped.
        #expect(properties["MTU"] == .uint16(247))
        #expect(properties["Value"] == .bytes(Data()))
        let typed = try GattCharacteristicProperties(properties: properties)
        #expect(typed.handle == 0x21)
    }

    @Test func interfacesRemoved() throws {
        let message = DBusMessage(
            kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesRemoved,
            body: [
                .objectPath(characteristic),
                Fixture.strings([
                    "org.freedesktop.DBus.Introspectable", "org.bluez.GattCharacteristic1",
                    "org.freedesktop.DBus.Properties",
                ]),
            ])
        let event = try ObjectTreeEvent(signal: message)
        #expect(
            event
                == .interfacesRemoved(
                    characteristic, [.introspectable, BlueZInterface.gattCharacteristic1, .properties]))
    }

    @Test func notification() throws {
        let message = DBusMessage(
            kind: .signal, path: characteristic, interface: .properties, member: BlueZSignal.propertiesChanged,
            body: [
                .string("org.bluez.GattCharacteristic1"),
                .dictionary(
                    key: .string, value: .variant,
                    [DBusDictionaryEntry(.string("Value"), .variant(.bytes(Data([0x01, 0x02]))))]),
                .array(.string, []),
            ])
        let event = try ObjectTreeEvent(signal: message)
        #expect(
            event
                == .propertiesChanged(
                    characteristic, BlueZInterface.gattCharacteristic1, changed: ["Value": .bytes(Data([1, 2]))],
                    invalidated: []))
    }

    @Test func rssiInvalidation() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let message = DBusMessage(
            kind: .signal, path: device, interface: .properties, member: BlueZSignal.propertiesChanged,
            body: [
                .string("org.bluez.Device1"), .dictionary(key: .string, value: .variant, []),
                Fixture.strings(["RSSI", "TxPower"]),
            ])
        let event = try ObjectTreeEvent(signal: message)
        #expect(
            event == .propertiesChanged(device, BlueZInterface.device1, changed: [:], invalidated: ["RSSI", "TxPower"]))
    }

    @Test func otherMessagesAreNotTreeEvents() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let messages = [
            DBusMessage(
                kind: .signal, path: device, interface: BlueZInterface.device1, member: BlueZSignal.disconnected,
                body: [.string("org.bluez.Reason.Remote"), .string("x")]),
            DBusMessage(
                kind: .methodCall, path: .root, interface: .objectManager, member: BlueZSignal.interfacesAdded,
                body: interfacesAddedMessage().body),
            DBusMessage(kind: .methodReturn, body: []),
            DBusMessage(kind: .signal, path: device, interface: .properties, member: BlueZMethod.get, body: []),
            DBusMessage(
                kind: .signal, path: device, interface: .introspectable, member: BlueZSignal.propertiesChanged, body: []
            ),
        ]
        for message in messages {
            #expect(try ObjectTreeEvent(signal: message) == nil)
        }
    }

    @Test func malformedSignalsThrow() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let cases: [(DBusMessage, String)] = [
            (
                DBusMessage(
                    kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesAdded,
                    body: [.objectPath(device), ObjectManagerCoding.encodeProperties([:])]),
                "InterfacesAdded: expected body oa{sa{sv}}, got oa{sv}"
            ),
            (
                DBusMessage(
                    kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesAdded,
                    body: [.objectPath(device), ObjectManagerCoding.encodeInterfaces([:]), .string("extra")]),
                "InterfacesAdded: expected body oa{sa{sv}}, got oa{sa{sv}}s"
            ),
            (
                DBusMessage(
                    kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesRemoved,
                    body: [.string(Fixture.deviceText), Fixture.strings(["org.bluez.Device1"])]),
                "InterfacesRemoved: expected body oas, got sas"
            ),
            (
                DBusMessage(
                    kind: .signal, path: device, interface: .properties, member: BlueZSignal.propertiesChanged,
                    body: [.string("org.bluez.Device1"), ObjectManagerCoding.encodeProperties([:])]),
                "PropertiesChanged: expected body sa{sv}as, got sa{sv}"
            ),
            (
                DBusMessage(
                    kind: .signal, path: nil, interface: .properties, member: BlueZSignal.propertiesChanged,
                    body: [
                        .string("org.bluez.Device1"), ObjectManagerCoding.encodeProperties([:]), .array(.string, []),
                    ]),
                "PropertiesChanged: the signal has no path"
            ),
        ]
        for (message, text) in cases {
            let error = #expect(throws: DBusError.self) { try ObjectTreeEvent(signal: message) }
            #expect(error?.code == .typeMismatch)
            #expect(error?.message == text)
        }
    }

    @Test func invalidInterfaceNamesThrow() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let removed = DBusMessage(
            kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesRemoved,
            body: [.objectPath(device), Fixture.strings(["org.bluez.Device1", "not an interface"])])
        let error = #expect(throws: DBusError.self) { try ObjectTreeEvent(signal: removed) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.hasPrefix("InterfacesRemoved: ") == true)

        let added = DBusMessage(
            kind: .signal, path: .root, interface: .objectManager, member: BlueZSignal.interfacesAdded,
            body: [
                .objectPath(device),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [DBusDictionaryEntry(.string("Device1"), .dictionary(key: .string, value: .variant, []))]),
            ])
        #expect(throws: DBusError.self) { try ObjectTreeEvent(signal: added) }

        let changed = DBusMessage(
            kind: .signal, path: device, interface: .properties, member: BlueZSignal.propertiesChanged,
            body: [.string(""), ObjectManagerCoding.encodeProperties([:]), .array(.string, [])])
        #expect(throws: DBusError.self) { try ObjectTreeEvent(signal: changed) }
    }

    @Test func managedObjectsReply() throws {
        let snapshot = try Fixture.snapshot()
        let reply = DBusMessage(
            kind: .methodReturn, replySerial: 3, body: [ObjectManagerCoding.encodeManagedObjects(snapshot)])
        let event = try ObjectTreeEvent(managedObjectsReply: reply)
        #expect(event == .snapshot(snapshot.mapValues { $0.mapValues { $0.mapValues(\.unwrapped) } }))
    }

    @Test func managedObjectsReplyErrors() throws {
        let failure = DBusMessage(
            kind: .error, errorName: "org.freedesktop.DBus.Error.ServiceUnknown",
            body: [.string("The name org.bluez was not provided by any .service files")])
        let remote = #expect(throws: DBusError.self) { try ObjectTreeEvent(managedObjectsReply: failure) }
        #expect(remote?.code == .remote)
        #expect(remote?.name == "org.freedesktop.DBus.Error.ServiceUnknown")

        let wrong = DBusMessage(kind: .methodReturn, body: [ObjectManagerCoding.encodeInterfaces([:])])
        let mismatch = #expect(throws: DBusError.self) { try ObjectTreeEvent(managedObjectsReply: wrong) }
        #expect(mismatch?.code == .typeMismatch)
        #expect(mismatch?.message == "GetManagedObjects: expected body a{oa{sa{sv}}}, got a{sa{sv}}")

        let call = DBusMessage(kind: .methodCall, path: .root, member: BlueZMethod.getManagedObjects)
        #expect(throws: DBusError.self) { try ObjectTreeEvent(managedObjectsReply: call) }
    }

    @Test func signalsRoundTrip() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let events: [ObjectTreeEvent] = [
            .interfacesAdded(device, Fixture.object(BlueZInterface.device1, Fixture.device().mapValues(\.unwrapped))),
            .interfacesRemoved(device, [.introspectable, BlueZInterface.device1, .properties]),
            .propertiesChanged(
                device, BlueZInterface.device1, changed: ["RSSI": .int16(-50)], invalidated: ["TxPower"]),
            .propertiesChanged(device, BlueZInterface.device1, changed: [:], invalidated: []),
        ]
        for event in events {
            let message = try #require(event.signalMessage())
            for value in message.body { try value.validate() }
            #expect(try ObjectTreeEvent(signal: message) == event)
        }
        #expect(ObjectTreeEvent.reset.signalMessage() == nil)
        #expect(ObjectTreeEvent.snapshot([:]).signalMessage() == nil)
        let added = try #require(events[0].signalMessage())
        #expect(added.path == .root)
        #expect(added.signature == "oa{sa{sv}}")
        let changed = try #require(events[2].signalMessage())
        #expect(changed.path == device)
        #expect(changed.signature == "sa{sv}as")
    }

    @Test func codingTypes() throws {
        #expect(ObjectManagerCoding.propertiesType.signature == "a{sv}")
        #expect(ObjectManagerCoding.interfacesType.signature == "a{sa{sv}}")
        #expect(ObjectManagerCoding.managedObjectsType.signature == "a{oa{sa{sv}}}")
        // A value already in a variant is not wrapped twice.
        let encoded = ObjectManagerCoding.encodeProperties(["A": .variant(.byte(1)), "B": .byte(2)])
        #expect(try ObjectManagerCoding.decodeProperties(encoded) == ["A": .byte(1), "B": .byte(2)])
        #expect(throws: DBusError.self) { try ObjectManagerCoding.decodeProperties(.array(.string, [])) }
        #expect(throws: DBusError.self) {
            try ObjectManagerCoding.decodeProperties(.dictionary(key: .string, value: .string, []))
        }
    }
}
