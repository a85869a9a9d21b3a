import Foundation
import Testing

@testable import BLECommandLine

@Suite struct ValueFormatTests {
    @Test(arguments: ["0148", "01 48", "0x0148", "01:48", "01-48", "0X0148"])
    func hexSpellings(text: String) throws {
        #expect(try ValueFormat.hex.parse(text) == Data([0x01, 0x48]))
    }

    @Test(arguments: ["014", "zz", "01 4g"])
    func badHex(text: String) {
        #expect(throws: UsageError.self) { try ValueFormat.hex.parse(text) }
    }

    @Test func integersAreLittleEndian() throws {
        #expect(try ValueFormat.uint16.parse("300") == Data([0x2C, 0x01]))
        #expect(try ValueFormat.uint32.parse("0x01020304") == Data([0x04, 0x03, 0x02, 0x01]))
        #expect(try ValueFormat.int16.parse("-2") == Data([0xFE, 0xFF]))
        #expect(try ValueFormat.uint8.parse("1 2 255") == Data([1, 2, 255]))
        #expect(try ValueFormat.uint16.format(Data([0x2C, 0x01, 0x48, 0x00])) == "300 72")
        #expect(try ValueFormat.int8.format(Data([0xFF, 0x80, 0x7F])) == "-1 -128 127")
        #expect(try ValueFormat.int32.format(Data([0xFE, 0xFF, 0xFF, 0xFF])) == "-2")
        #expect(try ValueFormat.uint32.format(Data([0xFF, 0xFF, 0xFF, 0xFF])) == "4294967295")
    }

    @Test(arguments: [
        (ValueFormat.uint8, "256"), (.uint8, "-1"), (.int8, "128"), (.int8, "-129"), (.uint16, "65536"),
        (.uint32, "4294967296"), (.uint8, "x"), (.uint8, ""),
    ])
    func integersOutOfRange(format: ValueFormat, text: String) {
        #expect(throws: UsageError.self) { try format.parse(text) }
    }

    @Test func signedLimitsFit() throws {
        #expect(try ValueFormat.int8.parse("-128") == Data([0x80]))
        #expect(try ValueFormat.int8.parse("127") == Data([0x7F]))
        #expect(try ValueFormat.int32.parse("-2147483648") == Data([0, 0, 0, 0x80]))
    }

    @Test func partialIntegersAreRefused() {
        #expect(throws: UsageError.self) { try ValueFormat.uint16.format(Data([1, 2, 3])) }
        #expect(throws: UsageError.self) { try ValueFormat.uint16.format(Data()) }
    }

    @Test func textAndBase64() throws {
        #expect(try ValueFormat.utf8.parse("hé") == Data("hé".utf8))
        #expect(try ValueFormat.utf8.format(Data("hé".utf8)) == "hé")
        #expect(throws: UsageError.self) { try ValueFormat.utf8.format(Data([0xFF])) }
        #expect(try ValueFormat.base64.parse("AUg=") == Data([0x01, 0x48]))
        #expect(try ValueFormat.base64.format(Data([0x01, 0x48])) == "AUg=")
        #expect(throws: UsageError.self) { try ValueFormat.base64.parse("not base64!") }
        #expect(try ValueFormat.hex.format(Data([0x01, 0x48, 0xAB])) == "01 48 ab")
    }

    @Test func formatNames() throws {
        #expect(try ValueFormat(named: "UINT16") == .uint16)
        #expect(throws: UsageError.self) { try ValueFormat(named: "float") }
    }

    @Test func valuePreviewQuotesPrintableText() {
        #expect(Describe.value(Data("Hi".utf8)) == "48 69  \"Hi\"")
        #expect(Describe.value(Data([0x01])) == "01")
        #expect(Describe.value(Data()) == "(empty)")
        #expect(Describe.manufacturer(0x006B, Data([0x02])) == "Polar Electro (0x006B) 02")
        #expect(Describe.manufacturer(0x1234, Data()) == "0x1234")
    }
}
