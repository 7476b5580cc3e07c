internal import GATT
internal import Support
internal import Synchronization

/// Collects a central's events from the moment it is made, so that a step can wait for one that may already
/// have arrived (ServicesResolved can come before the Connect reply is handled). ``collect()`` takes the events:
/// a child task of whoever waits.
///
/// ```swift
/// let waiter = EventWaiter(central.events(), clock: clock)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask(operation: { await waiter.collect() })
///     defer { group.cancelAll() }
///     _ = await waiter.wait(for: .seconds(10)) { $0 == .servicesResolved(id, resolved: true) }
/// }
/// ```
final class EventWaiter: Sendable {
    private let events = Mutex<[CentralEvent]>([])
    private let stream: AsyncStream<CentralEvent>
    private let arrived = Wakeup()
    private let clock: any Support.Clock

    init(_ stream: AsyncStream<CentralEvent>, clock: any Support.Clock) {
        self.stream = stream
        self.clock = clock
    }

    /// Takes the stream's events until it ends or the task is cancelled.
    func collect() async {
        for await event in stream {
            events.withLock { $0.append(event) }
            arrived.wake()
        }
    }

    /// Waits until an event (seen since the waiter was made, and not consumed by an earlier wait) satisfies
    /// `match`, or `timeout` passes on the clock; returns whether one did. Events up to the match are consumed.
    func wait(for timeout: Duration, _ match: (CentralEvent) -> Bool) async -> Bool {
        let deadline = clock.now + timeout
        while true {
            let pending = events.withLock { events in
                defer { events.removeAll() }
                return events
            }
            if let index = pending.firstIndex(where: match) {
                let rest = pending[(index + 1)...]
                events.withLock { $0.insert(contentsOf: rest, at: 0) }
                return true
            }
            guard clock.now < deadline, !Task.isCancelled else { return false }
            let clock = self.clock
            let arrived = self.arrived
            await withDiscardingTaskGroup { group in
                group.addTask(operation: {
                    do { try await clock.sleep(until: deadline) } catch { return }
                    arrived.wake()
                })
                await arrived.wait()
                group.cancelAll()
            }
        }
    }
}
