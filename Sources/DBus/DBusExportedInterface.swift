/// One interface of a served object: its description, its current property values and its handlers.
///
/// Properties declared in the description but absent from ``properties`` are treated as not present (BlueZ
/// leaves out unknown optional properties such as `Name` or `RSSI`): `GetAll` omits them and `Get` answers
/// `InvalidArgs`.
public struct DBusExportedInterface: Sendable {
    /// The description: methods, signals, properties.
    public var interface: DBusInterface
    /// Current values, by property name (not wrapped in variants).
    public var properties: [String: DBusValue]
    /// Answers the interface's methods (switch on `call.member`); `nil` answers every method `UnknownMethod`.
    public var methodHandler: DBusMethodHandler?
    /// Decides on a remote `Properties.Set` of a writable property; `nil` accepts every write of the right type.
    public var propertyWriteHandler: DBusPropertyWriteHandler?

    /// An interface instance with its initial property values and handlers.
    public init(
        _ interface: DBusInterface, properties: [String: DBusValue] = [:], methodHandler: DBusMethodHandler? = nil,
        propertyWriteHandler: DBusPropertyWriteHandler? = nil
    ) {
        self.interface = interface
        self.properties = properties
        self.methodHandler = methodHandler
        self.propertyWriteHandler = propertyWriteHandler
    }

    /// The readable properties that have values, in declaration order, as `a{sv}`.
    var readableProperties: DBusValue {
        let pairs = interface.properties.compactMap { property -> (String, DBusValue)? in
            guard property.access.isReadable, let value = properties[property.name] else { return nil }
            return (property.name, value)
        }
        return .vardict(ordered: pairs)
    }

    /// Checks that every value belongs to a declared property of the same type.
    func validate() throws(DBusError) {
        for (name, value) in properties { try Self.check(name, value, in: interface) }
    }

    static func check(_ name: String, _ value: DBusValue, in interface: DBusInterface) throws(DBusError) {
        guard let property = interface.property(named: name) else {
            throw DBusError.invalidValue("export \(interface.name)", "property '\(name)' is not declared")
        }
        guard value.type == property.type else {
            throw DBusError.invalidValue(
                "export \(interface.name)",
                "property '\(name)' is declared \(property.type) but the value is \(value.type)")
        }
        try value.validate()
    }
}

/// Decides on a remote write of a property: the path, the property name and the new value (of the declared type).
public typealias DBusPropertyWriteHandler =
    @Sendable (isolated DBusConnection, _ path: String, _ name: String, _ value: DBusValue) -> DBusPropertyWriteDecision

/// The answer of a ``DBusPropertyWriteHandler``.
public enum DBusPropertyWriteDecision: Hashable, Sendable {
    /// Store the value and emit `PropertiesChanged`.
    case accept
    /// Answer the `Set` call with this error and keep the old value.
    case reject(name: String, message: String)
}
