import Foundation
import GATT
import Gateway
import Health
import Support
import Testing

/// Glucose records through the sample builder (`SampleBuilder+Glucose.swift`): mg/dL exactly, the user-facing time
/// in the sensor's zone, the context matched by sequence number, what is not stored.
@Suite struct GlucoseSampleTests {
    typealias Fixture = HealthDeviceSampleTests

    static func measurement(
        _ sequence: UInt16, mgdL: Int = 95, offset: Int16? = nil, context: Bool = false,
        status: UInt16? = nil, type: UInt8 = 1
    ) -> GlucoseMeasurement {
        GlucoseMeasurement(
            sequenceNumber: sequence, baseTime: Fixture.stamp(7, 30), timeOffset: offset,
            concentration: GlucoseConcentration(value: SFloat(mantissa: mgdL, exponent: -5)!, type: type),
            sensorStatus: status.map { GlucoseSensorStatus(rawValue: $0) }, contextFollows: context)
    }

    static func build(_ values: [(BluetoothUUID, [UInt8])]) -> (SampleBatch, SampleBuilder) {
        var builder = SampleBuilder(context: Fixture.context)
        var batch = SampleBatch()
        for (index, (uuid, bytes)) in values.enumerated() {
            builder.add(Fixture.notification(uuid, bytes, at: Double(index) / 100), into: &batch)
        }
        return (batch, builder)
    }

    @Test func aRecordIsBloodGlucoseInMilligramsAtItsUserFacingTime() throws {
        let (batch, builder) = Self.build([(.glucoseMeasurement, Self.measurement(7, offset: 15).encoded())])
        let sample = try #require(batch.samples.first)
        #expect(batch.samples.count == 1)
        #expect(sample.type == .bloodGlucose)
        #expect(sample.value == 95)
        #expect(sample.start == Fixture.berlinInstant(7, 45))
        #expect(sample.startOffsetSeconds == 3600)
        #expect(sample.metadata["glucoseSequenceNumber"] == .integer(7))
        #expect(sample.metadata["glucoseSampleType"] == .string("capillary_whole_blood"))
        #expect(sample.metadata["glucoseSampleLocation"] == .string("finger"))
        #expect(sample.metadata["glucoseMeal"] == nil)
        #expect(sample.subject == "alice")
        #expect(builder.highestGlucoseSequence == 7)
    }

    @Test func molesPerLiterConvertThroughTheMolarMass() throws {
        var measurement = Self.measurement(1)
        measurement.units = .molPerL
        measurement.concentration?.value = SFloat(mantissa: 55, exponent: -4)!  // 5.5 mmol/L
        let (batch, _) = Self.build([(.glucoseMeasurement, measurement.encoded())])
        let value = try #require(batch.samples.first?.value)
        #expect(abs(value - 5.5 * 18.015588000005408) < 1e-9)
    }

    @Test func theContextWithTheSameSequenceNumberAddsTheMeal() throws {
        let context = GlucoseMeasurementContext(
            sequenceNumber: 8, carbohydrate: .init(id: 2, kilograms: SFloat(mantissa: 45, exponent: -3)!), meal: 2,
            tester: 1, health: 5)
        let (batch, _) = Self.build([
            (.glucoseMeasurement, Self.measurement(8, context: true).encoded()),
            (.glucoseMeasurementContext, context.encoded()),
        ])
        let sample = try #require(batch.samples.first)
        #expect(batch.samples.count == 1)
        #expect(sample.metadata["bloodGlucoseMealTime"] == .integer(2))
        #expect(sample.metadata["glucoseMeal"] == .string("postprandial"))
        #expect(sample.metadata["glucoseTester"] == .string("self"))
        #expect(sample.metadata["glucoseHealth"] == .string("no_health_issues"))
        #expect(sample.metadata["glucoseCarbohydrate"] == .quantity(45, unit: "g"))
        // Received a moment after the measurement: the sample keeps the measurement's time.
        #expect(sample.start == Fixture.berlinInstant(7, 30))
    }

    @Test func fastingHasNoHealthKitMealTimeButKeepsItsName() throws {
        let (batch, _) = Self.build([
            (.glucoseMeasurement, Self.measurement(9, context: true).encoded()),
            (.glucoseMeasurementContext, GlucoseMeasurementContext(sequenceNumber: 9, meal: 3).encoded()),
        ])
        #expect(batch.samples.first?.metadata["glucoseMeal"] == .string("fasting"))
        #expect(batch.samples.first?.metadata["bloodGlucoseMealTime"] == nil)
    }

    @Test func anAnnouncedContextThatNeverComesIsStoredWithoutAtTheNextRecordOrTheResponse() throws {
        let (batch, builder) = Self.build([
            (.glucoseMeasurement, Self.measurement(10, context: true).encoded()),
            (.glucoseMeasurementContext, GlucoseMeasurementContext(sequenceNumber: 99, meal: 1).encoded()),
            (.glucoseMeasurement, Self.measurement(11, mgdL: 120, context: true).encoded()),
            (
                .recordAccessControlPoint,
                RecordAccessControlPoint.response(to: .reportStoredRecords, .success).encoded()
            ),
        ])
        #expect(batch.samples.map(\.value) == [95, 120])
        #expect(batch.samples.allSatisfy { $0.metadata["glucoseMeal"] == nil })
        #expect(builder.lastGlucoseControlPoint?.responseCode?.code == .success)
        #expect(builder.highestGlucoseSequence == 11)
    }

    @Test func aRecordWaitingForItsContextIsDroppedWhenANewSessionStarts() {
        var builder = SampleBuilder(context: Fixture.context)
        var batch = SampleBatch()
        builder.add(
            Fixture.notification(.glucoseMeasurement, Self.measurement(12, context: true).encoded()), into: &batch)
        builder.glucoseSessionStarted()
        builder.add(
            Fixture.notification(
                .glucoseMeasurementContext, GlucoseMeasurementContext(sequenceNumber: 12, meal: 1).encoded(), at: 1),
            into: &batch)
        #expect(batch.samples.isEmpty)
        #expect(builder.highestGlucoseSequence == nil, "asked for again in the next transfer")
    }

    @Test func unreliableResultsAndControlSolutionsAreNotStored() {
        let (batch, builder) = Self.build([
            (.glucoseMeasurement, Self.measurement(1, status: 0x0004).encoded()),  // sample size insufficient
            (.glucoseMeasurement, Self.measurement(2, type: 10).encoded()),  // control solution
            (.glucoseMeasurement, Self.measurement(3, status: 0x0001).encoded()),  // battery low: stored
            (.glucoseMeasurement, GlucoseMeasurement(sequenceNumber: 4, baseTime: Fixture.stamp(8)).encoded()),
        ])
        #expect(batch.samples.map { $0.metadata["glucoseSequenceNumber"] } == [.integer(3)])
        #expect(batch.samples.first?.metadata["glucoseSensorStatus"] == .string("device_battery_low"))
        #expect(builder.counters.unusable == 3)
        #expect(builder.highestGlucoseSequence == 4)
    }
}
