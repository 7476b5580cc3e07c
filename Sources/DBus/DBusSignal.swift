/// A signal received through a match (``DBusConnection/subscribe(to:bufferingPolicy:)``).
public struct DBusSignal: Hashable, Sendable {
    /// The object that emitted it.
    public let path: String
    /// The interface the signal belongs to.
    public let interface: String
    /// The signal name.
    public let member: String
    /// The sender's unique name (`:1.42`).
    public let sender: String?
    /// Set for unicast signals.
    public let destination: String?
    /// What the signal carries.
    public let arguments: [DBusValue]

    /// A signal as a match delivers it.
    public init(
        path: String, interface: String, member: String, sender: String? = nil, destination: String? = nil,
        arguments: [DBusValue]
    ) {
        self.path = path
        self.interface = interface
        self.member = member
        self.sender = sender
        self.destination = destination
        self.arguments = arguments
    }
}

/// A D-Bus match rule (`type='signal',interface='…',member='…',path_namespace='…'`), built from its parts.
///
/// ```swift
/// let added = DBusMatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded")
/// let changed = DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
///                             pathNamespace: "/org/bluez")
/// ```
public struct DBusMatchRule: Hashable, Sendable, CustomStringConvertible {
    /// Message type; `signal` unless set otherwise.
    public var type: String? = "signal"
    /// The sender (`org.freedesktop.DBus`, a unique name; a well-known name matches its current owner).
    public var sender: String?
    /// The interface.
    public var interface: String?
    /// The member.
    public var member: String?
    /// Exactly this object path.
    public var path: String?
    /// Matches `path` and everything below it.
    public var pathNamespace: String?
    /// The destination (unicast signals).
    public var destination: String?
    /// String argument matches (`arg0='org.bluez'`), by argument index.
    public var arguments: [Int: String] = [:]
    /// Object-path argument matches (`arg0path='/org/bluez/'`), by argument index.
    public var argumentPaths: [Int: String] = [:]

    /// A rule from its parts; `nil` parts are left out (match anything).
    public init(
        type: String? = "signal", sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: String? = nil, pathNamespace: String? = nil, destination: String? = nil,
        arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:]
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
    }

    /// The rule in the bus's syntax; values are quoted, with `'` escaped as the specification requires.
    public var description: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)=\(Self.quote(value))")
        }
        add("type", type)
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("destination", destination)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) { add("arg\(index)path", value) }
        return parts.joined(separator: ",")
    }

    /// `'value'`, with each `'` written as `'\''` (close the quote, escaped quote, reopen).
    private static func quote(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
