/// An incoming method call, as an object handler sees it.
public struct DBusMethodCall: Sendable {
    /// The object path called.
    public let path: String
    /// The interface, when the caller named one (it may leave it out).
    public let interface: String?
    /// The method name.
    public let member: String
    /// The caller's unique name (`:1.42`).
    public let sender: String?
    /// The name the call was addressed to (our unique or a well-known name).
    public let destination: String?
    /// The signature of ``arguments``.
    public let signature: String
    /// The call's arguments (their signature matched the method's declared inputs for exported objects).
    public let arguments: [DBusValue]
    /// Identifies the message kept for a deferred reply (``DBusConnection/reply(to:with:)``).
    let token: UInt64

    init(
        path: String, interface: String?, member: String, sender: String?, destination: String?, signature: String,
        arguments: [DBusValue], token: UInt64
    ) {
        self.path = path
        self.interface = interface
        self.member = member
        self.sender = sender
        self.destination = destination
        self.signature = signature
        self.arguments = arguments
        self.token = token
    }
}

/// How a handler answers a ``DBusMethodCall``.
public enum DBusReply: Hashable, Sendable {
    /// A method return with these values (their signatures must match the method's declared outputs).
    case values([DBusValue])
    /// An error reply, e.g. `org.bluez.Error.Failed` / `le-connection-abort-by-local`.
    case error(name: String, message: String)
    /// No reply yet: answer later with ``DBusConnection/reply(to:with:)`` (or never, and the caller times out).
    /// This is how a handler waits for something (a callback into the caller, a timer) without blocking the bus.
    case deferred

    /// A method return without values.
    public static let empty = DBusReply.values([])

    /// The error reply for `error`: a ``DBusError``'s name (when it has one) and message, otherwise
    /// `org.freedesktop.DBus.Error.Failed` with the error's description.
    public static func error(_ error: any Error) -> DBusReply {
        guard let error = error as? DBusError else {
            return .error(name: DBusError.Name.failed, message: String(describing: error))
        }
        return .error(name: error.name ?? DBusError.Name.failed, message: error.message)
    }
}

/// Answers a method call on the bus thread. It must not block: return ``DBusReply/deferred`` and reply later
/// for anything slow. The connection is isolated, so the handler can emit signals and update properties directly.
/// Use the connection it is given rather than capturing one: the connection keeps its handlers until
/// ``DBusConnection/close()``, so a captured connection would keep itself alive.
public typealias DBusMethodHandler = @Sendable (isolated DBusConnection, DBusMethodCall) -> DBusReply

/// Like ``DBusMethodHandler``, for raw object registrations: `nil` leaves the call to sd-bus (and to other
/// registrations), which answers `UnknownMethod` when nobody handles it.
public typealias DBusRawMethodHandler = @Sendable (isolated DBusConnection, DBusMethodCall) -> DBusReply?

/// A raw handler registration, for ``DBusConnection/removeHandler(_:)``.
public struct DBusHandlerRegistration: Hashable, Sendable {
    let id: UInt64
    /// The registered path.
    public let path: String
    /// Whether the handler also receives calls to paths below ``path``.
    public let includesChildren: Bool
}
