import GATT
import Testing

/// CSC Measurement 0x2A5B, CSC Feature 0x2A5C and the rollover arithmetic of `docs/gatt-policy.md`, "CSC Measurement".
@Suite struct CSCTests {
    typealias Wheel = CSCMeasurement.WheelData
    typealias Crank = CSCMeasurement.CrankData

    @Test func wheelAndCrank() throws {
        let value = try CSCMeasurement(decoding: h("03 10 00 00 00 00 04 05 00 00 08"))
        #expect(value.wheel == Wheel(cumulativeRevolutions: 16, lastEventTime: 1024))
        #expect(value.crank == Crank(cumulativeRevolutions: 5, lastEventTime: 2048))
        #expect(value.flags == 0x03)
        #expect(value.reservedFlags == 0)
    }

    @Test func flagBitZeroIsWheelAndBitOneIsCrank() throws {
        // The old OpenTracks tests had these swapped (the same section, and "Mistakes others make", 6).
        let wheelOnly = try CSCMeasurement(decoding: h("01 10 00 00 00 00 04"))
        #expect(wheelOnly.wheel == Wheel(cumulativeRevolutions: 16, lastEventTime: 1024))
        #expect(wheelOnly.crank == nil)
        let crankOnly = try CSCMeasurement(decoding: h("02 05 00 00 08"))
        #expect(crankOnly.wheel == nil)
        #expect(crankOnly.crank == Crank(cumulativeRevolutions: 5, lastEventTime: 2048))
    }

    @Test func flagsOnlyMeansNoData() throws {
        let value = try CSCMeasurement(decoding: h("00"))
        #expect(value.wheel == nil && value.crank == nil)
        let reserved = try CSCMeasurement(decoding: h("fe 05 00 00 08"))
        #expect(reserved.reservedFlags == 0xFC)
        #expect(reserved.crank == Crank(cumulativeRevolutions: 5, lastEventTime: 2048))
        #expect(reserved.encoded() == h("fe 05 00 00 08"))
    }

    @Test func bytesAfterTheLastAnnouncedFieldAreIgnored() throws {
        #expect(try CSCMeasurement(decoding: h("02 05 00 00 08 ff ff")).encoded() == h("02 05 00 00 08"))
        #expect(try CSCMeasurement(decoding: h("00 01 02 03")) == CSCMeasurement())
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("01", .truncated(field: "cumulative_wheel_revolutions", offset: 1, needed: 4, available: 0)),
        ("01 10 00 00", .truncated(field: "cumulative_wheel_revolutions", offset: 1, needed: 4, available: 3)),
        ("01 10 00 00 00 00", .truncated(field: "last_wheel_event_time", offset: 5, needed: 2, available: 1)),
        ("02 05", .truncated(field: "cumulative_crank_revolutions", offset: 1, needed: 2, available: 1)),
        ("02 05 00 00", .truncated(field: "last_crank_event_time", offset: 3, needed: 2, available: 1)),
        ("03 10 00 00 00 00 04", .truncated(field: "cumulative_crank_revolutions", offset: 7, needed: 2, available: 0)),
        (
            "03 10 00 00 00 00 04 05 00 00",
            .truncated(field: "last_crank_event_time", offset: 9, needed: 2, available: 1)
        ),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try CSCMeasurement(decoding: h(hex)) }
    }

    @Test func fields() throws {
        let value = try CSCMeasurement(decoding: h("02 05 00 00 08"))
        #expect(
            FieldValue.object(value.fields).json == """
                {"flags":2,"cumulative_wheel_revolutions":null,"last_wheel_event_time":null,\
                "cumulative_crank_revolutions":5,"last_crank_event_time":2048,"reserved_flags":0}
                """)
    }

    @Test func encodes() {
        let value = CSCMeasurement(
            wheel: Wheel(cumulativeRevolutions: 0x0102_0304, lastEventTime: 0x0506),
            crank: Crank(cumulativeRevolutions: 0x0708, lastEventTime: 0x090A))
        #expect(value.encoded() == h("03 04 03 02 01 06 05 08 07 0a 09"))
        #expect(CSCMeasurement().encoded() == h("00"))
        #expect(CSCMeasurement(reservedFlags: 0xFF).encoded() == h("fc"))
    }

    // MARK: Deltas

    static func measurement(wheel: (UInt32, UInt16)? = nil, crank: (UInt16, UInt16)? = nil) -> CSCMeasurement {
        CSCMeasurement(
            wheel: wheel.map { Wheel(cumulativeRevolutions: $0.0, lastEventTime: $0.1) },
            crank: crank.map { Crank(cumulativeRevolutions: $0.0, lastEventTime: $0.1) })
    }

    @Test func deltaWithoutRollover() {
        let previous = Self.measurement(wheel: (100, 1024), crank: (10, 1024))
        let current = Self.measurement(wheel: (104, 2048), crank: (11, 2048))
        let delta = current.delta(since: previous)
        #expect(delta == CSCDelta(wheelRevolutions: 4, wheelEventTime: 1024, crankRevolutions: 1, crankEventTime: 1024))
        #expect(delta.wheelRevolutionsPerSecond == 4.0)
        #expect(delta.wheelSpeed(circumference: 2.105) == 8.42)
        #expect(delta.crankCadence == 60.0)
    }

    @Test func wheelCounterWrapsAtTwoToThe32() {
        let previous = Self.measurement(wheel: (0xFFFF_FFFE, 0xFF00))
        let current = Self.measurement(wheel: (0x0000_0003, 0x0300))
        let delta = current.delta(since: previous)
        #expect(delta.wheelRevolutions == 5)
        #expect(delta.wheelEventTime == 0x0400)
        #expect(delta.wheelRevolutionsPerSecond == 5.0)
        #expect(delta.wheelSpeed(circumference: 2.0) == 10.0)
        #expect(delta.crankRevolutions == nil && delta.crankCadence == nil)
    }

    @Test func crankCounterAndEventTimeWrapAtTwoToThe16() {
        let previous = Self.measurement(crank: (0xFFFF, 0xFE00))
        let current = Self.measurement(crank: (0x0001, 0x0200))
        let delta = current.delta(since: previous)
        #expect(delta.crankRevolutions == 2)
        #expect(delta.crankEventTime == 0x0400)
        #expect(delta.crankCadence == 120.0)
        #expect(delta.wheelRevolutions == nil && delta.wheelRevolutionsPerSecond == nil)
        #expect(delta.wheelSpeed(circumference: 2.0) == nil)
    }

    @Test func eventTimeWrapAloneIsHandled() throws {
        // Decoded from the wire: crank 90 @ 0xfc00, then 91 @ 0x0000 (one revolution in 1 s across the wrap).
        let previous = try CSCMeasurement(decoding: h("02 5a 00 00 fc"))
        let current = try CSCMeasurement(decoding: h("02 5b 00 00 00"))
        let delta = current.delta(since: previous)
        #expect(delta.crankEventTime == 1024)
        #expect(delta.crankCadence == 60.0)
    }

    @Test func zeroEventTimeDeltaGivesNoRate() {
        // Δt = 0: no new event since the previous notification. Never divide by zero.
        let previous = Self.measurement(wheel: (100, 5000), crank: (10, 5000))
        let repeated = Self.measurement(wheel: (100, 5000), crank: (10, 5000))
        let delta = repeated.delta(since: previous)
        #expect(delta.wheelRevolutions == 0 && delta.wheelEventTime == 0)
        #expect(delta.crankCadence == nil)
        #expect(delta.wheelRevolutionsPerSecond == nil)
        #expect(delta.wheelSpeed(circumference: 2.1) == nil)
        // A glitch with revolutions but no time is not a rate either.
        let glitch = Self.measurement(wheel: (103, 5000), crank: (12, 5000)).delta(since: previous)
        #expect(glitch.crankCadence == nil)
        #expect(glitch.wheelRevolutionsPerSecond == nil)
    }

    @Test func aBlockMissingOnEitherSideGivesNoDelta() {
        let both = Self.measurement(wheel: (1, 1), crank: (1, 1))
        let wheelOnly = Self.measurement(wheel: (2, 2))
        let crankOnly = Self.measurement(crank: (2, 2))
        #expect(wheelOnly.delta(since: both) == CSCDelta(wheelRevolutions: 1, wheelEventTime: 1))
        #expect(crankOnly.delta(since: both) == CSCDelta(crankRevolutions: 1, crankEventTime: 1))
        #expect(both.delta(since: crankOnly) == CSCDelta(crankRevolutions: 0xFFFF, crankEventTime: 0xFFFF))
        #expect(wheelOnly.delta(since: crankOnly) == CSCDelta())
    }

    @Test func deltaFields() {
        let delta = Self.measurement(crank: (0x0001, 0x0200)).delta(since: Self.measurement(crank: (0xFFFF, 0xFE00)))
        #expect(
            FieldValue.object(delta.fields).json == """
                {"wheel_revolutions":null,"wheel_event_time":null,"crank_revolutions":2,"crank_event_time":1024,\
                "wheel_revolutions_per_second":null,"crank_cadence":120.0}
                """)
    }

    // MARK: CSC Feature

    @Test func featureBits() throws {
        let all = try CSCFeature(decoding: h("07 00"))
        #expect(
            all == [.wheelRevolutionDataSupported, .crankRevolutionDataSupported, .multipleSensorLocationsSupported])
        #expect(try CSCFeature(decoding: h("01 00")) == .wheelRevolutionDataSupported)
        #expect(try CSCFeature(decoding: h("02 00")) == .crankRevolutionDataSupported)
        let reserved = try CSCFeature(decoding: h("f8 ff"))
        #expect(reserved.isDisjoint(with: all))
        #expect(reserved.fields.first { $0.name == "reserved_bits" }?.value == .integer(0xFFF8))
        #expect(
            FieldValue.object(try CSCFeature(decoding: h("03 00")).fields).json == """
                {"value":3,"wheel_revolution_data_supported":true,"crank_revolution_data_supported":true,\
                "multiple_sensor_locations_supported":false,"reserved_bits":0}
                """)
    }

    @Test(arguments: ["", "07", "07 00 00"])
    func featureOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 2, actual: h(hex).count)) {
            try CSCFeature(decoding: h(hex))
        }
    }

    @Test func catalogMetadata() {
        #expect(CSCMeasurement.uuid == BluetoothUUID(UInt16(0x2A5B)))
        #expect(CSCFeature.uuid == BluetoothUUID(UInt16(0x2A5C)))
        #expect(CSCMeasurement.name == "csc-measurement")
        #expect(CSCFeature.name == "csc-feature")
    }
}
