internal import Synchronization

/// Wakes one waiting loop: ``wake()`` resumes the task in ``wait()``, or, when none waits, makes the next
/// ``wait()`` return at once. A loop that re-checks its conditions after every wait can wake freely (a spare
/// wake-up costs one check). Cancelling the waiting task also ends the wait.
///
/// ```swift
/// let work = Wakeup()
/// // the loop:      while queue.isEmpty { await work.wait() }
/// // the producer:  queue.append(item); work.wake()
/// ```
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Resumes the waiter, or keeps the wake-up for the next ``wait()``.
    func wake() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter else {
                state.pending = true
                return CheckedContinuation<Void, Never>?.none
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    /// Returns after a ``wake()`` (one made before the call counts), or when the task is cancelled. One task waits
    /// at a time.
    func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = (id, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume()
        }
    }
}
