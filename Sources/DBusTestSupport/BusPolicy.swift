/// The security policy of a private bus: allow-all by default, with optional denials to
/// reproduce a restricted system bus (for example a distribution that keeps unprivileged users
/// away from bluetoothd).
public struct BusPolicy: Sendable, Hashable {
    /// Well-known names no client may send method calls to (`AccessDenied` from the daemon).
    /// Their owners can still own them and emit signals.
    public var deniedDestinations: [String] = []

    /// Everything allowed.
    public static let allowAll = BusPolicy()

    /// Allow-all except method calls to `names`.
    public static func denying(_ names: [String]) -> BusPolicy {
        BusPolicy(deniedDestinations: names)
    }

    /// The `<deny>` rules appended to the default context.
    var rules: String {
        deniedDestinations.map { "    <deny send_destination=\"\($0)\" send_type=\"method_call\"/>" }
            .joined(separator: "\n")
    }
}
