import BlueZ
import DBus
import Foundation

/// Powering an adapter on and off, in bluetoothd's order: what the kernel does before it
/// confirms (links dropped, the class of device written), then bluetoothd's own reaction to
/// the new settings (`settings_changed` → `adapter_start` / `adapter_stop`), announced in one
/// `PropertiesChanged` (gdbus coalesces the changes of one main-loop turn).
extension Daemon {
    /// `Properties.Set(Powered)` (`property_set_mode`): the transitional PowerState and, to
    /// power off, the removal of every temporary device come first; bluetoothd replies when
    /// the kernel confirms (`property_set_mode_complete`) and announces the change after the
    /// reply. Setting the current value succeeds without a signal.
    func setPoweredCall(_ on: Bool, adapter index: Int, _ reply: MethodReply) {
        core.state.withLock { state in
            guard isCurrent(state), state.adapters.indices.contains(index) else { return }
            guard state.adapters[index].powered != on else { return reply.succeed() }
            let path = state.adapters[index].path
            if profile.powerState {
                emit(
                    path, BlueZInterface.adapter1, set: [("PowerState", .string(on ? "off-enabling" : "on-disabling"))])
            }
            if !on { removeTemporaryDevices(&state, adapter: index) }
            kernelPowers(on, &state, adapter: index)
            reply.succeed()
            // `reset_power_state_target` announces the final PowerState before `settings_changed`.
            var changes: [(String, DBusValue)] = []
            if profile.powerState { changes.append(("PowerState", .string(on ? "on" : "off"))) }
            changes += settingsChanged(on, &state, adapter: index)
            emit(path, BlueZInterface.adapter1, set: changes)
        }
    }

    /// Powers an adapter on or off from outside bluetoothd (rfkill, another mgmt client): the
    /// kernel's new settings reach bluetoothd without a call to answer.
    func applyExternalPower(_ on: Bool, adapter index: Int) {
        core.state.withLock { state in
            guard isCurrent(state), state.adapters.indices.contains(index) else { return }
            guard state.adapters[index].powered != on else { return }
            kernelPowers(on, &state, adapter: index)
            var changes = settingsChanged(on, &state, adapter: index)
            if profile.powerState { changes.append(("PowerState", .string(on ? "on" : "off"))) }
            emit(state.adapters[index].path, BlueZInterface.adapter1, set: changes)
        }
    }

    /// `set_mode` removes every temporary device before it asks the kernel to power off.
    private func removeTemporaryDevices(_ state: inout SimState, adapter index: Int) {
        for devicePath in state.devices.keys.sorted() {
            guard let device = state.devices[devicePath], device.adapterIndex == index, device.temporary else {
                continue
            }
            if device.connected { linkDown(&state, devicePath, reason: .local) }
            removeDevice(&state, devicePath)
        }
    }

    /// What the kernel does before it confirms: powering off, it fails pending connections and
    /// drops the links; powering on, it writes the class of device, whose change event reaches
    /// bluetoothd (and is announced) before the confirmation.
    private func kernelPowers(_ on: Bool, _ state: inout SimState, adapter index: Int) {
        guard !on else {
            emit(state.adapters[index].path, BlueZInterface.adapter1, set: [("Class", .uint32(Self.adapterClass))])
            return
        }
        for devicePath in state.devices.keys.sorted() {
            guard let device = state.devices[devicePath], device.adapterIndex == index else { continue }
            for pending in device.pendingConnects {
                pending.fail(Self.error(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAbortByLocal))
            }
            state.devices[devicePath]?.pendingConnects = []
            if device.connected { linkDown(&state, devicePath, reason: .local) }
        }
    }

    /// bluetoothd's reaction to the new settings, returned for one announcement: `Powered`;
    /// powering off, `adapter_stop` frees every discovery session and filter, cleans up after
    /// a discovery (non-connectable temporaries go), announces `Discovering=false` whether or
    /// not one ran, and zeroes the class (the kernel does not).
    private func settingsChanged(_ on: Bool, _ state: inout SimState, adapter index: Int) -> [(String, DBusValue)] {
        state.adapters[index].powered = on
        guard !on else { return [("Powered", .boolean(true))] }
        stopDiscovery(&state, adapter: index, announce: false)
        state.discovery[index] = nil
        state.filters[index] = nil
        return [("Powered", .boolean(false)), ("Discovering", .boolean(false)), ("Class", .uint32(0))]
    }
}
