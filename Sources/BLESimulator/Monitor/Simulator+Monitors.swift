extension Simulator {
    /// How many advertisement monitors applications have registered and the daemon activated
    /// (passive scans under way), over every adapter.
    public var activeMonitorCount: Int {
        core.state.withLock { state in state.monitors.active.values.reduce(0) { $0 + $1.count } }
    }
}
