import GATT
import Testing

/// RSC Measurement 0x2A53 and RSC Feature 0x2A54: `docs/gatt-policy.md`, "RSC Measurement" and "RSC Feature".
@Suite struct RSCTests {
    @Test func currentOpenTracksVectorGivesTheFullDistance() throws {
        // `02 00 05 50 ff ff 00 01`: distance flag, 5 m/s, 80/min, distance 0x0100ffff = 16,842,751 dm.
        let value = try RSCMeasurement(decoding: h("02 00 05 50 ff ff 00 01"))
        #expect(value.speed == 0x0500)
        #expect(value.metersPerSecond == 5.0)
        #expect(value.cadence == 80)
        #expect(value.strideLength == nil)
        #expect(value.strideLengthMeters == nil)
        #expect(value.totalDistance == 16_842_751)
        #expect(value.totalDistanceMeters == 1_684_275.1)
        #expect(!value.isRunning)
        #expect(value.reservedFlags == 0)
    }

    @Test func oldOpenTracksTruncatedDistanceIsRejected() {
        // The old test read 26.8 m out of a 2-byte "uint32".
        #expect(throws: DecodeError.truncated(field: "total_distance", offset: 4, needed: 4, available: 2)) {
            try RSCMeasurement(decoding: h("02 00 05 50 0c 01"))
        }
    }

    @Test func allFieldsRunning() throws {
        let value = try RSCMeasurement(decoding: h("07 00 05 50 7d 00 10 27 00 00"))
        #expect(value.strideLength == 125)
        #expect(value.strideLengthMeters == 1.25)
        #expect(value.totalDistance == 10_000)
        #expect(value.totalDistanceMeters == 1_000.0)
        #expect(value.isRunning)
        #expect(value.flags == 0x07)
    }

    @Test func minimumLengthIsFourBytes() throws {
        let walking = try RSCMeasurement(decoding: h("00 80 02 b4"))
        #expect(walking.metersPerSecond == 2.5)
        #expect(walking.cadence == 180)
        #expect(walking.strideLength == nil && walking.totalDistance == nil)
        #expect(!walking.isRunning)
        #expect(try RSCMeasurement(decoding: h("04 80 02 b4")).isRunning)
    }

    @Test func maximumValues() throws {
        let value = try RSCMeasurement(decoding: h("03 ff ff ff ff ff ff ff ff ff"))
        #expect(value.metersPerSecond == 255.99609375)
        #expect(value.cadence == 255)
        #expect(value.strideLengthMeters == 655.35)
        #expect(value.totalDistanceMeters == 429_496_729.5)
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("00", .truncated(field: "instantaneous_speed", offset: 1, needed: 2, available: 0)),
        ("00 00", .truncated(field: "instantaneous_speed", offset: 1, needed: 2, available: 1)),
        ("00 00 05", .truncated(field: "instantaneous_cadence", offset: 3, needed: 1, available: 0)),
        ("01 00 05 50", .truncated(field: "instantaneous_stride_length", offset: 4, needed: 2, available: 0)),
        ("01 00 05 50 7d", .truncated(field: "instantaneous_stride_length", offset: 4, needed: 2, available: 1)),
        ("02 00 05 50", .truncated(field: "total_distance", offset: 4, needed: 4, available: 0)),
        ("02 00 05 50 0c 01", .truncated(field: "total_distance", offset: 4, needed: 4, available: 2)),
        ("03 00 05 50 7d 00 10 27 00", .truncated(field: "total_distance", offset: 6, needed: 4, available: 3)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try RSCMeasurement(decoding: h(hex)) }
    }

    @Test func reservedFlagBitsAreDecodedNormallyAndKept() throws {
        let value = try RSCMeasurement(decoding: h("fe 00 05 50 ff ff 00 01"))
        #expect(value.reservedFlags == 0xF8)
        #expect(value.totalDistance == 16_842_751)
        #expect(value.isRunning)
        #expect(value.encoded() == h("fe 00 05 50 ff ff 00 01"))
    }

    @Test func bytesAfterTheLastAnnouncedFieldAreIgnored() throws {
        let value = try RSCMeasurement(decoding: h("00 00 05 50 aa bb cc"))
        #expect(value == RSCMeasurement(speed: 0x0500, cadence: 0x50))
        #expect(value.encoded() == h("00 00 05 50"))
    }

    @Test func fieldsUseSIUnitsAndNullForAbsentFields() throws {
        let value = try RSCMeasurement(decoding: h("02 00 05 50 ff ff 00 01"))
        #expect(
            value.fields.map(\.name) == [
                "flags", "instantaneous_speed", "instantaneous_cadence", "instantaneous_stride_length",
                "total_distance",
                "walking_or_running", "reserved_flags",
            ])
        #expect(value.fields.map(\.unit) == [nil, "m/s", "count/min", "m", "m", nil, nil])
        #expect(
            FieldValue.object(value.fields).json == """
                {"flags":2,"instantaneous_speed":5.0,"instantaneous_cadence":80,"instantaneous_stride_length":null,\
                "total_distance":1684275.1,"walking_or_running":"walking","reserved_flags":0}
                """)
        let running = try RSCMeasurement(decoding: h("05 00 05 50 7d 00"))
        #expect(running.fields.first { $0.name == "walking_or_running" }?.value == .string("running"))
        #expect(running.fields.first { $0.name == "instantaneous_stride_length" }?.value == .double(1.25))
    }

    @Test func encodesWithFlagsDerivedFromTheFields() {
        #expect(
            RSCMeasurement(speed: 0x0500, cadence: 80, totalDistance: 0x0100_FFFF).encoded()
                == h("02 00 05 50 ff ff 00 01"))
        #expect(
            RSCMeasurement(speed: 0x0500, cadence: 80, strideLength: 125, totalDistance: 10_000, isRunning: true)
                .encoded() == h("07 00 05 50 7d 00 10 27 00 00"))
        #expect(RSCMeasurement(speed: 0, cadence: 0, reservedFlags: 0xFF).encoded() == h("f8 00 00 00"))
        #expect(RSCMeasurement(speed: 0, cadence: 0, reservedFlags: 0x07).reservedFlags == 0)
    }

    // MARK: RSC Feature

    @Test func featureBits() throws {
        let all = try RSCFeature(decoding: h("1f 00"))
        #expect(all.contains(.strideLengthSupported))
        #expect(all.contains(.totalDistanceSupported))
        #expect(all.contains(.walkingOrRunningStatusSupported))
        #expect(all.contains(.calibrationSupported))
        #expect(all.contains(.multipleSensorLocationsSupported))
        #expect(
            all == [
                .strideLengthSupported, .totalDistanceSupported, .walkingOrRunningStatusSupported,
                .calibrationSupported,
                .multipleSensorLocationsSupported,
            ])
        let walkingOnly = try RSCFeature(decoding: h("04 00"))
        #expect(walkingOnly == .walkingOrRunningStatusSupported)
        #expect(!walkingOnly.contains(.strideLengthSupported))
        #expect(try RSCFeature(decoding: h("00 00")).isEmpty)
        #expect(try RSCFeature(decoding: h("00 01")).rawValue == 0x0100)
    }

    @Test func featureReservedBitsAreKeptAndReported() throws {
        let value = try RSCFeature(decoding: h("e0 ff"))
        #expect(value.rawValue == 0xFFE0)
        #expect(!value.contains(.strideLengthSupported))
        #expect(value.fields.first { $0.name == "reserved_bits" }?.value == .integer(0xFFE0))
        #expect(
            FieldValue.object(try RSCFeature(decoding: h("05 00")).fields).json == """
                {"value":5,"stride_length_supported":true,"total_distance_supported":false,\
                "walking_or_running_status_supported":true,"calibration_supported":false,\
                "multiple_sensor_locations_supported":false,"reserved_bits":0}
                """)
    }

    @Test(arguments: ["", "1f", "1f 00 00", "1f 00 00 00 00"])
    func featureOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 2, actual: h(hex).count)) {
            try RSCFeature(decoding: h(hex))
        }
    }

    @Test func featureEncodesLittleEndian() {
        #expect(RSCFeature(rawValue: 0x1234).encoded() == h("34 12"))
        #expect(RSCFeature([.totalDistanceSupported, .walkingOrRunningStatusSupported]).encoded() == h("06 00"))
    }

    @Test func catalogMetadata() {
        #expect(RSCMeasurement.uuid.description == "00002a53-0000-1000-8000-00805f9b34fb")
        #expect(RSCFeature.uuid.description == "00002a54-0000-1000-8000-00805f9b34fb")
        #expect(RSCMeasurement.name == "rsc-measurement")
        #expect(RSCFeature.name == "rsc-feature")
    }
}
