import Foundation

/// A bounded queue from one thread to another (an import's stages: the XML parser, the reader, the store), so
/// that each works on its own thread while memory holds at most `capacity` items between them.
///
/// The producer ``put(_:)``s items (waiting while the queue is full) and ends with ``finish(throwing:)``; the
/// consumer ``take()``s them (waiting while it is empty) and gets `nil` at the end, or the producer's error. A
/// consumer that gives up calls ``stop()``: a waiting or later ``put(_:)`` returns `false`, so the producer ends
/// too. Both sides block their threads: they are threads of their own (``OwnThread``) or the store's executor,
/// never the cooperative pool.
final class HandOver<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    // Guarded by `condition`: a ring of `capacity` slots, `count` of them full from `head` on.
    private var slots: [Element?]
    private var head = 0
    private var count = 0
    private var finished = false
    private var failure: (any Error)?
    private var stopped = false

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        slots = Array(repeating: nil, count: self.capacity)
    }

    /// Hands `item` over, waiting while the queue is full; `false` (the item dropped) when the consumer stopped.
    func put(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopped, count == capacity { condition.wait() }
        guard !stopped else { return false }
        slots[(head + count) % capacity] = item
        count += 1
        condition.broadcast()
        return true
    }

    /// Ends the queue: once its items are taken, ``take()`` returns `nil`, or throws `error`.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        defer { condition.unlock() }
        if !finished {
            finished = true
            failure = error
        }
        condition.broadcast()
    }

    /// The next item, waiting while there is none; `nil` at the end; the producer's error when it failed.
    func take() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0, !finished, !stopped { condition.wait() }
        guard count > 0 else {
            if let failure { throw failure }
            return nil
        }
        let item = slots[head]
        slots[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return item
    }

    /// The consumer takes no more: what is queued is dropped, and the producer's ``put(_:)`` returns `false`.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        for index in slots.indices { slots[index] = nil }
        count = 0
        condition.broadcast()
    }
}

/// Runs work on a thread of its own, off the cooperative pool, for an import's stages that block on a
/// ``HandOver`` or on file reads. The calling task waits for the work to end, so the thread is owned by that task
/// (a child of a task group someone awaits) and never outlives it.
enum OwnThread {
    static func run<Result: Sendable>(_ name: String, _ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = name
            thread.start()
        }
    }
}
