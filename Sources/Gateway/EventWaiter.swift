internal import GATT
internal import Synchronization

/// Collects a central's events from the moment it is made, so that a step can wait for one that may already
/// have arrived (ServicesResolved can come before the Connect reply is handled).
final class EventWaiter: Sendable {
    private final class Buffer: Sendable {
        let events = Mutex<[CentralEvent]>([])
    }
    private let buffer = Buffer()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<CentralEvent>) {
        let buffer = self.buffer
        task = Task {
            for await event in stream { buffer.events.withLock { $0.append(event) } }
        }
    }

    /// Waits until an event (seen since the waiter was made, and not consumed by an earlier wait) satisfies
    /// `match`, or `timeout` passes; returns whether one did. Events up to the match are consumed.
    func wait(for timeout: Duration, _ match: (CentralEvent) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let pending = buffer.events.withLock { events in
                defer { events.removeAll() }
                return events
            }
            if let index = pending.firstIndex(where: match) {
                let rest = pending[(index + 1)...]
                buffer.events.withLock { $0.insert(contentsOf: rest, at: 0) }
                return true
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func cancel() {
        task.cancel()
    }
}
