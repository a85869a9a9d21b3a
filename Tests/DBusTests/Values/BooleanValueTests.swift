import DBus
import Foundation
import Testing

/// ``DBus/DBusValue/isBoolean(_:)``: a `b` holding the value asked, and nothing else.
@Suite struct BooleanValueTests {
    @Test func onlyABooleanOfThatValueIs() {
        #expect(DBusValue.boolean(true).isBoolean(true))
        #expect(DBusValue.boolean(false).isBoolean(false))
        #expect(!DBusValue.boolean(true).isBoolean(false))
        #expect(!DBusValue.boolean(false).isBoolean(true))
        for other: DBusValue in [.byte(1), .uint32(1), .string("true"), .variant(.boolean(true)), .bytes(Data([1]))] {
            #expect(!other.isBoolean(true) && !other.isBoolean(false), "\(other)")
        }
    }
}
