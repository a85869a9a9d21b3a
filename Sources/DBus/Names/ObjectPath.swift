/// A validated D-Bus object path such as `/org/bluez/hci0`.
///
/// A path starts with '/' and is made of elements of `[A-Za-z0-9_]` separated by single
/// slashes; only the root path `/` may end with a slash.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The path as text, e.g. `/org/bluez/hci0`.
    public let rawValue: String
    /// The digest of the path's bytes (``NameHashing``), folded to 32 bits and made once with
    /// the path: tables of paths hash it at every look-up, and compare it before the texts at
    /// every probe. Paths of one length (every device's, every characteristic's of a service)
    /// differ only in their last bytes, and comparing two texts read the stored path's own
    /// storage, a cache miss for each path a probe passed (a scan inserts every advertiser's
    /// path in three tables of a thousand). 32 bits keep ``DBusValue`` at 24 bytes: with 64
    /// its `objectPath` case left no spare bit for the enum's tag, and every property value
    /// the mirror holds took 32.
    let digest: UInt32

    /// Validates `string` as an object path.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        try Self.validate(string)
        self.init(unchecked: string)
    }

    /// Wraps a string known to be valid, such as a constant or a path the bus delivered.
    init(unchecked string: String) {
        rawValue = string
        digest = NameHashing.folded(NameHashing.digest(string))
    }

    /// The root path `/`, the ancestor of every other path.
    public static let root = ObjectPath(unchecked: "/")

    /// The path's elements: `["org", "bluez"]` for `/org/bluez`, empty for the root path.
    public var elements: [Substring] {
        rawValue.split(separator: "/")
    }

    /// This path with one more element, e.g. `/org` + `bluez` gives `/org/bluez`.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` when `element` is empty
    ///   or contains anything but `[A-Za-z0-9_]` (a '/' included).
    public func appending(_ element: String) throws(DBusError) -> ObjectPath {
        if let violation = Self.elementViolation(Substring(element).unicodeScalars) {
            throw NameValidation.failure("object path element", element, violation)
        }
        if rawValue == "/" { return ObjectPath(unchecked: "/" + element) }
        return ObjectPath(unchecked: rawValue + "/" + element)
    }

    /// The path with its last element removed; `nil` for the root path.
    public var parent: ObjectPath? {
        // Searched as bytes: a search by Character compares grapheme clusters, and this runs
        // for every object a mirror adds; in the buffer a native string holds where it can be
        // reached, since stepping a `UTF8View`'s indices costs more than the search.
        guard rawValue != "/" else { return nil }
        let contiguous = rawValue.utf8.withContiguousStorageIfAvailable { bytes -> ObjectPath? in
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
            if slash == 0 { return .root }
            return ObjectPath(
                unchecked: String(decoding: UnsafeBufferPointer(rebasing: bytes[..<slash]), as: UTF8.self))
        }
        if let contiguous { return contiguous }
        let bytes = rawValue.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        if slash == bytes.startIndex { return .root }
        return ObjectPath(unchecked: String(rawValue[..<slash]))
    }

    /// Whether this path lies strictly below `other`: `/a/b` is below `/a` and `/`, not below
    /// `/a/b` itself nor below `/ab`.
    public func isDescendant(of other: ObjectPath) -> Bool {
        if other.rawValue == "/" { return rawValue != "/" }
        // A plain prefix test would put `/ab` below `/a`; the next byte must start a new element.
        let prefix = other.rawValue.utf8
        let path = rawValue.utf8
        guard path.count > prefix.count else { return false }
        // Compared in the buffers native strings hold, where both can be reached (every
        // change a mirror applies is matched against its observers' paths this way).
        let contiguous = path.withContiguousStorageIfAvailable { path in
            prefix.withContiguousStorageIfAvailable { prefix in
                path[prefix.count] == UInt8(ascii: "/")
                    && UnsafeBufferPointer(rebasing: path[..<prefix.count]).elementsEqual(prefix)
            }
        }
        if let contiguous, let contiguous { return contiguous }
        guard path.starts(with: prefix) else { return false }
        return path.dropFirst(prefix.count).first == UInt8(ascii: "/")
    }

    /// Whether this path is `namespace` or lies below it, as in a match rule's `path_namespace`;
    /// every path is in the namespace `/`.
    public func isInNamespace(_ namespace: ObjectPath) -> Bool {
        self == namespace || isDescendant(of: namespace)
    }

    /// The path text.
    public var description: String { rawValue }

    /// Orders paths by their text, which also puts every path directly before its descendants
    /// because '/' sorts below every character allowed in an element.
    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool {
        NameHashing.less(lhs.rawValue, rhs.rawValue)
    }

    private static func validate(_ string: String) throws(DBusError) {
        let kind = "object path"
        let scalars = string.unicodeScalars
        guard let first = scalars.first else {
            throw NameValidation.failure(kind, string, "must not be empty")
        }
        if first != "/" { throw NameValidation.failure(kind, string, "must start with '/'") }
        if string.utf8.count == 1 { return }
        if scalars.last == "/" {
            throw NameValidation.failure(
                kind, string, "must not end with '/' (only the root path \"/\" may)")
        }
        for element in scalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            if element.isEmpty {
                throw NameValidation.failure(
                    kind, string, "must not contain an empty element (\"//\")")
            }
            if let violation = elementViolation(element) {
                throw NameValidation.failure(
                    kind, string,
                    "element \(NameValidation.quoted(String(element))) \(violation)")
            }
        }
    }

    /// Why `element` is not of the form `[A-Za-z0-9_]+`, or `nil` when it is.
    private static func elementViolation(_ element: Substring.UnicodeScalarView) -> String? {
        if element.isEmpty { return "must not be empty" }
        for scalar in element where !NameValidation.isWordCharacter(scalar) {
            return "contains \(NameValidation.describe(scalar)), only [A-Za-z0-9_] is allowed"
        }
        return nil
    }
}
