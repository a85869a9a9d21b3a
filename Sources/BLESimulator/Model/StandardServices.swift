import BlueZ
import Foundation

/// The two services every real LE peripheral serves ahead of its own, at handles 1–9:
/// Generic Access `1800` (Device Name `2A00`, Appearance `2A01`) and Generic Attribute `1801`
/// (Service Changed `2A05`, indicate, with its CCC descriptor).
///
/// bluetoothd's gap plugin claims `1800` (no objects on 5.66, read-only ones from 5.80; its UUID
/// joins `Device1.UUIDs` either way) and reads both characteristics: a Device Name that differs
/// from the advertised one renames the device. `1801` is exported as an ordinary service, and
/// its Service Changed lets the peer announce database changes to connected centrals.
///
/// In JSON, `"standardServices": false` leaves both out, `true` (or no key) serves them with the
/// defaults below, and an object sets their values: `{"deviceName": "Polar H10 6A11", "appearance": 833}`.
public struct StandardServices: Sendable, Hashable, Codable {
    /// The GAP Device Name; nil serves the advertised local name (empty when there is none).
    public var deviceName: String?
    /// The GAP Appearance; nil serves the advertised appearance, or 0 (unknown).
    public var appearance: UInt16?

    /// Standard services with the given values (nil: follow the advertisement).
    public init(deviceName: String? = nil, appearance: UInt16? = nil) {
        self.deviceName = deviceName
        self.appearance = appearance
    }

    private enum CodingKeys: String, CodingKey { case deviceName, appearance }

    /// Decodes `{"deviceName": …, "appearance": …}`; an unknown key is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceName = try c.decodeIfPresent(String.self, forKey: .deviceName)
        appearance = try c.decodeIfPresent(UInt16.self, forKey: .appearance)
    }

    /// The UUIDs a peripheral may not declare among its own services while it has these.
    static let uuids: Set<String> = Set(["1800", "1801"].compactMap(BlueZUUID.canonical))

    /// The two services as `peripheral` serves them, GAP first.
    func services(of peripheral: VirtualPeripheral) -> [VirtualService] {
        let name = deviceName ?? peripheral.name ?? ""
        let look = appearance ?? peripheral.appearance ?? 0
        return [
            VirtualService(
                uuid: "1800",
                characteristics: [
                    VirtualCharacteristic(uuid: "2A00", flags: ["read"], value: HexData(Data(name.utf8))),
                    VirtualCharacteristic(
                        uuid: "2A01", flags: ["read"], value: HexData(Data([UInt8(look & 0xff), UInt8(look >> 8)]))),
                ]),
            VirtualService(
                uuid: "1801", characteristics: [VirtualCharacteristic(uuid: "2A05", flags: ["indicate"])]),
        ]
    }
}

extension VirtualPeripheral {
    /// Every service the peripheral serves, in handle order, with the index its values are
    /// kept under (``ValueKey/service``): the standard services first, at negative indices, so
    /// that the declared ones keep their positions in ``services``.
    var servedServices: [(index: Int, service: VirtualService)] {
        let standard = standardServices?.services(of: self) ?? []
        return standard.enumerated().map { ($0.offset - standard.count, $0.element) }
            + services.enumerated().map { ($0.offset, $0.element) }
    }

    /// A declared service that clashes with the standard ones, if any.
    var declaredStandardService: String? {
        guard standardServices != nil else { return nil }
        return services.first { StandardServices.uuids.contains(BlueZUUID.canonical($0.uuid) ?? "") }?.uuid
    }
}
