import Foundation
import Health
import Testing

/// Heartbeat series: what every engine must do with them.
extension StoreConformanceTests {
    /// A minute of beats from `minute` on, as the gateway writes them (RR in 1/1024 s, cumulative offsets).
    func series(
        minute: Int64, subject: String? = "alice", device: Device? = strap, source: Source = gateway,
        gapAt: Int? = nil
    ) -> HeartbeatSeriesSample {
        var beats: [Beat] = []
        var offset = 0.0
        for index in 0..<60 {
            let rr = Double(880 + (index * 13 + Int(minute)) % 90) * 1000 / 1024
            offset += index == gapAt ? rr + 2_000 : rr
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: index == gapAt))
        }
        return HeartbeatSeriesSample(
            start: Instant(seconds: minute * 60), end: Instant(seconds: minute * 60 + 60), beats: beats,
            source: source, device: device, subject: subject,
            metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
    }

    @Test(arguments: Engine.allCases) func heartbeatSeriesRoundTripAndRewritingIsADuplicate(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let written = (0..<5).map { series(minute: $0, gapAt: $0 == 2 ? 30 : nil) }
        #expect(try await store.save(written, as: .owner) == Array(repeating: .inserted, count: 5))
        let page = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner)
        #expect(page.series == written)
        #expect(page.next == nil)
        #expect(page.series[2].beats[30].precededByGap)
        #expect(written.allSatisfy { $0.hasDerivedID })

        // A replayed trace builds the same series again: nothing new is stored.
        let replay = (0..<5).map { series(minute: $0, gapAt: $0 == 2 ? 30 : nil) }
        #expect(try await store.save(replay, as: .owner) == Array(repeating: .duplicate, count: 5))
        // Same key, other beats or another subject: the first write stands.
        var changed = series(minute: 0)
        changed.beats[5].rrMilliseconds += 1
        #expect(
            try await store.save([changed, series(minute: 1, subject: "bob")], as: .owner) == [.conflict, .conflict])
        // In one batch, the second of two equal series is a duplicate of the first.
        #expect(try await store.save([series(minute: 9), series(minute: 9)], as: .owner) == [.inserted, .duplicate])
        // An explicit id is kept; an id already naming another series rejects the batch.
        var explicit = series(minute: 20)
        explicit.id = UUID()
        #expect(try await store.save([explicit], as: .owner) == [.inserted])
        var clash = series(minute: 21)
        clash.id = explicit.id
        await #expect(throws: InvalidSampleError.self) {
            try await store.save([series(minute: 22), clash], as: .owner)
        }
        let stored = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(stored.map(\.start.milliseconds) == [0, 1, 2, 3, 4, 9, 20].map { $0 * 60_000 })
        #expect(stored.last?.id == explicit.id)
        // Series are not quantity samples, and quantity samples are not series.
        #expect(try await store.samples(SampleQuery(type: .heartbeatSeries), as: .owner).samples.isEmpty)
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartRate), as: .owner).series.isEmpty)
    }

    @Test(arguments: Engine.allCases) func invalidHeartbeatSeriesRejectTheWholeBatch(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var unsorted = series(minute: 1)
        unsorted.beats.swapAt(3, 4)
        var tooShort = series(minute: 1)
        tooShort.beats[10].rrMilliseconds = 150  // 400 bpm
        var outside = series(minute: 1)
        outside.end = Instant(seconds: 100)  // the last beats lie after the end
        var empty = series(minute: 1)
        empty.beats = []
        for bad in [unsorted, tooShort, outside, empty] {
            #expect(bad.invalidityReason != nil)
            await #expect(throws: InvalidSampleError.self) {
                try await store.save([series(minute: 0), bad], as: .owner)
            }
        }
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series.isEmpty)
        #expect(series(minute: 0).invalidityReason == nil)
    }

    @Test(arguments: Engine.allCases) func heartbeatSeriesFollowTheGrants(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        _ = try await store.save([series(minute: 0), series(minute: 1)], as: .owner)
        let writer = Caller.app("writer.service")
        let appSource = Source(identifier: "writer.service")
        // Without a share grant an app cannot write series (a heart-rate grant is not one).
        try await store.setAuthorization(
            app: "writer.service", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        await #expect(throws: NotAuthorizedError.self) {
            try await store.save([series(minute: 5, device: nil, source: appSource)], as: writer)
        }
        try await store.setAuthorization(
            app: "writer.service", [TypeAuthorization(type: "heartbeatSeries", read: false, share: true)])
        let own = series(minute: 5, device: nil, source: appSource)
        #expect(try await store.save([own], as: writer) == [.inserted])
        // Without read permission it sees only its own series, and no error.
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: writer).series == [own])
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .app("x")).series.isEmpty)
        try await store.setAuthorization(
            app: "reader", [TypeAuthorization(type: "heartbeatSeries", read: true, share: false)])
        #expect(
            try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .app("reader")).series.count == 3)
        // Apps delete only their own.
        #expect(try await store.delete([series(minute: 0).id], as: writer) == 0)
        #expect(try await store.delete([own.id], as: writer) == 1)
        let log = try await store.accessLog(limit: 20)
        #expect(log.contains { $0.caller == writer && $0.operation == .save && $0.denied })
    }

    @Test(arguments: Engine.allCases) func deletedHeartbeatSeriesLeaveTombstonesForSync(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let written = (0..<4).map { series(minute: $0) }
        _ = try await store.save(written, as: .owner)
        let first = try await store.changes(of: .heartbeatSeries, since: nil, limit: 3, as: .owner)
        #expect(first.heartbeatSeries == Array(written.prefix(3)))
        #expect(first.added.isEmpty)
        #expect(first.hasMore)
        #expect(try await store.delete([written[0].id, written[3].id], as: .owner) == 2)
        let second = try await store.changes(of: .heartbeatSeries, since: first.anchor, limit: 100, as: .owner)
        #expect(second.deleted == [written[0].id, written[3].id])
        #expect(second.heartbeatSeries.isEmpty)
        #expect(!second.hasMore)
        let left = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(left == [written[1], written[2]])
        // Writing the deleted one again stores it again.
        #expect(try await store.save([written[0]], as: .owner) == [.inserted])
        // A series saved with an id of its own is deleted by that id.
        var explicit = series(minute: 30)
        explicit.id = UUID()
        _ = try await store.save([explicit], as: .owner)
        #expect(try await store.delete([series(minute: 30).id], as: .owner) == 0)
        #expect(try await store.delete([explicit.id], as: .owner) == 1)
        let third = try await store.changes(of: .heartbeatSeries, since: second.anchor, limit: 100, as: .owner)
        #expect(third.heartbeatSeries == [written[0]])
        #expect(third.deleted == [explicit.id])
    }

    @Test(arguments: Engine.allCases) func heartbeatSeriesQueriesFilterAndPage(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var all: [HeartbeatSeriesSample] = []
        for minute in Int64(0)..<30 {
            all.append(series(minute: minute))
            all.append(series(minute: minute, subject: "bob", device: Self.watch))
        }
        _ = try await store.save(all, as: .owner)
        // [10 min, 20 min) overlaps the series of minutes 10-19; the one ending at 10:00 touches it only.
        let range = try await store.heartbeatSeries(
            SampleQuery(type: .heartbeatSeries, from: Instant(seconds: 600), to: Instant(seconds: 1_200)), as: .owner)
        #expect(range.series.count == 20)
        let bob = try await store.heartbeatSeries(
            SampleQuery(type: .heartbeatSeries, subjects: ["bob"]), as: .owner)
        #expect(bob.series.count == 30)
        #expect(bob.series.allSatisfy { $0.device == Self.watch })
        let strap = try await store.heartbeatSeries(
            SampleQuery(type: .heartbeatSeries, sources: [Self.gateway.identifier], devices: [Self.strap.key]),
            as: .owner)
        #expect(strap.series.map(\.subject) == Array(repeating: "alice", count: 30))
        #expect(
            try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries, sources: ["other"]), as: .owner)
                .series.isEmpty)

        var query = SampleQuery(type: .heartbeatSeries, limit: 7)
        var seen: [HeartbeatSeriesSample] = []
        while true {
            let page = try await store.heartbeatSeries(query, as: .owner)
            seen += page.series
            guard let next = page.next else { break }
            query.cursor = next
        }
        #expect(Set(seen) == Set(all))
        #expect(seen.count == 60)
        #expect(seen.map(\.start) == seen.map(\.start).sorted())
        let newest = try await store.heartbeatSeries(
            SampleQuery(type: .heartbeatSeries, ascending: false, limit: 3), as: .owner)
        #expect(newest.series.map(\.start.milliseconds) == [1_740_000, 1_740_000, 1_680_000])
    }
}
