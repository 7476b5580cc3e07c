import Foundation
import Gateway
import Health
import Testing

/// The writer between the sample builders and the store: batches, merging, splitting out invalid samples.
@Suite struct StoreWriterTests {
    /// A sink that keeps every batch it is given and refuses batches holding a negative value, naming its place.
    actor RecordingSink: SampleSink {
        var batches: [SampleBatch] = []

        func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
            if let index = batch.samples.firstIndex(where: { $0.value < 0 }) {
                throw InvalidSampleError(index: index, reason: "negative")
            }
            batches.append(batch)
            return Array(repeating: .inserted, count: batch.count)
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

    /// Waits (up to a minute, far less than the flush interval used) until `sink` holds `count` batches.
    static func waitForBatches(_ sink: RecordingSink, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while await sink.batches.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func aFullBatchIsWrittenWithoutWaitingForTheFlushInterval() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(sink: sink, settings: .init(batchSize: 3, flushInterval: .seconds(3_600)))
        await writer.start()
        for second in 0..<3 { await writer.submit(Self.rate(Int64(second), 60)) }
        try await Self.waitForBatches(sink, 1)
        let batches = await sink.batches
        #expect(batches.count == 1)
        #expect(batches.first?.count == 3)
        await writer.close()
    }

    @Test func entriesOfOneStreamAreMergedIntoOneStreamOfTheBatch() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(sink: sink, settings: .init(batchSize: 100, flushInterval: .seconds(3_600)))
        await writer.start()
        for second in 0..<5 { await writer.submit(Self.rate(Int64(second), 60 + Double(second))) }
        await writer.submit(Self.rate(10, 90, origin: 2))  // another builder's stream
        await writer.flush()
        let batches = await sink.batches
        #expect(batches.count == 1)
        #expect(batches.first?.quantities.map(\.count) == [5, 1])
        #expect(batches.first?.quantities.first?.values == [60, 61, 62, 63, 64])
        #expect(await writer.counters.inserted == 6)
        await writer.close()
    }

    /// A sink that takes its time.
    actor SlowSink: SampleSink {
        var written = 0
        func write(_ batch: SampleBatch) async throws -> [WriteOutcome] {
            try await Task.sleep(for: .milliseconds(200))
            written += batch.count
            return Array(repeating: .inserted, count: batch.count)
        }
    }

    @Test func aFlushWaitsForTheBatchBeingWritten() async throws {
        let sink = SlowSink()
        let writer = StoreWriter(sink: sink, settings: .init(batchSize: 2, flushInterval: .seconds(3_600)))
        await writer.start()
        await writer.submit(Self.rate(0, 60))
        await writer.submit(Self.rate(1, 61))  // a full batch: the writer takes it at once
        await Task.yield()
        await writer.flush()
        #expect(await sink.written == 2)
        await writer.close()
    }

    @Test func anInvalidSampleIsLeftOutAndTheRestIsWritten() async throws {
        let sink = RecordingSink()
        let writer = StoreWriter(sink: sink, settings: .init(batchSize: 100, flushInterval: .seconds(3_600)))
        await writer.start()
        await writer.submit(Self.rate(0, 60))
        await writer.submit(Self.rate(1, -1))
        await writer.submit(Self.rate(2, 62))
        await writer.flush()
        let counters = await writer.counters
        #expect(counters.inserted == 2)
        #expect(counters.rejected == 1)
        let values = await sink.batches.flatMap { $0.samples.map(\.value) }
        #expect(values == [60, 62])
        #expect(await writer.rejections.count == 2)  // the batch's error, then the sample's
        await writer.close()
    }
}
