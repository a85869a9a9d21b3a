/// Names an advertisement of ``PeripheralManager/addAdvertisement(_:)``, to stop it later and
/// to tell which one ``PeripheralManagerEvent/advertisementStopped(_:)`` is about.
public struct AdvertisementHandle: Sendable, Hashable, CustomStringConvertible {
    /// The manager's number for it (1, 2, …; its object is `/org/swift_ble/advertisement<id>`).
    public let id: Int

    /// `advertisement 2`
    public var description: String { "advertisement \(id)" }
}
