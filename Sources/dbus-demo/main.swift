import DBus
import DBusTestSupport
import Foundation

// The most useful thing the D-Bus layer can show on its own: a private bus, an exported
// object with a method, a property and an object manager, and a second connection using them.

func step(_ text: String) { print("• \(text)") }

do {
    let bus = try TestBus()
    defer { bus.stop() }
    step("started a private dbus-daemon at \(bus.address)")

    let service = try await bus.connect()
    let client = try await bus.connect()
    step("two connections: service \(service.uniqueName), client \(client.uniqueName)")

    let name = try BusName("org.swiftble.Demo")
    let root = try ObjectPath("/org/swiftble")
    let thermometer = try ObjectPath("/org/swiftble/thermometer0")
    let interface = try InterfaceName("org.swiftble.Thermometer1")
    service.addObjectManager(at: root)
    try await service.requestName(name)
    step("service owns \(name)")

    let changes = try await client.signals(
        matching: MatchRule(sender: name, pathNamespace: root, interface: .properties))
    let added = try await client.signals(matching: MatchRule(sender: name, interface: .objectManager))

    try service.export(
        [
            ExportedInterface(
                interface,
                methods: [
                    ExportedMethod(try MemberName("Calibrate"), in: Signature("d"), out: Signature("s")) { call in
                        let offset: Double = try call.argument(0)
                        return [.string("calibrated by \(offset) °C")]
                    }
                ],
                properties: [ExportedProperty("Temperature", value: .double(21.5))])
        ], at: thermometer)
    step("service exported \(interface) at \(thermometer)")

    var addedIterator = added.makeAsyncIterator()
    if let signal = await addedIterator.next() {
        step("client saw \(signal.member?.rawValue ?? "?") for \(signal.body.first.map { "\($0)" } ?? "?")")
    }

    let reply = try await client.call(
        destination: name, path: thermometer, interface: interface, member: try MemberName("Calibrate"),
        arguments: [.double(0.5)], timeout: .seconds(2))
    step("client called Calibrate(0.5) → \(try reply.argument(0, as: String.self))")

    try service.setProperty("Temperature", to: .double(22.25), interface: interface, path: thermometer)
    var changeIterator = changes.makeAsyncIterator()
    if let signal = await changeIterator.next() {
        let changed: [String: DBusValue] = try signal.argument(1)
        step("client saw PropertiesChanged: Temperature = \(changed["Temperature"].map { "\($0)" } ?? "?")")
    }

    let managed = try await client.call(
        destination: name, path: root, interface: .objectManager, member: try MemberName("GetManagedObjects"))
    let objects: [ObjectPath: [String: [String: DBusValue]]] = try managed.argument(0)
    step("GetManagedObjects lists \(objects.keys.map(\.rawValue).sorted())")

    do {
        _ = try await client.call(
            destination: name, path: thermometer, interface: interface, member: try MemberName("Explode"),
            timeout: .seconds(2))
    } catch {
        step("calling a missing method fails with a typed error: \(error)")
    }
    step("counters: \(client.counters.callsStarted) calls started, \(client.counters.outstanding) outstanding")
    service.close()
    client.close()
    print("done: the D-Bus layer works end to end. (The BLE demo arrives with the BLE layer.)")
} catch {
    print("demo failed: \(error)")
    exit(1)
}
