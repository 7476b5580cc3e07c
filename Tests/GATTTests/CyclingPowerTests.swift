import GATT
import Support
import TestSupport
import Testing

/// Cycling Power Measurement 0x2A63 and Cycling Power Feature 0x2A65 (`docs/gatt-fitness-machines.md`).
@Suite struct CyclingPowerTests {
    typealias Crank = CSCMeasurement.CrankData

    @Test func powerOnly() throws {
        let value = try CyclingPowerMeasurement(decoding: h("00 00 fa 00"))
        #expect(value.instantaneousPower == 250)
        #expect(value.flags == 0)
        #expect(value.crank == nil && value.wheel == nil && value.accumulatedEnergy == nil)
    }

    @Test func powerIsSigned() throws {
        // A trainer's motor can drive the pedals: -5 W is 0xfffb, not 65531 W.
        #expect(try CyclingPowerMeasurement(decoding: h("00 00 fb ff")).instantaneousPower == -5)
        #expect(try CyclingPowerMeasurement(decoding: h("00 00 00 80")).instantaneousPower == Int16.min)
        #expect(CyclingPowerMeasurement(instantaneousPower: -5).encoded() == h("00 00 fb ff"))
    }

    @Test func crankData() throws {
        let value = try CyclingPowerMeasurement(decoding: h("20 00 fa 00 2c 01 00 04"))
        #expect(value.crank == Crank(cumulativeRevolutions: 300, lastEventTime: 1024))
        #expect(value.flags == 0x0020)
    }

    /// Every field, in the layout's order: flags 0x1fff (all present, reference left, torque at the crank, offset
    /// compensation indicator).
    static let everything = """
        ff 1f fb ff 64 40 01 00 01 00 00 00 08 10 00 00 04 2c 01 ec ff 40 01 e0 ff b4 a0 05 0a 00 be 00 0c 00
        """

    @Test func everyField() throws {
        let value = try CyclingPowerMeasurement(decoding: h(Self.everything))
        #expect(value.instantaneousPower == -5)
        #expect(value.pedalPowerBalance == 100 && value.pedalPowerBalancePercent == 50)
        #expect(value.balanceReferenceIsLeft)
        #expect(value.accumulatedTorque == 0x0140)
        #expect(value.torqueSourceIsCrank)
        #expect(value.wheel == .init(cumulativeRevolutions: 256, lastEventTime: 2048))
        #expect(value.crank == Crank(cumulativeRevolutions: 16, lastEventTime: 1024))
        #expect(value.extremeForces == .init(maximum: 300, minimum: -20))
        #expect(value.extremeTorques == .init(maximum: 320, minimum: -32))
        #expect(value.extremeAngles == .init(maximum: 180, minimum: 90))
        #expect(value.topDeadSpotAngle == 10 && value.bottomDeadSpotAngle == 190)
        #expect(value.accumulatedEnergy == 12)
        #expect(value.offsetCompensationIndicator)
        #expect(value.reservedFlags == 0)
        #expect(value.encoded() == h(Self.everything))
    }

    @Test func anglesAreTwelveBitsEach() throws {
        // Maximum in the low 12 bits, minimum in the high 12: 0xfff and 0x000, then 0x000 and 0xfff.
        let high = try CyclingPowerMeasurement(decoding: h("00 01 00 00 ff 0f 00"))
        #expect(high.extremeAngles == .init(maximum: 0xFFF, minimum: 0))
        let low = try CyclingPowerMeasurement(decoding: h("00 01 00 00 00 f0 ff"))
        #expect(low.extremeAngles == .init(maximum: 0, minimum: 0xFFF))
        #expect(CyclingPowerMeasurement.Angles(maximum: 0xFFFF, minimum: 0x1001) == .init(maximum: 0xFFF, minimum: 1))
    }

    @Test func reservedFlagsAndTrailingBytesAreIgnored() throws {
        let value = try CyclingPowerMeasurement(decoding: h("00 e0 64 00 99 99"))
        #expect(value.reservedFlags == 0xE000)
        #expect(value.instantaneousPower == 100)
        #expect(value.encoded() == h("00 e0 64 00"))
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("00", .truncated(field: "flags", offset: 0, needed: 2, available: 1)),
        ("00 00", .truncated(field: "instantaneous_power", offset: 2, needed: 2, available: 0)),
        ("01 00 fa 00", .truncated(field: "pedal_power_balance", offset: 4, needed: 1, available: 0)),
        ("04 00 fa 00 01", .truncated(field: "accumulated_torque", offset: 4, needed: 2, available: 1)),
        ("10 00 fa 00 01 00 00", .truncated(field: "cumulative_wheel_revolutions", offset: 4, needed: 4, available: 3)),
        ("10 00 fa 00 01 00 00 00 00", .truncated(field: "last_wheel_event_time", offset: 8, needed: 2, available: 1)),
        ("20 00 fa 00 2c 01 00", .truncated(field: "last_crank_event_time", offset: 6, needed: 2, available: 1)),
        ("40 00 fa 00 2c 01", .truncated(field: "minimum_force_magnitude", offset: 6, needed: 2, available: 0)),
        ("80 00 fa 00", .truncated(field: "maximum_torque_magnitude", offset: 4, needed: 2, available: 0)),
        ("00 01 fa 00 b4 a0", .truncated(field: "extreme_angles", offset: 4, needed: 3, available: 2)),
        ("00 02 fa 00", .truncated(field: "top_dead_spot_angle", offset: 4, needed: 2, available: 0)),
        ("00 04 fa 00 be", .truncated(field: "bottom_dead_spot_angle", offset: 4, needed: 2, available: 1)),
        ("00 08 fa 00 0c", .truncated(field: "accumulated_energy", offset: 4, needed: 2, available: 1)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try CyclingPowerMeasurement(decoding: h(hex)) }
    }

    @Test func fields() throws {
        let value = try CyclingPowerMeasurement(decoding: h("20 08 fa 00 2c 01 00 04 0c 00"))
        let json = FieldValue.object(value.fields).json
        #expect(json.contains(#""instantaneous_power":250"#))
        #expect(json.contains(#""cumulative_crank_revolutions":300"#))
        #expect(json.contains(#""accumulated_energy":12"#))
        #expect(json.contains(#""pedal_power_balance":null"#))
    }

    // MARK: Feature

    @Test func featureBits() throws {
        let feature = try CyclingPowerFeature(decoding: h("0c 00 01 00"))
        #expect(feature == [.wheelRevolutionDataSupported, .crankRevolutionDataSupported, .measurementContextIsTorque])
        #expect(try CyclingPowerFeature(decoding: h("00 00 20 00")).distributedSystemSupport == 2)
        let reserved = try CyclingPowerFeature(decoding: h("00 00 c0 ff"))
        #expect(reserved.fields.last?.value == .integer(0xFFC0_0000))
        #expect(feature.encoded() == h("0c 00 01 00"))
    }

    @Test(arguments: ["", "0c", "0c 00 01", "0c 00 01 00 00"])
    func featureOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 4, actual: h(hex).count)) {
            try CyclingPowerFeature(decoding: h(hex))
        }
    }

    @Test func catalogMetadata() {
        #expect(CyclingPowerMeasurement.uuid == BluetoothUUID(UInt16(0x2A63)))
        #expect(CyclingPowerFeature.uuid == BluetoothUUID(UInt16(0x2A65)))
        #expect(BluetoothUUID.cyclingPowerService == BluetoothUUID(UInt16(0x1818)))
        #expect(CharacteristicCatalog.type(named: "cycling-power-measurement") == CyclingPowerMeasurement.self)
        #expect(CharacteristicCatalog.type(named: "2a65") == CyclingPowerFeature.self)
    }
}

// MARK: - Samples for PropertyTests

extension CyclingPowerMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "00 00 fa 00", "00 00 fb ff", "20 00 fa 00 2c 01 00 04", "00 08 00 00 ff ff", "00 e0 00 80",
            "0a 00 00 00", CyclingPowerTests.everything,
        ]
    }

    static func random(using rng: inout SplitMix64) -> CyclingPowerMeasurement {
        func signed(_ rng: inout SplitMix64) -> Int16 { Int16(bitPattern: rng.uint16()) }
        return CyclingPowerMeasurement(
            instantaneousPower: signed(&rng), pedalPowerBalance: rng.maybe { $0.uint8() },
            balanceReferenceIsLeft: rng.bool(), accumulatedTorque: rng.maybe { $0.uint16() },
            torqueSourceIsCrank: rng.bool(),
            wheel: rng.maybe { WheelData(cumulativeRevolutions: $0.uint32(), lastEventTime: $0.uint16()) },
            crank: rng.maybe {
                CSCMeasurement.CrankData(cumulativeRevolutions: $0.uint16(), lastEventTime: $0.uint16())
            },
            extremeForces: rng.maybe { Extremes(maximum: signed(&$0), minimum: signed(&$0)) },
            extremeTorques: rng.maybe { Extremes(maximum: signed(&$0), minimum: signed(&$0)) },
            extremeAngles: rng.maybe { Angles(maximum: $0.uint16(), minimum: $0.uint16()) },
            topDeadSpotAngle: rng.maybe { $0.uint16() }, bottomDeadSpotAngle: rng.maybe { $0.uint16() },
            accumulatedEnergy: rng.maybe { $0.uint16() }, offsetCompensationIndicator: rng.bool(),
            reservedFlags: rng.uint16())
    }
}

extension CyclingPowerFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00 00 00 00", "0c 00 01 00", "ff ff 3f 00", "ff ff ff ff"] }
    static var fixedLength: Int? { 4 }
    static func random(using rng: inout SplitMix64) -> CyclingPowerFeature {
        CyclingPowerFeature(rawValue: rng.uint32())
    }
}
