extension Actor {
    /// Runs `operation` isolated to this actor without asking the runtime whether it may: for
    /// callers that checked themselves that they run on the actor's executor between its jobs
    /// (``DBus/ConnectionExecutor/isCurrent``: the I/O thread calling back).
    ///
    /// `assumeIsolated` asks the runtime, which for a custom executor tests for the main
    /// executor and calls `checkIsolated`: about 900 instructions, several times for every
    /// change of a device while it connects. Debug builds (the test suite) still ask, so a
    /// wrong assumption traps there.
    nonisolated func runIsolatedUnchecked(_ operation: (isolated Self) -> Void) {
        #if DEBUG
            preconditionIsolated("runIsolatedUnchecked off the actor's executor")
        #endif
        typealias Isolated = (isolated Self) -> Void
        typealias Plain = (Self) -> Void
        withoutActuallyEscaping(operation) { (escapable: @escaping Isolated) in
            unsafeBitCast(escapable, to: Plain.self)(self)
        }
    }
}
