import GATT
import Support
import Testing

/// Weight Measurement 0x2A9D and Weight Scale Feature 0x2A9E: `docs/gatt-health-devices.md`, "Weight Measurement".
@Suite struct WeightScaleTests {
    @Test func siWeightOnly() throws {
        // 14000 × 0.005 kg = 70 kg.
        let value = try WeightMeasurement(decoding: h("00 b0 36"))
        #expect(value == WeightMeasurement(weight: 14_000))
        #expect(value.units == .si)
        #expect(value.kilograms == 70)
        #expect(value.timeStamp == nil && value.userID == nil && value.bmi == nil && value.height == nil)
        #expect(!value.isUnsuccessful)
    }

    @Test func everyField() throws {
        let value = try WeightMeasurement(decoding: h(WeightVectors.everyField))
        #expect(value.flags == 0x0E)
        #expect(value.kilograms == 70)
        #expect(value.timeStamp == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 0))
        #expect(value.userID == 1)
        #expect(value.bmi == 229)
        #expect(value.bodyMassIndex == 22.9)
        #expect(value.height == 1750)
        #expect(value.meters == 1.75)
    }

    @Test func imperialUnits() throws {
        // 15432 × 0.01 lb = 154.32 lb; height 686 × 0.1 in = 68.6 in.
        let value = try WeightMeasurement(decoding: h("09 48 3c e5 00 ae 02"))
        #expect(value.units == .imperial)
        #expect(value.weightInSentUnit == 154.32)
        let kilograms = try #require(value.kilograms)
        #expect(abs(kilograms - 154.32 * 0.45359237) < 1e-12)
        #expect(abs(try #require(value.meters) - 68.6 * 0.0254) < 1e-12)
        #expect(value.bodyMassIndex == 22.9)
    }

    @Test func unsuccessfulMeasurementDecodesWithoutANumber() throws {
        // DecodingPolicy.measurementUnsuccessful.
        let value = try WeightMeasurement(decoding: h("04 ff ff 02"))
        #expect(value.isUnsuccessful)
        #expect(value.kilograms == nil)
        #expect(value.userID == 2)
        #expect(value.fields.first { $0.name == "weight_kg" }?.value == .null)
        #expect(value.fields.first { $0.name == "measurement_unsuccessful" }?.value == .bool(true))
    }

    @Test func unknownUserAndReservedBits() throws {
        let value = try WeightMeasurement(decoding: h("f4 b0 36 ff"))
        #expect(value.userID == UserIndex.unknown)
        #expect(value.reservedFlags == 0xF0)
        #expect(value.encoded() == h("f4 b0 36 ff"))
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("00", .truncated(field: "weight", offset: 1, needed: 2, available: 0)),
        ("00 b0", .truncated(field: "weight", offset: 1, needed: 2, available: 1)),
        ("02 b0 36 ea 07 0c", .truncated(field: "time_stamp", offset: 6, needed: 1, available: 0)),
        ("04 b0 36", .truncated(field: "user_id", offset: 3, needed: 1, available: 0)),
        // BMI without its height: one flag announces both.
        ("08 b0 36 e5 00", .truncated(field: "height", offset: 5, needed: 2, available: 0)),
        ("08 b0 36 e5", .truncated(field: "bmi", offset: 3, needed: 2, available: 1)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(WeightMeasurement.self, h(hex)) == error)
    }

    @Test func trailingBytesAreIgnored() throws {
        let value = try WeightMeasurement(decoding: h("00 b0 36 aa bb"))
        #expect(value.encoded() == h("00 b0 36"))
    }

    @Test func aLoneBMIOrHeightIsNotEncoded() {
        #expect(WeightMeasurement(weight: 14_000, bmi: 229).encoded() == h("00 b0 36"))
        #expect(WeightMeasurement(weight: 14_000, bmi: 229, height: 1750).encoded() == h("08 b0 36 e5 00 d6 06"))
    }

    @Test func fieldsCarryUnits() throws {
        let value = try WeightMeasurement(decoding: h(WeightVectors.everyField))
        #expect(
            FieldValue.object(value.fields).json
                == #"{"flags":14,"units":"si","weight":70.0,"weight_kg":70.0,"measurement_unsuccessful":false,"#
                + #""time_stamp":"2026-12-02T07:30:00","user_id":1,"bmi":22.9,"height":1.75,"height_m":1.75,"#
                + #""reserved_flags":0}"#)
        #expect(value.fields.map(\.unit).compactMap { $0 } == ["kg", "kg", "count", "m", "m"])
    }

    @Test func featureBits() throws {
        // Time stamp, multiple users, BMI; weight resolution 7 (0.005 kg), height resolution 3 (0.001 m).
        let feature = try WeightScaleFeature(decoding: h("bf 01 00 00"))
        #expect(feature.timeStampSupported && feature.multipleUsersSupported && feature.bmiSupported)
        #expect(feature.weightResolution == 7)
        #expect(feature.heightResolution == 3)
        #expect(feature.fields.first { $0.name == "weight_resolution" }?.value == .string("0.005 kg or 0.01 lb"))
        #expect(feature.fields.first { $0.name == "height_resolution" }?.value == .string("0.001 m or 0.1 in"))
        let reserved = try WeightScaleFeature(decoding: h("78 00 00 80"))
        #expect(reserved.weightResolution == 15)
        #expect(reserved.fields.first { $0.name == "weight_resolution" }?.value == .string("reserved"))
        #expect(reserved.fields.first { $0.name == "reserved_bits" }?.value == .int(0x8000_0000))
        #expect(decodeError(WeightScaleFeature.self, h("bf 01 00")) == .invalidLength(expected: 4, actual: 3))
    }
}

enum WeightVectors {
    /// 70 kg at 2026-12-02 07:30:00, user 1, BMI 22.9, height 1.750 m (built from the layout).
    static let everyField = "0e b0 36 ea 07 0c 02 07 1e 00 01 e5 00 d6 06"
}

extension WeightMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 b0 36", WeightVectors.everyField, "09 48 3c e5 00 ae 02", "04 ff ff 02", "f4 b0 36 ff", "01 00 00"]
    }

    static func random(using rng: inout SplitMix64) -> WeightMeasurement {
        let pair = rng.bool()
        return WeightMeasurement(
            units: rng.bool() ? .si : .imperial, weight: rng.uint16(),
            timeStamp: rng.maybe { DateTime.random(using: &$0) },
            userID: rng.maybe { $0.uint8() }, bmi: pair ? rng.uint16() : nil, height: pair ? rng.uint16() : nil,
            reservedFlags: rng.uint8())
    }
}

extension WeightScaleFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["bf 01 00 00", "00 00 00 00", "ff ff ff ff", "78 00 00 80"] }
    static var fixedLength: Int? { 4 }
    static func random(using rng: inout SplitMix64) -> WeightScaleFeature { WeightScaleFeature(rawValue: rng.uint32()) }
}
