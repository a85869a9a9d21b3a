import DBus

/// Where the simulator's control interface lives on the bus.
///
/// A running simulator (`ble-sim`, or a ``Simulator`` in a test) can be driven by other
/// processes through `org.swiftble.Simulator1` on `/org/swiftble/Simulator`, served under the
/// well-known name `org.swiftble.Simulator`:
///
/// ```sh
/// dbus-send --system --print-reply --dest=org.swiftble.Simulator /org/swiftble/Simulator \
///     org.swiftble.Simulator1.Statistics
/// ```
///
/// It lives on a connection of its own, not on the one that impersonates bluetoothd: that one
/// has an object manager at `/`, so an object exported there would show up in `org.bluez`'s
/// `GetManagedObjects`, which the real daemon never lists. A separate connection also outlives
/// a bluetoothd restart, so `Restart()` answers once the new daemon owns `org.bluez`. The methods
/// and their JSON arguments are documented in `Scenarios/README.md`.
public enum SimulatorControlInterface {
    /// `org.swiftble.Simulator`, the well-known name of the control connection.
    public static let busName: BusName = ControlNameLiteral.busName("org.swiftble.Simulator")
    /// `/org/swiftble/Simulator`, the control object.
    public static let objectPath: ObjectPath = ControlNameLiteral.path("/org/swiftble/Simulator")
    /// `org.swiftble.Simulator1`, the control interface.
    public static let interface: InterfaceName = ControlNameLiteral.interface("org.swiftble.Simulator1")
}

/// Builds the control names from literals without `try!`: the `DBus` module keeps its
/// unchecked initializers internal. Every literal is a valid name (tests read each constant
/// back), so the fallbacks only exist to avoid a crash path.
enum ControlNameLiteral {
    static func busName(_ text: String) -> BusName { (try? BusName(text)) ?? .bus }

    static func path(_ text: String) -> ObjectPath { (try? ObjectPath(text)) ?? .root }

    static func interface(_ text: String) -> InterfaceName { (try? InterfaceName(text)) ?? .bus }

    static func member(_ text: String) -> MemberName {
        if let name = try? MemberName(text) { return name }
        // "Invalid" is a valid member name, so this recursion stops after one step.
        return member("Invalid")
    }

    static func signature(_ text: String) -> Signature { (try? Signature(text)) ?? .empty }
}
