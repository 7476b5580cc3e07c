import Foundation
import Health
import Synchronization
import Testing

@testable import SQLiteStore

/// A stream's last chunk (its tail) is topped up by later writes; inside a write transaction the tails are found in
/// the transaction's list of the device's chunks (SQLiteHealthStore+Tails.swift), which must find what the search
/// through SQL finds: the stream's own tail, not another stream's of the same device and type.
@Suite struct SeriesTailTests {
    static let source = Source(identifier: "org.wearhouse.gateway")
    static let strap = Device(name: "H10", manufacturer: "Polar", model: "H10", localIdentifier: "A0:9E:1A:00:00:01")
    static let start: Int64 = 1_795_946_400_000

    /// `count` heart rates a second from second `first`, and one SDNN per 10 s over the same span, each a stream of
    /// its own (its RMSSD in the metadata), all of one device: a replay's batch in small.
    static func batch(from first: Int, count: Int) -> SampleBatch {
        var rates = QuantitySeries(type: .heartRate, source: source, device: strap, subject: "alice")
        var batch = SampleBatch()
        for second in first..<first + count {
            let at = start + Int64(second) * 1000
            rates.append(start: at, end: at, value: Double(60 + second % 40))
            guard second % 10 == 0 else { continue }
            var sdnn = QuantitySeries(
                type: .heartRateVariabilitySDNN, source: source, device: strap, subject: "alice",
                metadata: [MetadataKey.heartRateVariabilityRMSSD: .quantity(Double(second) / 7, unit: "ms")])
            sdnn.append(start: at - 60_000, end: at, value: 40 + Double(second % 13))
            batch.append(sdnn)
        }
        batch.append(rates)
        return batch
    }

    /// The stored chunks of `type`: each one's number of points, in write order.
    static func chunkCounts(_ store: SQLiteHealthStore, _ type: HealthType) async throws -> [Int] {
        try await store.chunkCounts(type)
    }

    @Test func tailsAreToppedUpWithinATransactionAndAcrossTransactions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-tails-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        // Four batches in one transaction, then three on their own: 700 heart rates, 70 SDNN streams.
        let handed = (0..<4).map { Self.batch(from: $0 * 100, count: 100) }
        let next = Mutex(0)
        let counts = try await store.saveAll(as: .owner) {
            next.withLock { index in
                defer { index += 1 }
                return index < handed.count ? handed[index] : nil
            }
        }
        #expect(counts == [.inserted: 440])
        for first in [400, 500, 600] {
            let outcomes = try await store.save(Self.batch(from: first, count: 100), as: .owner)
            #expect(outcomes.allSatisfy { $0 == .inserted } && outcomes.count == 110)
        }
        // One heart-rate chunk, topped up by every batch; one chunk per SDNN stream, none topped up with another's.
        #expect(try await Self.chunkCounts(store, .heartRate) == [700])
        #expect(try await Self.chunkCounts(store, .heartRateVariabilitySDNN) == Array(repeating: 1, count: 70))
        // 400 more do not fit the tail's 324 places, and the tail is more than half full: a chunk of their own.
        _ = try await store.save(Self.batch(from: 700, count: 400), as: .owner)
        #expect(try await Self.chunkCounts(store, .heartRate) == [700, 400])
        let rates = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(rates.map(\.start.milliseconds) == (0..<1_100).map { Self.start + Int64($0) * 1000 })
        let sdnn = try await store.samples(SampleQuery(type: .heartRateVariabilitySDNN), as: .owner).samples
        #expect(sdnn.count == 110 && Set(sdnn.map(\.metadata)).count == 110)
    }

    /// A device with more chunks within reach of a tail than the transaction keeps in memory: its tails are found
    /// through SQL, with the same result.
    @Test func aCrowdedDeviceFindsItsTailsThroughSQL() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-tails-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path, durability: .normal)
        // More SDNN streams within the last hour than the list holds, then heart rates in two batches of one
        // transaction each: the second tops up the first's chunk.
        let streams = SQLiteHealthStore.tailListCapacity + 10
        var crowd = SampleBatch()
        for index in 0..<streams {
            let at = Self.start + Int64(index) * 500
            var sdnn = QuantitySeries(
                type: .heartRateVariabilitySDNN, source: Self.source, device: Self.strap, subject: "alice",
                metadata: [MetadataKey.heartRateVariabilityRMSSD: .quantity(Double(index), unit: "ms")])
            sdnn.append(start: at, end: at, value: 50)
            crowd.append(sdnn)
        }
        _ = try await store.save(crowd, as: .owner)
        let later = streams / 2  // seconds after the start: within an hour of the crowd
        for first in [later, later + 100] {
            var more = QuantitySeries(
                type: .heartRateVariabilitySDNN, source: Self.source, device: Self.strap, subject: "alice",
                metadata: [MetadataKey.heartRateVariabilityRMSSD: .quantity(99_999, unit: "ms")])
            for second in first..<first + 100 {
                let at = Self.start + Int64(second) * 1000 + 1
                more.append(start: at, end: at, value: 60)
            }
            var batch = SampleBatch()
            batch.append(more)
            _ = try await store.save(batch, as: .owner)
        }
        let counts = try await Self.chunkCounts(store, .heartRateVariabilitySDNN)
        #expect(counts.count == streams + 1 && counts.last == 200)
    }
}

extension SQLiteHealthStore {
    /// The point counts of the chunks of `type`, in the order they were made.
    fileprivate func chunkCounts(_ type: HealthType) throws -> [Int] {
        defer { connection.resetCachedStatements() }
        guard let typeID = try existingTypeID(type.identifier) else { return [] }
        let query = try connection.cached("SELECT count FROM series_chunks WHERE type_id = ?1 ORDER BY id")
        try query.bind(1, typeID)
        var counts: [Int] = []
        while try query.step() { counts.append(Int(query.int64(0))) }
        return counts
    }
}
