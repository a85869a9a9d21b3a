import DBus
import Foundation

/// Turns the messages a ``DBusTestSupport/BusMonitor`` recorded into the stable, diffable text
/// of a trace: the conversation between the SDK and bluetoothd about the central's adapter,
/// with what differs by nature between two daemons (addresses, GATT handles, property values
/// other than booleans and identities, serials) normalized away.
///
/// One line per call, reply and signal; an object (of a GetManagedObjects reply or an
/// InterfacesAdded signal) has a line with its interfaces, then an indented line for each
/// interface with properties, each property as `Name: signature` (`=value` for the values that
/// matter). Repeats of the same line collapse
/// into one: how often the controller reports RSSI, or how many notifications arrive, is
/// timing, not interface.
struct TraceRenderer {
    /// The adapter whose conversation is kept (others, such as the peripheral's hci1, are not).
    let adapterPath: String
    /// The test peripheral's address, shown as `<peer>`.
    let peerAddress: String
    /// bluetoothd's unique name on the bus.
    let daemon: String
    /// Connections whose calls to bluetoothd are not the SDK's (the test's own probes).
    let excluded: Set<String>

    /// The trace of `messages`, as lines.
    func render(_ messages: [DBusMessage]) -> [String] {
        var paths = GattPathNames(adapterPath: adapterPath, peerAddress: peerAddress)
        for message in messages where message.sender?.rawValue == daemon { paths.learn(from: message) }
        var pending: [String: String] = [:]
        var lines: [String] = []
        var lastKept: DBusMessage?
        for message in messages {
            let rendered = render(message, paths, &pending)
            guard !rendered.isEmpty else { continue }
            // bluetoothd coalesces the changes of one main-loop turn into one signal, so where
            // a change splits off is timing: consecutive changes of one interface merge.
            if let last = lastKept, let merged = Self.merging(last, message) {
                lines[lines.count - 1] = signal(merged, paths)[0]
                lastKept = merged
                continue
            }
            for line in rendered where line != lines.last { lines.append(line) }
            lastKept = message
        }
        return lines
    }

    /// `next`'s changed properties added to `last`'s, if both are PropertiesChanged of the same
    /// object and interface without invalidations (later values win, first positions stay).
    private static func merging(_ last: DBusMessage, _ next: DBusMessage) -> DBusMessage? {
        guard last.member?.rawValue == "PropertiesChanged", next.member?.rawValue == "PropertiesChanged",
            last.path == next.path, last.body.count == 3, next.body.count == 3, last.body[0] == next.body[0],
            case .dictionary(let key, let value, var entries) = last.body[1],
            case .dictionary(_, _, let added) = next.body[1],
            last.body[2] == .array(.string, []), next.body[2] == .array(.string, [])
        else { return nil }
        for entry in added {
            if let index = entries.firstIndex(where: { $0.key == entry.key }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
        var merged = last
        merged.body[1] = .dictionary(key: key, value: value, entries)
        return merged
    }

    private func render(_ message: DBusMessage, _ paths: GattPathNames, _ pending: inout [String: String]) -> [String] {
        let sender = message.sender?.rawValue ?? ""
        switch message.kind {
        case .methodCall:
            guard let destination = message.destination?.rawValue, destination == "org.bluez" || destination == daemon,
                !excluded.contains(sender), let path = message.path.flatMap({ paths.name(of: $0.rawValue) })
            else { return [] }
            let method = "\(Self.short(message.interface?.rawValue ?? "")).\(message.member?.rawValue ?? "")"
            pending["\(sender) \(message.serial)"] = method
            let arguments = message.body.map { shape($0, paths, showStrings: true) }.joined(separator: ", ")
            return ["call \(method) \(path) (\(arguments))"]
        case .methodReturn, .error:
            guard sender == daemon, let destination = message.destination?.rawValue,
                let method = pending.removeValue(forKey: "\(destination) \(message.replySerial)")
            else { return [] }
            if let error = message.errorName { return ["error \(method) \(error)"] }
            if method == "ObjectManager.GetManagedObjects", let objects = message.body.first {
                return ["reply \(method)"] + managedObjects(objects, paths)
            }
            return ["reply \(method) (\(message.body.map { shape($0, paths) }.joined(separator: ", ")))"]
        case .signal:
            guard sender == daemon, !excluded.contains(message.destination?.rawValue ?? "") else { return [] }
            return signal(message, paths)
        }
    }

    private func signal(_ message: DBusMessage, _ paths: GattPathNames) -> [String] {
        guard let rawPath = message.path?.rawValue, let path = paths.name(of: rawPath) else { return [] }
        let member = message.member?.rawValue ?? ""
        switch (member, message.body.count) {
        case ("PropertiesChanged", 3):
            guard case .string(let interface) = message.body[0] else { break }
            var line = "signal PropertiesChanged \(path) \(Self.short(interface)) \(properties(message.body[1], paths))"
            if case .array(_, let invalidated) = message.body[2], !invalidated.isEmpty {
                line +=
                    " invalidated [\(invalidated.map { shape($0, paths, showStrings: true) }.joined(separator: ", "))]"
            }
            return [line]
        case ("InterfacesAdded", 2):
            guard case .objectPath(let object) = message.body[0], let name = paths.name(of: object.rawValue) else {
                return []
            }
            let (names, lines) = interfaces(message.body[1], paths)
            return ["signal InterfacesAdded \(name) \(names)"] + lines
        case ("InterfacesRemoved", 2):
            guard case .objectPath(let object) = message.body[0], let name = paths.name(of: object.rawValue) else {
                return []
            }
            return ["signal InterfacesRemoved \(name) \(shape(message.body[1], paths, showStrings: true))"]
        default: break
        }
        let body = message.body.map { shape($0, paths) }.joined(separator: ", ")
        return ["signal \(Self.short(message.interface?.rawValue ?? "")).\(member) \(path) (\(body))"]
    }

    /// `a{oa{sa{sv}}}`: the kept objects sorted by their normalized name.
    private func managedObjects(_ value: DBusValue, _ paths: GattPathNames) -> [String] {
        guard case .dictionary(_, _, let entries) = value else { return ["  \(shape(value, paths))"] }
        let objects = entries.compactMap { entry -> (String, DBusValue)? in
            guard case .objectPath(let path) = entry.key, let name = paths.name(of: path.rawValue) else { return nil }
            return (name, entry.value)
        }
        return objects.sorted { $0.0 < $1.0 }.flatMap { name, value in
            let (names, lines) = interfaces(value, paths)
            return ["  object \(name) \(names)"] + lines.map { "  " + $0 }
        }
    }

    /// `a{sa{sv}}`: the interface names in the daemon's order (for the object's own line), and
    /// an indented line for each interface that has properties.
    private func interfaces(_ value: DBusValue, _ paths: GattPathNames) -> (names: String, lines: [String]) {
        guard case .dictionary(_, _, let entries) = value else { return (shape(value, paths), []) }
        var names: [String] = []
        var lines: [String] = []
        for entry in entries {
            guard case .string(let interface) = entry.key else { continue }
            names.append(Self.short(interface))
            if case .dictionary(_, _, let properties) = entry.value, properties.isEmpty { continue }
            lines.append("  \(Self.short(interface)) \(self.properties(entry.value, paths, sorted: true))")
        }
        return ("[\(names.joined(separator: ", "))]", lines)
    }

    /// `a{sv}` of properties: `{Name: signature[=value], …}` in the daemon's order, or sorted
    /// by name for a whole object (there the order is only that of bluetoothd's property tables).
    private func properties(_ value: DBusValue, _ paths: GattPathNames, sorted: Bool = false) -> String {
        guard case .dictionary(_, _, let entries) = value else { return shape(value, paths) }
        let items = entries.map { entry -> String in
            guard case .string(let name) = entry.key else { return shape(entry.key, paths) }
            let inner = entry.value.unwrappingVariant
            let signature = inner.type.signature
            let shown = Self.shownStrings.contains(name) || inner.type == .boolean || inner.type == .objectPath
            return shown ? "\(name): \(signature)=\(shape(inner, paths, showStrings: true))" : "\(name): \(signature)"
        }
        return "{\((sorted ? items.sorted() : items).joined(separator: ", "))}"
    }

    /// Properties whose string values are identity or protocol, not configuration.
    static let shownStrings: Set<String> = ["UUID", "UUIDs", "AddressType", "Flags", "Name", "Alias", "type"]

    /// The value's shape: its signature, with booleans, object paths and (when `showStrings`)
    /// strings spelled out.
    private func shape(_ value: DBusValue, _ paths: GattPathNames, showStrings: Bool = false) -> String {
        switch value {
        case .boolean(let flag): return flag ? "true" : "false"
        case .objectPath(let path): return paths.name(of: path.rawValue) ?? "<elsewhere>"
        case .string(let text): return showStrings ? "\"\(GattPathNames.shortUUID(text))\"" : "s"
        case .variant(let inner): return "<\(shape(inner, paths, showStrings: showStrings))>"
        case .array(let element, let items):
            guard element == .string || element == .objectPath else { return value.type.signature }
            var shown = items.map { shape($0, paths, showStrings: showStrings) }
            if showStrings { shown.sort() }
            return "[\(shown.joined(separator: ", "))]"
        case .dictionary(.string, _, let entries):
            let items = entries.map { entry in
                "\(shape(entry.key, paths, showStrings: true)): \(shape(entry.value, paths, showStrings: showStrings))"
            }
            return "{\(items.joined(separator: ", "))}"
        default: return value.type.signature
        }
    }

    /// `org.bluez.Adapter1` → `Adapter1`, `org.freedesktop.DBus.Properties` → `Properties`.
    static func short(_ interface: String) -> String {
        for prefix in ["org.bluez.", "org.freedesktop.DBus."] where interface.hasPrefix(prefix) {
            return String(interface.dropFirst(prefix.count))
        }
        return interface
    }
}
