import Foundation
import Gateway
import Health
import Support
import Testing

/// The writer between the sample builders and the store: batches, merging, splitting out invalid samples; its
/// flush timer and retries on a manual clock.
@Suite(.timeLimit(.minutes(1))) struct StoreWriterTests {
    /// A sink that keeps every batch it is given and refuses batches holding a negative value, naming its place;
    /// the first `failures` writes fail as a store that is away would.
    actor RecordingSink: SampleSink {
        var batches: [SampleBatch] = []
        var failures: Int
        var attempts = 0
        private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        init(failures: Int = 0) { self.failures = failures }

        func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
            attempts += 1
            if failures > 0 {
                failures -= 1
                throw CocoaError(.fileWriteUnknown)
            }
            if let index = batch.samples.firstIndex(where: { $0.value < 0 }) {
                throw InvalidSampleError(index: index, reason: "negative")
            }
            batches.append(batch)
            let ready = waiters.filter { $0.count <= batches.count }
            waiters.removeAll { $0.count <= batches.count }
            for waiter in ready { waiter.continuation.resume() }
            return Array(repeating: .inserted, count: batch.count)
        }

        /// Returns once the sink holds `count` batches.
        func waitForBatches(_ count: Int) async {
            guard batches.count < count else { return }
            await withCheckedContinuation { waiters.append((count, $0)) }
        }
    }

    static let source = Source(identifier: "org.wearhouse.gateway")

    static func rate(_ second: Int64, _ value: Double, origin: UInt64 = 1) -> SampleBatch {
        var batch = SampleBatch()
        batch.append(
            SampleBatch.StreamTag(origin: origin, slot: 0, offset: 0), start: second * 1_000, end: second * 1_000,
            value: value
        ) { QuantitySeries(type: .heartRate, source: source, subject: "alice") }
        return batch
    }

    @Test func aFullBatchIsWrittenWithoutWaitingForTheFlushInterval() async throws {
        let sink = RecordingSink()
        let clock = ManualClock()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 3, flushInterval: .seconds(3_600)), clock: clock)
        await writer.whileRunning {
            for second in 0..<3 { await writer.submit(Self.rate(Int64(second), 60)) }
            await sink.waitForBatches(1)
            #expect(clock.now == .zero)
        }
        let batches = await sink.batches
        #expect(batches.count == 1)
        #expect(batches.first?.count == 3)
    }

    @Test func aPartialBatchIsWrittenWhenTheFlushIntervalHasPassedOnTheClock() async throws {
        let sink = RecordingSink()
        let clock = ManualClock()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 100, flushInterval: .milliseconds(250)), clock: clock)
        await writer.whileRunning {
            await writer.submit(Self.rate(0, 60))
            await clock.waitForSleepers(1)  // the flush timer
            #expect(clock.nextDeadline == .milliseconds(250))
            clock.advance(by: .milliseconds(249))
            #expect(await sink.batches.isEmpty)
            clock.advance(by: .milliseconds(1))
            await sink.waitForBatches(1)
            #expect(clock.sleeperCount == 0)  // the timer ended with its wait
        }
        #expect(await sink.batches.map(\.count) == [1])
    }

    @Test func aFailedWriteIsRetriedAfterABackoffOnTheClockKeepingTheBatch() async throws {
        let sink = RecordingSink(failures: 2)
        let clock = ManualClock()
        let writer = StoreWriter(sink: sink, settings: .init(batchSize: 2, flushInterval: .seconds(1)), clock: clock)
        try await writer.whileRunning {
            await writer.submit(Self.rate(0, 60))
            await writer.submit(Self.rate(1, 61))
            // First failure: the retry waits 25-50 ms; the second waits 50-100 ms.
            await clock.waitForSleepers(1)
            let first = try #require(clock.nextDeadline)
            #expect(first >= .milliseconds(25) && first <= .milliseconds(50))
            clock.advanceToNextDeadline()
            await clock.waitForSleepers(1)
            let second = try #require(clock.nextDeadline) - first
            #expect(second >= .milliseconds(50) && second <= .milliseconds(100))
            clock.advanceToNextDeadline()
            await sink.waitForBatches(1)
        }
        #expect(await sink.attempts == 3)
        let counters = await writer.counters
        #expect(counters.failedWrites == 2 && counters.inserted == 2)
        #expect(await writer.lastError != nil)
    }

    @Test func entriesOfOneStreamAreMergedIntoOneStreamOfTheBatch() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 100, flushInterval: .seconds(3_600)), clock: ManualClock())
        await writer.whileRunning {
            for second in 0..<5 { await writer.submit(Self.rate(Int64(second), 60 + Double(second))) }
            await writer.submit(Self.rate(10, 90, origin: 2))  // another builder's stream
            await writer.flush()
        }
        let batches = await sink.batches
        #expect(batches.count == 1)
        #expect(batches.first?.quantities.map(\.count) == [5, 1])
        #expect(batches.first?.quantities.first?.values == [60, 61, 62, 63, 64])
        #expect(await writer.counters.inserted == 6)
    }

    /// A sink whose writes wait until the test lets them go.
    actor GatedSink: SampleSink {
        var written = 0
        var started = 0
        private var gate: CheckedContinuation<Void, Never>?
        private var startWaiter: CheckedContinuation<Void, Never>?

        func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
            started += 1
            startWaiter?.resume()
            startWaiter = nil
            await withCheckedContinuation { gate = $0 }
            written += batch.count
            return Array(repeating: .inserted, count: batch.count)
        }

        func waitUntilWriting() async {
            guard started == 0 else { return }
            await withCheckedContinuation { startWaiter = $0 }
        }

        func release() {
            gate?.resume()
            gate = nil
        }
    }

    @Test func aFlushWaitsForTheBatchBeingWritten() async throws {
        let sink = GatedSink()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 2, flushInterval: .seconds(3_600)), clock: ManualClock())
        await writer.whileRunning {
            await writer.submit(Self.rate(0, 60))
            await writer.submit(Self.rate(1, 61))  // a full batch: the writer takes it at once
            await sink.waitUntilWriting()
            #expect(await writer.queuedCount == 0)
            async let flushed: Void = writer.flush()
            #expect(await sink.written == 0)
            await sink.release()
            await flushed
            #expect(await sink.written == 2)
        }
    }

    @Test func anInvalidSampleIsLeftOutAndTheRestIsWritten() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 100, flushInterval: .seconds(3_600)), clock: ManualClock())
        await writer.whileRunning {
            await writer.submit(Self.rate(0, 60))
            await writer.submit(Self.rate(1, -1))
            await writer.submit(Self.rate(2, 62))
            await writer.flush()
        }
        let counters = await writer.counters
        #expect(counters.inserted == 2)
        #expect(counters.rejected == 1)
        let values = await sink.batches.flatMap { $0.samples.map(\.value) }
        #expect(values == [60, 62])
        #expect(await writer.rejections.count == 2)  // the batch's error, then the sample's
    }

    /// A sink that refuses batches holding a value in `refused` (valid samples by the store's own rules, refused
    /// for a reason only the store sees), naming the first; counts its writes.
    actor RefusingSink: SampleSink {
        let refused: Set<Double>
        var attempts = 0
        var written: [Double] = []

        init(refused: Set<Double>) { self.refused = refused }

        func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
            attempts += 1
            if let index = batch.samples.firstIndex(where: { refused.contains($0.value) || $0.value < 0 }) {
                throw InvalidSampleError(index: index, reason: "refused")
            }
            written += batch.samples.map(\.value)
            return Array(repeating: .inserted, count: batch.count)
        }
    }

    /// Issue 20: a rejected sample costs about what an accepted one does. The samples invalid by the store's own
    /// rules go in one pass (one write more for the batch, not one per sample); a sample refused for a reason only
    /// the store sees costs one write more each.
    @Test func rejectedSamplesCostOneWriteMoreNotOneWritePerSample() async throws {
        let sink = RefusingSink(refused: [70, 80])
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 1_000, flushInterval: .seconds(3_600)), clock: ManualClock())
        await writer.whileRunning {
            for second in 0..<1_000 {
                // Three invalid heart rates (negative) and two the sink refuses (70 and 80 bpm, once each).
                let value: Double = [100, 500, 900].contains(second) ? -1 : second == 10 ? 70 : second == 20 ? 80 : 60
                await writer.submit(Self.rate(Int64(second), value))
            }
            await writer.flush()
        }
        let counters = await writer.counters
        #expect(counters.rejected == 5)
        #expect(counters.inserted == 995)
        #expect(await sink.attempts == 4)  // the batch, the batch without the invalid ones, then one per refusal
        #expect(await sink.written.count == 995)
        #expect(await writer.firstRejections.count == 5)
    }

    @Test func closingWritesWhatIsQueuedAndEndsTheLoop() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(
            sink: sink, settings: .init(batchSize: 100, flushInterval: .seconds(3_600)), clock: ManualClock())
        await withDiscardingTaskGroup { group in
            group.addTask { await writer.run() }
            await writer.submit(Self.rate(0, 60))
            await writer.close()
        }  // returns only because run() returned
        #expect(await sink.batches.map(\.count) == [1])
    }
}
