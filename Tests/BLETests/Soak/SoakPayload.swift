import Foundation

/// A value the soak can check on arrival: what it is, for which peripheral, which one of its
/// kind, and bytes derived from all three, so that a value cut short, mixed up with another or
/// meant for another peripheral is told apart from the one sent.
struct SoakPayload: Hashable, Sendable, CustomStringConvertible {
    enum Kind: UInt8, Sendable, CaseIterable {
        case read = 1
        case write = 2
        case notification = 3
        case indication = 4
    }

    let kind: Kind
    let peripheral: Int
    let sequence: UInt32

    /// Fits one notification on the smallest MTU (23 − 3 bytes).
    static let size = 16

    var data: Data {
        var bytes: [UInt8] = [kind.rawValue, UInt8(peripheral >> 8 & 0xFF), UInt8(peripheral & 0xFF), 0]
        bytes += withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        bytes += Self.pattern(kind, peripheral, sequence)
        return Data(bytes)
    }

    init(_ kind: Kind, peripheral: Int, sequence: UInt32) {
        self.kind = kind
        self.peripheral = peripheral
        self.sequence = sequence
    }

    /// Decodes a value; nil unless it is a whole, intact payload.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count == Self.size, let kind = Kind(rawValue: bytes[0]), bytes[3] == 0 else { return nil }
        let peripheral = Int(bytes[1]) << 8 | Int(bytes[2])
        let sequence = bytes[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard Array(bytes[8...]) == Self.pattern(kind, peripheral, sequence) else { return nil }
        self.init(kind, peripheral: peripheral, sequence: sequence)
    }

    /// Eight bytes that depend on every field.
    private static func pattern(_ kind: Kind, _ peripheral: Int, _ sequence: UInt32) -> [UInt8] {
        var mixed = UInt64(sequence) << 24 | UInt64(peripheral) << 8 | UInt64(kind.rawValue)
        return (0..<8).map { _ in
            mixed = mixed &* 0x9E37_79B9_7F4A_7C15 &+ 0x632B_E59B_D9B4_E019
            return UInt8(truncatingIfNeeded: mixed >> 56)
        }
    }

    var description: String { "\(kind) #\(sequence) of \(peripheral)" }
}
