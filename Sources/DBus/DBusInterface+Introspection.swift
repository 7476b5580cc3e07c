/// Introspection XML (`org.freedesktop.DBus.Introspectable.Introspect`), generated from interface descriptions.
extension DBusInterface {
    /// The document for one node: its interfaces and the names of its direct children.
    static func introspectionDocument(interfaces: [DBusInterface], children: [String]) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        for interface in interfaces { xml += interface.introspectionXML }
        for child in children { xml += " <node name=\"\(escape(child))\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    /// This interface as an `<interface>` element.
    var introspectionXML: String {
        var xml = " <interface name=\"\(Self.escape(name))\">\n"
        for method in methods {
            xml += "  <method name=\"\(Self.escape(method.name))\">\n"
            for argument in method.inputs { xml += Self.argument(argument, direction: "in") }
            for argument in method.outputs { xml += Self.argument(argument, direction: "out") }
            xml += "  </method>\n"
        }
        for signal in signals {
            xml += "  <signal name=\"\(Self.escape(signal.name))\">\n"
            for argument in signal.arguments { xml += Self.argument(argument, direction: nil) }
            xml += "  </signal>\n"
        }
        for property in properties {
            xml += "  <property name=\"\(Self.escape(property.name))\" type=\"\(Self.escape(property.type.signature))\""
            xml += " access=\"\(property.access.rawValue)\"/>\n"
        }
        xml += " </interface>\n"
        return xml
    }

    private static func argument(_ argument: Argument, direction: String?) -> String {
        var xml = "   <arg"
        if !argument.name.isEmpty { xml += " name=\"\(escape(argument.name))\"" }
        xml += " type=\"\(escape(argument.type.signature))\""
        if let direction { xml += " direction=\"\(direction)\"" }
        return xml + "/>\n"
    }

    /// Escapes the XML specials; D-Bus names never contain them, but signatures contain `{`/`}` only, and
    /// argument names are free text.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
