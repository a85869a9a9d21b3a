extension DBusValue {
    /// Whether this is a `b` holding `expected`. Matched in place: `==` runs the derived
    /// comparison of the whole enum, code for every case, where a device's flags are read at
    /// each of its changes.
    public func isBoolean(_ expected: Bool) -> Bool {
        if case .boolean(let value) = self { value == expected } else { false }
    }
}
