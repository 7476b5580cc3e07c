import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Testing

/// A bonded glucose meter through the whole gateway (FakeBlueZ on a private bus, BlueZCentral, the service, a real
/// SQLite store) over three sessions that transfer records, the second cut by a lost link in the middle of its
/// transfer: each of the meter's 500 records is stored exactly once, at its own time, with its meal context.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GlucoseGatewayTests {
    static let meter = "C0:FF:EE:00:00:61"
    /// 200 records at switch-on, the other 300 coming in over the first 3 s (one every 10 ms).
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(
            kind: .glucoseMeter, address: meter, seed: 5, known: true, paired: true, summaryInterval: 0.01,
            measurementCount: 200)
    ])

    static func transfers(_ fixture: GatewayFixture) async throws -> [GlucoseMeter.Transfer] {
        try #require(await fixture.fake.peripheral(at: meter) as? GlucoseMeter).transfers
    }

    /// A device wall time as the instant it names in UTC (the fixture's zone).
    static func instant(_ stamp: DateTime?) throws -> Instant {
        let stamp = try #require(stamp)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = try #require(
            calendar.date(
                from: DateComponents(
                    year: Int(stamp.year), month: Int(stamp.month), day: Int(stamp.day), hour: Int(stamp.hours),
                    minute: Int(stamp.minutes), second: Int(stamp.seconds))))
        return Instant(milliseconds: Int64(date.timeIntervalSince1970 * 1000))
    }

    @Test func threeSessionsOneCutMidTransferStoreEveryRecordOnceWithItsContext() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.meter, "dana")]) { fixture in
            try await fixture.waitUntilStreaming([Self.meter])
            // Session 1 asks for all records and gets those the meter holds then.
            try await fixture.waitUntil("the first transfer") {
                await fixture.advance(by: .milliseconds(100))
                return try await Self.transfers(fixture).first?.response == .success
            }
            // Session 2 starts when the watchdog reconnects the silent meter; its link drops mid-transfer.
            try await fixture.waitUntil("the second transfer under way") {
                await fixture.advance(by: .milliseconds(50))
                let transfers = try await Self.transfers(fixture)
                return transfers.count >= 2 && transfers[1].sent >= 20
            }
            await fixture.fake.dropConnection(of: Self.meter)
            // Session 3 (the reconnect) resumes after the last record stored.
            try await fixture.waitUntil("every record stored", timeout: .seconds(60)) {
                await fixture.advance(by: .milliseconds(100))
                let stored = try await fixture.quantities(.bloodGlucose).count
                let transfers = try await Self.transfers(fixture)
                return stored >= 500 && transfers.count >= 4
            }
            await fixture.stop()

            let meter = try #require(await fixture.fake.peripheral(at: Self.meter) as? GlucoseMeter)
            let transfers = meter.transfers
            let moving = transfers.filter { !$0.sequenceNumbers.isEmpty }
            #expect(moving.count == 3, "three sessions transferred records: \(transfers.map(\.request))")
            #expect(moving.first?.request == .reportAllRecords)
            let first = try #require(moving.first)
            #expect(first.sent == first.sequenceNumbers.count && first.response == .success)
            let cut = moving[1]
            #expect(cut.sent > 0 && cut.sent < cut.sequenceNumbers.count && cut.response == nil)
            #expect(cut.request == .reportRecords(from: (first.sequenceNumbers.last ?? 0) + 1))
            let last = moving[2]
            #expect(last.response == .success)
            #expect(last.sequenceNumbers.last == 500)
            // The third session starts right after what was stored: nothing skipped, at most the record whose
            // context the lost link cut off sent again.
            let resumedFrom = try #require(last.sequenceNumbers.first)
            let cutSent = cut.sequenceNumbers.prefix(cut.sent)
            #expect(resumedFrom <= (cutSent.last ?? 0) + 1 && resumedFrom >= (cutSent.last ?? 0))
            #expect(last.request == .reportRecords(from: resumedFrom))
            // Later sessions find nothing new.
            let after = transfers.drop { $0 != last }.dropFirst()
            #expect(!after.isEmpty && after.allSatisfy { $0.response == .noRecordsFound })

            let samples = try await fixture.quantities(.bloodGlucose)
            #expect(samples.count == 500)
            var bySequence: [Int64: QuantitySample] = [:]
            for sample in samples {
                guard case .integer(let sequence) = sample.metadata["glucoseSequenceNumber"] else {
                    Issue.record("a sample without its sequence number: \(sample)")
                    continue
                }
                #expect(bySequence[sequence] == nil, "sequence \(sequence) stored twice")
                bySequence[sequence] = sample
            }
            for record in meter.records {
                let sample = try #require(bySequence[Int64(record.sequence)], "record \(record.sequence) missing")
                #expect(sample.value == record.milligramsPerDeciliter)
                #expect(sample.start == (try Self.instant(record.measurement.userFacingTime)))
                #expect(sample.subject == "dana")
                #expect(sample.device?.localIdentifier == Self.meter)
                #expect(sample.metadata["glucoseSampleType"] == .string("capillary_plasma"))
                #expect(sample.metadata["glucoseMeal"] == record.context?.mealName.map { .string($0) })
                let meal = record.context?.meal
                #expect(
                    sample.metadata["bloodGlucoseMealTime"]
                        == (meal == 1 || meal == 2 ? .integer(Int64(meal ?? 0)) : nil))
                #expect(
                    sample.metadata["glucoseSensorStatus"]
                        == (record.measurement.sensorStatus == nil ? nil : .string("device_battery_low")))
            }
        }
    }

    /// A meter whose transfer outlives the lost link: on the next connection it refuses the gateway's request with
    /// ATT 0xFE (procedure already in progress); the gateway aborts the old transfer and asks again, and every
    /// record is stored once.
    @Test func aTransferStillRunningAfterALostLinkIsAbortedAndAskedForAgain() async throws {
        let scenario = FakeBlueZScenario(peripherals: [
            .init(
                kind: .glucoseMeter, address: Self.meter, seed: 5, known: true, paired: true, measurementCount: 500,
                transferOutlivesLink: true)
        ])
        try await GatewayFixture.run(scenario, enrol: [(Self.meter, "dana")]) { fixture in
            try await fixture.waitUntilStreaming([Self.meter])
            try await fixture.waitUntil("the first transfer under way") {
                await fixture.advance(by: .milliseconds(50))
                return try await Self.transfers(fixture).first.map { $0.sent >= 50 } ?? false
            }
            await fixture.fake.dropConnection(of: Self.meter)
            try await fixture.waitUntil("every record stored", timeout: .seconds(60)) {
                await fixture.advance(by: .milliseconds(100))
                return try await fixture.quantities(.bloodGlucose).count >= 500
            }
            await fixture.stop()
            try await Self.checkAbortedTransfer(fixture)
        }
    }

    static func checkAbortedTransfer(_ fixture: GatewayFixture) async throws {
        let transfers = try await Self.transfers(fixture)
        // The first transfer was paused by the lost link, refused the second session's request while it ran, and
        // was aborted; the request that followed the abort sent the rest.
        #expect(transfers.count >= 2)
        let first = try #require(transfers.first)
        #expect(first.request == .reportAllRecords)
        #expect(first.response == .procedureNotCompleted)
        #expect(first.sent >= 50 && first.sent < 500)
        let second = transfers[1]
        #expect(second.response == .success)
        let resumedFrom = try #require(second.sequenceNumbers.first)
        #expect(second.sequenceNumbers.last == 500)
        #expect(Int(resumedFrom) <= first.sent + 1)
        let samples = try await fixture.quantities(.bloodGlucose)
        var sequences = Set<Int64>()
        for sample in samples {
            if case .integer(let sequence) = sample.metadata["glucoseSequenceNumber"] { sequences.insert(sequence) }
        }
        #expect(samples.count == 500)
        #expect(sequences == Set(1...500))
    }

    @Test func aRestartedServiceAsksForTheRecordsAfterTheHighestOneInTheStore() async throws {
        let scenario = FakeBlueZScenario(peripherals: [
            .init(kind: .glucoseMeter, address: Self.meter, seed: 5, known: true, paired: true, measurementCount: 500)
        ])
        try await GatewayFixture.run(scenario, enrol: [(Self.meter, "dana")], start: false) { fixture in
            // What an earlier run of the service stored: records 1-300, out of order.
            let records = GlucoseMeter(script: scenario.peripherals[0].script).records
            let earlier = try records.prefix(300).reversed().map { record in
                let at = try Self.instant(record.measurement.userFacingTime)
                return QuantitySample(
                    type: .bloodGlucose, start: at, end: at, value: record.milligramsPerDeciliter,
                    source: Source(identifier: "wearhouse", version: "test"),
                    device: Device(name: "Fake Glucose Meter", localIdentifier: Self.meter), subject: "dana",
                    metadata: ["glucoseSequenceNumber": .integer(Int64(record.sequence))])
            }
            _ = try await fixture.store.save(Array(earlier), as: .owner)
            await fixture.start()
            try await fixture.waitUntilStreaming([Self.meter])
            try await fixture.waitUntil("the transfer") {
                await fixture.advance(by: .milliseconds(100))
                return try await Self.transfers(fixture).first?.response == .success
            }
            await fixture.stop()
            let transfers = try await Self.transfers(fixture)
            #expect(transfers.first?.request == .reportRecords(from: 301))
            #expect(transfers.first?.sequenceNumbers == Array(301...500))
            let samples = try await fixture.quantities(.bloodGlucose)
            #expect(samples.count == 500)
            let sequences = samples.compactMap { sample -> Int64? in
                guard case .integer(let sequence) = sample.metadata["glucoseSequenceNumber"] else { return nil }
                return sequence
            }
            #expect(sequences.sorted() == Array(1...500))
        }
    }
}
