import Synchronization

/// A clock that moves only when told: tests advance it, and every sleeper whose deadline is reached resumes, in
/// deadline order. The wall clock moves with the monotonic one from the start it was given.
///
/// ```swift
/// let clock = ManualClock()
/// let service = GatewayService(..., clock: clock)
/// await clock.waitForSleepers(1)   // the service is waiting for its next tick
/// clock.advance(by: .seconds(1))   // the tick runs
/// ```
public final class ManualClock: Clock {
    private struct Sleeper {
        var id: UInt64
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var wallOrigin: Int64
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        /// Ids whose sleeper was cancelled before it was registered.
        var cancelled: Set<UInt64> = []
        /// Waiters for a number of sleepers (``waitForSleepers(_:)``).
        var watchers: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    /// A clock at monotonic zero whose wall clock reads `wallMicroseconds` (default 2025-01-01T00:00:00Z).
    public init(wallMicroseconds: Int64 = 1_735_689_600_000_000) {
        state = Mutex(State(wallOrigin: wallMicroseconds))
    }

    public var now: Duration { state.withLock { $0.now } }

    public var wallMicroseconds: Int64 {
        state.withLock { state in
            let (seconds, attoseconds) = state.now.components
            return state.wallOrigin &+ seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000
        }
    }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until.
    public var nextDeadline: Duration? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        defer { state.withLock { _ = $0.cancelled.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    let count = state.sleepers.count
                    let ready = state.watchers.filter { $0.count <= count }
                    state.watchers.removeAll { $0.count <= count }
                    for watcher in ready { watcher.continuation.resume() }
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, resuming every sleeper whose deadline it passes.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock does not go back")
        let due: [Sleeper] = state.withLock { state in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock to `instant` (no earlier than now).
    public func advance(to instant: Duration) {
        advance(by: max(.zero, instant - now))
    }

    /// Returns once at least `count` tasks are sleeping on this clock: a test's way to know that the code under
    /// test has reached its next wait before it moves time. Returns early when the task is cancelled (a helper
    /// that moves time for as long as something else runs is cancelled when that ends).
    public func waitForSleepers(_ count: Int) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.sleepers.count >= count || state.cancelled.remove(id) != nil { return true }
                    state.watchers.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return CheckedContinuation<Void, Never>?.none
                }
                return state.watchers.remove(at: index).continuation
            }
            watcher?.resume()
        }
        state.withLock { _ = $0.cancelled.remove(id) }
    }

    /// Moves the clock to the earliest deadline anyone sleeps until (resuming those sleepers), when someone sleeps;
    /// returns that deadline.
    @discardableResult
    public func advanceToNextDeadline() -> Duration? {
        guard let deadline = nextDeadline else { return nil }
        advance(to: deadline)
        return deadline
    }
}
