import GATT
import Testing

/// PAMS Step Counter Activity Summary Data 0x2B40 (layout from `docs/gatt-policy.md`, low confidence) and the
/// InfiniTime step count characteristic.
@Suite struct PAMSAndVendorTests {
    @Test func allOptionalFields() throws {
        let value = try StepCounterActivitySummaryData(decoding: h(PAMSVectors.allFields))
        #expect(value.header == 0x80)
        #expect(value.flags == 0x1F)
        #expect(value.sessionID == 1)
        #expect(value.subSessionID == 2)
        #expect(value.relativeTimestamp == 3600)
        #expect(value.sequenceNumber == 5)
        #expect(value.normalWalkingSteps == 10_972)
        #expect(value.intensitySteps == 500)
        #expect(value.floorSteps == 12)
        #expect(value.distance == 7874)
        #expect(value.wornDuration == 3600)
        #expect(value.totalSteps == 11_484)
        #expect(value.reservedFlags == 0)
        #expect(
            FieldValue.object(value.fields).json == """
                {"header":128,"flags":31,"session_id":1,"sub_session_id":2,"relative_timestamp":3600,\
                "sequence_number":5,"normal_walking_steps":10972,"intensity_steps":500,"floor_steps":12,\
                "distance":7874,"worn_duration":3600,"total_steps":11484}
                """)
    }

    @Test func noOptionalFields() throws {
        let value = try StepCounterActivitySummaryData(decoding: h(PAMSVectors.noOptionalFields))
        #expect(value.sessionID == 7)
        #expect(value.sequenceNumber == 1)
        #expect(value.normalWalkingSteps == nil && value.intensitySteps == nil && value.floorSteps == nil)
        #expect(value.distance == nil && value.wornDuration == nil)
        #expect(value.totalSteps == nil)
        #expect(FieldValue.object(value.fields).json.contains(#""normal_walking_steps":null"#))
        #expect(FieldValue.object(value.fields).json.hasSuffix(#""total_steps":null}"#))
    }

    @Test func optionalFieldsFollowFlagOrder() throws {
        // flags 0x05: normal walking steps then floor steps; intensity (bit 1) is skipped.
        let value = try StepCounterActivitySummaryData(decoding: h(PAMSVectors.walkingAndFloor))
        #expect(value.header == 0x81)
        #expect(value.relativeTimestamp == 60)
        #expect(value.normalWalkingSteps == 10)
        #expect(value.intensitySteps == nil)
        #expect(value.floorSteps == 3)
        #expect(value.totalSteps == 13)
        // Each flag alone selects the field at offset 14.
        let base = "80 00 01 00 00 00 00 00 00 00 00 00 00 00 2a 00 00"
        let fields: [(UInt8, KeyPath<StepCounterActivitySummaryData, UInt32?>)] = [
            (0x01, \.normalWalkingSteps), (0x02, \.intensitySteps), (0x04, \.floorSteps), (0x08, \.distance),
            (0x10, \.wornDuration),
        ]
        for (bit, path) in fields {
            var bytes = h(base)
            bytes[1] = bit
            let decoded = try StepCounterActivitySummaryData(decoding: bytes)
            #expect(decoded[keyPath: path] == 42, "flag \(bit)")
        }
    }

    @Test func largestStepCountsDoNotOverflowTheTotal() throws {
        let value = try StepCounterActivitySummaryData(
            decoding: h("80 07 00 00 00 00 00 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff ff"))
        let largest: UInt32 = 3 * 0xFF_FFFF
        #expect(value.totalSteps == largest)
    }

    @Test func reservedFlagsAndTrailingBytes() throws {
        let reserved = try StepCounterActivitySummaryData(decoding: h("80 e0 01 00 00 00 00 00 00 00 00 00 00 00"))
        #expect(reserved.reservedFlags == 0xE0)
        let trailing = try StepCounterActivitySummaryData(decoding: h(PAMSVectors.noOptionalFields + " 99 99"))
        #expect(trailing == (try StepCounterActivitySummaryData(decoding: h(PAMSVectors.noOptionalFields))))
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("80", .truncated(field: "flags", offset: 1, needed: 1, available: 0)),
        ("80 00 01", .truncated(field: "session_id", offset: 2, needed: 2, available: 1)),
        ("80 00 01 00 02", .truncated(field: "sub_session_id", offset: 4, needed: 2, available: 1)),
        ("80 00 01 00 02 00 10 0e", .truncated(field: "relative_timestamp", offset: 6, needed: 4, available: 2)),
        (
            "80 00 01 00 02 00 10 0e 00 00 05 00 00",
            .truncated(field: "sequence_number", offset: 10, needed: 4, available: 3)
        ),
        (
            "80 01 01 00 02 00 10 0e 00 00 05 00 00 00 dc 2a",
            .truncated(field: "normal_walking_steps", offset: 14, needed: 3, available: 2)
        ),
        (
            "80 1f 01 00 02 00 10 0e 00 00 05 00 00 00 dc 2a 00 f4 01 00 0c 00 00 c2 1e 00 10 0e",
            .truncated(field: "worn_duration", offset: 26, needed: 3, available: 2)
        ),
        (
            "80 08 01 00 02 00 10 0e 00 00 05 00 00 00",
            .truncated(field: "distance", offset: 14, needed: 3, available: 0)
        ),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(throws: error) { try StepCounterActivitySummaryData(decoding: h(hex)) }
    }

    @Test func encodingMasksToTwentyFourBits() {
        let value = StepCounterActivitySummaryData(
            sessionID: 1, relativeTimestamp: 0, sequenceNumber: 0, normalWalkingSteps: 0x0100_0001, reservedFlags: 0xFF)
        #expect(value.normalWalkingSteps == 1)
        #expect(value.reservedFlags == 0xE0)
        #expect(value.encoded() == h("80 e1 01 00 00 00 00 00 00 00 00 00 00 00 01 00 00"))
    }

    @Test func catalogMetadata() {
        #expect(StepCounterActivitySummaryData.uuid == BluetoothUUID(UInt16(0x2B40)))
        #expect(StepCounterActivitySummaryData.uuid.description == "00002b40-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.physicalActivityMonitorService.description == "0000183e-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.pamsFeatures.shortDescription == "2b3b")
        #expect(StepCounterActivitySummaryData.name == "step-counter-activity-summary-data")
    }

    // MARK: InfiniTime

    @Test func infiniTimeStepCount() throws {
        let value = try InfiniTimeStepCount(decoding: h("dc 2a 00 00"))
        #expect(value.steps == 10_972)
        #expect(FieldValue.object(value.fields).json == #"{"value":10972,"steps":10972}"#)
        #expect(try InfiniTimeStepCount(decoding: h("ff ff ff ff")).steps == 0xFFFF_FFFF)
        #expect(InfiniTimeStepCount(steps: 0x0102_0304).encoded() == h("04 03 02 01"))
    }

    @Test(arguments: ["", "dc", "dc 2a 00", "dc 2a 00 00 00"])
    func infiniTimeStepCountOfTheWrongLengthIsRejected(_ hex: String) {
        #expect(throws: DecodeError.invalidLength(expected: 4, actual: h(hex).count)) {
            try InfiniTimeStepCount(decoding: h(hex))
        }
    }

    @Test func infiniTimeUUIDsAreVendor128Bit() {
        #expect(InfiniTimeStepCount.uuid.description == "00030001-78fc-48fe-8e23-433b3a1942d0")
        #expect(BluetoothUUID.infiniTimeMotionService.description == "00030000-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeStepCount.uuid.shortDescription == "00030001-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeStepCount.uuid.shortValue == nil)
        #expect(InfiniTimeStepCount.uuid.value32 == nil)
        #expect(InfiniTimeStepCount.uuid == BluetoothUUID("00030001-78FC-48FE-8E23-433B3A1942D0"))
        #expect(CharacteristicCatalog.type(for: InfiniTimeStepCount.uuid) == InfiniTimeStepCount.self)
        #expect(InfiniTimeStepCount.name == "infinitime-step-count")
    }
}
