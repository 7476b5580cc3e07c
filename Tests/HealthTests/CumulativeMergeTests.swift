import Foundation
import Health
import Support
import TestSupport
import Testing

// MARK: - Helpers shared by the statistics tests

// MARK: - The vectors of docs/store-semantics.md, "Test vectors"

/// A record as that table writes it: `(start, end, value, priority, lastModified)`.
private struct Record: Sendable, CustomStringConvertible {
    var start: Int64
    var end: Int64
    var value: Double
    /// `pN`: a larger N ranks higher; `nil` is unranked.
    var priority: Int?
    var modified: Int64 = 1
    var subject: String?

    var provenance: Provenance {
        Provenance(source: priority.map { "app.p\($0)" } ?? "app.unranked.m\(modified).v\(value)", device: nil)
    }

    var description: String { "(\(start),\(end),\(value),\(priority.map { "p\($0)" } ?? "unranked"),m\(modified))" }
}

private func rec(_ start: Int64, _ end: Int64, _ value: Double, p: Int?, m: Int64 = 1) -> Record {
    Record(start: start, end: end, value: value, priority: p, modified: m)
}

/// Merges records with the priority list their `pN`s give (larger N first).
private func merged(_ records: [Record], borders: [Int64], unranked: CumulativeMerge.UnrankedPolicy = .gapFill)
    -> [CumulativeMerge.Bucket]
{
    let ranked = Set(records.compactMap(\.priority)).sorted(by: >)
    let merge = CumulativeMerge(
        priority: ranked.map { Provenance(source: "app.p\($0)", device: nil) }, unranked: unranked)
    let samples = records.enumerated().map { index, record in
        StatisticsSample(
            start: Instant(milliseconds: record.start), end: Instant(milliseconds: record.end), value: record.value,
            provenance: record.provenance, subject: record.subject, lastModified: record.modified,
            uuid: statUUID(UInt64(index + 1)))
    }
    return merge.buckets(samples, borders: msInstants(borders))
}

private struct Vector: Sendable, CustomTestStringConvertible {
    var number: Int
    var records: [Record]
    var borders: [Int64] = [10, 20]
    var unranked: CumulativeMerge.UnrankedPolicy = .gapFill
    var expected: [Double?]

    var testDescription: String { "vector \(number): \(records)" }
}

@Suite struct CumulativeMergeVectorTests {
    fileprivate static let vectors: [Vector] = [
        Vector(number: 1, records: [rec(10, 20, 10, p: 100)], expected: [10]),
        Vector(number: 2, records: [rec(20, 20, 10, p: 1)], expected: [nil]),
        Vector(number: 3, records: [rec(15, 15, 10, p: 100, m: 10), rec(15, 15, 20, p: 200, m: 20)], expected: [20]),
        Vector(
            number: 4, records: [rec(15, 27, 12, p: 1, m: 10), rec(22, 35, 130, p: 2, m: 10)],
            borders: [10, 20, 30, 40], expected: [5, 2 + 50 + 30, 50]),
        Vector(
            number: 5, records: [rec(15, 27, 12, p: 2, m: 10), rec(19, 30, 110, p: 1, m: 10)],
            borders: [10, 20, 30, 40], expected: [4 + 1, 7 + 30, nil]),
        Vector(number: 6, records: [rec(10, 12, 10, p: 100, m: 10), rec(12, 14, 20, p: 200, m: 20)], expected: [30]),
        Vector(number: 7, records: [rec(10, 10, 10, p: 2), rec(10, 15, 20, p: 1)], expected: [30]),
        Vector(number: 8, records: [rec(10, 10, 10, p: 1), rec(10, 15, 20, p: 2)], expected: [20]),
        Vector(number: 9, records: [rec(10, 17, 7, p: 1, m: 10), rec(12, 20, 80, p: 1, m: 1)], expected: [7 + 30]),
        Vector(
            number: 10,
            records: [rec(10, 20, 15, p: 1), rec(10, 20, 20, p: nil, m: 10), rec(10, 20, 25, p: nil, m: 20)],
            expected: [15]),
        Vector(
            number: 11, records: [rec(10, 12, 10, p: 1), rec(12, 12, 10, p: 2), rec(12, 14, 20, p: 3)], expected: [30]),
        Vector(number: 12, records: [rec(10, 20, 10, p: nil)], unranked: .exclude, expected: [nil]),
    ]

    @Test(arguments: vectors)
    fileprivate func reproducesVector(_ vector: Vector) {
        let result = merged(vector.records, borders: vector.borders, unranked: vector.unranked)
        #expect(result.map(\.sum) == vector.expected)
        #expect(result.map(\.start) == msInstants(Array(vector.borders.dropLast())))
        #expect(result.map(\.end) == msInstants(Array(vector.borders.dropFirst())))
    }

    @Test(arguments: vectors)
    fileprivate func vectorIsIndependentOfInputOrder(_ vector: Vector) {
        let forward = merged(vector.records, borders: vector.borders, unranked: vector.unranked).map(\.sum)
        // Reversing the records also reverses the uuids, which only break ties these vectors never reach.
        let backward = merged(vector.records.reversed(), borders: vector.borders, unranked: vector.unranked).map(\.sum)
        #expect(forward == backward)
    }
}

// MARK: - The named behaviours of docs/store-semantics.md (items 1-11)

@Suite struct CumulativeMergeBehaviourTests {
    let watch = Provenance(source: "com.example.fit", device: "watch")
    let phone = Provenance(source: "com.example.fit", device: nil)
    let gateway = Provenance(source: "org.wearhouse.gateway", device: "AA:BB")

    func sample(
        _ start: Int64, _ end: Int64, _ value: Double, _ provenance: Provenance, m: Int64 = 1, subject: String? = nil,
        uuid: UInt64 = 1
    ) -> StatisticsSample {
        StatisticsSample(
            start: Instant(milliseconds: start), end: Instant(milliseconds: end), value: value, provenance: provenance,
            subject: subject, lastModified: m, uuid: statUUID(uuid))
    }

    @Test func instantOnBorderBelongsToTheLaterBucket() {
        let result = merged([rec(20, 20, 10, p: 1)], borders: [10, 20, 30])
        #expect(result.map(\.sum) == [nil, 10])
        let separate = CumulativeMerge.separateBySource(
            [sample(20, 20, 10, gateway)], borders: msInstants([10, 20, 30]))
        #expect(separate.map(\.sums) == [[:], [gateway: 10]])
    }

    @Test func instantBeforeTheFirstOrAtTheLastBorderIsOutside() {
        #expect(merged([rec(5, 5, 10, p: 1), rec(30, 30, 10, p: 1)], borders: [10, 20, 30]).map(\.sum) == [nil, nil])
    }

    @Test func zeroValuedWinnerMakesTheBucketZeroNotNull() {
        // oneExcludeInterval: a winning zero hides a positive lower-ranked sample.
        let hidden = merged([rec(10, 20, 0, p: 2), rec(10, 20, 5, p: 1)], borders: [10, 20])
        #expect(hidden.map(\.sum) == [0])
        #expect(hidden[0].sources.isEmpty)
        #expect(merged([rec(12, 14, 0, p: 1)], borders: [10, 20]).map(\.sum) == [0])
        #expect(merged([rec(12, 12, 0, p: 1)], borders: [10, 20]).map(\.sum) == [0])
    }

    @Test func samplesEndingAtTheBucketStartLeaveItNull() {
        // Health Connect reports 0.0 here; item 7 says null.
        let result = merged([rec(0, 10, 10, p: 1), rec(5, 10, 10, p: 2)], borders: [0, 10, 20])
        #expect(result.map(\.sum) == [5 + 10, nil])
    }

    @Test func intervalEndingAtABorderHidesAnInstantThereAndLeavesNull() {
        // Health Connect reports 0.0 here; item 7 says null.
        let hidden = merged([rec(0, 10, 10, p: 2), rec(10, 10, 7, p: 1)], borders: [0, 10, 20])
        #expect(hidden.map(\.sum) == [10, nil])
        // The closed span also works the other way: a higher-ranked instant at the end wins.
        let shown = merged([rec(0, 10, 10, p: 1), rec(10, 10, 7, p: 2)], borders: [0, 10, 20])
        #expect(shown.map(\.sum) == [10, 7])
    }

    @Test func intervalStartingAtAnInstantHidesItWhenRankedHigher() {
        // instantHasLowerPriority: the interval starts exactly at the instant.
        #expect(merged([rec(15, 15, 10, p: 1), rec(15, 18, 20, p: 2)], borders: [10, 20]).map(\.sum) == [20])
    }

    @Test func atMostOneInstantValuePerTime() {
        let result = merged(
            [rec(15, 15, 10, p: 1), rec(15, 15, 20, p: 1, m: 2), rec(15, 15, 5, p: nil)], borders: [10, 20])
        #expect(result.map(\.sum) == [20])
    }

    @Test func unrankedGapFillOrdersByLastModified() {
        let a = Provenance(source: "a", device: nil)
        let b = Provenance(source: "b", device: nil)
        let merge = CumulativeMerge(priority: [], unranked: .gapFill)
        // a: 10 over [10,20); b: 100 over [15,25). The later-modified one takes [15,20).
        let aLater = merge.buckets(
            [sample(10, 20, 10, a, m: 5, uuid: 1), sample(15, 25, 100, b, m: 3, uuid: 2)],
            borders: msInstants([10, 30]))
        #expect(aLater.map(\.sum) == [10 + 50])
        let bLater = merge.buckets(
            [sample(10, 20, 10, a, m: 3, uuid: 1), sample(15, 25, 100, b, m: 5, uuid: 2)],
            borders: msInstants([10, 30]))
        #expect(bLater.map(\.sum) == [5 + 100])
        #expect(bLater[0].sources == [a, b])
    }

    @Test func unrankedFillGapsBelowEveryRankedProvenanceOrAreExcluded() {
        let ranked = sample(10, 15, 5, gateway, m: 1, uuid: 1)
        let unrankedLater = sample(10, 20, 10, watch, m: 99, uuid: 2)
        let fill = CumulativeMerge(priority: [gateway], unranked: .gapFill)
        #expect(fill.buckets([ranked, unrankedLater], borders: msInstants([10, 20])).map(\.sum) == [5 + 5])
        let exclude = CumulativeMerge(priority: [gateway], unranked: .exclude)
        let excluded = exclude.buckets([ranked, unrankedLater], borders: msInstants([10, 20]))
        #expect(excluded.map(\.sum) == [5])
        #expect(excluded[0].sources == [gateway])
    }

    @Test func ranksCountFromTheTopOfTheList() {
        let merge = CumulativeMerge(priority: [gateway, watch, phone, gateway])
        #expect(merge.rank(of: gateway) == 4)
        #expect(merge.rank(of: watch) == 3)
        #expect(merge.rank(of: phone) == 2)
        #expect(merge.rank(of: Provenance(source: "other", device: nil)) == nil)
    }

    @Test func sourceWithNullDeviceMatchesOnlySamplesWithoutADevice() {
        // The list names the app without a device; the same app's watch samples are unranked.
        let merge = CumulativeMerge(priority: [phone], unranked: .exclude)
        #expect(merge.rank(of: phone) == 1)
        #expect(merge.rank(of: watch) == nil)
        let samples = [sample(10, 20, 10, phone, m: 1, uuid: 1), sample(10, 20, 30, watch, m: 9, uuid: 2)]
        let excluded = merge.buckets(samples, borders: msInstants([10, 20]))
        #expect(excluded.map(\.sum) == [10])
        #expect(excluded[0].sources == [phone])
        // Under gap_fill the watch ranks below the listed phone even though it was modified later.
        let filled = CumulativeMerge(priority: [phone], unranked: .gapFill).buckets(
            samples, borders: msInstants([10, 20]))
        #expect(filled.map(\.sum) == [10])
        // Listing the device itself ranks it.
        let withDevice = CumulativeMerge(priority: [watch, phone]).buckets(samples, borders: msInstants([10, 20]))
        #expect(withDevice.map(\.sum) == [30])
        #expect(withDevice[0].sources == [watch])
    }

    @Test func anEveryDeviceEntryRanksEachOfTheSourcesSamplesAndTheFirstMatchingEntryDecides() {
        let anyFit = Provenance(source: "com.example.fit", device: Provenance.anyDevice)
        let merge = CumulativeMerge(priority: [gateway, anyFit, watch], unranked: .exclude)
        #expect(merge.rank(of: gateway) == 3)
        #expect(merge.rank(of: watch) == 2)
        #expect(merge.rank(of: phone) == 2)
        #expect(merge.rank(of: Provenance(source: "com.example.other", device: "watch")) == nil)
        // The watch's exact entry comes after the source's: the earlier entry ranks it, so the later write wins.
        let samples = [sample(10, 20, 10, phone, m: 9, uuid: 1), sample(10, 20, 30, watch, m: 1, uuid: 2)]
        #expect(merge.buckets(samples, borders: msInstants([10, 20])).map(\.sum) == [10])
        let watchFirst = CumulativeMerge(priority: [watch, anyFit], unranked: .exclude)
        #expect(watchFirst.buckets(samples, borders: msInstants([10, 20])).map(\.sum) == [30])
    }

    @Test func subjectsAreAddedNotMerged() {
        let twoWearers = [
            sample(10, 20, 10, gateway, subject: "alice", uuid: 1),
            sample(10, 20, 10, gateway, subject: "bob", uuid: 2),
            sample(10, 20, 4, watch, subject: nil, uuid: 3),
        ]
        let result = CumulativeMerge(priority: [gateway]).buckets(twoWearers, borders: msInstants([10, 20]))
        let addedUp: Double = 10 + 10 + 4
        #expect(result.map(\.sum) == [addedUp])
        #expect(result[0].sources == [gateway, watch])
        // The same two samples for one wearer are de-duplicated.
        let oneWearer = [
            sample(10, 20, 10, gateway, subject: "alice", uuid: 1),
            sample(10, 20, 10, gateway, subject: "alice", uuid: 2),
        ]
        #expect(
            CumulativeMerge(priority: [gateway]).buckets(oneWearer, borders: msInstants([10, 20])).map(\.sum) == [10])
    }

    @Test func sourcesHoldOnlyWinnersWithPositiveAmounts() {
        let low = Provenance(source: "low", device: nil)
        let zero = Provenance(source: "zero", device: nil)
        let top = Provenance(source: "top", device: nil)
        let merge = CumulativeMerge(priority: [top, zero, low])
        let samples = [
            sample(10, 20, 10, low, uuid: 1),  // wins [10,12) and [18,20)
            sample(12, 14, 0, zero, uuid: 2),  // wins [12,14) with 0
            sample(14, 18, 8, top, uuid: 3),  // wins [14,18)
            sample(16, 16, 3, low, uuid: 4),  // hidden instant
        ]
        let result = merge.buckets(samples, borders: msInstants([10, 20]))
        #expect(nearlyEqual(result[0].sum, 2 + 0 + 8 + 2))
        #expect(result[0].sources == [low, top])
    }

    @Test func uuidBreaksTheLastTie() throws {
        let a = Provenance(source: "a", device: nil)
        let b = Provenance(source: "b", device: nil)
        // Identical keys up to the uuid: the greater lowercase uuid string wins.
        let first = StatisticsSample(
            start: Instant(milliseconds: 10), end: Instant(milliseconds: 20), value: 5, provenance: a,
            uuid: try #require(UUID(uuidString: "0A000000-0000-4000-8000-000000000000")))
        let second = StatisticsSample(
            start: Instant(milliseconds: 10), end: Instant(milliseconds: 20), value: 5, provenance: b,
            uuid: try #require(UUID(uuidString: "09FFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")))
        #expect("0a000000-0000-4000-8000-000000000000" > "09ffffff-ffff-4fff-bfff-ffffffffffff")
        for order in [[first, second], [second, first]] {
            #expect(CumulativeMerge().buckets(order, borders: msInstants([10, 20]))[0].sources == [a])
        }
    }

    @Test func apportionsLinearlyInElapsedTime() {
        // A 47 h sample over Berlin's 23 h spring-forward day and the 24 h day after (item 6).
        let hour: Int64 = 3_600_000
        let result = merged([rec(0, 47 * hour, 4700, p: 1)], borders: [0, 23 * hour, 47 * hour])
        #expect(nearlyEqual(result[0].sum, 2300))
        #expect(nearlyEqual(result[1].sum, 2400))
        #expect(nearlyEqual((result[0].sum ?? 0) + (result[1].sum ?? 0), 4700))
    }

    @Test func separateBySourceIgnoresPriorityAndListsZeroSums() {
        let samples = [
            sample(10, 20, 10, gateway, uuid: 1),
            sample(10, 20, 30, watch, uuid: 2),  // fully overlapped: still counted
            sample(12, 14, 0, phone, uuid: 3),  // zero sum, listed
            sample(0, 10, 99, Provenance(source: "touching", device: nil), uuid: 4),  // ends at the start: absent
            sample(15, 15, 0, Provenance(source: "zero-instant", device: nil), uuid: 5),  // zero instant, listed
            sample(15, 25, 20, gateway, uuid: 6),  // same provenance overlapping: unmerged, added
        ]
        let result = CumulativeMerge.separateBySource(samples, borders: msInstants([10, 20]))
        #expect(result.count == 1)
        #expect(
            result[0].sums == [
                gateway: 10 + 10, watch: 30, phone: 0, Provenance(source: "zero-instant", device: nil): 0,
            ])
        // The merge instead lets the gateway's later-starting sample take [15,20): 10 × 5/10 + 20 × 5/10.
        #expect(CumulativeMerge(priority: [gateway]).buckets(samples, borders: msInstants([10, 20]))[0].sum == 15)
    }

    @Test func degenerateBorders() {
        let records = [rec(10, 20, 10, p: 1)]
        #expect(merged(records, borders: []).isEmpty)
        #expect(merged(records, borders: [10]).isEmpty)
        // A repeated border gives an empty bucket; the others keep their own spans.
        #expect(merged(records, borders: [10, 15, 15, 20]).map(\.sum) == [5, nil, 5])
        // Out of order: [15,10) is empty, [10,20) is the whole sample.
        #expect(merged(records, borders: [15, 10, 20]).map(\.sum) == [nil, 10])
        #expect(
            CumulativeMerge.separateBySource([], borders: msInstants([10, 15, 15, 20])).map(\.sums) == [[:], [:], [:]])
    }

    @Test func invalidSamplesAreIgnored() {
        #expect(merged([rec(20, 10, 10, p: 1)], borders: [0, 30]).map(\.sum) == [nil])
    }

    @Test func buildsFromAQuantitySample() {
        let stored = QuantitySample(
            type: .stepCount, start: Instant(milliseconds: 1), end: Instant(milliseconds: 2), value: 3,
            source: Source(identifier: "org.wearhouse.gateway"), device: Device(localIdentifier: "AA:BB"),
            subject: "alice")
        let sample = StatisticsSample(stored, lastModified: 7)
        #expect(sample.provenance == gateway)
        #expect(sample.subject == "alice")
        #expect(sample.lastModified == 7)
        #expect(sample.uuid == stored.id)
        #expect(sample.start == stored.start && sample.end == stored.end && sample.value == 3)
    }
}

// MARK: - Property tests (docs/store-semantics.md, "Properties")

/// Random merges over a small time range, so that ties, shared endpoints and instants on borders are common.
private struct MergeCase {
    static let pool: [Provenance] = [
        Provenance(source: "a", device: nil), Provenance(source: "a", device: "d1"),
        Provenance(source: "b", device: "d2"), Provenance(source: "c", device: nil),
        Provenance(source: "u", device: nil),
    ]
    /// What a priority list may name: the samples' provenances, and every device of a source.
    static let listable =
        pool + [
            Provenance(source: "a", device: Provenance.anyDevice),
            Provenance(source: "b", device: Provenance.anyDevice),
        ]

    var merge: CumulativeMerge
    var samples: [StatisticsSample]
    var borders: [Int64]

    init(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let listed = Self.listable.shuffled(using: &rng).prefix(Int.random(in: 0...4, using: &rng))
        merge = CumulativeMerge(
            priority: Array(listed), unranked: Bool.random(using: &rng) ? .gapFill : .exclude)
        samples = (0..<Int.random(in: 1...10, using: &rng)).map { _ in Self.randomSample(using: &rng) }
        borders = Self.randomBorders(using: &rng)
    }

    static func randomSample(using rng: inout SplitMix64) -> StatisticsSample {
        let start = Int64.random(in: 0...100, using: &rng)
        let length: Int64 = Int.random(in: 0..<4, using: &rng) == 0 ? 0 : Int64.random(in: 1...40, using: &rng)
        return StatisticsSample(
            start: Instant(milliseconds: start), end: Instant(milliseconds: start + length),
            value: randomValue(using: &rng), provenance: pool.randomElement(using: &rng) ?? pool[0],
            subject: [nil, nil, "s"].randomElement(using: &rng) ?? nil,
            lastModified: Int64.random(in: 0...3, using: &rng), uuid: statUUID(rng.next()))
    }

    static func randomValue(using rng: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: 0
        case 1...5: Double(Int.random(in: 1...100, using: &rng))
        default: Double.random(in: 0..<1000, using: &rng)
        }
    }

    static func randomBorders(using rng: inout SplitMix64) -> [Int64] {
        var borders = Set<Int64>()
        while borders.count < Int.random(in: 2...7, using: &rng) {
            borders.insert(Int64.random(in: -10...150, using: &rng))
        }
        return borders.sorted()
    }

    func run(_ samples: [StatisticsSample]? = nil, borders: [Int64]? = nil) -> [CumulativeMerge.Bucket] {
        merge.buckets(samples ?? self.samples, borders: msInstants(borders ?? self.borders))
    }
}

/// The merge evaluated millisecond by millisecond straight from items 1-9: a quadratic oracle.
private func bruteForceMerge(_ merge: CumulativeMerge, _ samples: [StatisticsSample], borders: [Int64])
    -> [(sum: Double?, sources: Set<Provenance>)]
{
    typealias Key = (Int, Int64, Int64, Int64, Double, String)
    func rank(_ sample: StatisticsSample) -> Int? {
        merge.rank(of: sample.provenance) ?? (merge.unranked == .gapFill ? 0 : nil)
    }
    func key(_ s: StatisticsSample) -> Key {
        (
            rank(s) ?? 0, s.lastModified, s.start.milliseconds, s.end.milliseconds, s.value,
            s.uuid.uuidString.lowercased()
        )
    }
    let kept = samples.filter { rank($0) != nil && $0.start <= $0.end }
    let subjects = Set(kept.map(\.subject))
    return zip(borders, borders.dropFirst()).map { lower, upper in
        var sum: Double?
        var sources = Set<Provenance>()
        func add(_ amount: Double, _ provenance: Provenance) {
            sum = (sum ?? 0) + amount
            if amount > 0 { sources.insert(provenance) }
        }
        for subject in subjects {
            let group = kept.filter { $0.subject == subject }
            for t in lower..<upper {
                let open = group.filter { $0.start.milliseconds <= t && $0.end.milliseconds >= t + 1 }
                if let winner = open.max(by: { key($0) < key($1) }) {
                    add(winner.value / Double(winner.end.milliseconds - winner.start.milliseconds), winner.provenance)
                }
                guard group.contains(where: { $0.start.milliseconds == t && $0.end.milliseconds == t }) else {
                    continue
                }
                let competing = group.filter { $0.start.milliseconds <= t && t <= $0.end.milliseconds }
                if let winner = competing.max(by: { key($0) < key($1) }), winner.start == winner.end {
                    add(winner.value, winner.provenance)
                }
            }
        }
        return (sum, sources)
    }
}

/// The plain pro-rated sum of every sample, per bucket and per provenance (`nil`: nothing in the bucket).
private func plainSums(_ samples: [StatisticsSample], borders: [Int64]) -> [[Provenance: Double]] {
    zip(borders, borders.dropFirst()).map { lower, upper in
        var sums: [Provenance: Double] = [:]
        for sample in samples where sample.start <= sample.end {
            let start = sample.start.milliseconds
            let end = sample.end.milliseconds
            if start == end {
                if lower <= start, start < upper { sums[sample.provenance, default: 0] += sample.value }
            } else {
                let overlap = min(end, upper) - max(start, lower)
                if overlap > 0 {
                    sums[sample.provenance, default: 0] += sample.value * Double(overlap) / Double(end - start)
                }
            }
        }
        return sums
    }
}

private func plainTotal(_ sums: [Provenance: Double]) -> Double? {
    sums.isEmpty ? nil : sums.sorted { $0.key < $1.key }.reduce(0) { $0 + $1.value }
}

@Suite struct CumulativeMergePropertyTests {
    static let cases = 400

    @Test func matchesTheMillisecondOracle() {
        for seed in 0..<UInt64(Self.cases) {
            let test = MergeCase(seed: seed)
            let result = test.run()
            let oracle = bruteForceMerge(test.merge, test.samples, borders: test.borders)
            for (bucket, expected) in zip(result, oracle) {
                #expect(nearlyEqual(bucket.sum, expected.sum), "seed \(seed)")
                #expect(bucket.sources == expected.sources, "seed \(seed)")
            }
        }
    }

    @Test func separateBySourceIsThePlainSum() {
        for seed in 0..<UInt64(Self.cases) {
            let test = MergeCase(seed: seed)
            let result = CumulativeMerge.separateBySource(test.samples, borders: msInstants(test.borders))
            let plain = plainSums(test.samples, borders: test.borders)
            #expect(result.count == plain.count)
            for (bucket, expected) in zip(result, plain) {
                #expect(Set(bucket.sums.keys) == Set(expected.keys), "seed \(seed)")
                for (provenance, sum) in expected {
                    #expect(nearlyEqual(bucket.sums[provenance], sum), "seed \(seed)")
                }
            }
        }
    }

    /// Property 1: one provenance whose samples don't overlap, with instants off every other span.
    @Test func oneProvenanceGivesThePlainSum() {
        for seed in 0..<UInt64(Self.cases) {
            var rng = SplitMix64(seed: seed)
            let provenance = MergeCase.pool.randomElement(using: &rng) ?? MergeCase.pool[0]
            var samples: [StatisticsSample] = []
            var t = Int64.random(in: -5...10, using: &rng)
            var previousWasInstant = false
            for _ in 0..<Int.random(in: 1...10, using: &rng) {
                let instant = Bool.random(using: &rng)
                // An instant keeps off the closed spans around it; intervals may touch each other.
                t += Int64.random(in: (instant || previousWasInstant ? 1 : 0)...8, using: &rng)
                let length = instant ? 0 : Int64.random(in: 1...30, using: &rng)
                samples.append(
                    StatisticsSample(
                        start: Instant(milliseconds: t), end: Instant(milliseconds: t + length),
                        value: MergeCase.randomValue(using: &rng), provenance: provenance,
                        lastModified: Int64.random(in: 0...3, using: &rng), uuid: statUUID(rng.next())))
                t += length
                previousWasInstant = instant
            }
            let borders = MergeCase.randomBorders(using: &rng)
            let merge = CumulativeMerge(priority: Bool.random(using: &rng) ? [provenance] : [])
            let result = merge.buckets(samples, borders: msInstants(borders))
            for (bucket, plain) in zip(result, plainSums(samples, borders: borders)) {
                #expect(nearlyEqual(bucket.sum, plainTotal(plain)), "seed \(seed)")
                #expect(bucket.sources == Set(plain.filter { $0.value > 0 }.keys), "seed \(seed)")
            }
        }
    }

    /// Property 2: the input order of samples does not affect the result, bit for bit.
    @Test func inputOrderDoesNotMatter() {
        for seed in 0..<UInt64(Self.cases) {
            var rng = SplitMix64(seed: seed ^ 0xABCD)
            let test = MergeCase(seed: seed)
            let expected = test.run()
            #expect(test.run(test.samples.shuffled(using: &rng)) == expected, "seed \(seed)")
            #expect(test.run(test.samples.reversed()) == expected, "seed \(seed)")
        }
    }

    /// Property 3: a bucket's sum is the sum of the buckets it splits into (1e-9 relative).
    @Test func bucketsAreAdditive() {
        for seed in 0..<UInt64(Self.cases) {
            var rng = SplitMix64(seed: seed ^ 0x5151)
            let test = MergeCase(seed: seed)
            let fine = test.borders
            let coarse = fine.enumerated().filter { index, _ in
                index == 0 || index == fine.count - 1 || Bool.random(using: &rng)
            }.map(\.element)
            let fineResult = test.run(borders: fine)
            let coarseResult = test.run(borders: coarse)
            for bucket in coarseResult {
                let parts = fineResult.filter { $0.start >= bucket.start && $0.end <= bucket.end }
                let sums = parts.compactMap(\.sum)
                #expect(nearlyEqual(bucket.sum, sums.isEmpty ? nil : sums.reduce(0, +)), "seed \(seed)")
                #expect(bucket.sources == parts.reduce(into: Set()) { $0.formUnion($1.sources) }, "seed \(seed)")
            }
        }
    }

    /// Property 4: adding samples of a lower-ranked provenance inside the closed span of a higher-ranked sample
    /// of the same subject changes nothing.
    @Test func coveredLowerRankedSamplesChangeNothing() {
        var checked = 0
        for seed in 0..<UInt64(Self.cases) {
            var rng = SplitMix64(seed: seed ^ 0x4444)
            let test = MergeCase(seed: seed)
            let rank = { (provenance: Provenance) in test.merge.rank(of: provenance) ?? 0 }
            let covers = test.samples.filter { rank($0.provenance) > 0 }
            guard !covers.isEmpty else { continue }
            var extended = test.samples
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                guard let cover = covers.randomElement(using: &rng),
                    let lower = MergeCase.pool.filter({ rank($0) < rank(cover.provenance) }).randomElement(using: &rng)
                else { continue }
                let start = Int64.random(in: cover.start.milliseconds...cover.end.milliseconds, using: &rng)
                let end =
                    Bool.random(using: &rng) ? start : Int64.random(in: start...cover.end.milliseconds, using: &rng)
                extended.append(
                    StatisticsSample(
                        start: Instant(milliseconds: start), end: Instant(milliseconds: end),
                        value: MergeCase.randomValue(using: &rng), provenance: lower, subject: cover.subject,
                        lastModified: 99, uuid: statUUID(rng.next())))
            }
            let expected = test.run()
            for (bucket, reference) in zip(test.run(extended), expected) {
                #expect(nearlyEqual(bucket.sum, reference.sum), "seed \(seed)")
                #expect(bucket.sources == reference.sources, "seed \(seed)")
            }
            checked += 1
        }
        #expect(checked > Self.cases / 2)
    }

    /// Property 5: the merge never exceeds the plain sum.
    @Test func mergeNeverExceedsThePlainSum() {
        for seed in 0..<UInt64(Self.cases) {
            let test = MergeCase(seed: seed)
            for (bucket, plain) in zip(test.run(), plainSums(test.samples, borders: test.borders)) {
                let merged = bucket.sum ?? 0
                let ceiling = plainTotal(plain) ?? 0
                #expect(merged <= ceiling + 1e-9 * max(1, ceiling), "seed \(seed)")
            }
        }
    }

    /// Property 6: re-ingesting the same samples changes nothing. The store drops a natural-key duplicate
    /// (item 21), and even a copy that got through under a new uuid never changes the merge.
    @Test func reingestChangesNothing() {
        for seed in 0..<UInt64(Self.cases) {
            var rng = SplitMix64(seed: seed ^ 0x6666)
            var test = MergeCase(seed: seed)
            // A store holds one row per natural key, with distinct write orders.
            test.samples = Self.deduplicated(test.samples)
            for (order, index) in test.samples.indices.shuffled(using: &rng).enumerated() {
                test.samples[index].lastModified = Int64(order)
            }
            let expected = test.run()
            let copies = test.samples.filter { _ in Bool.random(using: &rng) }.map { sample in
                var copy = sample
                copy.uuid = statUUID(rng.next())
                return copy
            }
            #expect(test.run(Self.deduplicated(test.samples + copies)) == expected, "seed \(seed)")
            let reingested = (test.samples + copies).shuffled(using: &rng)
            for (bucket, reference) in zip(test.run(reingested), expected) {
                #expect(nearlyEqual(bucket.sum, reference.sum), "seed \(seed)")
                #expect(bucket.sources == reference.sources, "seed \(seed)")
            }
        }
    }

    /// The store's natural-key de-duplication (item 21): the first write wins.
    static func deduplicated(_ samples: [StatisticsSample]) -> [StatisticsSample] {
        struct NaturalKey: Hashable {
            let provenance: Provenance
            let start: Instant
            let end: Instant
        }
        var seen = Set<NaturalKey>()
        return samples.filter {
            seen.insert(NaturalKey(provenance: $0.provenance, start: $0.start, end: $0.end)).inserted
        }
    }
}
