import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Support
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

    static let thermometer = "C0:FF:EE:00:00:53"
    static let oximeter = "C0:FF:EE:00:00:54"
    /// A thermometer measuring every 4 s (never silent for the watchdog) and an oximeter with a spot-check every
    /// 7 s.
    static let vitals = FakeBlueZScenario(peripherals: [
        .init(kind: .thermometer, address: thermometer, seed: 6, known: true, summaryInterval: 4),
        .init(kind: .pulseOximeter, address: oximeter, seed: 8, known: true, summaryInterval: 7),
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

    /// A scale whose clock is an hour slow (its readings before the first connection were stamped with it): the
    /// gateway reads its Current Time at connect, sets it, and stores every reading at the time it was really
    /// taken, the corrected ones with their stamp and the offset in metadata; the readings after the setting
    /// carry the right time and are stored as stamped.
    @Test func aScaleWhoseClockIsAnHourSlowIsSetAndEveryReadingStoredAtItsRealTime() async throws {
        let slow = FakeBlueZScenario(peripherals: [
            .init(
                kind: .bathroomScale, address: Self.scale, seed: 9, known: true, summaryInterval: 10,
                clockStart: PeripheralScript.simulationEpoch - 3600)
        ])
        try await GatewayFixture.run(slow, enrol: [(Self.scale, "1=alice,2=bob")]) { fixture in
            try await fixture.waitUntilStreaming([Self.scale])
            try await fixture.run(seconds: 35)
            await fixture.stop()
            try await Self.checkSlowScale(fixture)
        }
    }

    static func checkSlowScale(_ fixture: GatewayFixture) async throws {
        let peripheral = await fixture.fake.peripheral(at: scale)
        let fake = try #require(peripheral as? BathroomScale)
        // Set once, at the first connection (every later one found the clock right), to the fixture's wall time.
        #expect(fake.clockSettings.count == 1)
        let setting = try #require(fake.clockSettings.first)
        #expect(setting.year == 2026 && setting.month == 11 && setting.day == 29 && setting.hours == 10)
        let weights = try await sortedQuantities(fixture, .bodyMass)
        #expect(weights.count == fake.readings.count)
        #expect(weights.count >= 4)
        var corrected = 0
        for (index, (sample, reading)) in zip(weights, fake.readings).enumerated() {
            let taken = PeripheralScript.simulationEpoch + fake.readingTimes[index].components.seconds
            #expect(sample.start == Instant(seconds: taken))
            #expect(sample.value == reading.kilograms)
            let stamped = try instant(reading.timeStamp)
            if stamped.milliseconds == Int64(taken) * 1000 - 3_600_000 {
                // Stamped by the slow clock, before the setting.
                corrected += 1
                #expect(sample.metadata[MetadataKey.deviceClockOffset] == .quantity(-3600, unit: "s"))
                #expect(sample.metadata[MetadataKey.deviceTimeStamp] == .string(reading.timeStamp?.description ?? ""))
            } else {
                #expect(stamped == Instant(seconds: taken))
                #expect(sample.metadata[MetadataKey.deviceClockOffset] == nil)
            }
        }
        #expect(corrected >= 1)
        #expect(corrected < weights.count)
    }

    @Test func theThermometersResultsAndTheOximetersValuesAreStoredAsSent() async throws {
        try await GatewayFixture.run(Self.vitals, enrol: [(Self.thermometer, "erin"), (Self.oximeter, "frank")]) {
            fixture in
            try await fixture.waitUntilStreaming([Self.thermometer, Self.oximeter])
            // Continuous values are placed at their receive time, spot-checks at their whole-second time stamps;
            // the fixture's clock steps in whole seconds, so every continuous value arrives on the second a
            // spot-check may name, and is kept apart from it (a millisecond on).
            try await fixture.run(seconds: 40)
            await fixture.stop()
            try await Self.checkThermometer(fixture)
            try await Self.checkOximeter(fixture)
        }
    }

    // The checks run in functions of their own and keep closures out of `#expect` and `#require` arguments:
    // with Swift 6.3.1, inside the fixture's closure, a closure in a `#expect` argument and a later one of the
    // same type outside the macros were compiled as one (a `filter` outside ran the predicate of one inside).

    /// The thermometer: each result once, at its own time, with the site read at connect; the intermediate
    /// temperatures are not stored.
    static func checkThermometer(_ fixture: GatewayFixture) async throws {
        let truth = try #require(await fixture.fake.groundTruth(of: thermometer))
        let sent = emissions(truth.emissions, on: .temperatureMeasurement)
        let delivered = await fixture.fake.deliveredNotifications(of: thermometer)
        let deliveredResults = emissions(delivered, on: .temperatureMeasurement)
        let settling = emissions(delivered, on: .intermediateTemperature)
        #expect(deliveredResults == sent)
        #expect(settling.count >= 3 * sent.count)
        var results: [TemperatureMeasurement] = []
        for emission in sent { results.append(try TemperatureMeasurement(decoding: emission.value)) }
        #expect(results.count >= 9)
        let peripheral = await fixture.fake.peripheral(at: thermometer)
        let site = try #require(peripheral as? Thermometer).temperatureType
        let temperatures = try await sortedQuantities(fixture, .bodyTemperature)
        #expect(temperatures.count == results.count)
        for (sample, result) in zip(temperatures, results) {
            let start = try instant(result.timeStamp)
            #expect(sample.value == result.celsius)
            #expect(sample.start == start)
            #expect(sample.metadata[MetadataKey.bodyTemperatureSensorLocation] == .integer(Int64(site.rawValue)))
            #expect(sample.subject == "erin")
            #expect(sample.device?.localIdentifier == thermometer)
        }
    }

    /// The oximeter: every continuous value at its receive time and every spot-check at its time stamp, as SpO2
    /// and perfusion fractions and a heart rate.
    static func checkOximeter(_ fixture: GatewayFixture) async throws {
        let delivered = await fixture.fake.deliveredNotifications(of: oximeter)
        var continuous: [PLXContinuousMeasurement] = []
        for emission in emissions(delivered, on: .plxContinuousMeasurement) {
            continuous.append(try PLXContinuousMeasurement(decoding: emission.value))
        }
        var spots: [PLXSpotCheckMeasurement] = []
        var spotTimes: [Instant] = []
        for emission in emissions(delivered, on: .plxSpotCheckMeasurement) {
            let spot = try PLXSpotCheckMeasurement(decoding: emission.value)
            spots.append(spot)
            spotTimes.append(try instant(spot.timeStamp))
        }
        #expect(continuous.count >= 40)
        #expect(spots.count >= 5)
        #expect(Set(spotTimes).count == spots.count)
        let expected: [(type: HealthType, continuous: [Double?], spots: [Double?])] = [
            (.oxygenSaturation, continuous.map { fraction($0.normal.spo2) }, spots.map { fraction($0.spo2) }),
            (.heartRate, continuous.map(\.normal.pulseRate.value), spots.map(\.pulseRate.value)),
            (
                .peripheralPerfusionIndex, continuous.map { fraction($0.pulseAmplitudeIndex) },
                spots.map { fraction($0.pulseAmplitudeIndex) }
            ),
        ]
        for (type, fromContinuous, fromSpots) in expected {
            var spotStarts: [Instant] = []
            var atSpots: [Double?] = []
            var others: [Double?] = []
            var elsewhere = 0
            for sample in try await sortedQuantities(fixture, type) {
                if spotTimes.contains(sample.start) {
                    spotStarts.append(sample.start)
                    atSpots.append(sample.value)
                } else {
                    others.append(sample.value)
                }
                if sample.subject != "frank" || sample.device?.localIdentifier != oximeter { elsewhere += 1 }
            }
            #expect(spotStarts == spotTimes, "\(type.identifier)")
            #expect(atSpots == fromSpots, "\(type.identifier)")
            #expect(others == fromContinuous, "\(type.identifier)")
            #expect(elsewhere == 0, "\(type.identifier)")
        }
    }

    static func emissions(_ all: [PeripheralEmission], on characteristic: BluetoothUUID) -> [PeripheralEmission] {
        all.filter { $0.characteristic == characteristic }
    }

    static func sortedQuantities(_ fixture: GatewayFixture, _ type: HealthType) async throws -> [QuantitySample] {
        try await fixture.quantities(type).sorted { $0.start < $1.start }
    }

    /// A percentage as HealthKit's fraction.
    static func fraction(_ percent: SFloat?) -> Double? {
        percent?.value.map { $0 / 100 }
    }
}
