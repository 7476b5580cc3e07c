import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Testing

/// A shared bathroom scale and a blood pressure cuff through the whole gateway: FakeBlueZ on a private bus,
/// BlueZCentral, the service and a real SQLite store. What is stored equals what the fakes sent, each reading
/// once, although the scale repeats its last reading on every reconnect (the watchdog reconnects it whenever it
/// is silent) and the cuff ends the link itself.
@Suite(.serialized, .timeLimit(.minutes(2))) struct HealthDeviceGatewayTests {
    static let scale = "C0:FF:EE:00:00:51"
    static let cuff = "C0:FF:EE:00:00:52"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .bathroomScale, address: scale, seed: 9, known: true, summaryInterval: 10),
        .init(kind: .bloodPressureCuff, address: cuff, seed: 4, known: true),
    ])

    /// A device time stamp as the instant it names in UTC (the fixture's zone).
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

    @Test func theScalesStoredReadingsLandOnTwoSubjectsOnceAndTheCuffsResultIsACorrelation() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.scale, "1=alice,2=bob"), (Self.cuff, "carol")]) {
            fixture in
            try await fixture.waitUntilStreaming([Self.scale, Self.cuff])
            try await fixture.run(seconds: 45)
            await fixture.stop()

            // The scale: every distinct reading it sent, once, at its own time, on its user's subject.
            let truth = try #require(await fixture.fake.groundTruth(of: Self.scale))
            var distinct: [[UInt8]] = []
            for emission in truth.emissions where !distinct.contains(emission.value) {
                distinct.append(emission.value)
            }
            let readings = try distinct.map { try WeightMeasurement(decoding: $0) }
            #expect(readings.count >= 4)  // 0.1 s (stored before any connection), 10.1, 20.1, 30.1 s, ...
            #expect(readings.first?.timeStamp?.description == "2026-11-29T10:00:00")
            // The watchdog reconnected the silent scale, which sent its last reading again each time.
            #expect(truth.emissions.count > readings.count)
            let weights = try await fixture.quantities(.bodyMass).sorted { $0.start < $1.start }
            #expect(weights.count == readings.count)
            for (sample, reading) in zip(weights, readings) {
                #expect(sample.value == reading.kilograms)
                #expect(sample.start == (try Self.instant(reading.timeStamp)))
                #expect(sample.subject == (reading.userID == 1 ? "alice" : "bob"))
                #expect(sample.metadata[MetadataKey.userIndex] == .integer(Int64(reading.userID ?? 0)))
                #expect(sample.device?.localIdentifier == Self.scale)
            }
            #expect(Set(weights.compactMap(\.subject)) == ["alice", "bob"])

            // The cuff: one result as a correlation and a heart rate; its intermediate pressures are not stored.
            let cuffTruth = try #require(await fixture.fake.groundTruth(of: Self.cuff))
            let results = try cuffTruth.emissions.filter { $0.characteristic == .bloodPressureMeasurement }
                .map { try BloodPressureMeasurement(decoding: $0.value) }
            #expect(results.count == 1)
            #expect(cuffTruth.emissions.filter { $0.characteristic == .intermediateCuffPressure }.count == 5)
            let result = try #require(results.first)
            let page = try await fixture.store.correlations(SampleQuery(type: .bloodPressure), as: .owner)
            #expect(page.correlations.count == 1)
            let correlation = try #require(page.correlations.first)
            #expect(correlation.objects(for: .bloodPressureSystolic).map(\.value) == [result.systolic.value])
            #expect(correlation.objects(for: .bloodPressureDiastolic).map(\.value) == [result.diastolic.value])
            #expect(correlation.start == (try Self.instant(result.timeStamp)))
            #expect(correlation.subject == "carol")
            #expect(
                correlation.metadata[MetadataKey.meanArterialPressure]
                    == .quantity(try #require(result.meanArterialPressure.value), unit: "mmHg"))
            let pulses = try await fixture.quantities(.heartRate)
            #expect(pulses.map(\.value) == [try #require(result.pulseRate?.value)])
            #expect(pulses.first?.start == correlation.start)
            #expect(try await fixture.quantities(.bloodPressureSystolic).count == 1)
        }
    }
}
