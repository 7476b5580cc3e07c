import GATT
import Support
import Testing

/// Blood Pressure Measurement 0x2A35, Intermediate Cuff Pressure 0x2A36 and Blood Pressure Feature 0x2A49:
/// `docs/gatt-health-devices.md`, "Blood Pressure Measurement".
@Suite struct BloodPressureTests {
    @Test func nordicFullVector() throws {
        // Nordic's BloodPressureMeasurementDataCallbackTest, "full": 138/88 mmHg, MAP 120, year unknown,
        // 17 April 20:41:59, pulse 60, user 1, status 0b100111.
        let value = try BloodPressureMeasurement(decoding: h(BloodPressureVectors.nordicFull))
        #expect(value.units == .mmHg)
        #expect(value.systolic.value == 138)
        #expect(value.diastolic.value == 88)
        #expect(value.meanArterialPressure.value == 120)
        #expect(value.timeStamp == DateTime(year: 0, month: 4, day: 17, hours: 20, minutes: 41, seconds: 59))
        #expect(value.timeStamp?.isComplete == false)
        #expect(value.pulseRate?.value == 60)
        #expect(value.userID == 1)
        let status = try #require(value.status)
        #expect(status.bodyMovementDetected)
        #expect(status.cuffTooLoose)
        #expect(status.irregularPulseDetected)
        #expect(status.pulseRateRange == .withinRange)
        #expect(status.improperMeasurementPosition)
        #expect(status.reservedBits == 0)
    }

    @Test func nordicKilopascalVector() throws {
        // Nordic's "some": kPa 18.9/11/15.9, pulse 60, status 0b010010 (cuff too loose, pulse below the range).
        let value = try BloodPressureMeasurement(decoding: h("15 bd f0 0b 00 9f f0 3c 00 12 00"))
        #expect(value.units == .kPa)
        #expect(value.systolic == SFloat(mantissa: 189, exponent: -1))
        #expect(value.systolic.value == 18.9)
        #expect(value.diastolic.value == 11)
        #expect(value.meanArterialPressure.value == 15.9)
        #expect(value.timeStamp == nil && value.userID == nil)
        #expect(value.pulseRate?.value == 60)
        #expect(value.status?.cuffTooLoose == true)
        #expect(value.status?.bodyMovementDetected == false)
        #expect(value.status?.pulseRateRange == .belowLowerLimit)
        let systolic = try #require(value.millimetersOfMercury(value.systolic))
        #expect(abs(systolic - 18.9 * 760 / 101.325) < 1e-9)
    }

    @Test func nordicMinimalVector() throws {
        let value = try BloodPressureMeasurement(decoding: h("00 bd f0 0b 00 9f f0"))
        #expect(value.units == .mmHg)
        #expect(value.systolic.value == 18.9)
        #expect(value.pulseRate == nil && value.status == nil && value.timeStamp == nil && value.userID == nil)
        #expect(value.encoded() == h("00 bd f0 0b 00 9f f0"))
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        // Nordic's "too short" (6 bytes) and "no time stamp" (flag set, 7 bytes).
        ("01 02 03 04 05 06", .truncated(field: "mean_arterial_pressure", offset: 5, needed: 2, available: 1)),
        ("03 02 03 04 05 06 07", .truncated(field: "time_stamp", offset: 7, needed: 2, available: 0)),
        ("00 8a", .truncated(field: "systolic", offset: 1, needed: 2, available: 1)),
        ("04 8a 00 58 00 78 00", .truncated(field: "pulse_rate", offset: 7, needed: 2, available: 0)),
        ("08 8a 00 58 00 78 00", .truncated(field: "user_id", offset: 7, needed: 1, available: 0)),
        ("10 8a 00 58 00 78 00 27", .truncated(field: "measurement_status", offset: 7, needed: 2, available: 1)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(BloodPressureMeasurement.self, h(hex)) == error)
    }

    @Test func specialValuesAndReservedBitsAreKept() throws {
        // MAP not available (NaN), pulse rate NRes, pulse range 3 (reserved), reserved flag and status bits.
        let value = try BloodPressureMeasurement(decoding: h("f4 8a 00 58 00 ff 07 00 08 d8 ff"))
        #expect(value.meanArterialPressure.special == .nan)
        #expect(value.millimetersOfMercury(value.meanArterialPressure) == nil)
        #expect(value.pulseRate?.special == .nres)
        #expect(value.status?.pulseRateRange == .reserved)
        #expect(value.status?.reservedBits == 0xFFC0)
        #expect(value.reservedFlags == 0xE0)
        #expect(value.encoded() == h("f4 8a 00 58 00 ff 07 00 08 d8 ff"))
        #expect(value.fields.first { $0.name == "mean_arterial_pressure" }?.value == .string("nan"))
    }

    @Test func fields() throws {
        let value = try BloodPressureMeasurement(decoding: h("04 8a 00 58 00 78 00 3c 00"))
        #expect(
            FieldValue.object(value.fields).json
                == #"{"flags":4,"units":"mmHg","systolic":138.0,"diastolic":88.0,"mean_arterial_pressure":120.0,"#
                + #""time_stamp":null,"pulse_rate":60.0,"user_id":null,"measurement_status":null,"reserved_flags":0}"#)
    }

    @Test func intermediateCuffPressure() throws {
        // Cuff at 100 mmHg, diastolic and MAP NaN as the specification asks, pulse 72.
        let value = try IntermediateCuffPressure(decoding: h("04 64 00 ff 07 ff 07 48 00"))
        #expect(value.cuffPressure.value == 100)
        #expect(value.diastolic.special == .nan)
        #expect(value.meanArterialPressure.special == .nan)
        #expect(value.pulseRate?.value == 72)
        #expect(
            IntermediateCuffPressure(cuffPressure: SFloat(mantissa: 100)!, pulseRate: SFloat(mantissa: 72)).encoded()
                == h("04 64 00 ff 07 ff 07 48 00"))
        #expect(value.fields[2].name == "cuff_pressure")
        #expect(
            decodeError(IntermediateCuffPressure.self, h("00 64"))
                == .truncated(field: "cuff_pressure", offset: 1, needed: 2, available: 1))
    }

    @Test func featureBits() throws {
        let feature = try BloodPressureFeature(decoding: h("3f 00"))
        #expect(
            feature == [
                .bodyMovementDetection, .cuffFitDetection, .irregularPulseDetection, .pulseRateRangeDetection,
                .measurementPositionDetection, .multipleBonds,
            ])
        #expect(try BloodPressureFeature(decoding: h("c0 ff")).fields.last?.value == .int(0xFFC0))
        #expect(decodeError(BloodPressureFeature.self, h("3f")) == .invalidLength(expected: 2, actual: 1))
    }
}

enum BloodPressureVectors {
    /// Nordic Android-BLE-Common-Library, BloodPressureMeasurementDataCallbackTest, "full".
    static let nordicFull = "1e 8a 00 58 00 78 00 00 00 04 11 14 29 3b 3c 00 01 27 00"
}

extension SFloat {
    static func random(using rng: inout SplitMix64) -> SFloat { SFloat(rawValue: rng.uint16()) }
}

extension BloodPressureMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            BloodPressureVectors.nordicFull, "15 bd f0 0b 00 9f f0 3c 00 12 00", "00 bd f0 0b 00 9f f0",
            "f4 8a 00 58 00 ff 07 00 08 d8 ff", "04 8a 00 58 00 78 00 3c 00",
        ]
    }

    static func random(using rng: inout SplitMix64) -> BloodPressureMeasurement {
        BloodPressureMeasurement(
            units: rng.bool() ? .mmHg : .kPa, systolic: .random(using: &rng), diastolic: .random(using: &rng),
            meanArterialPressure: .random(using: &rng), timeStamp: rng.maybe { DateTime.random(using: &$0) },
            pulseRate: rng.maybe { SFloat.random(using: &$0) }, userID: rng.maybe { $0.uint8() },
            status: rng.maybe { BloodPressureStatus(rawValue: $0.uint16()) }, reservedFlags: rng.uint8())
    }
}

extension IntermediateCuffPressure: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["04 64 00 ff 07 ff 07 48 00", "00 64 00 ff 07 ff 07", "01 0d f0 ff 07 ff 07"]
    }

    static func random(using rng: inout SplitMix64) -> IntermediateCuffPressure {
        IntermediateCuffPressure(
            units: rng.bool() ? .mmHg : .kPa, cuffPressure: .random(using: &rng), diastolic: .random(using: &rng),
            meanArterialPressure: .random(using: &rng), timeStamp: rng.maybe { DateTime.random(using: &$0) },
            pulseRate: rng.maybe { SFloat.random(using: &$0) }, userID: rng.maybe { $0.uint8() },
            status: rng.maybe { BloodPressureStatus(rawValue: $0.uint16()) }, reservedFlags: rng.uint8())
    }
}

extension BloodPressureFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["3f 00", "00 00", "c0 ff", "ff ff"] }
    static var fixedLength: Int? { 2 }
    static func random(using rng: inout SplitMix64) -> BloodPressureFeature {
        BloodPressureFeature(rawValue: rng.uint16())
    }
}
