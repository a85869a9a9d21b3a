/// What one `PropertiesChanged` signal announces, as the object table decided it: encoded
/// straight from these parts (``MessageEncoder/propertiesChanged(_:)``), with no message tree
/// between.
struct PropertiesChange {
    var path: ObjectPath
    var interface: InterfaceName
    /// New values, in the order they were set.
    var changed: [(String, DBusValue)]
    /// Names whose values are not sent: they became absent, or only invalidate.
    var invalidated: [String]
}
