import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Support
import Testing
import Traces

/// Scales, cuffs, thermometers and pulse oximeters through the sample builder: what is built equals what the
/// measurement said, in HealthKit's units, at the measurement's own time (`SampleBuilder+HealthDevices.swift`).
@Suite struct HealthDeviceSampleTests {
    static let scale = PeripheralID(adapter: "00:AA:01:00:00:01", address: "C0:FF:EE:00:00:51")
    static let source = Source(identifier: "wearhouse", version: "test")
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let context = SensorContext(
        source: source,
        device: Device(name: "Scale", manufacturer: "ACME", serialNumber: "SC1", localIdentifier: scale.address),
        subject: "alice", timeZone: berlin)
    /// 2026-11-29 10:00:00 UTC (11:00 in Berlin).
    static let wallStart: Int64 = 1_795_946_400_000_000
    static var receivedMilliseconds: Int64 { wallStart / 1000 }

    static func notification(_ uuid: BluetoothUUID, _ bytes: [UInt8], at seconds: Double = 0) -> GATTNotification {
        GATTNotification(
            peripheral: scale, characteristic: uuid, value: bytes,
            receivedAt: Timestamp(
                monotonic: .milliseconds(Int64(seconds * 1000)) + .seconds(100),
                wallMicroseconds: wallStart + Int64(seconds * 1_000_000)))
    }

    /// 2026-11-29 at `hours`:`minutes` local (Berlin) time.
    static func stamp(_ hours: UInt8, _ minutes: UInt8 = 0) -> DateTime {
        DateTime(year: 2026, month: 11, day: 29, hours: hours, minutes: minutes, seconds: 0)
    }

    /// The instant of `hours`:`minutes` on 2026-11-29 in Berlin (UTC+1 in November).
    static func berlinInstant(_ hours: Int64, _ minutes: Int64 = 0) -> Instant {
        Instant(milliseconds: 1_795_910_400_000 + ((hours - 1) * 60 + minutes) * 60_000)
    }

    static func build(_ notifications: [GATTNotification], context: SensorContext = context) -> (
        SampleBatch, SampleBuilder.Counters
    ) {
        var builder = SampleBuilder(context: context)
        var batch = SampleBatch()
        for notification in notifications { builder.add(notification, into: &batch) }
        return (batch, builder.counters)
    }

    // MARK: Weight

    @Test func aStoredWeightKeepsItsOwnTimeStampInTheSensorsZone() throws {
        let measurement = WeightMeasurement(
            weight: 14_000, timeStamp: Self.stamp(7, 30), userID: nil, bmi: 229, height: 1750)
        let (batch, counters) = Self.build([Self.notification(.weightMeasurement, measurement.encoded())])
        let samples = batch.samples
        #expect(samples.map(\.type) == [.bodyMass, .bodyMassIndex, .height])
        #expect(samples.map(\.value) == [70, 22.9, 1.75])
        for sample in samples {
            #expect(sample.start == Self.berlinInstant(7, 30))
            #expect(sample.end == sample.start)
            #expect(sample.startOffsetSeconds == 3600)
            #expect(sample.subject == "alice")
            #expect(sample.device?.serialNumber == "SC1")
            #expect(sample.metadata[MetadataKey.deviceTimeStamp] == nil)
            #expect(sample.invalidityReason(as: sample.type) == nil)
        }
        #expect(counters.notifications == 1 && counters.malformed == 0 && counters.unusable == 0)
    }

    @Test func aWeightWithoutATimeStampIsPlacedAtItsArrival() {
        let (batch, _) = Self.build([Self.notification(.weightMeasurement, h("00 b0 36"), at: 2)])
        #expect(batch.samples.map(\.start) == [Instant(milliseconds: Self.receivedMilliseconds + 2000)])
        #expect(batch.samples.map(\.value) == [70])
    }

    @Test func imperialWeightIsStoredInKilograms() throws {
        let (batch, _) = Self.build([Self.notification(.weightMeasurement, h("09 48 3c e5 00 ae 02"))])
        let values = batch.samples.map(\.value)
        #expect(abs(values[0] - 154.32 * 0.45359237) < 1e-9)
        #expect(values[1] == 22.9)
        #expect(abs(values[2] - 68.6 * 0.0254) < 1e-12)
    }

    @Test func aStampInTheFutureFallsBackToTheReceiveTimeAndKeepsTheOffset() {
        // 12:00 in Berlin is an hour after the 11:00 arrival.
        let measurement = WeightMeasurement(weight: 14_000, timeStamp: Self.stamp(12))
        let (batch, _) = Self.build([Self.notification(.weightMeasurement, measurement.encoded())])
        let sample = batch.samples[0]
        #expect(sample.start == Instant(milliseconds: Self.receivedMilliseconds))
        #expect(sample.metadata[MetadataKey.deviceTimeStamp] == .string("2026-11-29T12:00:00"))
        #expect(sample.metadata[MetadataKey.deviceClockOffset] == .quantity(3600, unit: "s"))
    }

    @Test func aStampWithinTheToleranceIsUsed() {
        // Two minutes ahead of the arrival: a slightly fast clock, not an absurd one.
        let measurement = WeightMeasurement(weight: 14_000, timeStamp: Self.stamp(11, 2))
        let (batch, _) = Self.build([Self.notification(.weightMeasurement, measurement.encoded())])
        #expect(batch.samples[0].start == Self.berlinInstant(11, 2))
    }

    @Test(arguments: [
        DateTime(year: 0, month: 11, day: 29, hours: 7),  // year unknown
        DateTime(year: 2026, month: 13, day: 1),  // month 13
        DateTime(year: 1999, month: 12, day: 31, hours: 23),  // a clock never set
    ])
    func anIncompleteOrAbsurdStampFallsBackToTheReceiveTime(_ stamp: DateTime) {
        let measurement = WeightMeasurement(weight: 14_000, timeStamp: stamp)
        let (batch, _) = Self.build([Self.notification(.weightMeasurement, measurement.encoded())])
        #expect(batch.samples.map(\.start) == [Instant(milliseconds: Self.receivedMilliseconds)])
        #expect(batch.samples[0].metadata[MetadataKey.deviceTimeStamp] == .string(stamp.description))
    }

    @Test func anUnsuccessfulWeighingStoresNothingAndIsCounted() {
        let (batch, counters) = Self.build([Self.notification(.weightMeasurement, h("04 ff ff 01"))])
        #expect(batch.isEmpty)
        #expect(counters.unusable == 1)
    }

    @Test func twoUsersWeightsLandOnTwoSubjects() throws {
        var context = Self.context
        let subjects = SensorSubjects("1=alice,2=bob")
        context.subject = subjects.subject
        context.subjectsByUserIndex = subjects.byUserIndex
        let (batch, _) = Self.build(
            [
                Self.notification(
                    .weightMeasurement, WeightMeasurement(weight: 14_000, timeStamp: Self.stamp(7), userID: 1).encoded()
                ),
                Self.notification(
                    .weightMeasurement, WeightMeasurement(weight: 16_000, timeStamp: Self.stamp(8), userID: 2).encoded()
                ),
                Self.notification(
                    .weightMeasurement, WeightMeasurement(weight: 12_000, timeStamp: Self.stamp(9), userID: 3).encoded()
                ),
                Self.notification(
                    .weightMeasurement,
                    WeightMeasurement(weight: 10_000, timeStamp: Self.stamp(10), userID: UserIndex.unknown).encoded()),
            ], context: context)
        let samples = batch.samples
        #expect(samples.map(\.value) == [70, 80, 60, 50])
        #expect(samples.map(\.subject) == ["alice", "bob", nil, nil])
        #expect(
            samples.map { $0.metadata[MetadataKey.userIndex] } == [.integer(1), .integer(2), .integer(3), nil])
    }

    @Test func anUnmappedUserGetsTheSensorsDefaultSubject() {
        var context = Self.context
        let subjects = SensorSubjects("carol,1=alice")
        context.subject = subjects.subject
        context.subjectsByUserIndex = subjects.byUserIndex
        let (batch, _) = Self.build(
            [
                Self.notification(.weightMeasurement, WeightMeasurement(weight: 14_000, userID: 1).encoded()),
                Self.notification(.weightMeasurement, WeightMeasurement(weight: 14_000, userID: 7).encoded(), at: 1),
            ], context: context)
        #expect(batch.samples.map(\.subject) == ["alice", "carol"])
    }

    // MARK: Body composition

    @Test func bodyCompositionBecomesFatPercentageLeanMassWeightHeightAndBasalEnergy() throws {
        let (batch, _) = Self.build([
            Self.notification(
                .bodyCompositionMeasurement,
                h("fe 0f fa 00 ea 07 0b 1d 07 1e 00 02 64 19 90 01 e0 15 04 29 48 26 14 1e 88 13 b0 36 d6 06"))
        ])
        let samples = batch.samples
        #expect(
            samples.map(\.type) == [.bodyFatPercentage, .leanBodyMass, .bodyMass, .height, .basalEnergyBurned])
        #expect(samples.map(\.value).prefix(4) == [0.25, 52.5, 70, 1.75])
        #expect(abs(samples[4].value - 6500 / 4.184) < 1e-9)
        let at = Self.berlinInstant(7, 30)
        #expect(samples.prefix(4).allSatisfy { $0.start == at && $0.end == at })
        #expect(samples[4].end == at)
        #expect(samples[4].start == Instant(milliseconds: at.milliseconds - 86_400_000))
        #expect(samples.allSatisfy { $0.metadata[MetadataKey.userIndex] == .integer(2) })
        #expect(samples.allSatisfy { $0.invalidityReason(as: $0.type) == nil })
    }

    // MARK: Blood pressure

    @Test func bloodPressureIsACorrelationWithThePulseAsHeartRate() throws {
        let measurement = BloodPressureMeasurement(
            systolic: SFloat(mantissa: 138)!, diastolic: SFloat(mantissa: 88)!,
            meanArterialPressure: SFloat(mantissa: 105)!, timeStamp: Self.stamp(8, 15),
            pulseRate: SFloat(mantissa: 60)!, userID: 1, status: BloodPressureStatus(rawValue: 0b10_1110))
        let (batch, _) = Self.build([Self.notification(.bloodPressureMeasurement, measurement.encoded())])
        #expect(batch.correlations.count == 1)
        let correlation = try #require(batch.correlations.first)
        #expect(correlation.type == .bloodPressure)
        #expect(correlation.start == Self.berlinInstant(8, 15))
        #expect(correlation.startOffsetSeconds == 3600)
        #expect(correlation.objects(for: .bloodPressureSystolic).map(\.value) == [138])
        #expect(correlation.objects(for: .bloodPressureDiastolic).map(\.value) == [88])
        #expect(correlation.subject == "alice")
        #expect(correlation.metadata[MetadataKey.meanArterialPressure] == .quantity(105, unit: "mmHg"))
        #expect(correlation.metadata["cuffTooLoose"] == .bool(true))
        #expect(correlation.metadata["irregularPulseDetected"] == .bool(true))
        #expect(correlation.metadata["bodyMovementDetected"] == .bool(false))
        #expect(correlation.metadata["pulseRateRange"] == .string("above_upper_limit"))
        #expect(correlation.metadata["improperMeasurementPosition"] == .bool(true))
        #expect(correlation.metadata[MetadataKey.userIndex] == .integer(1))
        #expect(correlation.invalidityReason == nil)
        #expect(batch.samples.map(\.type) == [.heartRate])
        #expect(batch.samples.map(\.value) == [60])
        #expect(batch.samples[0].start == correlation.start)
        #expect(batch.count == 2)
    }

    @Test func kilopascalsAreStoredInMillimetresOfMercury() throws {
        let (batch, _) = Self.build([
            Self.notification(.bloodPressureMeasurement, h("15 bd f0 0b 00 9f f0 3c 00 12 00"))
        ])
        let correlation = try #require(batch.correlations.first)
        let systolic = try #require(correlation.objects(for: .bloodPressureSystolic).first?.value)
        #expect(abs(systolic - 18.9 * 760 / 101.325) < 1e-9)
        #expect(correlation.metadata["pulseRateRange"] == .string("below_lower_limit"))
    }

    @Test func specialValuesAndIntermediateCuffPressuresStoreNothing() {
        let nan = BloodPressureMeasurement(systolic: .nan, diastolic: SFloat(mantissa: 80)!, meanArterialPressure: .nan)
        let cuff = IntermediateCuffPressure(cuffPressure: SFloat(mantissa: 120)!)
        let (batch, counters) = Self.build([
            Self.notification(.intermediateCuffPressure, cuff.encoded()),
            Self.notification(.bloodPressureMeasurement, nan.encoded(), at: 1),
        ])
        #expect(batch.isEmpty)
        #expect(counters.unusable == 1)
        #expect(counters.ignored == 1)
    }

    // MARK: Temperature

    @Test func temperatureWithItsSensorLocation() {
        let (batch, _) = Self.build([
            Self.notification(.temperatureMeasurement, h("06 6e 01 00 ff ea 07 0b 1d 07 1e 00 06")),
            Self.notification(.intermediateTemperature, h("00 6d 01 00 ff"), at: 1),
            Self.notification(.temperatureMeasurement, h("01 ee 03 00 ff"), at: 2),
        ])
        let samples = batch.samples
        #expect(samples.map(\.type) == [.bodyTemperature, .bodyTemperature])
        #expect(samples[0].value == 36.6)
        #expect(samples[0].start == Self.berlinInstant(7, 30))
        #expect(samples[0].metadata[MetadataKey.bodyTemperatureSensorLocation] == .integer(6))
        #expect(abs(samples[1].value - (100.6 - 32) * 5 / 9) < 1e-12)
        #expect(samples[1].metadata[MetadataKey.bodyTemperatureSensorLocation] == nil)
    }

    @Test func theTemperatureTypeReadAtConnectTagsMeasurementsWithoutOne() {
        var context = Self.context
        context.temperatureType = TemperatureType.armpit.rawValue
        let (batch, _) = Self.build(
            [
                Self.notification(.temperatureMeasurement, h("00 6e 01 00 ff")),
                Self.notification(.temperatureMeasurement, h("04 6e 01 00 ff 09"), at: 1),
            ], context: context)
        #expect(
            batch.samples.map { $0.metadata[MetadataKey.bodyTemperatureSensorLocation] } == [.integer(1), .integer(9)])
    }

    // MARK: Pulse oximetry

    @Test func spotCheckBecomesSaturationHeartRateAndPerfusionAsFractions() {
        let spot = PLXSpotCheckMeasurement(
            spo2: SFloat(mantissa: 97)!, pulseRate: SFloat(mantissa: 72)!, timeStamp: Self.stamp(9),
            pulseAmplitudeIndex: SFloat(mantissa: 25, exponent: -1))
        let (batch, _) = Self.build([Self.notification(.plxSpotCheckMeasurement, spot.encoded())])
        #expect(batch.samples.map(\.type) == [.oxygenSaturation, .heartRate, .peripheralPerfusionIndex])
        #expect(batch.samples.map(\.value) == [0.97, 72, 0.025])
        #expect(batch.samples.allSatisfy { $0.start == Self.berlinInstant(9) })
        #expect(batch.samples.allSatisfy { $0.invalidityReason(as: $0.type) == nil })
    }

    @Test func aSpotCheckFromAnUnsetClockUsesTheReceiveTime() {
        let spot = PLXSpotCheckMeasurement(
            spo2: SFloat(mantissa: 97)!, pulseRate: SFloat(mantissa: 72)!, timeStamp: Self.stamp(9),
            deviceClockNotSet: true)
        let (batch, _) = Self.build([Self.notification(.plxSpotCheckMeasurement, spot.encoded())])
        #expect(batch.samples.allSatisfy { $0.start == Instant(milliseconds: Self.receivedMilliseconds) })
        #expect(batch.samples[0].metadata[MetadataKey.deviceTimeStamp] == .string("2026-11-29T09:00:00"))
    }

    @Test func continuousReadingsAtArrivalAndInvalidOnesCounted() {
        let good = PLXContinuousMeasurement(
            normal: .init(spo2: SFloat(mantissa: 96)!, pulseRate: SFloat(mantissa: 70)!))
        let invalid = PLXContinuousMeasurement(
            normal: .init(spo2: SFloat(mantissa: 50)!, pulseRate: SFloat(mantissa: 70)!),
            measurementStatus: PLXMeasurementStatus(rawValue: 0x8000))
        let searching = PLXContinuousMeasurement(normal: .init(spo2: .nan, pulseRate: .nan))
        let (batch, counters) = Self.build([
            Self.notification(.plxContinuousMeasurement, good.encoded(), at: 1),
            Self.notification(.plxContinuousMeasurement, invalid.encoded(), at: 2),
            Self.notification(.plxContinuousMeasurement, searching.encoded(), at: 3),
        ])
        #expect(batch.samples.map(\.value) == [0.96, 70])
        // Received on a whole second: a millisecond on (see the next test).
        #expect(batch.samples.allSatisfy { $0.start == Instant(milliseconds: Self.receivedMilliseconds + 1001) })
        #expect(counters.unusable == 2)
    }

    /// A continuous reading received on the whole second a spot-check's stamp names: both are stored (the
    /// continuous one a millisecond on), where they would have been one sample id, the second refused.
    @Test func aContinuousReadingOnTheSecondOfASpotCheckIsKeptApartFromIt() async throws {
        let continuous = PLXContinuousMeasurement(
            normal: .init(spo2: SFloat(mantissa: 96)!, pulseRate: SFloat(mantissa: 70)!))
        let spot = PLXSpotCheckMeasurement(
            spo2: SFloat(mantissa: 98)!, pulseRate: SFloat(mantissa: 74)!, timeStamp: Self.stamp(11))
        let (batch, _) = Self.build([
            Self.notification(.plxContinuousMeasurement, continuous.encoded()),
            Self.notification(.plxSpotCheckMeasurement, spot.encoded(), at: 0.5),
        ])
        let starts = batch.samples.map(\.start.milliseconds)
        #expect(
            starts == [
                Self.receivedMilliseconds + 1, Self.receivedMilliseconds + 1, Self.receivedMilliseconds,
                Self.receivedMilliseconds,
            ])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oximeter-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let outcomes = try await HealthStoreSink(store: store).write(batch)
        #expect(outcomes == Array(repeating: .inserted, count: 4))
    }

    // MARK: Stable ids

    @Test func replayingTheSameRecordsStoresNothingNew() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("health-devices-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let records = [
            Self.notification(
                .weightMeasurement, WeightMeasurement(weight: 14_000, timeStamp: Self.stamp(7), userID: 1).encoded()),
            Self.notification(
                .bloodPressureMeasurement,
                BloodPressureMeasurement(
                    systolic: SFloat(mantissa: 120)!, diastolic: SFloat(mantissa: 80)!,
                    meanArterialPressure: SFloat(mantissa: 93)!, timeStamp: Self.stamp(8),
                    pulseRate: SFloat(mantissa: 64)!
                ).encoded(), at: 1),
        ]
        let sink = HealthStoreSink(store: store)
        // Two connections sending the same stored records, each to a builder of its own (a restarted service).
        let first = try await sink.write(Self.build(records).0)
        #expect(first == [.inserted, .inserted, .inserted])
        let again = try await sink.write(Self.build(records).0)
        #expect(again.allSatisfy { $0 == .duplicate })
        let page = try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner)
        #expect(page.correlations.count == 1)
        #expect(page.correlations.first?.objects(for: .bloodPressureSystolic).first?.value == 120)
    }
}

@Suite struct SensorSubjectsTests {
    @Test func plainSubjectsAndMappings() throws {
        #expect(SensorSubjects("alice") == SensorSubjects(subject: "alice"))
        #expect(SensorSubjects(nil) == SensorSubjects())
        #expect(SensorSubjects("1=alice, 2 = bob") == SensorSubjects(byUserIndex: [1: "alice", 2: "bob"]))
        #expect(SensorSubjects("carol,0=alice") == SensorSubjects(subject: "carol", byUserIndex: [0: "alice"]))
    }

    @Test(arguments: [
        ("1=alice,1=bob", "mapped twice"), ("255=alice", "not a user index"), ("x=alice", "not a user index"),
        ("1=", "needs one subject name"), ("alice,bob,1=carol", "only one subject"), ("1=alice,,2=bob", "is empty"),
    ])
    func badMappingsAreRefusedByParseAndKeptAsTextOtherwise(_ text: String, _ problem: String) throws {
        guard case .failure(let error) = SensorSubjects.parse(text) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(error.description.contains(problem))
        #expect(SensorSubjects(text) == SensorSubjects(subject: text))
    }
}

/// A trace of a shared scale replays onto its users' subjects: the sensor line keeps the mapping, the values are
/// indications, and nothing usable is lost or stored twice.
@Suite struct HealthDeviceReplayTests {
    @Test func aRecordedMappingAndIndicationsReplayOntoTwoSubjects() throws {
        var context = HealthDeviceSampleTests.context
        let subjects = SensorSubjects("1=alice,2=bob")
        context.subject = subjects.subject
        context.subjectsByUserIndex = subjects.byUserIndex
        let address = HealthDeviceSampleTests.scale.address
        let sensor = TraceSensor(context: context, address: address, characteristics: [.weightMeasurement], at: nil)
        #expect(sensor.subject == "1=alice,2=bob")
        var engine = TraceReplayEngine(settings: .init(source: HealthDeviceSampleTests.source))
        var output = SampleBuilder.Output()
        engine.handle(.sensor(sensor), into: &output)
        for (index, user) in [1, 2, 1].enumerated() {
            let reading = WeightMeasurement(
                weight: UInt16(14_000 + 1_000 * index), timeStamp: HealthDeviceSampleTests.stamp(UInt8(7 + index)),
                userID: UInt8(user))
            let value = HealthDeviceSampleTests.notification(.weightMeasurement, reading.encoded(), at: Double(index))
            engine.handle(
                .value(
                    TraceValue(
                        kind: .indication, address: address, characteristic: .weightMeasurement,
                        bytes: value.value, at: value.receivedAt)), into: &output)
        }
        engine.handle(
            .value(
                TraceValue(
                    kind: .indication, address: address, characteristic: .weightMeasurement, bytes: h("04 ff ff 02"),
                    at: HealthDeviceSampleTests.notification(.weightMeasurement, [], at: 5).receivedAt)),
            into: &output)
        #expect(output.samples.map(\.subject) == ["alice", "bob", "alice"])
        #expect(output.samples.map(\.value) == [70, 75, 80])
        #expect(engine.totals.indications == 4)
        #expect(engine.totals.unusable == 1)
    }
}

@Suite struct SubjectMappingEnrolmentTests {
    @Test func pairRefusesABadMappingBeforeTouchingTheSensor() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("enrol-mapping-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let enrolment = SensorEnrolment(central: FakeCentral(), registry: store)
        do {
            _ = try await enrolment.enrol(.init(target: "C0:FF:EE:00:00:51", subject: "1=alice,1=bob"))
            Issue.record("enrolled with a user mapped twice")
        } catch let failure as SensorEnrolment.Failure {
            #expect(failure.message.contains("bad --subject"))
            #expect(failure.message.contains("mapped twice"))
        }
        #expect(try await store.registeredSensors().isEmpty)
    }
}

/// Bytes from a hex literal such as `"16 3c 11 04"`.
private func h(_ text: String) -> [UInt8] {
    let digits = text.filter { $0 != " " }
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
