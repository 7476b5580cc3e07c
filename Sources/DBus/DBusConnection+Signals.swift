internal import CSystemd

/// Signal matches and emission.
extension DBusConnection {
    /// The buffering of a new subscription unless told otherwise: keep the oldest 4,096 signals, drop (and count)
    /// newer ones while the consumer is behind.
    public static let defaultSignalBuffering: AsyncStream<DBusSignal>.Continuation.BufferingPolicy =
        .bufferingOldest(4096)

    /// Installs a match (`sd_bus_add_match_async`) and returns its signals as a stream, once the bus has
    /// confirmed the match. Anything sent after this returns is delivered; subscribe before reading state that
    /// the signals update (e.g. before `GetManagedObjects`).
    ///
    /// - Parameters:
    ///   - rule: what to receive.
    ///   - bufferingPolicy: the stream's buffering; drops are counted in
    ///     ``DBusSignalSubscription/droppedCount``.
    /// - Throws: ``DBusError`` of kind `remote` when the bus rejects the rule, `closed`, or `system`.
    public func subscribe(
        to rule: DBusMatchRule,
        bufferingPolicy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy = defaultSignalBuffering
    ) async throws(DBusError) -> DBusSignalSubscription {
        try await subscribe(toRule: rule.description, bufferingPolicy: bufferingPolicy)
    }

    /// Like ``subscribe(to:bufferingPolicy:)``, with the rule as a string in the bus's syntax.
    public func subscribe(
        toRule rule: String,
        bufferingPolicy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy = defaultSignalBuffering
    ) async throws(DBusError) -> DBusSignalSubscription {
        let bus = try requireBus("AddMatch")
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: bufferingPolicy)
        let counter = DBusSignalSubscription.Counter()
        let token = makeToken()
        let box = SignalBox(id: token, connection: self, stream: continuation, counter: counter)
        let userdata = box.retainedPointer()
        var slot: OpaquePointer?
        let result = sd_bus_add_match_async(
            bus, &slot, rule, { message, userdata, _ in SignalBox.matched(message, userdata) },
            { reply, userdata, _ in SignalBox.installReplied(reply, userdata) }, userdata)
        guard result >= 0, let slot else {
            SlotBox.releaseUnregistered(userdata)
            continuation.finish()
            throw DBusError.system("sd_bus_add_match_async", errno: max(-result, 0))
        }
        do {
            try SlotBox.attach(to: slot)
        } catch {
            sd_bus_slot_unref(slot)
            SlotBox.releaseUnregistered(userdata)
            continuation.finish()
            throw error
        }
        thread.loop.slots[token] = slot
        let installed = await withCheckedContinuation { box.waitForInstall($0) }
        if case .failure(let error) = installed {
            thread.loop.releaseSlot(token)
            throw error
        }
        // The consumer went away or cancel() was called: remove the match on the bus thread. The closure holds
        // the loop, not the connection or its thread, so a forgotten subscription keeps neither alive.
        continuation.onTermination = { [loop = thread.loop] _ in
            loop.enqueue(.closure { loop.releaseSlot(token) })
        }
        return DBusSignalSubscription(
            rule: rule, bufferingPolicy: bufferingPolicy, stream: stream, continuation: continuation, counter: counter)
    }

    /// Emits a signal from `path`.
    ///
    /// - Parameter destination: a unique or well-known name for a unicast signal; `nil` broadcasts.
    /// - Throws: ``DBusError`` of kind `invalidValue` for arguments that do not fit their types, `closed`, or
    ///   `system` (e.g. an invalid path or member name).
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        let bus = try requireBus("\(interface).\(member)")
        let message = try BusMessage.signal(bus: bus, path: path, interface: interface, member: member)
        if let destination { try message.setDestination(destination) }
        try message.append(arguments)
        try message.send(on: bus)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged(interface, changed, invalidated)` from `path`.
    public func emitPropertiesChanged(
        path: String, interface: String, changed: [(String, DBusValue)], invalidated: [String] = []
    ) throws(DBusError) {
        try emitSignal(
            path: path, interface: DBusInterface.properties.name, member: "PropertiesChanged",
            arguments: [.string(interface), .vardict(ordered: changed), .strings(invalidated)])
    }
}
