import Synchronization

/// The signals of one match rule, as an `AsyncSequence`, with the counts of what was lost.
///
/// **Buffering.** The stream buffers with the policy given to ``DBusConnection/subscribe(to:bufferingPolicy:)``
/// (by default the oldest 4,096 signals are kept and newer ones dropped while the consumer is behind). Every signal
/// the buffer refuses is counted in ``droppedCount``; signals sd-bus delivered but that could not be decoded are
/// counted in ``undecodableCount``. Nothing is dropped silently.
///
/// The match stays installed until ``cancel()`` is called, the stream's consumer goes away, or the connection
/// closes (which finishes the stream).
public struct DBusSignalSubscription: AsyncSequence, Sendable {
    public typealias Element = DBusSignal

    /// Thread-safe drop counters shared with the match callback.
    final class Counter: Sendable {
        let dropped = Atomic<Int>(0)
        let undecodable = Atomic<Int>(0)
        let enqueued = Atomic<Int>(0)

        func recordDrop() { dropped.add(1, ordering: .relaxed) }
        func recordEnqueued() { enqueued.add(1, ordering: .releasing) }
        func recordUndecodable() { undecodable.add(1, ordering: .relaxed) }
    }

    /// The match rule as sent to the bus.
    public let rule: String
    /// The stream's buffering policy.
    public let bufferingPolicy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy
    private let stream: AsyncStream<DBusSignal>
    private let continuation: AsyncStream<DBusSignal>.Continuation
    private let counter: Counter

    init(
        rule: String, bufferingPolicy: AsyncStream<DBusSignal>.Continuation.BufferingPolicy,
        stream: AsyncStream<DBusSignal>, continuation: AsyncStream<DBusSignal>.Continuation, counter: Counter
    ) {
        self.rule = rule
        self.bufferingPolicy = bufferingPolicy
        self.stream = stream
        self.continuation = continuation
        self.counter = counter
    }

    /// Signals the buffer refused because the consumer was behind.
    public var droppedCount: Int { counter.dropped.load(ordering: .relaxed) }
    /// Signals put into the stream so far. Every signal that arrived before a method reply is counted by the time
    /// the call returns (sd-bus dispatches in arrival order), so that a consumer can wait until it has taken that
    /// many: a barrier that orders what a peer signalled before answering.
    public var enqueuedCount: Int { counter.enqueued.load(ordering: .acquiring) }
    /// Signals that matched but could not be decoded (never expected; counted rather than hidden).
    public var undecodableCount: Int { counter.undecodable.load(ordering: .relaxed) }

    /// Ends the stream and removes the match from the bus.
    public func cancel() {
        continuation.finish()
    }

    public func makeAsyncIterator() -> AsyncStream<DBusSignal>.Iterator {
        stream.makeAsyncIterator()
    }
}
