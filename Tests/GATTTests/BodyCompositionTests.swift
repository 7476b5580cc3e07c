import GATT
import Support
import Testing

/// Body Composition Measurement 0x2A9C and Body Composition Feature 0x2A9B: `docs/gatt-health-devices.md`,
/// "Body Composition Measurement".
@Suite struct BodyCompositionTests {
    @Test func bodyFatOnly() throws {
        // 250 × 0.1 % = 25 %.
        let value = try BodyCompositionMeasurement(decoding: h("00 00 fa 00"))
        #expect(value == BodyCompositionMeasurement(bodyFat: 250))
        #expect(value.bodyFatFraction == 0.25)
        #expect(!value.isMultiplePacket)
    }

    @Test func everyField() throws {
        let value = try BodyCompositionMeasurement(decoding: h(BodyCompositionVectors.everyField))
        #expect(value.flags == 0x0FFE)
        #expect(value.bodyFatFraction == 0.25)
        #expect(value.timeStamp == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 0))
        #expect(value.userID == 2)
        #expect(value.basalMetabolism == 6500)
        #expect(value.musclePercentage == 400)
        #expect(value.muscleMassKilograms == 28)
        #expect(value.fatFreeMassKilograms == 52.5)
        #expect(value.softLeanMassKilograms == 49)
        #expect(value.bodyWaterMassKilograms == 38.5)
        #expect(value.impedance == 5000)
        #expect(value.weightKilograms == 70)
        #expect(value.heightMeters == 1.75)
        #expect(value.encoded().count == 30)
    }

    @Test func multiplePacketBitIsKept() throws {
        let value = try BodyCompositionMeasurement(decoding: h("00 14 fa 00 b0 36"))
        #expect(value.isMultiplePacket)
        #expect(value.weightKilograms == 70)
        #expect(value.fields.first { $0.name == "multiple_packet" }?.value == .bool(true))
        #expect(value.encoded() == h("00 14 fa 00 b0 36"))
    }

    @Test func imperialAndUnsuccessful() throws {
        let imperial = try BodyCompositionMeasurement(decoding: h("01 04 fa 00 48 3c"))
        #expect(imperial.units == .imperial)
        #expect(abs(try #require(imperial.weightKilograms) - 154.32 * 0.45359237) < 1e-12)
        let failed = try BodyCompositionMeasurement(decoding: h("00 00 ff ff"))
        #expect(failed.isUnsuccessful)
        #expect(failed.bodyFatFraction == nil)
        #expect(failed.fields.first { $0.name == "body_fat_percentage" }?.value == .null)
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("00", .truncated(field: "flags", offset: 0, needed: 2, available: 1)),
        ("00 00 fa", .truncated(field: "body_fat_percentage", offset: 2, needed: 2, available: 1)),
        ("00 04 fa 00 b0", .truncated(field: "weight", offset: 4, needed: 2, available: 1)),
        ("08 00 fa 00", .truncated(field: "basal_metabolism", offset: 4, needed: 2, available: 0)),
        ("00 08 fa 00", .truncated(field: "height", offset: 4, needed: 2, available: 0)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(BodyCompositionMeasurement.self, h(hex)) == error)
    }

    @Test func reservedFlagBitsAreKept() throws {
        let value = try BodyCompositionMeasurement(decoding: h("00 e0 fa 00"))
        #expect(value.reservedFlags == 0xE000)
        #expect(value.encoded() == h("00 e0 fa 00"))
    }

    @Test func featureBits() throws {
        let feature = try BodyCompositionFeature(decoding: h("ff bf 01 00"))
        #expect(feature.multipleUsersSupported)
        #expect(feature.massResolution == 7)
        #expect(feature.heightResolution == 3)
        #expect(feature.fields.filter { $0.value == .bool(true) }.count == 11)
        #expect(decodeError(BodyCompositionFeature.self, h("ff")) == .invalidLength(expected: 4, actual: 1))
    }
}

enum BodyCompositionVectors {
    /// Body fat 25.0 %, 2026-12-02 07:30:00, user 2, basal metabolism 6500 kJ, muscle 40.0 %, muscle mass 28 kg,
    /// fat free mass 52.5 kg, soft lean mass 49 kg, body water 38.5 kg, impedance 500.0 ohm, weight 70 kg,
    /// height 1.750 m (built from the layout).
    static let everyField =
        "fe 0f fa 00 ea 07 0c 02 07 1e 00 02 64 19 90 01 e0 15 04 29 48 26 14 1e 88 13 b0 36 d6 06"
}

extension BodyCompositionMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 00 fa 00", BodyCompositionVectors.everyField, "00 14 fa 00 b0 36", "01 04 fa 00 48 3c", "00 00 ff ff"]
    }

    static func random(using rng: inout SplitMix64) -> BodyCompositionMeasurement {
        BodyCompositionMeasurement(
            units: rng.bool() ? .si : .imperial, bodyFat: rng.uint16(),
            timeStamp: rng.maybe { DateTime.random(using: &$0) }, userID: rng.maybe { $0.uint8() },
            basalMetabolism: rng.maybe { $0.uint16() }, musclePercentage: rng.maybe { $0.uint16() },
            muscleMass: rng.maybe { $0.uint16() }, fatFreeMass: rng.maybe { $0.uint16() },
            softLeanMass: rng.maybe { $0.uint16() }, bodyWaterMass: rng.maybe { $0.uint16() },
            impedance: rng.maybe { $0.uint16() }, weight: rng.maybe { $0.uint16() }, height: rng.maybe { $0.uint16() },
            isMultiplePacket: rng.bool(), reservedFlags: rng.uint16())
    }
}

extension BodyCompositionFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["ff bf 01 00", "00 00 00 00", "ff ff ff ff"] }
    static var fixedLength: Int? { 4 }
    static func random(using rng: inout SplitMix64) -> BodyCompositionFeature {
        BodyCompositionFeature(rawValue: rng.uint32())
    }
}
