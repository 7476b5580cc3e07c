internal import CSystemd

/// The userdata of one sd-bus slot: retained for sd-bus when the slot is created (`Unmanaged.passRetained`) and
/// released by the slot's destroy callback, so it lives exactly as long as the slot.
class SlotBox: @unchecked Sendable {
    // @unchecked Sendable: a box is created by the connection actor and then used only by sd-bus callbacks and
    // actor methods, all of which run on the bus thread.
    let id: UInt64
    /// The loop that owns the slot (kept strongly: boxes are released on the bus thread, before the loop ends).
    let loop: BusLoop
    weak var connection: DBusConnection?

    init(id: UInt64, connection: DBusConnection) {
        self.id = id
        self.loop = connection.thread.loop
        self.connection = connection
    }

    /// The slot is gone (unreferenced, or the bus closed): finish whatever still waits on it.
    func slotDestroyed() {}

    /// Passes a +1 reference to sd-bus as userdata.
    func retainedPointer() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Hands the slot its destroy callback, which releases the reference `retainedPointer()` passed.
    static func attach(to slot: OpaquePointer) throws(DBusError) {
        try check(
            sd_bus_slot_set_destroy_callback(slot) { userdata in SlotBox.destroyed(userdata) },
            "sd_bus_slot_set_destroy_callback")
    }

    /// Undoes `retainedPointer()` when registration failed before sd-bus took the userdata.
    static func releaseUnregistered(_ pointer: UnsafeMutableRawPointer) {
        Unmanaged<SlotBox>.fromOpaque(pointer).release()
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> SlotBox? {
        userdata.map { Unmanaged<SlotBox>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func destroyed(_ userdata: UnsafeMutableRawPointer?) {
        guard let userdata else { return }
        let box = Unmanaged<SlotBox>.fromOpaque(userdata)
        box.takeUnretainedValue().slotDestroyed()
        box.release()
    }
}

/// A pending method call: resumes the caller's continuation exactly once, with the reply or an error.
final class CallBox: SlotBox, @unchecked Sendable {
    // @unchecked Sendable: as SlotBox (bus thread only).
    typealias Reply = Result<[DBusValue], DBusError>

    let operation: String
    let path: String
    /// `CLOCK_MONOTONIC` microseconds after which a `NoReply` means our timeout fired.
    let deadline: UInt64
    private var continuation: CheckedContinuation<Reply, Never>?

    init(
        id: UInt64, connection: DBusConnection, operation: String, path: String, deadline: UInt64,
        continuation: CheckedContinuation<Reply, Never>
    ) {
        self.operation = operation
        self.path = path
        self.deadline = deadline
        self.continuation = continuation
        super.init(id: id, connection: connection)
    }

    func resume(_ reply: Reply) {
        continuation?.resume(returning: reply)
        continuation = nil
    }

    override func slotDestroyed() {
        resume(.failure(.closed(operation)))
    }

    /// The reply callback: decodes the reply (values or error) and resumes the caller.
    static func replied(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let box = SlotBox.from(userdata) as? CallBox else { return 0 }
        box.resume(box.decode(BusMessage(retaining: message)))
        box.loop.retireSlot(box.id)
        return 1
    }

    private func decode(_ reply: BusMessage) -> Reply {
        if let error = reply.error {
            let kind: DBusError.Kind
            if error.name == DBusError.Name.noReply {
                kind = monotonicMicroseconds() >= deadline ? .timedOut : .noReply
            } else {
                kind = .remote
            }
            return .failure(
                DBusError(kind: kind, operation: operation, name: error.name, message: error.message, path: path))
        }
        do {
            return .success(try reply.readAll())
        } catch {
            return .failure(error)
        }
    }
}

/// A signal match: delivers matching messages to an `AsyncStream`, counting what the buffer drops.
final class SignalBox: SlotBox, @unchecked Sendable {
    // @unchecked Sendable: as SlotBox; `stream` and `counter` are themselves Sendable.
    let stream: AsyncStream<DBusSignal>.Continuation
    let counter: DBusSignalSubscription.Counter
    private var installed: CheckedContinuation<Result<Void, DBusError>, Never>?

    init(
        id: UInt64, connection: DBusConnection, stream: AsyncStream<DBusSignal>.Continuation,
        counter: DBusSignalSubscription.Counter
    ) {
        self.stream = stream
        self.counter = counter
        super.init(id: id, connection: connection)
    }

    func waitForInstall(_ continuation: CheckedContinuation<Result<Void, DBusError>, Never>) {
        installed = continuation
    }

    func finishInstall(_ result: Result<Void, DBusError>) {
        installed?.resume(returning: result)
        installed = nil
    }

    override func slotDestroyed() {
        finishInstall(.failure(.closed("AddMatch")))
        stream.finish()
    }

    /// The match callback. Returns 0 so that other matches see the message too.
    static func matched(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let box = SlotBox.from(userdata) as? SignalBox else { return 0 }
        let received = BusMessage(retaining: message)
        do {
            let signal = DBusSignal(
                path: received.path ?? "", interface: received.interface ?? "", member: received.member ?? "",
                sender: received.sender, destination: received.destination, arguments: try received.readAll())
            switch box.stream.yield(signal) {
            case .enqueued: box.counter.recordEnqueued()
            case .dropped: box.counter.recordDrop()
            case .terminated: break
            @unknown default: break
            }
        } catch {
            box.counter.recordUndecodable()
        }
        return 0
    }

    /// The AddMatch reply callback.
    static func installReplied(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let box = SlotBox.from(userdata) as? SignalBox else { return 0 }
        if let error = BusMessage(retaining: message).error {
            box.finishInstall(
                .failure(DBusError(kind: .remote, operation: "AddMatch", name: error.name, message: error.message)))
        } else {
            box.finishInstall(.success(()))
        }
        return 0
    }
}

/// An object registration (`sd_bus_add_object` / `sd_bus_add_fallback`): routes method calls to the connection.
final class ObjectBox: SlotBox, @unchecked Sendable {
    // @unchecked Sendable: as SlotBox (bus thread only).

    /// The object callback. Returns 1 when the call was answered (or deferred), 0 to let sd-bus go on.
    static func called(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let box = SlotBox.from(userdata) as? ObjectBox, let connection = box.connection else {
            return 0
        }
        let registration = box.id
        // The callback already runs on the bus thread, the connection's executor: the message crosses no thread.
        nonisolated(unsafe) let pointer = message
        return connection.assumeIsolated { connection in
            connection.dispatch(BusMessage(retaining: pointer), registration: registration)
        }
    }
}
