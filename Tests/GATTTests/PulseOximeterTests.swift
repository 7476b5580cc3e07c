import GATT
import Support
import Testing

/// PLX Spot-check Measurement 0x2A5E, PLX Continuous Measurement 0x2A5F and PLX Features 0x2A60:
/// `docs/gatt-health-devices.md`, "PLX Spot-check Measurement".
@Suite struct PulseOximeterTests {
    @Test func spotCheckMinimal() throws {
        let value = try PLXSpotCheckMeasurement(decoding: h("00 61 00 48 00"))
        #expect(value.spo2.value == 97)
        #expect(value.pulseRate.value == 72)
        #expect(value.timeStamp == nil && value.measurementStatus == nil && value.pulseAmplitudeIndex == nil)
        #expect(!value.deviceClockNotSet)
    }

    @Test func spotCheckEveryField() throws {
        let value = try PLXSpotCheckMeasurement(decoding: h(PLXVectors.spotCheckEveryField))
        #expect(value.timeStamp == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 0))
        #expect(value.measurementStatus?.fromMeasurementStorage == true)
        #expect(value.measurementStatus?.setNames == ["data_from_measurement_storage"])
        #expect(value.deviceAndSensorStatus?.setNames == ["low_perfusion_detected"])
        #expect(value.pulseAmplitudeIndex == SFloat(mantissa: 25, exponent: -1))
        #expect(value.pulseAmplitudeIndex?.value == 2.5)
    }

    @Test func deviceClockNotSetIsKept() throws {
        let value = try PLXSpotCheckMeasurement(decoding: h("11 61 00 48 00 ea 07 0c 02 07 1e 00"))
        #expect(value.deviceClockNotSet)
        #expect(value.timeStamp != nil)
        #expect(value.encoded() == h("11 61 00 48 00 ea 07 0c 02 07 1e 00"))
    }

    static let spotCheckErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("00 61", .truncated(field: "spo2", offset: 1, needed: 2, available: 1)),
        ("00 61 00 48", .truncated(field: "pulse_rate", offset: 3, needed: 2, available: 1)),
        ("02 61 00 48 00", .truncated(field: "measurement_status", offset: 5, needed: 2, available: 0)),
        ("04 61 00 48 00 20 00", .truncated(field: "device_and_sensor_status", offset: 5, needed: 3, available: 2)),
        ("08 61 00 48 00 19", .truncated(field: "pulse_amplitude_index", offset: 5, needed: 2, available: 1)),
    ]

    @Test(arguments: spotCheckErrors)
    func spotCheckRejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(PLXSpotCheckMeasurement.self, h(hex)) == error)
    }

    @Test func continuousEveryField() throws {
        let value = try PLXContinuousMeasurement(decoding: h(PLXVectors.continuousEveryField))
        #expect(value.normal.spo2.value == 97 && value.normal.pulseRate.value == 72)
        #expect(value.fast?.spo2.value == 96 && value.fast?.pulseRate.value == 73)
        #expect(value.slow?.spo2.value == 98 && value.slow?.pulseRate.value == 71)
        #expect(value.measurementStatus?.setNames == ["validated_data"])
        #expect(value.deviceAndSensorStatus?.rawValue == 0)
        #expect(value.pulseAmplitudeIndex?.value == 2.5)
        #expect(value.flags == 0x1F)
    }

    @Test func continuousSpecialValues() throws {
        // A finger just inserted: SpO2 and pulse rate NaN.
        let value = try PLXContinuousMeasurement(decoding: h("00 ff 07 ff 07"))
        #expect(value.normal.spo2.special == .nan)
        #expect(value.fields[1].value == .string("nan"))
    }

    static let continuousErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("00 61 00 48", .truncated(field: "pulse_rate", offset: 3, needed: 2, available: 1)),
        ("01 61 00 48 00 60 00", .truncated(field: "pulse_rate_fast", offset: 7, needed: 2, available: 0)),
        ("02 61 00 48 00", .truncated(field: "spo2_slow", offset: 5, needed: 2, available: 0)),
        ("10 61 00 48 00", .truncated(field: "pulse_amplitude_index", offset: 5, needed: 2, available: 0)),
    ]

    @Test(arguments: continuousErrors)
    func continuousRejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(PLXContinuousMeasurement.self, h(hex)) == error)
    }

    @Test func features() throws {
        let both = try PLXFeatures(decoding: h("03 00 e0 ff ff ff 00"))
        #expect(both.measurementStatusSupport == 0xFFE0)
        #expect(both.deviceAndSensorStatusSupport == 0x00FFFF)
        #expect(both.supportedFeatures == 0x0003)
        let plain = try PLXFeatures(decoding: h("fc 00"))
        #expect(plain.measurementStatusSupport == nil && plain.deviceAndSensorStatusSupport == nil)
        #expect(plain.fields.filter { $0.value == .bool(true) }.count == 6)
        #expect(
            decodeError(PLXFeatures.self, h("03 00 e0"))
                == .truncated(field: "measurement_status_support", offset: 2, needed: 2, available: 1))
        #expect(
            decodeError(PLXFeatures.self, h("02 00 ff ff"))
                == .truncated(field: "device_and_sensor_status_support", offset: 2, needed: 3, available: 2))
        #expect(
            decodeError(PLXFeatures.self, h("03"))
                == .truncated(field: "supported_features", offset: 0, needed: 2, available: 1))
    }
}

enum PLXVectors {
    /// SpO2 97 %, pulse 72/min, 2026-12-02 07:30:00, status "from storage", device "low perfusion", PAI 2.5 %
    /// (built from the layout).
    static let spotCheckEveryField = "0f 61 00 48 00 ea 07 0c 02 07 1e 00 00 02 20 00 00 19 f0"
    /// Normal 97/72, fast 96/73, slow 98/71, status "validated", device status 0, PAI 2.5 %.
    static let continuousEveryField = "1f 61 00 48 00 60 00 49 00 62 00 47 00 80 00 00 00 00 19 f0"
}

extension PLXSpotCheckMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 61 00 48 00", PLXVectors.spotCheckEveryField, "11 61 00 48 00 ea 07 0c 02 07 1e 00", "e0 ff 07 ff 07"]
    }

    static func random(using rng: inout SplitMix64) -> PLXSpotCheckMeasurement {
        PLXSpotCheckMeasurement(
            spo2: .random(using: &rng), pulseRate: .random(using: &rng),
            timeStamp: rng.maybe { DateTime.random(using: &$0) },
            measurementStatus: rng.maybe { PLXMeasurementStatus(rawValue: $0.uint16()) },
            deviceAndSensorStatus: rng.maybe { PLXDeviceAndSensorStatus(rawValue: $0.uint32()) },
            pulseAmplitudeIndex: rng.maybe { SFloat.random(using: &$0) }, deviceClockNotSet: rng.bool(),
            reservedFlags: rng.uint8())
    }
}

extension PLXContinuousMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00 61 00 48 00", PLXVectors.continuousEveryField, "00 ff 07 ff 07"] }

    static func random(using rng: inout SplitMix64) -> PLXContinuousMeasurement {
        func reading(_ rng: inout SplitMix64) -> Reading {
            Reading(spo2: .random(using: &rng), pulseRate: .random(using: &rng))
        }
        return PLXContinuousMeasurement(
            normal: reading(&rng), fast: rng.maybe(reading), slow: rng.maybe(reading),
            measurementStatus: rng.maybe { PLXMeasurementStatus(rawValue: $0.uint16()) },
            deviceAndSensorStatus: rng.maybe { PLXDeviceAndSensorStatus(rawValue: $0.uint32()) },
            pulseAmplitudeIndex: rng.maybe { SFloat.random(using: &$0) }, reservedFlags: rng.uint8())
    }
}

extension PLXFeatures: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 00", "03 00 e0 ff ff ff 00", "fc 00", "01 00 00 00", "02 00 00 00 00"]
    }

    static func random(using rng: inout SplitMix64) -> PLXFeatures {
        PLXFeatures(
            otherFeatures: rng.uint16(), measurementStatusSupport: rng.maybe { $0.uint16() },
            deviceAndSensorStatusSupport: rng.maybe { $0.uint32() })
    }
}
