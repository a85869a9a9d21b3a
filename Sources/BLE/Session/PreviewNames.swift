import BlueZ
import DBus

/// The names the session's preview compares every signal bluetoothd sends against, held by the
/// session: a `static let` of another module is read through a call that checks it was made
/// (`swift_once`), five of them per notification, about 1 % of a paced notification's CPU in
/// perf's samples.
struct PreviewNames: Sendable {
    let propertiesChanged = BlueZSignal.propertiesChanged
    let interfacesAdded = BlueZSignal.interfacesAdded
    let properties = InterfaceName.properties
    let objectManager = InterfaceName.objectManager
    let gattCharacteristic1 = BlueZInterface.gattCharacteristic1
    /// A characteristic's value property.
    let value = GattCharacteristicProperties.Key.value
    /// The interfaces the session mirrors (``BlueZSession/mirroredInterfaces``).
    let mirrored = BlueZSession.mirroredInterfaces
}
