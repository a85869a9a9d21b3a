import BlueZ
import DBus

extension Peripheral {
    /// The largest value one write of `type` carries: ATT MTU − 3 for writes without response
    /// (from BlueZ's `MTU` property, read once per link; 20, the minimum, when BlueZ does not
    /// report it) and 512 for writes with response (BlueZ does a long write).
    public func maximumWriteLength(for type: WriteType) async -> Int {
        switch type {
        case .withResponse, .reliable: return 512
        case .withoutResponse:
            await readLinkMTUIfNeeded()
            return deviceWriteWithoutResponseLimit(in: session.tree)
        }
    }

    /// The ATT MTU of the current link, as BlueZ reports it (read once per link); the minimum,
    /// 23, while no link is up or when BlueZ does not report one (before 5.62).
    public var mtu: Int {
        get async {
            guard connectionState == .connected else { return Self.minimumMTU }
            await readLinkMTUIfNeeded()
            return mirroredMTU()
        }
    }

    /// The link's MTU as the mirror holds it (the minimum when it holds none).
    private func mirroredMTU() -> Int { deviceWriteWithoutResponseLimit(in: session.tree) + 3 }

    /// The ATT minimum, which every link has.
    static let minimumMTU = 23

    /// Reads the link's MTU into the mirror unless it holds it already (see ``LinkMTU``).
    nonisolated(nonsending) func readLinkMTUIfNeeded() async {
        guard let link = linkMTU.readNeeded() else { return }
        if await session.refreshMTU(of: devicePath) { linkMTU.confirm(link: link) }
        await announceMTUIfChanged()
    }

    /// Announces the link's MTU when it is not the one announced last (read from the mirror
    /// after a refresh; called while the link is up).
    func announceMTUIfChanged() {
        let mtu = mirroredMTU()
        guard mtu != announcedMTU else { return }
        announcedMTU = mtu
        eventBroadcast.yield(.mtuChanged(mtu))
    }

    /// BlueZ drops MTU silently at a disconnection and restores it silently, so a tree read
    /// while disconnected often has none: looks without decoding every characteristic.
    private nonisolated func deviceWriteWithoutResponseLimit(in tree: BlueZObjectTree) -> Int {
        for service in tree.servicePaths(of: devicePath) {
            for path in tree.characteristicPaths(of: service) {
                if let mtu = Self.mtu(of: path, in: tree) { return Int(mtu) - 3 }
            }
        }
        return 20
    }

    /// The write-without-response limit for one characteristic: its own `MTU` (the link's) when
    /// BlueZ has it, read without decoding the object; else the walk of the device's objects,
    /// too slow to do for every write.
    nonisolated(nonsending) func writeWithoutResponseLimit(_ path: ObjectPath) async -> Int {
        await readLinkMTUIfNeeded()
        let tree = session.tree
        if let mtu = Self.mtu(of: path, in: tree) { return Int(mtu) - 3 }
        return deviceWriteWithoutResponseLimit(in: tree)
    }

    /// A characteristic's `MTU` property, when BlueZ reports a usable one.
    private static func mtu(of path: ObjectPath, in tree: BlueZObjectTree) -> UInt16? {
        let properties = tree.objects[path]?[BlueZInterface.gattCharacteristic1]
        guard case .uint16(let mtu)? = properties?[GattCharacteristicProperties.Key.mtu], mtu > 3 else { return nil }
        return mtu
    }
}
