import BlueZ
import Foundation
import Testing

@testable import BLE

/// ``PeripheralID`` as apps store it: the adapter named by its address (still `hciN` for
/// people), the device's address type, equality across an adapter's new name, and the
/// encodings of the earlier version.
@Suite("Peripheral identifiers")
struct PeripheralIDTests {
    static let device = "C4:7C:8D:6A:11:22"
    static let adapterAddress = "00:1A:7D:DA:71:13"

    static func id(_ adapter: String, adapterAddress: String? = adapterAddress, type: PeripheralID.AddressType? = nil)
        throws -> PeripheralID
    {
        try PeripheralID(adapter: adapter, address: device, addressType: type, adapterAddress: adapterAddress)
    }

    @Test("the same adapter under another hciN name is the same adapter; another address is not")
    func adapterByAddress() throws {
        #expect(try Self.id("hci0") == Self.id("hci1"))
        #expect(try Self.id("hci0") != Self.id("hci0", adapterAddress: "00:1A:7D:DA:71:14"))
        #expect(try Self.id("hci0").description == "hci0/\(Self.device)", "printed with the name, for people")
    }

    @Test("what one side does not know is not held against it: names compared without an address")
    func partialKnowledge() throws {
        let text = try PeripheralID("hci0/\(Self.device)")
        #expect(text.adapterAddress == nil && text.addressType == nil)
        #expect(text == (try Self.id("hci0", type: .random)))
        #expect(text != (try Self.id("hci1", type: .random)), "an ID from text names its adapter by name")
        #expect(try Self.id("hci0", type: .public) != Self.id("hci0", type: .random))
        #expect(Set([text, try Self.id("hci0", type: .random)]).count == 1, "equal IDs hash alike")
    }

    @Test("an ID survives JSON with its adapter address and type")
    func roundTrip() throws {
        let id = try Self.id("hci2", type: .random)
        let decoded = try JSONDecoder().decode(PeripheralID.self, from: JSONEncoder().encode(id))
        #expect(decoded.adapter == "hci2")
        #expect(decoded.adapterAddress == Self.adapterAddress)
        #expect(decoded.addressType == .random)
        #expect(decoded == id)
    }

    @Test("IDs the earlier version encoded still decode: the name-and-address object, and the text")
    func earlierEncodings() throws {
        let object = Data(#"{"adapter":"hci0","address":"c4:7c:8d:6a:11:22"}"#.utf8)
        let decoded = try JSONDecoder().decode(PeripheralID.self, from: object)
        #expect(decoded.description == "hci0/\(Self.device)")
        #expect(decoded.adapterAddress == nil)
        let text = try JSONDecoder().decode([PeripheralID].self, from: Data(#"["hci1/\#(Self.device)"]"#.utf8))
        #expect(text.map(\.adapter) == ["hci1"])
    }

    @Test("IDs sort as their text did: by device address, then by the adapter's address or name")
    func order() throws {
        let addresses = [
            "00:00:00:00:00:0A", "0A:00:00:00:00:00", "9F:FF:FF:FF:FF:FF", "A0:00:00:00:00:00", "FF:00:00:00:00:01",
        ]
        let ids = try addresses.reversed().map { try PeripheralID(adapter: "hci0", address: $0.lowercased()) }
        #expect(ids.sorted().map(\.address) == addresses, "numeric order, which is the upper-case text's")
        let byAdapter = try [
            Self.id("hci1", adapterAddress: "00:1A:7D:DA:71:14"), Self.id("hci0", adapterAddress: nil),
            Self.id("hci9", adapterAddress: "00:1A:7D:DA:71:13"),
        ]
        #expect(
            byAdapter.sorted().map { $0.adapterAddress ?? $0.adapter } == [
                "00:1A:7D:DA:71:13", "00:1A:7D:DA:71:14", "hci0",
            ])
    }

    @Test("malformed IDs are decoding errors, never a crash")
    func malformed() {
        for json in [
            #"{"adapter":"hci0","address":"nonsense"}"#, #"{"adapter":"usb0","address":"C4:7C:8D:6A:11:22"}"#,
            #"{"adapter":"hci0","address":"C4:7C:8D:6A:11:22","adapterAddress":"x"}"#,
            #"{"adapter":"hci0","address":"C4:7C:8D:6A:11:22","addressType":"lunar"}"#, #""hci0/zz""#, "42",
        ] {
            #expect(throws: DecodingError.self, "\(json)") {
                try JSONDecoder().decode(PeripheralID.self, from: Data(json.utf8))
            }
        }
        #expect(throws: BLEError.self) { try PeripheralID(address: Self.device, adapterAddress: "00:1A") }
    }

    @Test(
        "a device's ID takes BlueZ's address type; a type this SDK does not know is left out",
        arguments: [
            (BlueZ.AddressType.public, PeripheralID.AddressType.public),
            (BlueZ.AddressType.random, PeripheralID.AddressType.random),
            (BlueZ.AddressType(rawValue: "le-extended"), nil),
        ])
    func deviceAddressType(_ type: BlueZ.AddressType, _ expected: PeripheralID.AddressType?) throws {
        let adapter = AdapterIdentity(name: "hci0", address: try BluetoothAddress(Self.adapterAddress))
        let id = PeripheralID(adapter: adapter, address: try BluetoothAddress(Self.device), type: type)
        #expect(id.addressType == expected)
        #expect(
            PeripheralID(adapter: adapter, address: try BluetoothAddress(Self.device), type: nil).addressType == nil)
    }
}
