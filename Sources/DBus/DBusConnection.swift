internal import CSystemd

/// A connection to a D-Bus bus over sd-bus, owned by one dedicated thread.
///
/// The actor's executor is that thread (a ``BusThread``): every method, every sd-bus call and every sd-bus
/// callback (replies, signals, incoming method calls) runs there, never on the cooperative pool. Method calls are
/// asynchronous only (`sd_bus_call_async`): while a call waits, the thread keeps dispatching, so a peer that calls
/// back into us before answering (bluetoothd calling our agent during `Pair`) is served.
///
/// ```swift
/// let bus = try await DBusConnection.connect(to: .system)
/// let objects = try await bus.managedObjects(destination: "org.bluez")
/// let changes = try await bus.subscribe(to: DBusMatchRule(interface: "org.freedesktop.DBus.Properties",
///                                                         member: "PropertiesChanged", pathNamespace: "/org/bluez"))
/// await bus.close()
/// ```
///
/// Close with ``close()``: it fails pending calls with ``DBusError/Kind/closed``, finishes signal streams,
/// flushes and closes the bus and joins the thread. Dropping the last reference does the same synchronously.
/// Other actors may run on the same thread by returning this connection's `unownedExecutor` as theirs (they must
/// keep the connection alive); their methods can then use `assumeIsolated` on the connection.
public actor DBusConnection {
    nonisolated let thread: BusThread
    /// The bus this connection was opened to.
    public nonisolated let address: DBusAddress
    /// Our unique name on the bus (`:1.42`).
    public private(set) var uniqueName = ""
    /// Replies to incoming calls that could not be sent (the caller left, or a handler's values did not fit).
    public private(set) var unsentReplyCount = 0

    private var nextToken: UInt64 = 0
    private var isClosed = false
    /// Served objects (``export(_:interfaces:objectManager:)``).
    var objects = DBusObjectTree()
    /// The slot id of the `/` fallback that routes calls to `objects`, once something is exported.
    var treeRegistration: UInt64?
    /// Raw handlers by slot id.
    var rawHandlers: [UInt64: RawHandler] = [:]

    struct RawHandler {
        let path: String
        let includesChildren: Bool
        let handler: DBusRawMethodHandler

        func covers(_ candidate: String) -> Bool {
            candidate == path || (includesChildren && DBusObjectTree.isDescendant(candidate, of: path))
        }
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    private init(thread: BusThread, address: DBusAddress) {
        self.thread = thread
        self.address = address
    }

    /// Connects to `address` and waits until the bus has accepted us (the `Hello` exchange is done).
    ///
    /// - Parameters:
    ///   - address: ``DBusAddress/system`` (honours `DBUS_SYSTEM_BUS_ADDRESS`), ``DBusAddress/session``, or any
    ///     address string.
    ///   - timeout: how long to wait for the bus to answer.
    /// - Throws: ``DBusError`` of kind `system` when the address is unusable or the socket refuses us (e.g.
    ///   `ENOENT` for a missing socket), or the error of the first call when authentication fails.
    public static func connect(to address: DBusAddress = .system, timeout: Duration = .seconds(25))
        async throws(DBusError) -> DBusConnection
    {
        let connection = DBusConnection(thread: try BusThread(), address: address)
        do {
            try await connection.open(timeout: timeout)
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }

    private func open(timeout: Duration) async throws(DBusError) {
        var opened: OpaquePointer?
        switch address {
        case .system: try check(sd_bus_open_system(&opened), "sd_bus_open_system")
        case .session: try check(sd_bus_open_user(&opened), "sd_bus_open_user")
        case .address(let text): opened = try Self.open(address: text)
        }
        guard let bus = opened else { throw DBusError.closed("sd_bus_open") }
        thread.loop.bus = bus
        // Any call to the bus driver is answered after the Hello reply: once it returns, we have our name.
        _ = try await call(
            "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetId", timeout: timeout)
        var name: UnsafePointer<CChar>?
        try check(sd_bus_get_unique_name(bus, &name), "sd_bus_get_unique_name")
        uniqueName = name.map { String(cString: $0) } ?? ""
    }

    private static func open(address: String) throws(DBusError) -> OpaquePointer {
        var created: OpaquePointer?
        try check(sd_bus_new(&created), "sd_bus_new")
        guard let bus = created else { throw DBusError.closed("sd_bus_new") }
        do {
            try check(sd_bus_set_address(bus, address), "sd_bus_set_address")
            try check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
            try check(sd_bus_start(bus), "sd_bus_start")
        } catch {
            sd_bus_unref(bus)
            throw error
        }
        return bus
    }

    /// Closes the connection: pending calls fail with ``DBusError/Kind/closed``, signal streams finish, queued
    /// messages are flushed, the bus is closed and the bus thread joined. Idempotent.
    ///
    /// Later calls fail with ``DBusError/Kind/closed``.
    public nonisolated func close() async {
        await closeBus()
        await thread.stop()
    }

    private func closeBus() {
        guard !isClosed else { return }
        isClosed = true
        rawHandlers.removeAll()
        objects = DBusObjectTree()
        treeRegistration = nil
        // Unreferencing the slots runs their destroy callbacks: pending calls resume with `closed`, streams finish.
        thread.loop.closeBus()
    }

    /// Whether the calling code runs on this connection's bus thread.
    nonisolated var isOnBusThread: Bool { thread.loop.isCurrent }

    func makeToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }

    func requireBus(_ operation: @autoclosure () -> String) throws(DBusError) -> OpaquePointer {
        guard !isClosed, let bus = thread.loop.bus else { throw DBusError.closed(operation()) }
        return bus
    }

    func recordUnsentReply() {
        unsentReplyCount += 1
    }

    // MARK: Method calls

    /// Calls `interface.member` on `path` at `destination` and returns the reply's values.
    ///
    /// - Parameters:
    ///   - destination: a bus name (`org.bluez`, or a unique name); `nil` only on peer-to-peer connections.
    ///   - interface: may be `nil` when the member name is unambiguous.
    ///   - timeout: how long to wait for the reply (sd-bus's default is 25 s; BlueZ's Connect and Pair may take
    ///     longer, so pass what the operation needs). At least one microsecond.
    /// - Throws: ``DBusError``: kind `remote` with the peer's error name and message (e.g.
    ///   `org.bluez.Error.Failed` / `le-connection-abort-by-local`); `timedOut` when `timeout` passed; `noReply`
    ///   when the peer left without answering; `cancelled` when the task was cancelled; `closed`; `system`.
    public func call(
        _ destination: String?, path: String, interface: String?, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let operation = interface.map { "\($0).\(member)" } ?? member
        guard !Task.isCancelled else { throw Self.cancelled(operation) }
        let bus = try requireBus(operation)
        let message = try BusMessage.methodCall(
            bus: bus, destination: destination, path: path, interface: interface, member: member)
        try message.append(arguments)
        let token = makeToken()
        let microseconds = Self.microseconds(timeout)
        let reply = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CallBox.Reply, Never>) in
                let box = CallBox(
                    id: token, connection: self, operation: operation, path: path,
                    deadline: monotonicMicroseconds() + microseconds, continuation: continuation)
                start(message, on: bus, box: box, timeout: microseconds)
            }
        } onCancel: { [weak self, thread] in
            thread.submit { [weak self] in
                guard let self else { return }
                self.assumeIsolated { $0.cancelCall(token) }
            }
        }
        return try reply.get()
    }

    private func start(_ message: BusMessage, on bus: OpaquePointer, box: CallBox, timeout: UInt64) {
        let userdata = box.retainedPointer()
        var slot: OpaquePointer?
        let result = sd_bus_call_async(
            bus, &slot, message.pointer, { reply, userdata, _ in CallBox.replied(reply, userdata) }, userdata, timeout)
        guard result >= 0, let slot else {
            SlotBox.releaseUnregistered(userdata)
            box.resume(.failure(DBusError.system("sd_bus_call_async(\(box.operation))", errno: max(-result, 0))))
            return
        }
        do {
            try SlotBox.attach(to: slot)
        } catch {
            sd_bus_slot_unref(slot)
            SlotBox.releaseUnregistered(userdata)
            box.resume(.failure(error))
            return
        }
        thread.loop.slots[box.id] = slot
    }

    /// Drops a pending call's slot (sd-bus then ignores its reply) and resumes the caller with `cancelled`.
    private func cancelCall(_ token: UInt64) {
        guard let slot = thread.loop.slots[token], let box = SlotBox.from(sd_bus_slot_get_userdata(slot)) as? CallBox
        else { return }
        box.resume(.failure(Self.cancelled(box.operation)))
        thread.loop.releaseSlot(token)
    }

    private static func cancelled(_ operation: String) -> DBusError {
        DBusError(kind: .cancelled, operation: operation, message: "the calling task was cancelled")
    }

    /// `duration` in microseconds, at least 1 (0 would mean sd-bus's default timeout).
    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 1 }
        let whole = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        guard !whole.overflow else { return UInt64.max - 1 }
        let fraction = UInt64(attoseconds / 1_000_000_000_000)
        return max(1, whole.partialValue + fraction)
    }
}
