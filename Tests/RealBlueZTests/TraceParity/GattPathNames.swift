import DBus

/// Object paths as a trace shows them: the same on every daemon. The peripheral's address
/// becomes `<peer>`, any other device's `<other>`, and a GATT object's handle-numbered
/// segment (`service000a`, `char000b`, `desc000d`) its UUID, since handles depend on what
/// else the daemon and the peripheral serve. Paths outside the central's adapter have no name.
struct GattPathNames {
    let adapterPath: String
    let peerAddress: String
    /// The UUID of each GATT object seen, by its raw path.
    private var uuids: [String: String] = [:]

    init(adapterPath: String, peerAddress: String) {
        self.adapterPath = adapterPath
        self.peerAddress = peerAddress
    }

    /// Notes the UUIDs of the GATT objects in an InterfacesAdded signal or a GetManagedObjects reply.
    mutating func learn(from message: DBusMessage) {
        if message.body.count == 2, case .objectPath(let path) = message.body[0],
            let uuid = Self.uuid(in: message.body[1])
        {
            uuids[path.rawValue] = uuid
        }
        guard case .dictionary(.objectPath, _, let entries)? = message.body.first else { return }
        for entry in entries {
            if case .objectPath(let path) = entry.key, let uuid = Self.uuid(in: entry.value) {
                uuids[path.rawValue] = uuid
            }
        }
    }

    /// The UUID property of any GATT interface in an `a{sa{sv}}`.
    private static func uuid(in interfaces: DBusValue) -> String? {
        guard case .dictionary(_, _, let entries) = interfaces else { return nil }
        for entry in entries {
            guard case .string(let interface) = entry.key, interface.hasPrefix("org.bluez.Gatt"),
                case .dictionary(_, _, let properties) = entry.value
            else { continue }
            for property in properties where property.key == .string("UUID") {
                if case .string(let uuid) = property.value.unwrappingVariant { return shortUUID(uuid) }
            }
        }
        return nil
    }

    /// The path as a trace shows it, or `nil` for an object outside the central's adapter.
    func name(of path: String) -> String? {
        guard path == adapterPath || path.hasPrefix(adapterPath + "/") else {
            return path == "/" || path == "/org/bluez" ? path : nil
        }
        var shown = [adapterPath.split(separator: "/").last.map(String.init) ?? adapterPath]
        var raw = adapterPath
        for segment in path.dropFirst(adapterPath.count).split(separator: "/") {
            raw += "/" + segment
            shown.append(self.segment(String(segment), raw: raw))
        }
        return shown.joined(separator: "/")
    }

    private func segment(_ segment: String, raw: String) -> String {
        if segment.hasPrefix("dev_") {
            return segment == "dev_" + peerAddress.replacingOccurrences(of: ":", with: "_")
                ? "dev_<peer>" : "dev_<other>"
        }
        for kind in ["service", "char", "desc"] where segment.hasPrefix(kind) {
            return "\(kind)[\(uuids[raw] ?? "?")]"
        }
        return segment
    }

    /// `0000180d-0000-1000-8000-00805f9b34fb` → `180d`; the test service's family
    /// (`5b1e0001-6d2c-4f4e-9a61-2f3b0c7d8e90`) → `test-0001`; anything else unchanged.
    static func shortUUID(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.count == 36, lower.hasPrefix("0000"), lower.hasSuffix("-0000-1000-8000-00805f9b34fb") {
            return String(lower.dropFirst(4).prefix(4))
        }
        if lower.count == 36, lower.hasPrefix("5b1e"), lower.hasSuffix("-6d2c-4f4e-9a61-2f3b0c7d8e90") {
            return "test-" + lower.dropFirst(4).prefix(4)
        }
        return text
    }
}
