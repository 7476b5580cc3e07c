internal import CSystemd
internal import Glibc
import Synchronization

/// What the bus thread runs: jobs of actors pinned to its executor, and plain closures.
enum BusWork: Sendable {
    case job(UnownedJob)
    case closure(@Sendable () -> Void)
}

/// The state of one bus thread: the work queue, the wake-up pipe, and the `sd_bus*` with every sd-bus handle
/// (slots, messages kept for deferred replies) owned on that thread.
///
/// The thread's start routine keeps this object alive; ``BusThread`` (the executor the actors see) only points at
/// it, so dropping the last ``BusThread`` can stop the thread. When the loop exits it closes the bus and frees
/// every handle on the thread itself. Work enqueued after that runs on the enqueuing thread, one item at a time
/// (a "drainer" holds the turn), so a call on a closed connection fails fast instead of hanging.
final class BusLoop: @unchecked Sendable {
    // @unchecked Sendable: `pending` is a Mutex and `owner` is atomic; `executor` is written once before the thread
    // starts; `bus`, `slots`, `deferred` and `retired` are touched only by whoever `isCurrent` (the bus thread, or
    // the single drainer once the thread has exited).

    private struct Pending {
        var work: [BusWork] = []
        /// A byte is (about to be) in the pipe: further enqueues need not write another.
        var wakePending = false
        var stopRequested = false
        /// The loop has finished; work is drained on the enqueuing thread.
        var exited = false
        /// The thread draining work after `exited`.
        var drainer: pthread_t?
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let pending = Mutex(Pending())
    /// The bus thread's `pthread_t` while it runs its loop, 0 otherwise.
    private let owner = Atomic<UInt>(0)
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The executor jobs run on (the ``BusThread`` facade); set once before the thread starts.
    var executor: UnownedSerialExecutor?

    /// The bus, once opened; closed and released when the loop exits (or by ``DBusConnection/close()``).
    var bus: OpaquePointer?
    /// Every slot (pending call, match, object registration) by the id the connection gave it.
    var slots: [UInt64: OpaquePointer] = [:]
    /// Incoming method calls whose handler answered `.deferred`, kept (referenced) until replied to.
    var deferred: [UInt64: OpaquePointer] = [:]
    /// Slots released from inside a callback: unreferenced after the current `sd_bus_process` returns.
    private var retired: [OpaquePointer] = []

    /// Messages processed per loop iteration before queued jobs get their turn.
    private static let processBatch = 64

    init() throws(DBusError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DBusError.system("pipe", errno: errno) }
        // `eventfd` is not importable through Glibc; a non-blocking self-pipe does the same job.
        for fd in fds {
            guard fcntl(fd, F_SETFL, O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                let error = DBusError.system("fcntl(pipe)", errno: errno)
                close(fds[0])
                close(fds[1])
                throw error
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Whether the calling thread may touch the bus: it is the bus thread, or the drainer after the thread exited.
    var isCurrent: Bool {
        let me = pthread_self()
        let running = owner.load(ordering: .acquiring)
        if running != 0 && pthread_equal(running, me) != 0 { return true }
        return pending.withLock { state in state.drainer.map { pthread_equal($0, me) != 0 } ?? false }
    }

    /// Whether the bus thread has left its loop.
    var hasExited: Bool { pending.withLock { $0.exited } }

    // MARK: Queue

    func enqueue(_ item: BusWork) {
        enum Action { case none, wake, drain }
        let action = pending.withLock { state -> Action in
            state.work.append(item)
            if state.exited {
                guard state.drainer == nil else { return .none }
                state.drainer = pthread_self()
                return .drain
            }
            guard !state.wakePending else { return .none }
            state.wakePending = true
            return .wake
        }
        switch action {
        case .none: break
        case .wake: wake()
        case .drain: drain()
        }
    }

    /// Asks the loop to finish: it runs what is queued, closes the bus, then resumes `waiter`.
    func requestStop(waiter: CheckedContinuation<Void, Never>?) {
        let (resumeNow, wakeNeeded) = pending.withLock { state -> (Bool, Bool) in
            if state.exited { return (true, false) }
            state.stopRequested = true
            if let waiter { state.stopWaiters.append(waiter) }
            let wakeNeeded = !state.wakePending
            state.wakePending = true
            return (false, wakeNeeded)
        }
        if resumeNow { waiter?.resume() }
        if wakeNeeded { wake() }
    }

    private func wake() {
        var byte: UInt8 = 1
        // EAGAIN means the pipe is full, so the loop is awake anyway; nothing else can fail on our own pipe.
        _ = write(wakeWrite, &byte, 1)
    }

    private func drainPipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    /// Runs queued work on this thread until the queue is empty, then gives up the drainer's turn.
    private func drain() {
        while true {
            let batch = pending.withLock { state -> [BusWork] in
                if state.work.isEmpty { state.drainer = nil }
                defer { state.work.removeAll() }
                return state.work
            }
            if batch.isEmpty { return }
            for item in batch { perform(item) }
        }
    }

    private func perform(_ item: BusWork) {
        switch item {
        case .job(let job):
            guard let executor else { preconditionFailure("BusLoop.executor must be set before work is enqueued") }
            job.runSynchronously(on: executor)
        case .closure(let body):
            body()
        }
    }

    // MARK: Handles

    /// Unreferences slot `id` now (outside callbacks).
    func releaseSlot(_ id: UInt64) {
        if let slot = slots.removeValue(forKey: id) { sd_bus_slot_unref(slot) }
    }

    /// Unreferences slot `id` once the current `sd_bus_process` call returns (safe inside its own callback).
    func retireSlot(_ id: UInt64) {
        if let slot = slots.removeValue(forKey: id) { retired.append(slot) }
    }

    /// Releases every handle and closes the bus (flushing queued messages first).
    func closeBus() {
        let allSlots = Array(slots.values) + retired
        slots.removeAll()
        retired.removeAll()
        for slot in allSlots { sd_bus_slot_unref(slot) }
        for message in deferred.values { sd_bus_message_unref(message) }
        deferred.removeAll()
        if let bus {
            self.bus = nil
            sd_bus_flush_close_unref(bus)
        }
    }

    // MARK: Loop

    /// The thread's body: run jobs, process the bus, sleep in `poll`, until asked to stop.
    func run() {
        owner.store(pthread_self(), ordering: .releasing)
        while true {
            drainPipe()
            let (work, stopping) = pending.withLock { state -> ([BusWork], Bool) in
                state.wakePending = false
                defer { state.work.removeAll() }
                return (state.work, state.stopRequested)
            }
            for item in work { perform(item) }
            let busy = processBus()
            if stopping && pending.withLock({ $0.work.isEmpty }) { break }
            waitForEvents(immediate: busy)
        }
        finish()
    }

    private func finish() {
        closeBus()
        let (hasWork, waiters) = pending.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.exited = true
            let hasWork = !state.work.isEmpty
            if hasWork { state.drainer = pthread_self() }
            defer { state.stopWaiters.removeAll() }
            return (hasWork, state.stopWaiters)
        }
        if hasWork { drain() }
        owner.store(0, ordering: .releasing)
        for waiter in waiters { waiter.resume() }
    }

    /// Dispatches up to a batch of incoming messages; `true` when more may be waiting.
    private func processBus() -> Bool {
        guard let bus else { return false }
        defer {
            for slot in retired { sd_bus_slot_unref(slot) }
            retired.removeAll()
        }
        for _ in 0..<Self.processBatch {
            // Callbacks (replies, signals, method calls) run inside this call, on this thread. A negative result
            // means the connection is gone; sd-bus has then failed the pending calls with synthetic replies.
            let result = sd_bus_process(bus, nil)
            if result <= 0 { return false }
        }
        return true
    }

    private func waitForEvents(immediate: Bool) {
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        var timeout: Int32 = immediate ? 0 : -1
        if let bus {
            let fd = sd_bus_get_fd(bus)
            let events = sd_bus_get_events(bus)
            // Both fail with -ENOTCONN once the connection is closed: then only the pipe is watched.
            if fd >= 0 && events >= 0 {
                fds.append(pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0))
                var deadline: UInt64 = 0
                if !immediate && sd_bus_get_timeout(bus, &deadline) >= 0 && deadline != UInt64.max {
                    timeout = Self.milliseconds(until: deadline)
                }
            }
        }
        let result = poll(&fds, nfds_t(fds.count), timeout)
        let failure = result < 0 ? errno : 0
        precondition(
            result >= 0 || failure == EINTR || failure == ENOMEM || failure == EAGAIN,
            "poll on the bus thread failed with errno \(failure)")
    }

    /// Milliseconds from now to an absolute `CLOCK_MONOTONIC` time in microseconds (what `sd_bus_get_timeout`
    /// returns), rounded up.
    private static func milliseconds(until deadline: UInt64) -> Int32 {
        let now = monotonicMicroseconds()
        guard deadline > now else { return 0 }
        return Int32(clamping: (deadline - now + 999) / 1000)
    }
}

/// `CLOCK_MONOTONIC` in microseconds, the clock sd-bus uses for its timeouts.
func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
}
