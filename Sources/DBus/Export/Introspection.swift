/// `org.freedesktop.DBus.Introspectable` XML for an exported path.
enum Introspection {
    static func xml(for path: ObjectPath, in table: ObjectTable) -> String {
        var out = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        out += standardInterfaces(hasManager: table.managers.contains(path))
        if let object = table.objects[path] {
            for name in object.order {
                guard let interface = object.interfaces[name] else { continue }
                out += describe(interface)
            }
        }
        for child in table.childNames(of: path) { out += "  <node name=\"\(child)\"/>\n" }
        out += "</node>\n"
        return out
    }

    private static func describe(_ interface: ExportedInterface) -> String {
        var out = "  <interface name=\"\(interface.name.rawValue)\">\n"
        for name in interface.methods.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let method = interface.methods[name] else { continue }
            out += "    <method name=\"\(name.rawValue)\">\n"
            for type in method.inSignature.types {
                out += "      <arg type=\"\(escape(type.signature))\" direction=\"in\"/>\n"
            }
            for type in method.outSignature.types {
                out += "      <arg type=\"\(escape(type.signature))\" direction=\"out\"/>\n"
            }
            out += "    </method>\n"
        }
        for signal in interface.signals {
            out += "    <signal name=\"\(signal.name.rawValue)\">\n"
            for type in signal.signature.types { out += "      <arg type=\"\(escape(type.signature))\"/>\n" }
            out += "    </signal>\n"
        }
        for name in interface.properties.keys.sorted() {
            guard let property = interface.properties[name] else { continue }
            out += "    <property name=\"\(escape(name))\" type=\"\(escape(property.type.signature))\" "
            out += "access=\"\(property.access.rawValue)\">\n"
            out += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
            out += "value=\"\(property.changeSignal.rawValue)\"/>\n"
            out += "    </property>\n"
        }
        out += "  </interface>\n"
        return out
    }

    private static func standardInterfaces(hasManager: Bool) -> String {
        var out = """
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Properties">
                <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
                <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
                <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
              </interface>

            """
        if hasManager {
            out += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
                    <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
                    <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
                  </interface>

                """
        }
        return out
    }

    /// Property names come from callers and may hold XML metacharacters.
    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
