import GATT
import Testing

/// Heart Rate Measurement 0x2A37: the layout and edge cases of `docs/gatt-policy.md`, "Heart Rate Measurement", and
/// its "Values seen on real devices".
@Suite struct HeartRateMeasurementTests {
    typealias Contact = HeartRateMeasurement.SensorContact

    struct Expected: Sendable, CustomTestStringConvertible {
        var hex: String
        var heartRate: UInt16
        var format: HeartRateMeasurement.ValueFormat = .uint8
        var contact: Contact
        var energy: UInt16? = nil
        var rr: [UInt16] = []
        var reserved: UInt8 = 0
        var testDescription: String { hex }
    }

    static let realDevices: [Expected] = [
        // Polar H7, gatttool (cal-id/Polar-H7-Pi): contact supported and detected; RR 1041 and 1013.
        Expected(hex: "06 3c", heartRate: 60, contact: .detected),
        Expected(hex: "16 3c 11 04", heartRate: 60, contact: .detected, rr: [1041]),
        Expected(hex: "16 3c f5 03", heartRate: 60, contact: .detected, rr: [1013]),
        // Polar H10 "690A1321" via BlueZ: flags 0x10, contact bits 00 while worn.
        Expected(hex: "10 39 c9 03", heartRate: 57, contact: .notSupported, rr: [969]),
        Expected(hex: "10 3a c0 03", heartRate: 58, contact: .notSupported, rr: [960]),
        Expected(hex: "10 3a e3 03", heartRate: 58, contact: .notSupported, rr: [995]),
        Expected(hex: "10 3b ec 03", heartRate: 59, contact: .notSupported, rr: [1004]),
        Expected(hex: "10 36 c1 03", heartRate: 54, contact: .notSupported, rr: [961]),
        Expected(hex: "10 37 0c 04", heartRate: 55, contact: .notSupported, rr: [1036]),
        Expected(hex: "00 37", heartRate: 55, contact: .notSupported),
        Expected(hex: "10 38 03 04", heartRate: 56, contact: .notSupported, rr: [1027]),
        Expected(hex: "10 38 6e 04", heartRate: 56, contact: .notSupported, rr: [1134]),
        // Mi Smart Band 4 via bleak: flags 0x00 + uint8, not a big-endian uint16 ("Mistakes others make", 4).
        Expected(hex: "00 44", heartRate: 68, contact: .notSupported),
        Expected(hex: "00 4c", heartRate: 76, contact: .notSupported),
        Expected(hex: "00 4b", heartRate: 75, contact: .notSupported),
        Expected(hex: "00 56", heartRate: 86, contact: .notSupported),
        Expected(hex: "00 55", heartRate: 85, contact: .notSupported),
        Expected(hex: "00 4f", heartRate: 79, contact: .notSupported),
        // OpenTracks test: contact bits 01 (0x02 only) mean "not supported".
        Expected(hex: "02 3c", heartRate: 60, contact: .notSupported),
    ]

    static let decodedEdgeCases: [Expected] = [
        // Contact status is the 2-bit value (flags >> 1) & 3.
        Expected(hex: "00 3c", heartRate: 60, contact: .notSupported),
        Expected(hex: "02 3c", heartRate: 60, contact: .notSupported),
        Expected(hex: "04 3c", heartRate: 60, contact: .notDetected),
        Expected(hex: "06 3c", heartRate: 60, contact: .detected),
        // uint16 heart rate, also below 256.
        Expected(hex: "01 2c 01", heartRate: 300, format: .uint16, contact: .notSupported),
        Expected(hex: "01 3c 00", heartRate: 60, format: .uint16, contact: .notSupported),
        Expected(hex: "01 ff ff", heartRate: 65535, format: .uint16, contact: .notSupported),
        // Energy expended, saturated at 0xFFFF (a valid value).
        Expected(hex: "08 3c 10 00", heartRate: 60, contact: .notSupported, energy: 16),
        Expected(hex: "08 3c ff ff", heartRate: 60, contact: .notSupported, energy: 0xFFFF),
        Expected(
            hex: "19 2c 01 ff ff 11 04", heartRate: 300, format: .uint16, contact: .notSupported, energy: 0xFFFF,
            rr: [1041]),
        // RR flag clear: bytes after the last field are ignored (policy).
        Expected(hex: "06 3c ff ee dd", heartRate: 60, contact: .detected),
        Expected(hex: "0e 3c 10 00 aa", heartRate: 60, contact: .detected, energy: 16),
        Expected(hex: "01 3c 00 11", heartRate: 60, format: .uint16, contact: .notSupported),
        // Reserved bits 5-7: decoded normally, kept.
        Expected(hex: "e6 3c", heartRate: 60, contact: .detected, reserved: 0xE0),
        Expected(hex: "36 3c 11 04", heartRate: 60, contact: .detected, rr: [1041], reserved: 0x20),
        Expected(hex: "f6 3c 11 04 f5 03", heartRate: 60, contact: .detected, rr: [1041, 1013], reserved: 0xE0),
        // 0 bpm decodes as 0 (policy: the sample builder decides).
        Expected(hex: "04 00", heartRate: 0, contact: .notDetected),
        // RR values are oldest first and span 0...65535.
        Expected(hex: "10 3c 00 00 ff ff 00 04", heartRate: 60, contact: .notSupported, rr: [0, 65535, 1024]),
    ]

    @Test(arguments: realDevices + decodedEdgeCases)
    func decodes(_ expected: Expected) throws {
        let value = try HeartRateMeasurement(decoding: h(expected.hex))
        #expect(value.heartRate == expected.heartRate)
        #expect(value.format == expected.format)
        #expect(value.sensorContact == expected.contact)
        #expect(value.energyExpended == expected.energy)
        #expect(Array(value.rrIntervals) == expected.rr)
        #expect(value.reservedFlags == expected.reserved)
    }

    static let errors: [(hex: String, error: DecodeError)] = [
        ("", .empty),
        // Flags only, and a uint16 heart rate missing its MSB.
        ("06", .truncated(field: "heart_rate", offset: 1, needed: 1, available: 0)),
        ("01", .truncated(field: "heart_rate", offset: 1, needed: 2, available: 0)),
        ("01 3c", .truncated(field: "heart_rate", offset: 1, needed: 2, available: 1)),
        // Energy flag set, energy absent or one byte: at offset 2 after a uint8 rate, 3 after a uint16 rate.
        ("08 3c", .truncated(field: "energy_expended", offset: 2, needed: 2, available: 0)),
        ("08 3c 10", .truncated(field: "energy_expended", offset: 2, needed: 2, available: 1)),
        ("09 2c 01", .truncated(field: "energy_expended", offset: 3, needed: 2, available: 0)),
        ("09 2c 01 10", .truncated(field: "energy_expended", offset: 3, needed: 2, available: 1)),
        // Energy flag and RR flag, energy one byte: energy is what is missing.
        ("18 3c 10", .truncated(field: "energy_expended", offset: 2, needed: 2, available: 1)),
        // RR flag set with no RR bytes ("one or more values are present").
        ("10 3c", .truncated(field: "rr_interval", offset: 2, needed: 2, available: 0)),
        ("17 01 01", .truncated(field: "rr_interval", offset: 3, needed: 2, available: 0)),  // Nordic's invalid vector
        ("18 3c 10 00", .truncated(field: "rr_interval", offset: 4, needed: 2, available: 0)),
        // Odd trailing RR byte: malformed, at the offset of the lone byte.
        (
            "10 3c 11",
            .malformed(field: "rr_interval", offset: 2, reason: "one byte left over after 0 whole RR intervals")
        ),
        (
            "10 3c 11 04 f5",
            .malformed(field: "rr_interval", offset: 4, reason: "one byte left over after 1 whole RR intervals")
        ),
        (
            "1f 2c 01 10 00 11 04 f5 03 00",
            .malformed(field: "rr_interval", offset: 9, reason: "one byte left over after 2 whole RR intervals")
        ),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try HeartRateMeasurement(decoding: h(hex)) }
    }

    @Test func errorKindsFieldsAndOffsetsMatchTheVectorConventions() {
        let energy = decodeError(HeartRateMeasurement.self, h("08 3c"))
        #expect(energy?.kind == "truncated")
        #expect(energy?.field == "energy_expended")
        #expect(energy?.offset == 2)
        let odd = decodeError(HeartRateMeasurement.self, h("10 3c 11 04 f5"))
        #expect(odd?.kind == "malformed")
        #expect(odd?.field == "rr_interval")
        #expect(odd?.offset == 4)
        #expect(decodeError(HeartRateMeasurement.self, [])?.kind == "empty")
        #expect(decodeError(HeartRateMeasurement.self, [])?.offset == 0)
        #expect(decodeError(HeartRateMeasurement.self, h("06"))?.field == "heart_rate")
    }

    @Test(arguments: [1, 9, 10, 11, 12, 13, 20, 64, 200])
    func rrIntervalsAreNotCapped(count: Int) throws {
        let intervals = (0..<count).map { UInt16(truncatingIfNeeded: 700 + $0 * 13) }
        var bytes = h("10 48")
        for interval in intervals { bytes += [UInt8(interval & 0xFF), UInt8(interval >> 8)] }
        let value = try HeartRateMeasurement(decoding: bytes)
        #expect(value.rrIntervals.count == count)
        #expect(Array(value.rrIntervals) == intervals)
        #expect(value.encoded() == bytes)
        #expect(value.rrIntervals == RRIntervals(intervals))
        #expect(value == HeartRateMeasurement(heartRate: 0x48, rrIntervals: RRIntervals(intervals)))
    }

    @Test func rrIntervalsInSecondsAndMilliseconds() throws {
        let value = try HeartRateMeasurement(decoding: h("10 3c 00 04 00 02 11 04"))
        let seconds: [Double] = [1.0, 0.5, 1041.0 / 1024]
        #expect(value.rrIntervals.seconds == seconds)
        let json = FieldValue.object(value.fields).json
        #expect(json.contains(#""rr_intervals":[1024,512,1041]"#))
        #expect(json.contains(#""rr_intervals_ms":[1000.0,500.0,1016.6015625]"#))
    }

    @Test func saturatedEnergyIsFlaggedNotInvalid() throws {
        let saturated = try HeartRateMeasurement(decoding: h("08 3c ff ff"))
        #expect(saturated.energyExpended == HeartRateMeasurement.energySaturated)
        #expect(saturated.isEnergySaturated)
        #expect(
            FieldValue.object(saturated.fields).json.contains(
                #""energy_expended":65535,"energy_expended_saturated":true"#))
        let below = try HeartRateMeasurement(decoding: h("08 3c fe ff"))
        #expect(!below.isEnergySaturated)
        #expect(try !HeartRateMeasurement(decoding: h("00 3c")).isEnergySaturated)
    }

    @Test func fieldsOfAPolarH7Notification() throws {
        let value = try HeartRateMeasurement(decoding: h("16 3c 11 04"))
        #expect(
            value.fields.map(\.name) == [
                "flags", "heart_rate", "heart_rate_format", "sensor_contact", "sensor_contact_supported",
                "sensor_contact_detected", "energy_expended", "energy_expended_saturated", "rr_intervals",
                "rr_intervals_ms", "reserved_flags",
            ])
        #expect(value.fields.first { $0.name == "heart_rate" }?.unit == "count/min")
        #expect(value.fields.first { $0.name == "energy_expended" }?.unit == "kJ")
        #expect(
            FieldValue.object(value.fields).json == """
                {"flags":22,"heart_rate":60,"heart_rate_format":"uint8","sensor_contact":"detected",\
                "sensor_contact_supported":true,"sensor_contact_detected":true,"energy_expended":null,\
                "energy_expended_saturated":false,"rr_intervals":[1041],"rr_intervals_ms":[1016.6015625],\
                "reserved_flags":0}
                """)
    }

    @Test(arguments: [
        ("00 3c", "not_supported", false, FieldValue.null),
        ("02 3c", "not_supported", false, FieldValue.null),
        ("04 3c", "not_detected", true, FieldValue.bool(false)),
        ("06 3c", "detected", true, FieldValue.bool(true)),
    ])
    func contactFields(_ hex: String, _ name: String, _ supported: Bool, _ detected: FieldValue) throws {
        let fields = try HeartRateMeasurement(decoding: h(hex)).fields
        #expect(fields.first { $0.name == "sensor_contact" }?.value == .string(name))
        #expect(fields.first { $0.name == "sensor_contact_supported" }?.value == .bool(supported))
        #expect(fields.first { $0.name == "sensor_contact_detected" }?.value == detected)
    }

    @Test func uint16FormatFieldAndReservedFlagsField() throws {
        let value = try HeartRateMeasurement(decoding: h("e1 2c 01"))
        let fields = value.fields
        #expect(fields.first { $0.name == "heart_rate_format" }?.value == .string("uint16"))
        #expect(fields.first { $0.name == "heart_rate" }?.value == .integer(300))
        #expect(fields.first { $0.name == "reserved_flags" }?.value == .integer(0xE0))
    }

    // MARK: Encoding

    @Test func encodesWithFlagsDerivedFromTheFields() {
        #expect(
            HeartRateMeasurement(heartRate: 60, sensorContact: .detected, rrIntervals: [1041]).encoded()
                == h("16 3c 11 04"))
        #expect(HeartRateMeasurement(heartRate: 68).encoded() == h("00 44"))
        #expect(HeartRateMeasurement(heartRate: 300).encoded() == h("01 2c 01"))
        #expect(HeartRateMeasurement(heartRate: 60, format: .uint16).encoded() == h("01 3c 00"))
        #expect(
            HeartRateMeasurement(heartRate: 60, sensorContact: .notDetected, energyExpended: 0xFFFF).encoded()
                == h("0c 3c ff ff"))
        #expect(
            HeartRateMeasurement(heartRate: 60, energyExpended: 16, rrIntervals: [1041, 1013]).encoded()
                == h("18 3c 10 00 11 04 f5 03"))
        #expect(HeartRateMeasurement(heartRate: 60, reservedFlags: 0xFF).encoded() == h("e0 3c"))
    }

    @Test func defaultFormatFollowsTheValue() {
        #expect(HeartRateMeasurement(heartRate: 255).format == .uint8)
        #expect(HeartRateMeasurement(heartRate: 256).format == .uint16)
        #expect(HeartRateMeasurement(heartRate: 60, reservedFlags: 0x1F).reservedFlags == 0)
    }

    @Test func contactBitsZeroOneMeanNotSupportedButAreKeptAsSent() throws {
        // 0b01 and 0b00 both mean "not supported"; the bits as sent survive re-encoding and show in `flags`.
        let value = try HeartRateMeasurement(decoding: h("02 3c"))
        let plain = try HeartRateMeasurement(decoding: h("00 3c"))
        #expect(value.sensorContact == plain.sensorContact)
        #expect(value.sensorContactBits == 1)
        #expect(value.encoded() == h("02 3c"))
        #expect(value.fields.first == Field("flags", .int(2)))
    }

    @Test func aValueAbove255IsAlwaysSentAsUInt16() {
        let value = HeartRateMeasurement(heartRate: 300, format: .uint8)
        #expect(value.format == .uint16)
        #expect(value.encoded() == h("01 2c 01"))
    }

    @Test func rrIntervalsCollection() throws {
        let built: RRIntervals = [1041, 1013, 0, 65535]
        #expect(built.count == 4)
        #expect(built[0] == 1041)
        #expect(built[3] == 65535)
        #expect(built == RRIntervals([1041, 1013, 0, 65535]))
        #expect(built != RRIntervals([1041, 1013, 0]))
        #expect(RRIntervals([]).isEmpty)
        // A decoded list is a view into the received bytes; it still compares by value.
        let decoded = try HeartRateMeasurement(decoding: h("10 3c 11 04 f5 03 00 00 ff ff")).rrIntervals
        #expect(decoded == built)
        #expect(Array(decoded.reversed()) == [65535, 0, 1013, 1041])
        #expect(RRIntervals() == [])
        #expect(RRIntervals().count == 0)
    }

    @Test func rrIntervalsAroundTheInlineCapacity() {
        let capacity = RRIntervals.inlineCapacity
        for count in [capacity - 1, capacity, capacity + 1, 2 * capacity] {
            let values = (0..<count).map { UInt16(900 + $0) }
            let intervals = RRIntervals(values)
            #expect(intervals.count == count)
            #expect(Array(intervals) == values)
            #expect(intervals.last == UInt16(900 + count - 1))
            // Lists of different lengths never compare equal, whichever storage they use.
            #expect(intervals != RRIntervals(Array(values.dropLast())))
            #expect(intervals != RRIntervals(values + [0]))
        }
    }

    @Test func identicalPayloadsDecodeToEqualValues() throws {
        // The H10 sends `10 3b ec 03` twice in a row; both are samples (no de-duplication in the decoder).
        let first = try HeartRateMeasurement(decoding: h("10 3b ec 03"))
        let second = try HeartRateMeasurement(decoding: h("10 3b ec 03"))
        #expect(first == second)
    }

    @Test func catalogMetadata() {
        #expect(HeartRateMeasurement.uuid == BluetoothUUID(UInt16(0x2A37)))
        #expect(HeartRateMeasurement.name == "heart-rate-measurement")
        #expect(CharacteristicCatalog.type(for: .heartRateMeasurement) == HeartRateMeasurement.self)
    }
}
