import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// The checks bluetoothd makes on an application's objects before answering
/// `RegisterApplication`, and the exact `Failed` message of each (bluez-dbus-api.md §5.1–§5.3).
@Suite("Server: GATT application validation")
struct GattValidationTests {
    /// One malformed application and the message it must get.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var build: @Sendable (TestApplication) throws -> Void
        var testDescription: String { name }
    }

    private static func service(
        _ app: TestApplication, _ properties: [String: DBusValue], name: String = "service0"
    ) throws {
        try app.connection.export(
            [ExportedInterface(BlueZInterface.gattService1, properties: exported(properties))], at: app.path(name))
    }

    private static func characteristic(_ app: TestApplication, _ properties: [String: DBusValue]) throws {
        try app.connection.export(
            [ExportedInterface(BlueZInterface.gattCharacteristic1, properties: exported(properties))],
            at: app.path("service0", "char0"))
    }

    private static func descriptor(_ app: TestApplication, _ properties: [String: DBusValue]) throws {
        try app.connection.export(
            [ExportedInterface(BlueZInterface.gattDescriptor1, properties: exported(properties))],
            at: app.path("service0", "char0", "desc0"))
    }

    private static func exported(_ properties: [String: DBusValue]) -> [ExportedProperty] {
        properties.sorted { $0.key < $1.key }.map { ExportedProperty($0.key, value: $0.value) }
    }

    private static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map { .string($0) }) }

    private static let goodService: [String: DBusValue] = ["UUID": .string("180D"), "Primary": .boolean(true)]
    private static func goodCharacteristic(_ app: TestApplication) -> [String: DBusValue] {
        ["UUID": .string("2A37"), "Service": .objectPath(app.path("service0")), "Flags": strings(["read"])]
    }

    static let cases: [Case] = [
        Case(name: "no objects at all", message: BlueZErrorMessage.noObjectReceived) { _ in },
        Case(name: "objects without any GATT interface", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try app.connection.export(
                [ExportedInterface(try InterfaceName("com.example.Other"), properties: exported(["X": .byte(1)]))],
                at: app.path("other"))
        },
        Case(name: "characteristic of an unknown service", message: BlueZErrorMessage.noValidServiceObjectFound) {
            app in
            try service(app, goodService)
            var properties = goodCharacteristic(app)
            properties["Service"] = .objectPath(app.path("elsewhere"))
            try characteristic(app, properties)
        },
        Case(name: "characteristic without Service", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app).filter { $0.key != "Service" })
        },
        Case(name: "empty characteristic Flags", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app).merging(["Flags": strings([])]) { $1 })
        },
        Case(name: "unknown characteristic flag", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app).merging(["Flags": strings(["read", "x-notify"])]) { $1 })
        },
        Case(name: "characteristic without Flags", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app).filter { $0.key != "Flags" })
        },
        Case(name: "descriptor with an unknown flag", message: BlueZErrorMessage.noValidServiceObjectFound) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app))
            try descriptor(
                app,
                [
                    "UUID": .string("2901"), "Characteristic": .objectPath(app.path("service0", "char0")),
                    "Flags": strings(["notify"]),
                ])
        },
        Case(name: "GAP service 0x1800", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, ["UUID": .string("00001800-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true)])
        },
        Case(name: "GATT service 0x1801", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, ["UUID": .string("1801"), "Primary": .boolean(true)])
        },
        Case(name: "service without UUID", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, ["Primary": .boolean(true)])
        },
        Case(name: "unparsable service UUID", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, ["UUID": .string("not-a-uuid"), "Primary": .boolean(true)])
        },
        Case(name: "service without Primary", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, ["UUID": .string("180D")])
        },
        Case(name: "Handle of the wrong type", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, goodService.merging(["Handle": .uint32(16)]) { $1 })
        },
        Case(name: "Includes naming no service", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(
                app, goodService.merging(["Includes": .array(.objectPath, [.objectPath(app.path("x"))])]) { $1 })
        },
        Case(name: "unparsable characteristic UUID", message: BlueZErrorMessage.failedToCreateEntryInDatabase) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app).merging(["UUID": .string("xyz")]) { $1 })
        },
        Case(
            name: "descriptor of an unknown characteristic", message: BlueZErrorMessage.failedToCreateEntryInDatabase
        ) { app in
            try service(app, goodService)
            try characteristic(app, goodCharacteristic(app))
            try descriptor(
                app,
                [
                    "UUID": .string("2901"), "Characteristic": .objectPath(app.path("service0", "nothing")),
                    "Flags": strings(["read"]),
                ])
        },
    ]

    @Test("A malformed application is refused with bluetoothd's message", arguments: cases)
    func refused(_ testCase: Case) async throws {
        try await ServerHarness.run { simulator, app, _ in
            try testCase.build(app)
            let error = await registrationError { () async throws(DBusError) in try await app.registerApplication() }
            #expect(error?.name == BlueZErrorName.failed)
            #expect(error?.message == testCase.message)
            #expect(simulator.registeredApplications.isEmpty)
            // Nothing is left pending: a second attempt is judged again, not AlreadyExists.
            let again = await registrationError { () async throws(DBusError) in try await app.registerApplication() }
            #expect(again?.message == testCase.message)
        }
    }

    @Test("An application without an object manager: \"No object received\"")
    func noObjectManager() async throws {
        try await ServerHarness.run { _, app, _ in
            let bare = try ObjectPath("/com/example/bare")
            let error = await registrationError { () async throws(DBusError) in try await app.registerApplication(bare)
            }
            #expect(error?.message == BlueZErrorMessage.noObjectReceived)
        }
    }

    @Test("A profile-only application (GattProfile1 with UUIDs) registers without services")
    func profileOnly() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.connection.export(
                [
                    ExportedInterface(
                        BlueZInterface.gattProfile1,
                        properties: [ExportedProperty("UUIDs", value: Self.strings(["180D"]))])
                ], at: app.path("profile"))
            try await app.registerApplication()
            #expect(simulator.registeredApplications.first?.profiles == [app.path("profile")])
            #expect(simulator.registeredApplications.first?.services.isEmpty == true)
        }
    }

    @Test("Arguments of the wrong types never reach bluetoothd's handler: UnknownMethod")
    func wrongSignature() async throws {
        try await ServerHarness.run { _, app, _ in
            let error = await registrationError { () async throws(DBusError) in
                _ = try await app.connection.call(
                    destination: BlueZService.busName, path: ServerHarness.adapter,
                    interface: BlueZInterface.gattManager1,
                    member: BlueZMethod.registerApplication, arguments: [.string("/com/example/app")])
            }
            #expect(error?.name == DBusError.StandardName.unknownMethod)
        }
    }
}
