import Foundation
import Testing

@testable import DBus

/// `DBusValue.hasSameType(as:)` agrees with comparing the values' `DBusType`s, for every kind
/// of value (it skips building the types of containers).
@Suite struct SameTypeTests {
    static let values: [DBusValue] = [
        .byte(1), .boolean(true), .int16(-1), .uint16(1), .int32(-1), .uint32(1), .int64(-1), .uint64(1),
        .double(0.5), .string("a"), .objectPath(ObjectPath(unchecked: "/a")), .signature(Signature.empty),
        .bytes(Data([1, 2])), .array(.byte, [.byte(3)]), .array(.byte, []), .array(.string, [.string("x")]),
        .array(.int32, []), .dictionary(key: .string, value: .variant, []),
        .dictionary(key: .string, value: .int32, [DBusDictionaryEntry(.string("k"), .int32(1))]),
        .structure([.int32(1), .string("s")]), .structure([.int32(1), .int32(2)]), .variant(.string("v")),
        .variant(.int32(1)),
    ]

    @Test("agrees with comparing the types, for every pair")
    func agreesWithTypes() {
        for left in Self.values {
            for right in Self.values {
                #expect(left.hasSameType(as: right) == (left.type == right.type), "\(left) vs \(right)")
            }
        }
    }
}
