import DBus
import Foundation

/// What the request handlers know about one exported characteristic or descriptor.
struct PublishedAttribute: Sendable {
    var service: BluetoothUUID
    var characteristic: BluetoothUUID
    var descriptor: BluetoothUUID?
    /// A value the manager answers reads with, without asking the app.
    var staticValue: Data?
}

/// A service the manager published, with the paths of its objects.
struct PublishedService: Sendable {
    var handle: ServiceHandle
    var service: MutableService
    var path: ObjectPath

    func characteristicPath(_ index: Int) -> ObjectPath {
        Self.child(path, "char", index)
    }

    func descriptorPath(_ characteristic: Int, _ index: Int) -> ObjectPath {
        Self.child(characteristicPath(characteristic), "desc", index)
    }

    /// `char0001`: zero-padded so bluetoothd, which takes objects in path order, gives
    /// handles in declaration order. The element is always valid.
    static func child(_ parent: ObjectPath, _ prefix: String, _ index: Int) -> ObjectPath {
        (try? parent.appending(prefix + String(format: "%04d", index))) ?? parent
    }
}

/// Identifies a service published by ``PeripheralManager/add(_:timeout:)``, to remove it later.
public struct ServiceHandle: Sendable, Hashable, CustomStringConvertible {
    let id: Int
    /// The service UUID.
    public let uuid: BluetoothUUID

    /// `180D#1`
    public var description: String { "\(uuid)#\(id)" }
}
