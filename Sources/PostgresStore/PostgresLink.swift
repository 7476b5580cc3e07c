internal import Support

/// Whether the store has a connection, and when to try again when it has none: a value-type state machine (no
/// I/O; the store carries out what it decides, and tests drive it with instants of their own).
///
/// A lost connection is retried at the next call at once (a server restart is usually over by then); each failed
/// attempt doubles the wait before the next, from ``minimumDelay`` up to ``maximumDelay``. Calls in between fail
/// fast instead of piling up connection attempts against a server that is down.
struct PostgresLink: Equatable {
    enum State: Equatable {
        case connected
        /// No connection; `failures` attempts failed since the last success, the next is allowed from `retryAt`.
        case disconnected(failures: Int, retryAt: ContinuousClock.Instant?)
    }

    enum Decision: Equatable {
        case connect
        case wait(until: ContinuousClock.Instant)
    }

    static let minimumDelay = Duration.milliseconds(100)
    static let maximumDelay = Duration.seconds(5)
    private static let backoff = Backoff(minimum: minimumDelay, maximum: maximumDelay)

    private(set) var state = State.connected
    /// What the last failed attempt said.
    private(set) var lastFailure: String?

    /// Whether to connect now, at `now`.
    func attempt(at now: ContinuousClock.Instant) -> Decision {
        switch state {
        case .connected:
            return .connect
        case .disconnected(_, let retryAt):
            guard let retryAt, now < retryAt else { return .connect }
            return .wait(until: retryAt)
        }
    }

    mutating func connected() {
        state = .connected
        lastFailure = nil
    }

    /// The connection broke while in use: the next call reconnects at once.
    mutating func lost() {
        switch state {
        case .connected: state = .disconnected(failures: 0, retryAt: nil)
        case .disconnected: break
        }
    }

    /// An attempt to connect failed at `now`.
    mutating func failed(at now: ContinuousClock.Instant, reason: String) {
        let failures: Int
        switch state {
        case .connected: failures = 1
        case .disconnected(let previous, _): failures = previous + 1
        }
        state = .disconnected(failures: failures, retryAt: now + Self.backoff.ceiling(attempt: failures - 1))
        lastFailure = reason
    }
}
