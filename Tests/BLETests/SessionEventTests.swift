import BlueZ
import DBus
import Testing

@testable import BLE

/// Which listeners a session event reaches: a prefix listener hears its subtree, an exact one
/// (a central following its adapter) only the object itself and whole-tree events.
@Suite struct SessionEventTests {
    let adapter: ObjectPath
    let device: ObjectPath

    init() throws {
        adapter = try ObjectPath("/org/bluez/hci0")
        device = try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22")
    }

    @Test func exactListenersHearOnlyTheirObjectAndTheWholeTree() {
        let deviceAdded = SessionEvent.tree(
            .interfacesAdded(device, [BlueZInterface.device1: [:]]), [.added(device, BlueZInterface.device1)], serial: 1
        )
        let adapterChanged = SessionEvent.tree(
            .propertiesChanged(
                adapter, BlueZInterface.adapter1, changed: ["Powered": .boolean(false)], invalidated: []),
            [.changed(adapter, BlueZInterface.adapter1, changedKeys: ["Powered"], invalidatedKeys: [])], serial: 2)
        let unchangedAdapter = SessionEvent.tree(
            .propertiesChanged(adapter, BlueZInterface.adapter1, changed: [:], invalidated: []), [], serial: 3)
        let reset = SessionEvent.tree(.reset, [.removed(device, BlueZInterface.device1)], serial: 0)
        #expect(deviceAdded.concerns(adapter), "a prefix listener hears the device")
        #expect(!deviceAdded.concerns(exactly: adapter), "an exact one does not")
        #expect(adapterChanged.concerns(exactly: adapter))
        #expect(unchangedAdapter.concerns(exactly: adapter), "a signal of the adapter, even one that changed nothing")
        #expect(reset.concerns(exactly: adapter))
        #expect(SessionEvent.daemonGone.concerns(exactly: adapter))
        #expect(!adapterChanged.concerns(exactly: device))
    }
}
