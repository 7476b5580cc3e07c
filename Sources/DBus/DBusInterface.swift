/// The description of one D-Bus interface: its methods, signals and properties. Served objects use it to route
/// calls, check signatures, answer `org.freedesktop.DBus.Properties` and generate introspection XML.
///
/// ```swift
/// let agent = DBusInterface(
///     name: "org.bluez.Agent1",
///     methods: [
///         .init("Release"),
///         .init("RequestConfirmation", inputs: [.init("device", .objectPath), .init("passkey", .uint32)]),
///     ])
/// ```
public struct DBusInterface: Hashable, Sendable {
    /// A named, typed argument of a method or signal.
    public struct Argument: Hashable, Sendable {
        /// The argument's name (free text, shown by introspection).
        public var name: String
        /// Its D-Bus type.
        public var type: DBusType

        /// An argument `name` of type `type`.
        public init(_ name: String, _ type: DBusType) {
            self.name = name
            self.type = type
        }
    }

    /// A method: its name, the arguments a call carries and the values its reply carries.
    public struct Method: Hashable, Sendable {
        /// The member name (`Connect`).
        public var name: String
        /// What a call carries.
        public var inputs: [Argument]
        /// What the reply carries.
        public var outputs: [Argument]

        /// A method `name` with `inputs` and `outputs`.
        public init(_ name: String, inputs: [Argument] = [], outputs: [Argument] = []) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
        }

        /// The signature a call must have.
        public var inputSignature: String { DBusType.signature(of: inputs.map(\.type)) }
        /// The signature a reply must have.
        public var outputSignature: String { DBusType.signature(of: outputs.map(\.type)) }
    }

    /// A signal the interface emits.
    public struct Signal: Hashable, Sendable {
        /// The member name (`PropertiesChanged`).
        public var name: String
        /// What the signal carries.
        public var arguments: [Argument]

        /// A signal `name` carrying `arguments`.
        public init(_ name: String, arguments: [Argument] = []) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// Whether a property can be read (`Get`, `GetAll`), written (`Set`), or both.
    public enum Access: String, Hashable, Sendable {
        case read, write, readwrite

        var isReadable: Bool { self != .write }
        var isWritable: Bool { self != .read }
    }

    /// A property: name, type and access.
    public struct Property: Hashable, Sendable {
        /// The property name (`Connected`).
        public var name: String
        /// Its D-Bus type; values must have exactly this type.
        public var type: DBusType
        /// Read, write or both.
        public var access: Access

        /// A property `name` of type `type`, read-only unless `access` says otherwise.
        public init(_ name: String, _ type: DBusType, access: Access = .read) {
            self.name = name
            self.type = type
            self.access = access
        }
    }

    /// The interface name (`org.bluez.Device1`).
    public var name: String
    /// Its methods.
    public var methods: [Method]
    /// Its signals.
    public var signals: [Signal]
    /// Its properties.
    public var properties: [Property]

    /// An interface description.
    public init(name: String, methods: [Method] = [], signals: [Signal] = [], properties: [Property] = []) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }

    /// The method called `name`, if declared.
    public func method(named name: String) -> Method? { methods.first { $0.name == name } }
    /// The property called `name`, if declared.
    public func property(named name: String) -> Property? { properties.first { $0.name == name } }
}

extension DBusInterface {
    /// `org.freedesktop.DBus.Introspectable`, answered for every served path.
    public static let introspectable = DBusInterface(
        name: "org.freedesktop.DBus.Introspectable",
        methods: [.init("Introspect", outputs: [.init("xml_data", .string)])])

    /// `org.freedesktop.DBus.Peer`, answered by sd-bus itself.
    public static let peer = DBusInterface(
        name: "org.freedesktop.DBus.Peer",
        methods: [.init("Ping"), .init("GetMachineId", outputs: [.init("machine_uuid", .string)])])

    /// `org.freedesktop.DBus.Properties`, answered for every served object from its property values.
    public static let properties = DBusInterface(
        name: "org.freedesktop.DBus.Properties",
        methods: [
            .init(
                "Get", inputs: [.init("interface_name", .string), .init("property_name", .string)],
                outputs: [.init("value", .variant)]),
            .init(
                "GetAll", inputs: [.init("interface_name", .string)],
                outputs: [.init("props", .dictionary(key: .string, value: .variant))]),
            .init(
                "Set",
                inputs: [
                    .init("interface_name", .string), .init("property_name", .string),
                    .init("value", .variant),
                ]),
        ],
        signals: [
            .init(
                "PropertiesChanged",
                arguments: [
                    .init("interface_name", .string),
                    .init("changed_properties", .dictionary(key: .string, value: .variant)),
                    .init("invalidated_properties", .array(.string)),
                ])
        ])

    /// The type of `GetManagedObjects`' reply: `a{oa{sa{sv}}}`.
    public static let managedObjectsType = DBusType.dictionary(
        key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)))

    /// `org.freedesktop.DBus.ObjectManager`, answered by objects exported with `objectManager: true`.
    public static let objectManager = DBusInterface(
        name: "org.freedesktop.DBus.ObjectManager",
        methods: [
            .init("GetManagedObjects", outputs: [.init("objpath_interfaces_and_properties", managedObjectsType)])
        ],
        signals: [
            .init(
                "InterfacesAdded",
                arguments: [
                    .init("object_path", .objectPath),
                    .init(
                        "interfaces_and_properties",
                        .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))),
                ]),
            .init(
                "InterfacesRemoved",
                arguments: [.init("object_path", .objectPath), .init("interfaces", .array(.string))]),
        ])

    /// Whether `name` is one of the standard interfaces the connection answers itself.
    static func isStandard(_ name: String) -> Bool {
        name == introspectable.name || name == peer.name || name == properties.name || name == objectManager.name
    }
}
