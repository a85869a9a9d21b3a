import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// `DBusRepresentable` conversions of Swift values, through a real bus and back.
@Suite struct RepresentableRoundTripTests {
    /// Sends `value` through an echo method of its own type and decodes the reply as `T`.
    private func roundTrip<T: DBusRepresentable>(_ value: T) async throws -> (reply: DBusMessage, decoded: T) {
        try await withServiceAndClient { _, service, client in
            try Echo.export(on: service, signature: try Signature(types: [T.dbusType]))
            let reply = try await Echo.call(Echo.async, on: service, from: client, [value.dbusValue])
            return (reply, try reply.argument(0, as: T.self))
        }
    }

    @Test func stringToVariantDictionary() async throws {
        let properties: [String: DBusValue] = [
            "Name": .string("sensor"), "RSSI": .int16(-42), "Paired": .boolean(false),
            "UUIDs": .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]),
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(76), .variant(.bytes(Data([1, 2]))))]),
        ]
        let (reply, decoded) = try await roundTrip(properties)
        #expect(reply.signature == "a{sv}")
        #expect(decoded == properties)
    }

    @Test func managedObjects() async throws {
        let objects: [ObjectPath: [String: [String: DBusValue]]] = [
            try path("/org/bluez/hci0"): ["org.bluez.Adapter1": ["Powered": .boolean(true)]],
            try path("/org/bluez/hci0/dev_AA"): [
                "org.bluez.Device1": ["Address": .string("AA"), "Connected": .boolean(false)],
                "org.freedesktop.DBus.Properties": [:],
            ],
        ]
        let (reply, decoded) = try await roundTrip(objects)
        #expect(reply.signature == "a{oa{sa{sv}}}")
        #expect(decoded == objects)
    }

    @Test func bytesTravelAsByteArrays() async throws {
        let payload: [UInt8] = [0, 1, 254, 255]
        #expect(payload.dbusValue == .bytes(Data(payload)))
        let (reply, decoded) = try await roundTrip(payload)
        #expect(reply.body == [.bytes(Data(payload))])
        #expect(decoded == payload)
        #expect(try reply.argument(0, as: Data.self) == Data(payload))
        let empty = try await roundTrip([UInt8]())
        #expect(empty.reply.body == [.bytes(Data())])
    }

    /// An empty array of another element type must keep its element type, not turn into `ay`.
    @Test func emptyArraysKeepTheirElementType() async throws {
        let (reply, decoded) = try await roundTrip([String]())
        #expect(reply.body == [.array(.string, [])])
        #expect(decoded.isEmpty)
        let nested = try await roundTrip([[Int32]]())
        #expect(nested.reply.signature == "aai")
    }

    @Test func nestedArraysAndSmallDictionaries() async throws {
        let matrix: [[Int32]] = [[1, 2, 3], [], [-4]]
        #expect(try await roundTrip(matrix).decoded == matrix)
        let handles: [UInt8: UInt16] = [1: 0x0010, 2: 0xFFFF]
        let (reply, decoded) = try await roundTrip(handles)
        #expect(reply.signature == "a{yq}")
        #expect(decoded == handles)
        let numbers: [Int64] = [.min, 0, .max]
        #expect(try await roundTrip(numbers).decoded == numbers)
        let doubles: [Double] = [0.25, -1e10]
        #expect(try await roundTrip(doubles).decoded == doubles)
        let flags: [Bool] = [true, false]
        #expect(try await roundTrip(flags).decoded == flags)
    }

    @Test func scalarsAndNames() async throws {
        #expect(try await roundTrip(UInt8(200)).decoded == 200)
        #expect(try await roundTrip(Int16.min).decoded == .min)
        #expect(try await roundTrip(UInt16.max).decoded == .max)
        #expect(try await roundTrip(Int32(-123_456)).decoded == -123_456)
        #expect(try await roundTrip(UInt32.max).decoded == .max)
        #expect(try await roundTrip(UInt64.max).decoded == .max)
        #expect(try await roundTrip("text ✓").decoded == "text ✓")
        #expect(try await roundTrip(try path("/a/b")).decoded == (try path("/a/b")))
        #expect(try await roundTrip(try Signature("a{sv}")).decoded == (try Signature("a{sv}")))
        #expect(try await roundTrip(Data([9, 8, 7])).decoded == Data([9, 8, 7]))
    }

    /// `DBusValue` stands for "any value": it travels as a variant and decodes one level out.
    @Test func dbusValueTravelsAsVariant() async throws {
        let value = DBusValue.structure([.int32(1), .string("x")])
        #expect(value.dbusValue == .variant(value))
        let (reply, decoded) = try await roundTrip(value)
        #expect(reply.signature == "v")
        #expect(decoded == value)
    }

    /// Decoding is strict: another type throws `typeMismatch`, numbers are never widened.
    @Test func decodingTheWrongTypeThrowsTypeMismatch() async throws {
        try await withServiceAndClient { _, service, client in
            let sent: [DBusValue] = [
                .int32(7), .variant(.int32(8)),
                .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("k"), .variant(.string("v")))]),
                .array(.string, [.string("a")]),
            ]
            try Echo.export(on: service, signature: try Signature(types: sent.map(\.type)))
            let reply = try await Echo.call(Echo.immediate, on: service, from: client, sent)

            #expect(try reply.argument(0, as: Int32.self) == 7)
            #expect(try reply.argument(1, as: Int32.self) == 8, "a variant unwraps")
            let mismatches: [DBusError?] = [
                expectDBusErrorSync { try reply.argument(0, as: String.self) },
                expectDBusErrorSync { try reply.argument(0, as: Int64.self) },
                expectDBusErrorSync { try reply.argument(0, as: UInt32.self) },
                expectDBusErrorSync { try reply.argument(1, as: Bool.self) },
                expectDBusErrorSync { try reply.argument(2, as: [String: Int32].self) },
                expectDBusErrorSync { try reply.argument(2, as: [String].self) },
                expectDBusErrorSync { try reply.argument(3, as: [Int32].self) },
                expectDBusErrorSync { try reply.argument(3, as: [UInt8].self) },
                expectDBusErrorSync { try reply.argument(3, as: Data.self) },
                expectDBusErrorSync { try reply.argument(4, as: Int32.self) },
            ]
            for error in mismatches { #expect(error?.code == .typeMismatch, "\(String(describing: error))") }
            #expect(try reply.argument(2, as: [String: String].self) == ["k": "v"])
            #expect(try reply.argument(2, as: [String: DBusValue].self) == ["k": .string("v")])
        }
    }
}
