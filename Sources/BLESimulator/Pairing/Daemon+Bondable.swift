import BlueZ
import DBus

extension Daemon {
    /// What bluetoothd 5.66 does, with its default configuration (`AlwaysPairable` off), when
    /// the default agent changes (`set_io_cap` in `src/agent.c`, `adapter_set_io_capability`):
    /// adapters become bondable while a default agent is registered and stop being bondable
    /// when the last one goes, so `Pairable` follows the agents. A client's own `Set` of
    /// `Pairable` stands until the next change.
    func defaultAgentChanged(_ state: inout SimState) {
        let bondable = state.agents.defaultOwner != nil
        for adapter in state.adapters {
            let current = connection.property("Pairable", interface: BlueZInterface.adapter1, path: adapter.path)
            guard current != .boolean(bondable) else { continue }
            emit(adapter.path, BlueZInterface.adapter1, set: [("Pairable", .boolean(bondable))])
        }
    }
}
