import Foundation
import Health
import Support
import TestSupport
import Testing

@Suite struct DiscreteStatisticsTests {
    let strap = Provenance(source: "org.wearhouse.gateway", device: "strap")
    let watch = Provenance(source: "org.wearhouse.gateway", device: "watch")

    func instant(
        _ time: Int64, _ value: Double, _ provenance: Provenance? = nil, subject: String? = nil, uuid: UInt64 = 1
    ) -> StatisticsSample {
        interval(time, time, value, provenance, subject: subject, uuid: uuid)
    }

    func interval(
        _ start: Int64, _ end: Int64, _ value: Double, _ provenance: Provenance? = nil, subject: String? = nil,
        uuid: UInt64 = 1
    ) -> StatisticsSample {
        StatisticsSample(
            start: Instant(milliseconds: start), end: Instant(milliseconds: end), value: value,
            provenance: provenance ?? strap, subject: subject, uuid: statUUID(uuid))
    }

    @Test func countAverageMinimumMaximumRecentAndTimeWeightedAverage() {
        let samples = [
            instant(0, 60, uuid: 1),  // holds [0, 1000): the stream's next sample starts then
            instant(1000, 80, uuid: 2),  // holds [1000, 2000)
            interval(2000, 4000, 100, uuid: 3),  // covers [2000, 4000)
        ]
        let result = DiscreteStatistics().buckets(samples, borders: msInstants([0, 5000, 10_000]))
        #expect(result.count == 2)
        let first = result[0]
        #expect(first.count == 3)
        #expect(first.sum == 240)
        #expect(first.average == 80)
        #expect(first.minimum == 60)
        #expect(first.maximum == 100)
        #expect(first.mostRecent == 100)
        #expect(first.mostRecentEnd == Instant(milliseconds: 4000))
        // (60 × 1000 + 80 × 1000 + 100 × 2000) / 4000
        #expect(first.timeWeightedAverage == 85)
        #expect(
            result[1]
                == DiscreteStatistics.Bucket(
                    start: Instant(milliseconds: 5000), end: Instant(milliseconds: 10_000), count: 0, sum: nil,
                    average: nil, minimum: nil, maximum: nil, mostRecent: nil, mostRecentEnd: nil,
                    timeWeightedAverage: nil))
    }

    /// Combining buckets gives what one bucket over all their samples gives (count, sum, average, extremes, most
    /// recent): per source into all sources, and consecutive buckets into one; seeded random samples.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func combiningBucketsEqualsTheBucketOfAllTheirSamples(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var samples: [StatisticsSample] = []
        for index in 0..<200 {
            // Distinct times, so that the most recent sample is never a tie between sources.
            let start = Int64(index) * 3_000 + Int64(random.next() % 3_000)
            let value = Double(random.next() % 150) + 40
            let provenance = random.next() % 2 == 0 ? strap : watch
            samples.append(instant(start, value, provenance, uuid: UInt64(index + 1)))
        }
        let borders = msInstants([0, 200_000, 400_000, 600_000])
        let statistics = DiscreteStatistics(maxHoldMilliseconds: 0)
        let all = statistics.buckets(samples, borders: borders)
        let bySource = [strap, watch].map { source in
            statistics.buckets(samples.filter { $0.provenance == source }, borders: borders)
        }
        let compared = { (bucket: DiscreteStatistics.Bucket) in
            [
                Double(bucket.count), bucket.sum ?? -1, bucket.minimum ?? -1, bucket.maximum ?? -1,
                bucket.mostRecent ?? -1,
            ]
        }
        for (index, bucket) in all.enumerated() {
            let combined = DiscreteStatistics.Bucket.combining(
                bySource.map { $0[index] }, start: bucket.start, end: bucket.end)
            #expect(compared(combined) == compared(bucket))
            #expect(combined.mostRecentEnd == bucket.mostRecentEnd)
            #expect(abs((combined.average ?? 0) - (bucket.average ?? 0)) < 1e-9)
        }
        let whole = statistics.buckets(samples, borders: [borders[0], borders[3]])[0]
        let joined = DiscreteStatistics.Bucket.combining(all, start: borders[0], end: borders[3])
        #expect(compared(joined) == compared(whole))
        #expect(DiscreteStatistics.Bucket.combining([], start: borders[0], end: borders[1]).count == 0)
    }

    @Test func heldValueSpillsIntoTheNextBucket() {
        let borders = msInstants([0, 10_000, 20_000])
        // 70 at 9 s holds for the default 5 s: 1 s in the first bucket, 4 s in the second.
        let alone = DiscreteStatistics().buckets([instant(9000, 70)], borders: borders)
        #expect(alone[0].count == 1)
        #expect(alone[0].timeWeightedAverage == 70)
        #expect(alone[1].count == 0)
        #expect(alone[1].average == nil)
        #expect(alone[1].mostRecent == nil)
        #expect(alone[1].timeWeightedAverage == 70)

        // The stream's next sample at 12 s cuts the hold: (70 × 2000 + 90 × 5000) / 7000.
        let cut = DiscreteStatistics().buckets(
            [instant(9000, 70, uuid: 1), instant(12_000, 90, uuid: 2)], borders: borders)
        #expect(cut[1].count == 1)
        #expect(nearlyEqual(cut[1].timeWeightedAverage, 590_000.0 / 7000))

        // Another device is another stream: the hold runs its full 5 s. (70 × 4000 + 90 × 5000) / 9000.
        let otherStream = DiscreteStatistics().buckets(
            [instant(9000, 70, uuid: 1), instant(12_000, 90, watch, uuid: 2)], borders: borders)
        #expect(nearlyEqual(otherStream[1].timeWeightedAverage, 730_000.0 / 9000))

        // So is another subject.
        let otherSubject = DiscreteStatistics().buckets(
            [instant(9000, 70, uuid: 1), instant(12_000, 90, subject: "bob", uuid: 2)], borders: borders)
        #expect(nearlyEqual(otherSubject[1].timeWeightedAverage, 730_000.0 / 9000))
    }

    @Test func holdIsConfigurableAndZeroGivesInstantsNoWeight() {
        let borders = msInstants([0, 10_000, 20_000])
        let long = DiscreteStatistics(maxHoldMilliseconds: 60_000).buckets([instant(9000, 70)], borders: borders)
        #expect(long.map(\.timeWeightedAverage) == [70, 70])
        let none = DiscreteStatistics(maxHoldMilliseconds: 0).buckets(
            [instant(9000, 70, uuid: 1), interval(9500, 9600, 50, uuid: 2)], borders: borders)
        #expect(none[0].count == 2)
        #expect(none[0].average == 60)
        #expect(none[0].timeWeightedAverage == 50)
        #expect(none[1].timeWeightedAverage == nil)
    }

    @Test func intervalsWeighTheirOverlap() {
        let samples = [interval(5000, 15_000, 100, uuid: 1), interval(10_000, 20_000, 50, watch, uuid: 2)]
        let result = DiscreteStatistics().buckets(samples, borders: msInstants([0, 10_000, 20_000]))
        #expect(result[0].count == 1)
        #expect(result[0].timeWeightedAverage == 100)
        // The first sample counts only where it starts; its second half still weighs here.
        #expect(result[1].count == 1)
        #expect(result[1].average == 50)
        let weighted: Double = (100.0 * 5000 + 50 * 10_000) / 15_000
        #expect(nearlyEqual(result[1].timeWeightedAverage, weighted))
    }

    @Test func aSampleStartingOnABorderBelongsToTheLaterBucket() {
        let result = DiscreteStatistics().buckets([instant(10_000, 72)], borders: msInstants([0, 10_000, 20_000]))
        #expect(result.map(\.count) == [0, 1])
        #expect(result[0].timeWeightedAverage == nil)
        #expect(result[1].timeWeightedAverage == 72)
    }

    @Test func recentIsTheGreatestEndThenStartThenUUID() {
        let borders = msInstants([0, 100])
        // An interval that ends last is the most recent even though an instant started after it.
        let byEnd = DiscreteStatistics().buckets(
            [interval(10, 90, 1, uuid: 1), instant(50, 2, uuid: 2)], borders: borders)
        #expect(byEnd[0].mostRecent == 1)
        #expect(byEnd[0].mostRecentEnd == Instant(milliseconds: 90))
        let byStart = DiscreteStatistics().buckets(
            [interval(10, 90, 1, uuid: 1), interval(20, 90, 2, uuid: 2)], borders: borders)
        #expect(byStart[0].mostRecent == 2)
        for uuids in [(UInt64(1), UInt64(2)), (UInt64(2), UInt64(1))] {
            let byUUID = DiscreteStatistics().buckets(
                [instant(50, 3, uuid: uuids.0), instant(50, 4, watch, uuid: uuids.1)], borders: borders)
            #expect(byUUID[0].mostRecent == (uuids.0 > uuids.1 ? 3 : 4))
        }
    }

    @Test func everySourceCounts() {
        let samples = [instant(0, 60, strap, uuid: 1), instant(0, 80, watch, uuid: 2)]
        let result = DiscreteStatistics().buckets(samples, borders: msInstants([0, 10_000]))
        #expect(result[0].count == 2)
        #expect(result[0].average == 70)
        #expect(result[0].timeWeightedAverage == 70)
    }

    @Test func degenerateBordersAndInvalidSamples() {
        let samples = [instant(5, 60, uuid: 1), interval(30, 20, 99, uuid: 2)]
        #expect(DiscreteStatistics().buckets(samples, borders: []).isEmpty)
        #expect(DiscreteStatistics().buckets(samples, borders: msInstants([0])).isEmpty)
        let result = DiscreteStatistics().buckets(samples, borders: msInstants([0, 10, 10, 100]))
        #expect(result.map(\.count) == [1, 0, 0])
        #expect(result.map(\.maximum) == [60, nil, nil])
    }

    /// A day is exactly the union of its hours for count, sum, min, max and recent
    /// (`docs/store-semantics.md`, item 14).
    @Test func aDayIsTheUnionOfItsHours() {
        let hour: Int64 = 3_600_000
        for seed in 0..<UInt64(100) {
            var rng = SplitMix64(seed: seed)
            let providers = [strap, watch]
            let samples = (0..<Int.random(in: 0...200, using: &rng)).map { index in
                let start = Int64.random(in: -hour...(25 * hour), using: &rng)
                let length = Bool.random(using: &rng) ? 0 : Int64.random(in: 1...(2 * hour), using: &rng)
                return StatisticsSample(
                    start: Instant(milliseconds: start), end: Instant(milliseconds: start + length),
                    value: Double.random(in: 40...200, using: &rng),
                    provenance: providers.randomElement(using: &rng) ?? strap,
                    uuid: statUUID(UInt64(index)))
            }
            let statistics = DiscreteStatistics(maxHoldMilliseconds: Int64.random(in: 0...hour, using: &rng))
            let day = statistics.buckets(samples, borders: msInstants([0, 24 * hour]))[0]
            let hours = statistics.buckets(samples, borders: msInstants((0...24).map { $0 * hour }))
            #expect(day.count == hours.reduce(0) { $0 + $1.count }, "seed \(seed)")
            let sums = hours.compactMap(\.sum)
            #expect(nearlyEqual(day.sum, sums.isEmpty ? nil : sums.reduce(0, +)), "seed \(seed)")
            #expect(day.minimum == hours.compactMap(\.minimum).min(), "seed \(seed)")
            #expect(day.maximum == hours.compactMap(\.maximum).max(), "seed \(seed)")
            #expect(day.mostRecentEnd == hours.compactMap(\.mostRecentEnd).max(), "seed \(seed)")
            if let average = day.average, let sum = day.sum {
                #expect(nearlyEqual(average, sum / Double(day.count)), "seed \(seed)")
            }
            // The day's time-weighted average is a weighted mean of the hours'.
            let hourly = hours.compactMap(\.timeWeightedAverage)
            if let twa = day.timeWeightedAverage, let low = hourly.min(), let high = hourly.max() {
                #expect(twa >= low - 1e-9 && twa <= high + 1e-9, "seed \(seed)")
            } else {
                #expect(day.timeWeightedAverage == nil && hourly.isEmpty, "seed \(seed)")
            }
        }
    }
}
