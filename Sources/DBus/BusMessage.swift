internal import CSystemd

/// One `sd_bus_message*`, unreferenced in `deinit`.
///
/// Confined to the bus thread (created, read and released there) and deliberately not `Sendable`: sd-bus objects
/// may be used by one thread only.
final class BusMessage {
    let pointer: OpaquePointer

    /// Takes over the reference returned by an `sd_bus_message_new_*` call.
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to a message sd-bus lends to a callback.
    init(retaining pointer: OpaquePointer) {
        self.pointer = sd_bus_message_ref(pointer)
    }

    deinit {
        sd_bus_message_unref(pointer)
    }

    // MARK: Construction

    /// A method call to `member` on `path` (at `destination`, a bus name; `nil` for a peer-to-peer bus).
    static func methodCall(
        bus: OpaquePointer, destination: String?, path: String, interface: String?, member: String
    ) throws(DBusError) -> BusMessage {
        var message: OpaquePointer?
        let result = withOptionalCString(destination) { destination in
            withOptionalCString(interface) { interface in
                sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
            }
        }
        try check(result, "sd_bus_message_new_method_call(\(interface ?? "").\(member))", path: path)
        return try adopt(message, "sd_bus_message_new_method_call")
    }

    /// A signal `interface.member` from `path`.
    static func signal(bus: OpaquePointer, path: String, interface: String, member: String) throws(DBusError)
        -> BusMessage
    {
        var message: OpaquePointer?
        try check(
            sd_bus_message_new_signal(bus, &message, path, interface, member),
            "sd_bus_message_new_signal(\(interface).\(member))", path: path)
        return try adopt(message, "sd_bus_message_new_signal")
    }

    /// The method return for this method call.
    func methodReturn() throws(DBusError) -> BusMessage {
        var message: OpaquePointer?
        try check(sd_bus_message_new_method_return(pointer, &message), "sd_bus_message_new_method_return")
        return try BusMessage.adopt(message, "sd_bus_message_new_method_return")
    }

    /// An error reply `name` / `text` for this method call.
    func methodError(name: String, message text: String) throws(DBusError) -> BusMessage {
        var message: OpaquePointer?
        let result = name.withCString { name in
            text.withCString { text in
                var error = sd_bus_error(name: name, message: text, _need_free: 0)
                return sd_bus_message_new_method_error(pointer, &message, &error)
            }
        }
        try check(result, "sd_bus_message_new_method_error(\(name))")
        return try BusMessage.adopt(message, "sd_bus_message_new_method_error")
    }

    private static func adopt(_ message: OpaquePointer?, _ operation: String) throws(DBusError) -> BusMessage {
        guard let message else {
            throw DBusError(kind: .system, operation: operation, message: "sd-bus returned no message")
        }
        return BusMessage(adopting: message)
    }

    /// Sets the destination of a signal (unicast signals, e.g. to one agent).
    func setDestination(_ destination: String) throws(DBusError) {
        try check(sd_bus_message_set_destination(pointer, destination), "sd_bus_message_set_destination")
    }

    /// Queues the message on `bus` (written by the bus thread's loop).
    func send(on bus: OpaquePointer) throws(DBusError) {
        try check(sd_bus_send(bus, pointer, nil), "sd_bus_send(\(interface ?? "").\(member ?? ""))", path: path)
    }

    // MARK: Header

    var path: String? { sd_bus_message_get_path(pointer).map { String(cString: $0) } }
    var interface: String? { sd_bus_message_get_interface(pointer).map { String(cString: $0) } }
    var member: String? { sd_bus_message_get_member(pointer).map { String(cString: $0) } }
    var sender: String? { sd_bus_message_get_sender(pointer).map { String(cString: $0) } }
    var destination: String? { sd_bus_message_get_destination(pointer).map { String(cString: $0) } }
    /// The signature of the whole body.
    var signature: String { sd_bus_message_get_signature(pointer, 1).map { String(cString: $0) } ?? "" }
    /// Whether the caller waits for a reply (no `NO_REPLY_EXPECTED` flag).
    var expectsReply: Bool { sd_bus_message_get_expect_reply(pointer) > 0 }
    var isMethodCall: Bool { sd_bus_message_is_method_call(pointer, nil, nil) > 0 }
    var isSignal: Bool { sd_bus_message_is_signal(pointer, nil, nil) > 0 }

    /// The error name and message of an error reply; `nil` for anything else.
    var error: (name: String, message: String)? {
        guard sd_bus_message_is_method_error(pointer, nil) > 0, let error = sd_bus_message_get_error(pointer) else {
            return nil
        }
        let name = error.pointee.name.map { String(cString: $0) } ?? DBusError.Name.failed
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return (name, message)
    }
}

@available(*, unavailable, message: "sd-bus messages belong to the bus thread")
extension BusMessage: Sendable {}

/// Calls `body` with a C string for `string`, or with `nil`.
func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
