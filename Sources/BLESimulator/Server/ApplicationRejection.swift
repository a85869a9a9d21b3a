import BlueZ
import DBus

/// Why bluetoothd refuses a GATT application after reading its objects (bluez-dbus-api.md §5.1).
/// Each case is one of the three `Failed` messages `RegisterApplication` can answer.
enum ApplicationRejection: Error, Sendable, Hashable {
    /// `GetManagedObjects` failed or returned nothing.
    case noObjectReceived
    /// No service or profile, or an object failed an early check (parent path, flags).
    case noValidServiceObject
    /// A later check failed while adding the services to the database (UUID, Primary,
    /// Includes, Handle, descriptor parent, handle range).
    case databaseEntry

    /// The error reply `RegisterApplication` gets.
    var reply: DBusError {
        switch self {
        case .noObjectReceived:
            DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.noObjectReceived)
        case .noValidServiceObject:
            DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.noValidServiceObjectFound)
        case .databaseEntry:
            DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.failedToCreateEntryInDatabase)
        }
    }
}
