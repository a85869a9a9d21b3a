extension Dictionary {
    /// Runs `body` on the value at `index` where it is stored, through the values' modify
    /// accessor: their getter copies the whole value, retaining everything it holds, which the
    /// simulator's records (a `DeviceState`, a `PeripheralRecord`) make costly on hot paths.
    mutating func inPlace<Result>(_ index: Index, _ body: (inout Value) throws -> Result) rethrows -> Result {
        try body(&values[index])
    }
}
