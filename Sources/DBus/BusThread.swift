internal import Glibc
import Synchronization

/// One dedicated OS thread that owns an `sd_bus*`, exposed as a `SerialExecutor`.
///
/// ``DBusConnection`` pins its `unownedExecutor` to it, so every actor method, every sd-bus call and every sd-bus
/// callback runs on this thread, and nothing that touches the bus ever runs on the cooperative pool. Other actors
/// may share it (return the connection's `unownedExecutor`) to run synchronously with the bus.
///
/// The loop (``BusLoop``) polls the bus fd with `sd_bus_get_events`/`sd_bus_get_timeout` and a wake-up pipe that
/// ``enqueue(_:)`` writes to. ``stop()`` lets the loop finish, close the bus and exit, then joins the thread;
/// `deinit` does the same synchronously (or detaches when it runs on the bus thread itself).
final class BusThread: SerialExecutor, @unchecked Sendable {
    // @unchecked Sendable: `loop` is itself Sendable (see its invariant); `thread` is written once in init before
    // any other thread can see `self`; `joined` is a Mutex.
    let loop: BusLoop
    private var thread = pthread_t()
    private let joined = Mutex(false)

    /// Starts the thread.
    /// - Throws: ``DBusError`` of kind `system` when the wake-up pipe or the thread cannot be created.
    init() throws(DBusError) {
        loop = try BusLoop()
        loop.executor = UnownedSerialExecutor(ordinary: self)
        let context = Unmanaged.passRetained(loop).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let loop = Unmanaged<BusLoop>.fromOpaque(context).takeRetainedValue()
                loop.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<BusLoop>.fromOpaque(context).release()
            throw DBusError.system("pthread_create", errno: result)
        }
    }

    deinit {
        loop.requestStop(waiter: nil)
        let alreadyJoined = joined.withLock { joined in
            defer { joined = true }
            return joined
        }
        guard !alreadyJoined else { return }
        if loop.isCurrent {
            // Released by a job on the bus thread: the loop exits (and frees the bus) once this job returns.
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(.job(UnownedJob(job)))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(loop.isCurrent, "not on the D-Bus thread: sd-bus objects belong to one thread")
    }

    func isIsolatingCurrentContext() -> Bool? {
        loop.isCurrent
    }

    /// Runs `body` on the bus thread (after the work already queued).
    func submit(_ body: @escaping @Sendable () -> Void) {
        loop.enqueue(.closure(body))
    }

    /// Lets the loop run what is queued, close the bus and exit, then joins the thread. Idempotent.
    ///
    /// Must not be called from the bus thread (it would wait for itself).
    func stop() async {
        precondition(!loop.isCurrent, "BusThread.stop() called on the bus thread")
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            loop.requestStop(waiter: waiter)
        }
        // The loop has returned (it resumed us last); the join only collects the thread.
        let needsJoin = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if needsJoin { pthread_join(thread, nil) }
    }
}
