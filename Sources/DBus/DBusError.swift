internal import Glibc

/// An error from the D-Bus layer: a failed sd-bus call, an error reply from a peer, a call that got no reply in
/// time, a closed connection, or a value that does not fit its D-Bus type.
///
/// ```swift
/// do {
///     _ = try await bus.call("org.bluez", path: device, interface: "org.bluez.Device1", member: "Connect")
/// } catch where error.name == "org.bluez.Error.Failed" && error.message == "le-connection-abort-by-local" {
///     // retry with backoff
/// }
/// ```
///
/// `description` carries the operation (an interface and member, or an sd-bus function), the error name and the
/// peer's message; object paths (which contain device addresses) appear only in `debugDescription`.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The class of failure. A struct with fixed values rather than an enum, so that new kinds can be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case system, remote, noReply, timedOut, closed, cancelled, invalidValue, invalidSignature, unexpectedReply
        }
        private let base: Base

        /// An sd-bus or libc call returned a negative errno (`errno` holds it).
        public static let system = Kind(base: .system)
        /// The peer answered with a D-Bus error (`name` and `message` hold it), e.g. `org.bluez.Error.Failed`.
        public static let remote = Kind(base: .remote)
        /// The bus answered `org.freedesktop.DBus.Error.NoReply` before our deadline: the peer left the bus (or
        /// the connection closed) without answering.
        /// No reply came: the peer left, or the caller's timeout passed (sd-bus).
        public static let noReply = Kind(base: .noReply)
        /// Our own deadline passed without a reply (sd-bus then synthesizes `NoReply`; `name` keeps it).
        public static let timedOut = Kind(base: .timedOut)
        /// The connection is closed, or was closed while the call was pending.
        public static let closed = Kind(base: .closed)
        /// The calling task was cancelled while it waited.
        public static let cancelled = Kind(base: .cancelled)
        /// A value does not match its declared D-Bus type (an array element, a property, a string with NUL).
        public static let invalidValue = Kind(base: .invalidValue)
        /// A type signature is not valid D-Bus.
        public static let invalidSignature = Kind(base: .invalidSignature)
        /// A reply did not have the shape the caller expected (e.g. `Get` not returning one variant).
        public static let unexpectedReply = Kind(base: .unexpectedReply)

        public var description: String { base.rawValue }
    }

    /// The class of failure.
    public let kind: Kind
    /// What failed: an sd-bus function (`sd_bus_call_async`) or a D-Bus member (`org.bluez.Device1.Connect`).
    public let operation: String
    /// The errno for ``Kind/system`` errors (positive, e.g. `ECONNREFUSED`).
    public let errno: Int32?
    /// The D-Bus error name, for ``Kind/remote``, ``Kind/noReply`` and ``Kind/timedOut``.
    public let name: String?
    /// The peer's error message, `strerror(errno)`, or our own explanation.
    public let message: String
    /// The object path involved, if any; shown only in `debugDescription` (paths contain device addresses).
    public let path: String?

    /// Creates an error; prefer the static constructors.
    public init(
        kind: Kind, operation: String, errno: Int32? = nil, name: String? = nil, message: String, path: String? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.errno = errno
        self.name = name
        self.message = message
        self.path = path
    }

    /// A named D-Bus error, as a method handler would answer it (`org.bluez.Error.Rejected`, "Pairing rejected").
    public static func named(_ name: String, _ message: String, operation: String = "") -> DBusError {
        DBusError(kind: .remote, operation: operation, name: name, message: message)
    }

    /// An error for a negative errno returned by an sd-bus or libc function.
    static func system(_ operation: String, errno: Int32, path: String? = nil) -> DBusError {
        DBusError(
            kind: .system, operation: operation, errno: errno, message: String(cString: strerror(errno)), path: path)
    }

    static func closed(_ operation: String) -> DBusError {
        DBusError(kind: .closed, operation: operation, message: "the connection is closed")
    }

    static func invalidValue(_ operation: String, _ message: String) -> DBusError {
        DBusError(kind: .invalidValue, operation: operation, message: message)
    }

    public var description: String {
        var text = operation.isEmpty ? "D-Bus" : operation
        text += " failed (\(kind))"
        if let name { text += ": \(name)" }
        if let errno { text += ": errno \(errno)" }
        if !message.isEmpty { text += ": \(message)" }
        return text
    }

    public var debugDescription: String {
        guard let path else { return description }
        return "\(description) [path \(path)]"
    }
}

extension DBusError {
    /// Error names of the D-Bus specification (`org.freedesktop.DBus.Error.*`) that this layer sends or checks.
    public enum Name {
        /// A generic failure.
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        /// A timeout inside the bus.
        public static let timeout = "org.freedesktop.DBus.Error.Timeout"
        /// Nobody owns the destination name (e.g. bluetoothd is not running).
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// `GetNameOwner` of a name nobody owns.
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// No object at the path (BlueZ answers this for a vanished device).
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        /// The object has no such interface.
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        /// No such method, or not with this signature.
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        /// No such property.
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        /// `Set` of a read-only property.
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        /// Bad arguments, or a `Get` of a property that is absent.
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        /// The bus policy refused the message.
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    }
}

/// Throws a ``DBusError`` of kind `system` when an sd-bus or libc call returned a negative errno; returns the
/// (non-negative) result otherwise.
@discardableResult
func check(_ result: Int32, _ operation: @autoclosure () -> String, path: String? = nil) throws(DBusError) -> Int32 {
    guard result >= 0 else { throw DBusError.system(operation(), errno: -result, path: path) }
    return result
}
