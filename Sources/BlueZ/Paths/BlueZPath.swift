import DBus
import Glibc

/// The object paths bluetoothd gives its objects (bluez-dbus-api.md §1.2), built and parsed.
///
/// | Object | Path |
/// |---|---|
/// | manager | `/org/bluez` |
/// | adapter | `/org/bluez/hci0` |
/// | device | `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF` (upper-case, ':' → '_') |
/// | service | `<device>/service000a` (start handle, 4 lower-case hex digits) |
/// | characteristic | `<service>/char000b` (declaration handle) |
/// | descriptor | `<characteristic>/desc000d` |
///
/// BlueZ 5.66 has no `Handle` property on GATT objects, so the handle is parsed from the last
/// element. Parsing accepts upper- or lower-case hex; building writes what bluetoothd writes.
public enum BlueZPath {
    /// What a BlueZ object path names, with the value encoded in its last element.
    public enum Kind: Sendable, Hashable {
        /// `/org/bluez`
        case manager
        /// `/org/bluez/hciN`
        case adapter(index: Int)
        /// `<adapter>/dev_AA_BB_CC_DD_EE_FF`
        case device(BluetoothAddress)
        /// `<device>/serviceXXXX`
        case service(handle: UInt16)
        /// `<service>/charXXXX`
        case characteristic(handle: UInt16)
        /// `<characteristic>/descXXXX`
        case descriptor(handle: UInt16)
    }

    /// What `path` names, when it follows bluetoothd's layout at every level; `nil` otherwise.
    ///
    /// Read byte by byte, without splitting the path into strings: discovery asks this of
    /// every service, characteristic and descriptor it hands out.
    public static func kind(of path: ObjectPath) -> Kind? {
        var text = path.rawValue
        if let kind = text.utf8.withContiguousStorageIfAvailable({ PathBytes($0).kind }) { return kind }
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { PathBytes($0).kind } ?? nil
    }

    // MARK: Building

    /// `/org/bluez/hci<index>`.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` for a negative index.
    public static func adapter(index: Int) throws(DBusError) -> ObjectPath {
        guard index >= 0 else {
            throw DBusError(.invalidValue, message: "adapter index \(index) is negative")
        }
        return try BlueZService.managerPath.appending("\(adapterPrefix)\(index)")
    }

    /// `/org/bluez/<name>` for an adapter name such as `hci0`.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` unless `name` is `hci` followed by
    ///   a decimal index.
    public static func adapter(named name: String) throws(DBusError) -> ObjectPath {
        guard let index = adapterIndex(element: Substring(name)) else {
            throw DBusError(.invalidValue, message: "\"\(name.prefix(40))\" is not an adapter name like hci0")
        }
        return try adapter(index: index)
    }

    /// `<adapter>/dev_AA_BB_CC_DD_EE_FF` for `address` (upper-case, ':' → '_').
    public static func device(_ address: BluetoothAddress, adapter: ObjectPath) throws(DBusError) -> ObjectPath {
        try adapter.appending("\(devicePrefix)\(address.formatted(separator: "_"))")
    }

    /// `<adapter>/dev_AA_BB_CC_DD_EE_FF` for an address written `AA:BB:CC:DD:EE:FF` (any case).
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` for a malformed address.
    public static func device(address: String, adapter: ObjectPath) throws(DBusError) -> ObjectPath {
        try device(try BluetoothAddress(address), adapter: adapter)
    }

    /// `<device>/serviceXXXX`: `handle` is the service's start handle.
    public static func service(handle: UInt16, device: ObjectPath) throws(DBusError) -> ObjectPath {
        try device.appending("\(servicePrefix)\(hex4(handle))")
    }

    /// `<service>/charXXXX`: `handle` is the characteristic declaration's handle.
    public static func characteristic(handle: UInt16, service: ObjectPath) throws(DBusError) -> ObjectPath {
        try service.appending("\(characteristicPrefix)\(hex4(handle))")
    }

    /// `<characteristic>/descXXXX`: `handle` is the descriptor's handle.
    public static func descriptor(handle: UInt16, characteristic: ObjectPath) throws(DBusError) -> ObjectPath {
        try characteristic.appending("\(descriptorPrefix)\(hex4(handle))")
    }

    // MARK: Parsing

    /// N of an adapter path `/org/bluez/hciN`, or `nil` for any other path.
    public static func adapterIndex(of path: ObjectPath) -> Int? {
        if case .adapter(let index)? = kind(of: path) { return index }
        return nil
    }

    /// The address of a device path `/org/bluez/hciN/dev_…`, or `nil` for any other path.
    public static func deviceAddress(of path: ObjectPath) -> BluetoothAddress? {
        if case .device(let address)? = kind(of: path) { return address }
        return nil
    }

    /// The start handle of a remote service path, or `nil` for any other path.
    public static func serviceHandle(of path: ObjectPath) -> UInt16? {
        if case .service(let handle)? = kind(of: path) { return handle }
        return nil
    }

    /// The declaration handle of a remote characteristic path, or `nil` for any other path.
    public static func characteristicHandle(of path: ObjectPath) -> UInt16? {
        if case .characteristic(let handle)? = kind(of: path) { return handle }
        return nil
    }

    /// The handle of a remote descriptor path, or `nil` for any other path.
    public static func descriptorHandle(of path: ObjectPath) -> UInt16? {
        if case .descriptor(let handle)? = kind(of: path) { return handle }
        return nil
    }

    /// The device path that `path` is, or lies below (a service, characteristic or descriptor
    /// of that device); `nil` when `path` is not in a device's subtree.
    public static func device(containing path: ObjectPath) -> ObjectPath? {
        var current: ObjectPath? = path
        while let candidate = current {
            switch kind(of: candidate) {
            case .device?: return candidate
            case .service?, .characteristic?, .descriptor?: current = candidate.parent
            default: return nil
            }
        }
        return nil
    }

    /// The text of the device path that `path` is or lies below (`/org/bluez/hciN/dev_…`),
    /// found by counting separators: cheap enough for every `Value` change a client routes.
    /// Unlike ``device(containing:)`` it does not check the elements below the device.
    public static func deviceText(containing path: ObjectPath) -> Substring? {
        let text = path.rawValue
        guard let end = deviceEnd(in: text) else { return nil }
        return text[..<text.utf8.index(text.utf8.startIndex, offsetBy: end)]
    }

    /// The device path that `path` lies strictly below (one of its services, characteristics or
    /// descriptors), or `nil` for a device itself and a path outside every device. A device's own
    /// path, which every advertiser's signal names, is answered without cutting any text.
    public static func device(below path: ObjectPath) -> ObjectPath? {
        let text = path.rawValue
        guard let end = deviceEnd(in: text), end < text.utf8.count else { return nil }
        // A prefix of a valid path that ends before a separator is a valid path.
        return try? ObjectPath(String(decoding: text.utf8.prefix(end), as: UTF8.self))
    }

    /// ``deviceEnd(in:)-(UnsafeBufferPointer<UInt8>)`` of a path's text, scanned as bytes where
    /// the string is contiguous (native strings are): stepping a `String.UTF8View` index by
    /// index cost ten times as much per notification.
    private static func deviceEnd(in text: String) -> Int? {
        let found = text.utf8.withContiguousStorageIfAvailable { bytes in deviceEnd(in: bytes) }
        return found ?? Array(text.utf8).withUnsafeBufferPointer { deviceEnd(in: $0) }
    }

    /// Where the device element of a path's bytes ends (its fifth `/`, or the end), when the
    /// path starts `/org/bluez/` and its fourth element starts `dev_`. Compared byte by byte
    /// in the buffer: the generic `starts(with:)` over a string's UTF-8 view cost more than
    /// the rest, on every advertisement and notification.
    private static func deviceEnd(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let prefix: StaticString = "/org/bluez/"
        let prefixCount = prefix.utf8CodeUnitCount
        guard bytes.count > prefixCount, let base = bytes.baseAddress, memcmp(base, prefix.utf8Start, prefixCount) == 0
        else { return nil }
        let slash = UInt8(ascii: "/")
        var index = prefixCount
        while index < bytes.count && bytes[index] != slash { index += 1 }
        let deviceStart = index + 1
        guard deviceStart + 4 <= bytes.count, bytes[deviceStart] == UInt8(ascii: "d"),
            bytes[deviceStart + 1] == UInt8(ascii: "e"), bytes[deviceStart + 2] == UInt8(ascii: "v"),
            bytes[deviceStart + 3] == UInt8(ascii: "_")
        else { return nil }
        var end = deviceStart + 4
        while end < bytes.count && bytes[end] != slash { end += 1 }
        return end
    }

    /// The adapter path that `path` is, or lies below; `nil` when `path` is not in an adapter's
    /// subtree.
    public static func adapter(containing path: ObjectPath) -> ObjectPath? {
        var current: ObjectPath? = path
        while let candidate = current {
            switch kind(of: candidate) {
            case .adapter?: return candidate
            case .device?, .service?, .characteristic?, .descriptor?: current = candidate.parent
            default: return nil
            }
        }
        return nil
    }

    // MARK: Elements

    static let adapterPrefix: StaticString = "hci"
    static let devicePrefix: StaticString = "dev_"
    static let servicePrefix: StaticString = "service"
    static let characteristicPrefix: StaticString = "char"
    static let descriptorPrefix: StaticString = "desc"

    /// The index of an adapter element `hciN` (the rules of ``kind(of:)``, which reads whole paths).
    static func adapterIndex(element: Substring) -> Int? {
        var text = String(element)
        return text.withUTF8 { PathBytes($0).adapterIndex(0..<$0.count) }
    }

    /// `%04x`: four lower-case hex digits.
    static func hex4(_ value: UInt16) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 4 - hex.count) + hex
    }
}

/// An object path's bytes, parsed by ``BlueZPath/kind(of:)``: the one place the rules of
/// bluetoothd's path elements are written down.
private struct PathBytes {
    let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var kind: BlueZPath.Kind? {
        // Element ranges; a BlueZ path has at most 7 elements, so an eighth means "other".
        var elements: [Range<Int>] = []
        elements.reserveCapacity(8)
        var index = 0
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "/"), elements.count < 8 else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "/") { end += 1 }
            if end == start { return nil }
            elements.append(start..<end)
            index = end
        }
        let count = elements.count
        func element(_ n: Int) -> Range<Int> { elements[n] }
        guard count >= 2, equals(element(0), "org"), equals(element(1), "bluez") else { return nil }
        if count == 2 { return .manager }
        guard let adapter = adapterIndex(element(2)) else { return nil }
        if count == 3 { return .adapter(index: adapter) }
        guard let address = deviceAddress(element(3)) else { return nil }
        if count == 4 { return .device(address) }
        guard let service = handle(element(4), prefix: BlueZPath.servicePrefix) else { return nil }
        if count == 5 { return .service(handle: service) }
        guard let characteristic = handle(element(5), prefix: BlueZPath.characteristicPrefix) else { return nil }
        if count == 6 { return .characteristic(handle: characteristic) }
        guard let descriptor = handle(element(6), prefix: BlueZPath.descriptorPrefix) else { return nil }
        if count == 7 { return .descriptor(handle: descriptor) }
        return nil
    }

    private func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        let literal = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        return zip(range, literal).allSatisfy { bytes[$0] == $1 }
    }

    private func hasPrefix(_ range: Range<Int>, _ text: StaticString) -> Bool {
        range.count >= text.utf8CodeUnitCount
            && equals(range.lowerBound..<(range.lowerBound + text.utf8CodeUnitCount), text)
    }

    /// `hciN`: decimal digits, at most 9, no leading zero.
    func adapterIndex(_ range: Range<Int>) -> Int? {
        guard hasPrefix(range, BlueZPath.adapterPrefix) else { return nil }
        let digits = (range.lowerBound + BlueZPath.adapterPrefix.utf8CodeUnitCount)..<range.upperBound
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        if digits.count > 1 && bytes[digits.lowerBound] == UInt8(ascii: "0") { return nil }
        var value = 0
        for index in digits {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// `dev_AA_BB_CC_DD_EE_FF`: six groups of two hex digits (either case) joined by `_`.
    private func deviceAddress(_ range: Range<Int>) -> BluetoothAddress? {
        guard hasPrefix(range, BlueZPath.devicePrefix),
            let value = BluetoothAddress.parse(
                bytes: bytes[(range.lowerBound + BlueZPath.devicePrefix.utf8CodeUnitCount)..<range.upperBound],
                separator: UInt8(ascii: "_"))
        else { return nil }
        return BluetoothAddress(rawValue: value)
    }

    /// `<prefix>XXXX`: exactly four hex digits (either case).
    private func handle(_ range: Range<Int>, prefix: StaticString) -> UInt16? {
        guard hasPrefix(range, prefix), range.count == prefix.utf8CodeUnitCount + 4 else { return nil }
        var value: UInt16 = 0
        for index in (range.lowerBound + prefix.utf8CodeUnitCount)..<range.upperBound {
            guard let digit = BluetoothAddress.hexValue(bytes[index]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
