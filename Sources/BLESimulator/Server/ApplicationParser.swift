import BlueZ
import DBus

/// Turns an application's `GetManagedObjects` reply into the services bluetoothd would add
/// to its database, with the checks of `src/gatt-database.c` (bluez-dbus-api.md §5.1–§5.3).
///
/// Pure: no bus, no state. Handles are left as requested (0 = allocate); ``HandleAllocator``
/// assigns them. Objects are taken in path order, as they arrive in the reply.
enum ApplicationParser {
    /// The parsed application.
    struct Parsed: Sendable, Hashable {
        var services: [RegisteredService]
        var profiles: [ObjectPath]
        /// Objects that export a `Handle` property (bluetoothd writes the allocated one back).
        var exportedHandles: [ObjectPath: InterfaceName]
    }

    typealias Objects = [ObjectPath: [InterfaceName: [String: DBusValue]]]

    /// Parses `objects`; the rejection says which `Failed` message bluetoothd answers.
    static func parse(_ objects: Objects) throws(ApplicationRejection) -> Parsed {
        guard !objects.isEmpty else { throw .noObjectReceived }
        let paths = objects.keys.sorted()
        let servicePaths = Set(paths.filter { objects[$0]?[BlueZInterface.gattService1] != nil })
        var profiles: [ObjectPath] = []
        // Early checks (proxy creation): any failure is "No valid service object found".
        for path in paths {
            guard let interfaces = objects[path] else { continue }
            if let profile = interfaces[BlueZInterface.gattProfile1] {
                guard case .array(.string, _)? = profile["UUIDs"] else { throw .noValidServiceObject }
                profiles.append(path)
            }
            if let properties = interfaces[BlueZInterface.gattCharacteristic1] {
                guard case .objectPath(let service)? = properties["Service"], servicePaths.contains(service),
                    characteristicFlags(properties["Flags"]) != nil
                else { throw .noValidServiceObject }
            }
            if let properties = interfaces[BlueZInterface.gattDescriptor1] {
                guard case .objectPath? = properties["Characteristic"], descriptorFlags(properties["Flags"]) != nil
                else { throw .noValidServiceObject }
            }
        }
        guard !servicePaths.isEmpty || !profiles.isEmpty else { throw .noValidServiceObject }
        // Later checks (database entry): any failure is "Failed to create entry in database".
        var exported: [ObjectPath: InterfaceName] = [:]
        var services: [RegisteredService] = []
        for path in paths where servicePaths.contains(path) {
            let properties = objects[path]?[BlueZInterface.gattService1] ?? [:]
            var service = try parseService(path, properties, servicePaths: servicePaths)
            if properties["Handle"] != nil { exported[path] = BlueZInterface.gattService1 }
            service.characteristics = try parseCharacteristics(of: path, objects, paths, &exported)
            services.append(service)
        }
        let characteristicPaths = Set(services.flatMap { $0.characteristics.map(\.path) })
        for path in paths {
            guard case .objectPath(let parent)? = objects[path]?[BlueZInterface.gattDescriptor1]?["Characteristic"]
            else { continue }
            guard characteristicPaths.contains(parent) else { throw .databaseEntry }
        }
        return Parsed(services: services, profiles: profiles, exportedHandles: exported)
    }

    private static func parseService(
        _ path: ObjectPath, _ properties: [String: DBusValue], servicePaths: Set<ObjectPath>
    ) throws(ApplicationRejection) -> RegisteredService {
        let uuid = try parseUUID(properties["UUID"])
        // bluetoothd provides GAP and GATT itself.
        if let short = BlueZUUID.shortForm(uuid), short == 0x1800 || short == 0x1801 { throw .databaseEntry }
        guard case .boolean(let primary)? = properties["Primary"] else { throw .databaseEntry }
        var includes: [ObjectPath] = []
        if let value = properties["Includes"] {
            guard case .array(.objectPath, let items) = value else { throw .databaseEntry }
            for case .objectPath(let included) in items {
                guard servicePaths.contains(included), included != path else { throw .databaseEntry }
                includes.append(included)
            }
        }
        return RegisteredService(
            path: path, uuid: uuid, primary: primary, includes: includes, handle: try parseHandle(properties),
            endHandle: 0, characteristics: [])
    }

    private static func parseCharacteristics(
        of service: ObjectPath, _ objects: Objects, _ paths: [ObjectPath], _ exported: inout [ObjectPath: InterfaceName]
    ) throws(ApplicationRejection) -> [RegisteredCharacteristic] {
        var out: [RegisteredCharacteristic] = []
        for path in paths {
            guard let properties = objects[path]?[BlueZInterface.gattCharacteristic1],
                case .objectPath(service)? = properties["Service"]
            else { continue }
            if properties["Handle"] != nil { exported[path] = BlueZInterface.gattCharacteristic1 }
            var descriptors: [RegisteredDescriptor] = []
            for child in paths {
                guard let descriptor = objects[child]?[BlueZInterface.gattDescriptor1],
                    case .objectPath(path)? = descriptor["Characteristic"]
                else { continue }
                if descriptor["Handle"] != nil { exported[child] = BlueZInterface.gattDescriptor1 }
                descriptors.append(
                    RegisteredDescriptor(
                        path: child, uuid: try parseUUID(descriptor["UUID"]),
                        flags: descriptorFlags(descriptor["Flags"]) ?? [], handle: try parseHandle(descriptor)))
            }
            out.append(
                RegisteredCharacteristic(
                    path: path, uuid: try parseUUID(properties["UUID"]),
                    flags: characteristicFlags(properties["Flags"]) ?? [], handle: try parseHandle(properties),
                    cccHandle: nil, supportsAcquireWrite: properties["WriteAcquired"] != nil,
                    supportsAcquireNotify: properties["NotifyAcquired"] != nil, descriptors: descriptors,
                    subscribedCentrals: []))
        }
        return out
    }

    /// A `UUID` property in any form bluetoothd parses, as 128-bit lower case.
    private static func parseUUID(_ value: DBusValue?) throws(ApplicationRejection) -> String {
        guard case .string(let text)? = value, let uuid = BlueZUUID.canonical(text) else { throw .databaseEntry }
        return uuid
    }

    /// The requested `Handle` (0 = allocate); any other type than `q` fails.
    private static func parseHandle(_ properties: [String: DBusValue]) throws(ApplicationRejection) -> UInt16 {
        guard let value = properties["Handle"] else { return 0 }
        guard case .uint16(let handle) = value else { throw .databaseEntry }
        return handle
    }

    /// `Flags` of a characteristic: a non-empty `as` of known strings, else `nil`.
    static func characteristicFlags(_ value: DBusValue?) -> [String]? {
        guard let strings = strings(value), !strings.isEmpty,
            GattCharacteristicFlags.parse(strings).unknown.isEmpty
        else { return nil }
        return strings
    }

    /// `Flags` of a descriptor: a non-empty `as` of known strings, else `nil`.
    static func descriptorFlags(_ value: DBusValue?) -> [String]? {
        guard let strings = strings(value), !strings.isEmpty, GattDescriptorFlags.parse(strings).unknown.isEmpty
        else { return nil }
        return strings
    }

    private static func strings(_ value: DBusValue?) -> [String]? {
        guard case .array(.string, let items)? = value else { return nil }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }
}
