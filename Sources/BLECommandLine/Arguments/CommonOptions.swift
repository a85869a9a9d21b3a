import BLE

/// The options every Bluetooth command takes: where bluetoothd is, which adapter, how long to wait.
struct CommonOptions: Sendable {
    /// The bus bluetoothd (or a simulator) is on.
    var bus: Bus
    /// The adapter to use; the first one when nil.
    var adapter: String?
    /// How long to look for and connect to a device.
    var timeout: Duration

    static let busOption = CommandSpec.Option(
        "--bus", value: "ADDRESS", "bluetoothd's D-Bus address (default: the system bus, or $DBUS_SYSTEM_BUS_ADDRESS)")
    static let adapterOption = CommandSpec.Option(
        "--adapter", value: "NAME", "the adapter to use, e.g. hci1 (default: the first)")
    static let timeoutOption = CommandSpec.Option(
        "--timeout", value: "SECONDS", "how long to look for and connect to the device (default 15)")

    /// `--bus` and `--adapter`.
    static let placement = [busOption, adapterOption]
    /// `--bus`, `--adapter` and `--timeout`.
    static let all = placement + [timeoutOption]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        if let address = arguments.value("--bus") {
            guard address.contains(":") else {
                throw UsageError("--bus wants a D-Bus address such as unix:path=/run/dbus/system_bus_socket")
            }
            bus = .address(address)
        } else {
            bus = .system
        }
        adapter = arguments.value("--adapter")
        if let adapter, !Self.isAdapterName(adapter) {
            throw UsageError("--adapter wants an adapter name such as hci0, not \"\(adapter)\"")
        }
        timeout = try arguments.seconds("--timeout") ?? .seconds(15)
    }

    /// `hci` followed by digits.
    static func isAdapterName(_ text: String) -> Bool {
        text.hasPrefix("hci") && text.count > 3 && text.dropFirst(3).allSatisfy(\.isASCII)
            && Int(text.dropFirst(3)) != nil
    }
}
