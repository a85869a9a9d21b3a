import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// A remote central's reads and writes, forwarded to the application as bluetoothd does
/// (bluez-dbus-api.md §5.4).
@Suite("Server: remote central reads and writes")
struct RemoteCentralTests {
    /// Registers the heart-rate and battery services.
    private static func registered(_ app: TestApplication) async throws {
        try app.export([ServerFixtures.heartRate, ServerFixtures.battery])
        try await app.registerApplication()
    }

    private static let centralDevice = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    @Test("ReadValue gets device (o), link (s) \"LE\" and mtu (q), no offset; the central gets the reply")
    func readOptions() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let value = try await simulator.remoteRead(characteristic: "2A37")
            #expect(value == Data([0x2A]))
            let call = try #require(app.log.calls("ReadValue").first)
            #expect(call.path == app.path("service0", "char0"))
            #expect(call.interface == BlueZInterface.gattCharacteristic1)
            #expect(call.sender == simulator.uniqueName)
            #expect(call.signature == "a{sv}")
            let options = options(of: call, at: 0)
            #expect(
                options == [
                    "device": .objectPath(try ObjectPath(Self.centralDevice)), "link": .string("LE"),
                    "mtu": .uint16(517),
                ])
            // Keys in bluetoothd's order.
            guard case .dictionary(_, _, let entries) = call.body[0] else { return }
            #expect(entries.map(\.key) == [.string("device"), .string("link"), .string("mtu")])
        }
    }

    @Test("A non-zero offset is passed as offset (q); central address and MTU are the central's")
    func readOffset() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            _ = try await simulator.remoteRead(
                characteristic: "2A37", central: "aa:bb:cc:dd:ee:ff", offset: 7, mtu: 185)
            let call = try #require(app.log.calls("ReadValue").first)
            let options = options(of: call, at: 0)
            #expect(options["offset"] == .uint16(7))
            #expect(options["mtu"] == .uint16(185))
            #expect(options["device"] == .objectPath(try ObjectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF")))
        }
    }

    @Test("A reply longer than 512 bytes is truncated")
    func readTruncated() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            app.react(BlueZMethod.readValue, at: app.path("service0", "char0"), .reply([.bytes(Data(count: 600))]))
            #expect(try await simulator.remoteRead(characteristic: "2A37").count == 512)
        }
    }

    @Test("A reply that does not start with ay: Request Not Supported (0x06)")
    func readBadReply() async throws {
        try await ServerHarness.run { simulator, app, _ in
            var service = ServerFixtures.battery
            service.characteristics[0].readSignature = "s"
            try app.export([service])
            try await app.registerApplication()
            app.react(BlueZMethod.readValue, at: app.path("service1", "char0"), .reply([.string("oops")]))
            let error = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "2A19")
            }
            #expect(error?.code == .invalidReply)
            #expect(error?.attError == 0x06)
        }
    }

    @Test("WriteValue gets the value and the read options; prepare-authorize only when true")
    func writeOptions() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            try await simulator.remoteWrite(Data([1, 2]), to: "2A39")
            try await simulator.remoteWrite(Data([3]), to: "2A39", offset: 2, prepareAuthorize: true)
            let calls = app.log.calls("WriteValue", path: app.path("service0", "char1"))
            #expect(calls.count == 2)
            #expect(calls[0].signature == "aya{sv}")
            #expect(calls[0].body.first == .bytes(Data([1, 2])))
            #expect(!calls[0].noReplyExpected)
            let first = options(of: calls[0], at: 1)
            #expect(Set(first.keys) == ["device", "link", "mtu"])
            #expect(first["device"] == .objectPath(try ObjectPath(Self.centralDevice)))
            let second = options(of: calls[1], at: 1)
            #expect(second["offset"] == .uint16(2))
            #expect(second["prepare-authorize"] == .boolean(true))
            #expect(second["type"] == nil)
        }
    }

    @Test("A write command is sent without waiting: no reply expected, even when the app never answers")
    func writeCommand() async throws {
        try await ServerHarness.run(requestTimeout: .seconds(20)) { simulator, app, _ in
            try await Self.registered(app)
            app.react(BlueZMethod.writeValue, at: app.path("service0", "char1"), .hold)
            // The reference: a read sent first, which the application answers 10 s later. A
            // write that waited for its answer or the 20 s request deadline would end after it.
            app.react(
                BlueZMethod.readValue, at: app.path("service0", "char0"), .replyAfter(.seconds(10), [.bytes(Data([1]))])
            )
            let reference = Watched { () -> Bool in (try? await simulator.remoteRead(characteristic: "2A37")) != nil }
            try await app.log.wait(for: "ReadValue")
            try await simulator.remoteWrite(Data([9]), to: "2A39", type: .command)
            #expect(reference.isRunning, "returned before the read sent before it was answered")
            let call = try #require(try await app.log.wait(for: "WriteValue").first)
            #expect(call.noReplyExpected)
            reference.cancel()
            _ = await reference.value
        }
    }

    @Test("Every write to a write-without-response characteristic is forwarded without waiting")
    func writeWithoutResponseCharacteristic() async throws {
        try await ServerHarness.run(requestTimeout: .seconds(3)) { simulator, app, _ in
            try await Self.registered(app)
            app.react(BlueZMethod.writeValue, at: app.path("service1", "char0"), .error(BlueZErrorName.failed, "0x80"))
            try await simulator.remoteWrite(Data([1]), to: "2A19", type: .request)
            let call = try #require(try await app.log.wait(for: "WriteValue").first)
            #expect(call.noReplyExpected)
        }
    }

    @Test("Descriptors: ReadValue and WriteValue on the descriptor object, with the same options")
    func descriptors() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let descriptor = app.path("service0", "char0", "desc0")
            #expect(try await simulator.remoteRead(descriptor: "2901", of: "2A37", offset: 1) == Data([0xD0]))
            try await simulator.remoteWrite(Data([7]), toDescriptor: "2901", of: "2A37")
            let read = try #require(app.log.calls("ReadValue", path: descriptor).first)
            #expect(read.interface == BlueZInterface.gattDescriptor1)
            #expect(options(of: read, at: 0)["offset"] == .uint16(1))
            let write = try #require(app.log.calls("WriteValue", path: descriptor).first)
            #expect(write.body.first == .bytes(Data([7])))
            #expect(options(of: write, at: 1)["link"] == .string("LE"))
        }
    }

    /// An application error and the ATT error the central receives.
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var isWrite: Bool
        var att: UInt8
        var testDescription: String {
            "\(name) \"\(message)\" \(isWrite ? "write" : "read") → 0x\(String(att, radix: 16))"
        }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(name: BlueZErrorName.failed, message: "0x80", isWrite: false, att: 0x80),
        ErrorCase(name: BlueZErrorName.failed, message: "0x9f", isWrite: true, att: 0x9F),
        ErrorCase(name: BlueZErrorName.failed, message: "not a number", isWrite: false, att: 0x80),
        ErrorCase(name: BlueZErrorName.failed, message: "0x10", isWrite: false, att: 0x0E),
        ErrorCase(name: BlueZErrorName.notSupported, message: "", isWrite: false, att: 0x06),
        ErrorCase(name: BlueZErrorName.notAuthorized, message: "", isWrite: true, att: 0x08),
        ErrorCase(name: BlueZErrorName.invalidValueLength, message: "", isWrite: true, att: 0x0D),
        ErrorCase(name: BlueZErrorName.invalidOffset, message: "", isWrite: false, att: 0x07),
        ErrorCase(name: BlueZErrorName.inProgress, message: "", isWrite: false, att: 0xFE),
        ErrorCase(name: BlueZErrorName.improperlyConfigured, message: "", isWrite: true, att: 0xFD),
        ErrorCase(name: BlueZErrorName.notPermitted, message: "", isWrite: false, att: 0x02),
        ErrorCase(name: BlueZErrorName.notPermitted, message: "", isWrite: true, att: 0x03),
        ErrorCase(name: DBusError.StandardName.unknownMethod, message: "", isWrite: false, att: 0x0E),
    ]

    @Test("Application errors become the ATT errors of the §5.4 table", arguments: errorCases)
    func applicationErrors(_ testCase: ErrorCase) async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let member = testCase.isWrite ? BlueZMethod.writeValue : BlueZMethod.readValue
            let path = testCase.isWrite ? app.path("service0", "char1") : app.path("service0", "char0")
            app.react(member, at: path, .error(testCase.name, testCase.message))
            let error = await #expect(throws: RemoteCentralError.self) {
                if testCase.isWrite {
                    try await simulator.remoteWrite(Data([1]), to: "2A39")
                } else {
                    _ = try await simulator.remoteRead(characteristic: "2A37")
                }
            }
            #expect(error?.code == .applicationError)
            #expect(error?.attError == testCase.att)
            #expect(error?.applicationErrorName == testCase.name)
        }
    }

    @Test("No answer within the deadline: the central gets Unlikely Error (0x0E), late replies are ignored")
    func deadline() async throws {
        try await ServerHarness.run(requestTimeout: .milliseconds(300)) { simulator, app, _ in
            try await Self.registered(app)
            // Answered 4 s later, under the 5 s default: a read that waited for that default
            // would get the value instead of timing out.
            app.react(
                BlueZMethod.readValue, at: app.path("service0", "char0"), .replyAfter(.seconds(4), [.bytes(Data([1]))]))
            let error = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "2A37")
            }
            #expect(error?.code == .timeout)
            #expect(error?.attError == 0x0E)
        }
    }

    @Test("Flags that forbid the request: bluetoothd answers itself (0x02 / 0x03 / 0x0D), no call")
    func rejectedByFlags() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let read = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "2A39")
            }
            #expect(read?.code == .rejected && read?.attError == 0x02)
            let write = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteWrite(Data([1]), to: "2A37")
            }
            #expect(write?.code == .rejected && write?.attError == 0x03)
            let long = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteWrite(Data(count: 513), to: "2A39")
            }
            #expect(long?.attError == 0x0D)
            #expect(app.log.calls("ReadValue").isEmpty && app.log.calls("WriteValue").isEmpty)
        }
    }

    @Test("Unknown characteristics, bad addresses and a stopped daemon are typed errors")
    func lookUpErrors() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try await Self.registered(app)
            let missing = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "FFFF")
            }
            #expect(missing?.code == .notFound)
            let address = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "2A37", central: "not an address")
            }
            #expect(address?.code == .invalidArgument)
            simulator.stop()
            let stopped = await #expect(throws: RemoteCentralError.self) {
                try await simulator.remoteRead(characteristic: "2A37")
            }
            #expect(stopped?.code == .notRunning)
        }
    }
}
