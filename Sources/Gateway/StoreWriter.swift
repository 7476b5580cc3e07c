internal import Foundation
public import Health
public import Support

/// Where the writer puts batches: a ``HealthStore`` in the service (``HealthStoreSink``), anything in tests.
public protocol SampleSink: Sendable {
    /// Saves one batch; returns the outcome of each quantity sample (``SampleBatch/samples``' order), then each
    /// heartbeat series, then each correlation, all of it atomically.
    func write(_ batch: SampleBatch) async throws -> [WriteOutcome]
}

/// The bounded queue between the sensor sessions and the store.
///
/// Sessions ``submit(_:receivedAt:)`` what their builders produced; ``run()`` (a child task of whoever owns the
/// writer: the ``GatewayService``, a replay) writes batches of up to ``Settings/batchSize`` samples, at the latest
/// ``Settings/flushInterval`` after the oldest waiting sample was submitted, so a sample is durable well within a
/// second of its notification. When the store is slow, the queue fills up to ``Settings/capacity`` and then
/// `submit` waits (backpressure reaches the sessions, whose event streams buffer meanwhile): nothing is dropped. A
/// failed write is retried with backoff (``Support/Backoff``, waited on the writer's clock), keeping the batch; a
/// batch the store rejects as invalid is split so that only the offending samples are left out, and those are
/// counted (``Counters/rejected``) and reported through ``rejections``. ``close()`` writes everything still queued
/// and ends ``run()``.
///
/// ```swift
/// let writer = StoreWriter(sink: HealthStoreSink(store: store), clock: SystemClock())
/// await withDiscardingTaskGroup { group in
///     group.addTask(operation: { await writer.run() })
///     await writer.submit(batch)
///     await writer.close()          // everything written; run() returns
/// }
/// ```
public actor StoreWriter {
    public struct Settings: Sendable, Equatable {
        public var batchSize: Int
        public var flushInterval: Duration
        public var capacity: Int

        public init(batchSize: Int = 500, flushInterval: Duration = .milliseconds(250), capacity: Int = 100_000) {
            self.batchSize = max(batchSize, 1)
            self.flushInterval = flushInterval
            self.capacity = max(capacity, self.batchSize)
        }
    }

    public struct Counters: Sendable, Equatable {
        public var submitted = 0
        public var inserted = 0
        public var duplicates = 0
        /// Same key, another value: the first write stands (`docs/store-semantics.md`, item 21).
        public var conflicts = 0
        /// Left out because the store found them invalid.
        public var rejected = 0
        public var batches = 0
        public var failedWrites = 0
        /// Times `submit` had to wait for room.
        public var backpressureWaits = 0
        public var largestQueue = 0
        public init() {}
    }

    /// Notification-to-durable latencies, for the service benchmark (microseconds, a bounded reservoir).
    public struct Latencies: Sendable, Equatable {
        public var samples: [Int64] = []
        public var count = 0
        public func percentile(_ p: Double) -> Int64? {
            guard !samples.isEmpty else { return nil }
            let sorted = samples.sorted()
            let index = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
            return sorted[index]
        }
    }

    private struct Entry {
        var batch: SampleBatch
        /// When it was queued, on the writer's clock.
        var submittedAt: Duration
        /// The notification's arrival on the writer's clock's monotonic time (`Timestamp.monotonic`).
        var receivedAt: Duration?
        var count: Int { batch.count + batch.workouts.count }
    }

    let sink: any SampleSink
    public let settings: Settings
    let clock: any Support.Clock
    private var queue: [Entry] = []
    private var queued = 0
    /// Samples taken from the queue and being written (a flush waits for them too).
    private var writing = 0
    private var waitingForRoom: [CheckedContinuation<Void, Never>] = []
    /// Wakes ``run()`` waiting for an empty queue to get samples.
    private let work = Wakeup()
    /// Wakes ``run()`` waiting for a full batch or the flush interval (see ``waitForBatch(until:)``).
    private let batchReady = Wakeup()
    private var waitingForEmpty: [CheckedContinuation<Void, Never>] = []
    private var running = false
    private var closing = false
    /// The waits between retries of a failed write: 50 ms doubling to 5 s, with jitter.
    private var retryBackoff = Backoff(minimum: .milliseconds(50), maximum: .seconds(5), seed: 0x5707_E717)
    public private(set) var counters = Counters()
    public private(set) var latencies = Latencies()
    /// The last invalid samples the store refused, with its reason (most recent last, at most 20).
    public private(set) var rejections: [String] = []
    /// The first samples the store refused (at most ``firstRejectionLimit``): which sample and why, e.g.
    /// `heartbeatSeries at 2026-01-01T10:00:00.000Z: ...`, so that a count of rejections comes with examples.
    public private(set) var firstRejections: [String] = []
    public static let firstRejectionLimit = 5
    /// The last write error (while retrying), for status and logs.
    public private(set) var lastError: String?

    /// A writer into `sink`; `clock` times the flush interval, the retries and the latencies (the service's clock).
    public init(sink: any SampleSink, settings: Settings = Settings(), clock: any Support.Clock = SystemClock()) {
        self.sink = sink
        self.settings = settings
        self.clock = clock
    }

    /// Queues samples; waits while the queue is full. `receivedAt` is the notification's arrival on the
    /// writer's clock (`Timestamp.monotonic`, CLOCK_MONOTONIC in the service), for the latency figures.
    public func submit(_ batch: SampleBatch, receivedAt: Duration? = nil) async {
        let count = batch.count + batch.workouts.count
        guard count > 0 else { return }
        while queued + count > settings.capacity, queued > 0, !closing {
            counters.backpressureWaits += 1
            await withCheckedContinuation { waitingForRoom.append($0) }
        }
        queue.append(Entry(batch: batch, submittedAt: clock.now, receivedAt: receivedAt))
        queued += count
        counters.submitted += count
        counters.largestQueue = max(counters.largestQueue, queued)
        work.wake()
        if queued >= settings.batchSize { batchReady.wake() }
    }

    /// Queues samples given one by one (see ``submit(_:receivedAt:)``). They travel as a ``SampleBatch``, which
    /// names samples by their natural key: ids given here are not kept (the gateway's samples have derived ids).
    public func submit(
        _ quantities: [QuantitySample], _ series: [HeartbeatSeriesSample] = [], receivedAt: Duration? = nil
    ) async {
        await submit(SampleBatch(quantities, heartbeats: series), receivedAt: receivedAt)
    }

    /// Samples waiting to be written.
    public var queuedCount: Int { queued }

    /// Waits until everything submitted so far is written (or rejected). ``run()`` does the writing: a flush
    /// waits for it to run.
    public func flush() async {
        guard queued > 0 || writing > 0 else { return }
        await withCheckedContinuation {
            waitingForEmpty.append($0)
            work.wake()
            batchReady.wake()
        }
    }

    /// Writes everything queued, then ends ``run()``.
    public func close() async {
        closing = true
        work.wake()
        batchReady.wake()
        await flush()
    }

    /// Runs `body` while ``run()`` writes (a child task), then closes the writer: when it returns, everything
    /// `body` submitted is written.
    ///
    /// ```swift
    /// let counters = try await writer.whileRunning { try await TraceReplay.run(&reader, engine: engine, writer: writer) }
    /// ```
    public func whileRunning<T, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result = await withDiscardingTaskGroup(returning: Result<T, Failure>.self) { group in
            group.addTask(operation: { await self.run() })
            let result: Result<T, Failure>
            do throws(Failure) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            await close()
            return result
        }
        return try result.get()
    }

    // MARK: The writing loop

    /// Writes batches until ``close()`` and an empty queue. Cancelled, it still writes what is queued, but gives
    /// up (leaving the rest queued) at the first failed write instead of retrying. The flush timer is a child
    /// task of each wait; nothing outlives the call.
    public func run() async {
        guard !running else { return }
        running = true
        defer {
            running = false
            wakeWaiters(all: true)
        }
        var failures = 0
        while true {
            if queue.isEmpty {
                if closing || Task.isCancelled { return }
                await work.wait()
                continue
            }
            // Wait for a full batch, or until the oldest sample has waited the flush interval.
            if queued < settings.batchSize, !closing, waitingForEmpty.isEmpty, !Task.isCancelled,
                let oldest = queue.first
            {
                let due = oldest.submittedAt + settings.flushInterval
                if clock.now < due {
                    await waitForBatch(until: due)
                    continue
                }
            }
            let batch = takeBatch()
            writing = batch.reduce(0) { $0 + $1.count }
            do {
                try await write(batch)
                writing = 0
                failures = 0
            } catch {
                // Keep the batch at the front and retry: a busy or restarting store loses nothing.
                writing = 0
                counters.failedWrites += 1
                lastError = "\(error)"
                queue.insert(contentsOf: batch, at: 0)
                queued += batch.reduce(0) { $0 + $1.count }
                if Task.isCancelled { return }
                let wait = retryBackoff.delay(attempt: failures)
                failures += 1
                try? await clock.sleep(for: wait)
                continue
            }
            wakeWaiters(all: false)
        }
    }

    /// Waits until `due`, or until a full batch is queued or someone waits for the queue to empty, whichever
    /// comes first (a sleep alone would hold a full batch back until the interval is over). The timer is a child
    /// task, cancelled and awaited when the wait ends another way.
    private func waitForBatch(until due: Duration) async {
        let clock = self.clock
        let batchReady = self.batchReady
        await withDiscardingTaskGroup { group in
            group.addTask(operation: {
                // Cancelled (the wait ended another way): wake no one, or the next wait would end early.
                do { try await clock.sleep(until: due) } catch { return }
                batchReady.wake()
            })
            await batchReady.wait()
            group.cancelAll()
        }
    }

    private func takeBatch() -> [Entry] {
        var taken = 0
        var count = 0
        while taken < queue.count, taken == 0 || count + queue[taken].count <= settings.batchSize {
            count += queue[taken].count
            taken += 1
        }
        let batch = Array(queue[..<taken])
        queue.removeFirst(taken)
        queued -= count
        return batch
    }

    /// Resumes the submitters waiting for room, and the flushes once the queue is empty (or `all`: the loop ended).
    private func wakeWaiters(all: Bool) {
        let room = waitingForRoom
        waitingForRoom = []
        for waiting in room { waiting.resume() }
        if queue.isEmpty || all {
            let empty = waitingForEmpty
            waitingForEmpty = []
            for waiting in empty { waiting.resume() }
        }
    }

    private func write(_ batch: [Entry]) async throws {
        var merged = batch.first?.batch ?? SampleBatch()
        for entry in batch.dropFirst() { merged.append(contentsOf: entry.batch) }
        do {
            tally(try await sink.write(merged))
        } catch let invalid as InvalidSampleError {
            // One invalid sample rejects the whole batch. What the store's own checks refuse is left out in one
            // pass and the rest written as one batch again, so a rejected sample costs about what an accepted one
            // does (issue 20: a save per sample made a day with 1,837 bad series take 125 s instead of 0.19 s).
            remember("\(invalid)")
            let (kept, rejected) = merged.removingInvalid()
            for rejection in rejected {
                reject(rejection.type, at: rejection.startMilliseconds, rejection.reason)
            }
            try await writeNarrowing(kept)
        }
        counters.batches += 1
        let now = clock.now
        for entry in batch {
            guard let received = entry.receivedAt else { continue }
            recordLatency(now - received, count: entry.count)
        }
    }

    /// Writes `batch`; when the store still refuses a sample (a reason only it can see, such as an id that names
    /// another sample), leaves out the one its error names and tries again: a write per refused sample, never
    /// per sample of the batch.
    private func writeNarrowing(_ batch: SampleBatch) async throws {
        var remaining = batch
        while !remaining.isEmpty {
            do {
                tally(try await sink.write(remaining))
                return
            } catch let invalid as InvalidSampleError {
                guard let (kept, type, start) = remaining.removing(index: invalid.index) else {
                    // An index outside the batch: nothing to narrow down by; the batch is refused as a whole.
                    counters.rejected += remaining.count
                    remember(invalid.reason)
                    return
                }
                reject(type, at: start, invalid.reason)
                remaining = kept
            }
        }
    }

    /// Counts and remembers one refused sample or series.
    private func reject(_ type: String, at start: Int64, _ reason: String) {
        counters.rejected += 1
        remember(reason)
        if firstRejections.count < Self.firstRejectionLimit {
            firstRejections.append("\(type) at \(Self.iso(start)): \(reason)")
        }
    }

    private static func iso(_ milliseconds: Int64) -> String {
        guard Instant.supportedMilliseconds.contains(milliseconds) else { return "\(milliseconds) ms since 1970" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    private func tally(_ outcomes: [WriteOutcome]) {
        for outcome in outcomes {
            switch outcome {
            case .inserted, .replaced: counters.inserted += 1
            case .duplicate, .stale: counters.duplicates += 1
            case .conflict: counters.conflicts += 1
            case .rejected: counters.rejected += 1
            }
        }
    }

    private func remember(_ rejection: String) {
        rejections.append(rejection)
        if rejections.count > 20 { rejections.removeFirst(rejections.count - 20) }
    }

    private func recordLatency(_ latency: Duration, count: Int) {
        let (seconds, attoseconds) = latency.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        for _ in 0..<count {
            latencies.count += 1
            if latencies.samples.count < 100_000 {
                latencies.samples.append(microseconds)
            } else {
                // Reservoir sampling keeps a uniform sample of every latency seen.
                let slot = Int.random(in: 0..<latencies.count)
                if slot < latencies.samples.count { latencies.samples[slot] = microseconds }
            }
        }
    }
}

/// The service's sink: the store, written as the owner (the gateway is the store's own writer).
public struct HealthStoreSink: SampleSink {
    let store: any HealthStore

    public init(store: any HealthStore) {
        self.store = store
    }

    /// Writes the batch in one transaction, its workouts included (``SampleBatch/workouts``).
    public func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
        try await store.save(batch, as: .owner)
    }
}
