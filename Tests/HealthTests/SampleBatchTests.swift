import Foundation
import Health
import Testing

/// Streams column by column: what goes in comes out as the same samples, with the ids a sample would derive.
@Suite struct SampleBatchTests {
    static let source = Source(identifier: "org.wearhouse.gateway", version: "1")
    static let device = Device(name: "H10", localIdentifier: "A0:9E:1A:00:00:01")

    static func stream(_ type: HealthType = .heartRate) -> QuantitySeries {
        QuantitySeries(type: type, source: source, device: device, subject: "alice")
    }

    @Test func taggedSamplesGoIntoTheirStreamsAndComeBackWithDerivedIDs() {
        var batch = SampleBatch()
        let rate = SampleBatch.StreamTag(origin: 7, slot: 0, offset: 3_600)
        let energy = SampleBatch.StreamTag(origin: 7, slot: 1, offset: 3_600)
        batch.append(rate, start: 1_000, end: 1_000, value: 60) { Self.stream() }
        batch.append(energy, start: 0, end: 1_000, value: 2) { Self.stream(.activeEnergyBurned) }
        batch.append(rate, start: 2_000, end: 2_000, value: 61) { Self.stream() }
        #expect(batch.quantities.map(\.count) == [2, 1])
        #expect(batch.quantityCount == 3)
        #expect(batch.quantities.allSatisfy { $0.startOffsetSeconds == 3_600 })
        let expected = QuantitySample(
            type: .heartRate, start: Instant(milliseconds: 2_000), end: Instant(milliseconds: 2_000),
            startOffsetSeconds: 3_600, value: 61, source: Self.source, device: Self.device, subject: "alice")
        #expect(batch.samples[1] == expected)
        #expect(batch.samples[1].hasDerivedID)
    }

    @Test func mergingBatchesExtendsStreamsWithTheSameTag() {
        let tag = SampleBatch.StreamTag(origin: 1, slot: 0, offset: 0)
        var first = SampleBatch()
        first.append(tag, start: 1_000, end: 1_000, value: 60) { Self.stream() }
        var second = SampleBatch()
        second.append(tag, start: 2_000, end: 2_000, value: 61) { Self.stream() }
        second.append(Self.stream(.stepCount).appending(start: 0, end: 2_000, value: 3))
        first.append(contentsOf: second)
        #expect(first.quantities.map(\.count) == [2, 1])
        #expect(first.quantities[0].values == [60, 61])
        #expect(first.count == 3)
    }

    @Test func samplesGivenOneByOneAreGroupedWhileTheyShareAStream() {
        let samples = (0..<4).map { second in
            QuantitySample(
                type: second == 2 ? .stepCount : .heartRate, start: Instant(seconds: Int64(second)),
                end: Instant(seconds: Int64(second)), value: 60, source: Self.source)
        }
        let batch = SampleBatch(samples)
        #expect(batch.quantities.map(\.count) == [2, 1, 1])
        #expect(batch.samples == samples)
    }

    /// The writer narrows a refused batch by the index the store names: workouts come after everything else, and an
    /// invalid one is left out in the writer's first pass like an invalid sample.
    @Test func workoutsAreNamedAfterTheSamplesAndLeftOutWhenInvalid() throws {
        var batch = SampleBatch()
        var stream = Self.stream(.activeEnergyBurned)
        stream.append(start: 0, end: 60_000, value: 5)
        stream.append(start: 60_000, end: 120_000, value: -1)  // negative energy: invalid
        batch.append(stream)
        let ride = Workout(
            activityType: .cycling, start: Instant(milliseconds: 0), end: Instant(milliseconds: 120_000),
            totalEnergyBurned: 5, totalDistance: nil, events: [], source: Self.source, device: Self.device,
            subject: "alice")
        var backwards = ride
        backwards.end = Instant(milliseconds: -1)
        batch.workouts = [
            SampleBatch.WorkoutEntry(ride, sampleIDs: []), SampleBatch.WorkoutEntry(backwards, sampleIDs: []),
        ]
        #expect(batch.count == 2)

        let (kept, type, start) = try #require(batch.removing(index: 3))
        #expect(type == "workout" && start == 0 && kept.workouts.map(\.workout) == [ride])
        #expect(kept.quantityCount == 2)
        #expect(batch.removing(index: 4) == nil)

        let (valid, rejected) = batch.removingInvalid()
        #expect(valid.quantityCount == 1 && valid.workouts.map(\.workout) == [ride])
        #expect(rejected.map(\.type) == ["activeEnergyBurned", "workout"])
    }
}

extension QuantitySeries {
    fileprivate func appending(start: Int64, end: Int64, value: Double) -> QuantitySeries {
        var copy = self
        copy.append(start: start, end: end, value: value)
        return copy
    }
}
