internal import Synchronization

/// A one-shot request to stop, for a part whose `run()` goes on until asked: ``request()`` from anywhere, and
/// ``wait()`` in the part's run returns (at once when the request came first).
///
/// ```swift
/// let stop = StopRequest()
/// // in run():  start children; await stop.wait(); stop them in reverse order
/// // elsewhere: stop.request()
/// ```
final class StopRequest: Sendable {
    private struct State {
        var requested = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Whether ``request()`` was called.
    var isRequested: Bool { state.withLock { $0.requested } }

    /// Asks the waiters to go on; later calls do nothing.
    func request() {
        let waiters = state.withLock { state in
            guard !state.requested else { return [CheckedContinuation<Void, Never>]() }
            state.requested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the stop was requested, or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.requested || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
