import GATT
import Support
import Testing

/// Glucose Measurement 0x2A18, Glucose Measurement Context 0x2A34, Glucose Feature 0x2A51 and the Record Access
/// Control Point 0x2A52: `docs/gatt-glucose.md`. The generic properties (round trips, strict prefixes, random
/// bytes) run over these types in ``PropertyTests``.
@Suite struct GlucoseTests {
    @Test func nordicMeasurementVector() throws {
        // Nordic's GlucoseMeasurementDataCallbackTest: sequence 1, 2019-02-27 11:10:30, offset -5 min, 30 kg/L
        // (sic), capillary plasma from a finger, status 0x0105, context follows.
        let value = try GlucoseMeasurement(decoding: h(GlucoseVectors.nordicMeasurement))
        #expect(value.sequenceNumber == 1)
        #expect(value.baseTime == DateTime(year: 2019, month: 2, day: 27, hours: 11, minutes: 10, seconds: 30))
        #expect(value.timeOffset == -5)
        #expect(value.userFacingTime == DateTime(year: 2019, month: 2, day: 27, hours: 11, minutes: 5, seconds: 30))
        #expect(value.units == .kgPerL)
        let concentration = try #require(value.concentration)
        #expect(concentration.value.value == 30)
        #expect(concentration.typeName == "capillary_plasma")
        #expect(concentration.sampleLocationName == "finger")
        let status = try #require(value.sensorStatus)
        #expect(status.rawValue == 261)
        #expect(status.deviceBatteryLow)
        #expect(status.names == ["device_battery_low", "sample_size_insufficient", "temperature_too_low"])
        #expect(status.resultUnreliable)
        #expect(value.contextFollows)
        #expect(value.encoded() == h(GlucoseVectors.nordicMeasurement))
    }

    @Test func kilogramsPerLiterConvertExactly() throws {
        // Built from the layout: sequence 42, 2026-12-02 07:30:00 + 60 min, 95 mg/dL as 95e-5 kg/L.
        let value = try GlucoseMeasurement(decoding: h(GlucoseVectors.milligrams))
        #expect(value.concentration?.value == SFloat(mantissa: 95, exponent: -5))
        #expect(value.milligramsPerDeciliter == 95)
        #expect(value.millimolesPerLiter == nil)
        #expect(value.userFacingTime == DateTime(year: 2026, month: 12, day: 2, hours: 8, minutes: 30))
        #expect(value.concentration?.typeName == "capillary_whole_blood")
        #expect(value.sensorStatus == nil && !value.contextFollows)
    }

    @Test func molesPerLiterConvertExactly() throws {
        // 5.5 mmol/L as 55e-4 mol/L.
        let value = try GlucoseMeasurement(decoding: h(GlucoseVectors.millimoles))
        #expect(value.units == .molPerL)
        #expect(value.millimolesPerLiter == 5.5)
        #expect(value.milligramsPerDeciliter == nil)
        #expect(value.timeOffset == nil)
        #expect(value.userFacingTime == value.baseTime)
    }

    @Test func timeOffsetCarriesAcrossDaysAndYears() {
        // DecodingPolicy.glucoseTimeOffset.
        let stamp = DateTime(year: 2026, month: 12, day: 31, hours: 23, minutes: 50)
        let late = GlucoseMeasurement(sequenceNumber: 1, baseTime: stamp, timeOffset: 20)
        #expect(late.userFacingTime == DateTime(year: 2027, month: 1, day: 1, hours: 0, minutes: 10))
        let leap = GlucoseMeasurement(
            sequenceNumber: 1, baseTime: DateTime(year: 2028, month: 3, day: 1, hours: 0, minutes: 5),
            timeOffset: -10)
        #expect(leap.userFacingTime == DateTime(year: 2028, month: 2, day: 29, hours: 23, minutes: 55))
        let unknown = GlucoseMeasurement(sequenceNumber: 1, baseTime: DateTime(year: 0, month: 1, day: 1))
        #expect(unknown.userFacingTime == nil)
    }

    static let measurementErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("00 01", .truncated(field: "sequence_number", offset: 1, needed: 2, available: 1)),
        ("00 01 00 ea 07 0c", .truncated(field: "base_time", offset: 6, needed: 1, available: 0)),
        // Nordic's "time offset missing": the offset flag takes two bytes, the sensor status is then short.
        (
            "1b 00 00 e2 07 04 1a 0b 09 1e 1e 00 12 05 01",
            .truncated(field: "sensor_status", offset: 15, needed: 2, available: 0)
        ),
        ("01 01 00 ea 07 0c 02 07 1e 00 3c", .truncated(field: "time_offset", offset: 10, needed: 2, available: 1)),
        (
            "02 01 00 ea 07 0c 02 07 1e 00 5f b0",
            .truncated(field: "type_sample_location", offset: 12, needed: 1, available: 0)
        ),
    ]

    @Test(arguments: measurementErrors)
    func measurementRejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(GlucoseMeasurement.self, h(hex)) == error)
    }

    @Test func measurementFields() throws {
        let value = try GlucoseMeasurement(decoding: h(GlucoseVectors.milligrams))
        #expect(
            FieldValue.object(value.fields).json
                == #"{"flags":3,"sequence_number":42,"base_time":"2026-12-02T07:30:00","time_offset":60,"#
                + #""units":"kg/L","concentration":0.00095,"type":"capillary_whole_blood","sample_location":"finger","#
                + #""sensor_status":null,"context_follows":false,"reserved_flags":0}"#)
    }

    @Test func fullContext() throws {
        // Built from the layout: every field, medication in litres.
        let value = try GlucoseMeasurementContext(decoding: h(GlucoseVectors.fullContext))
        #expect(value.sequenceNumber == 1)
        #expect(value.extendedFlags == 0)
        #expect(value.carbohydrate == .init(id: 1, kilograms: SFloat(mantissa: 60, exponent: -3)!))
        #expect(value.carbohydrate?.name == "breakfast")
        #expect(value.meal == 2 && value.mealName == "postprandial")
        #expect(value.tester == 2 && value.health == 1)
        #expect(value.exercise == .init(durationSeconds: 1800, intensityPercent: 50))
        #expect(value.medicationUnits == .liters)
        #expect(value.medication?.name == "rapid_acting_insulin")
        #expect(value.medication?.amount.value == 0.004)
        #expect(value.hba1c?.value == 6.5)
        #expect(value.encoded() == h(GlucoseVectors.fullContext))
        let json = FieldValue.object(value.fields).json
        #expect(json.contains(#""meal":"postprandial","tester":"health_care_professional","#))
        #expect(json.contains(#""health":"minor_health_issues""#))
    }

    @Test func mealOnlyContext() throws {
        let value = try GlucoseMeasurementContext(decoding: h("06 2a 00 01 51"))
        #expect(value.sequenceNumber == 42)
        #expect(value.mealName == "preprandial")
        #expect(value.tester == 1 && value.health == 5)
        #expect(value.carbohydrate == nil && value.exercise == nil && value.medication == nil && value.hba1c == nil)
        #expect(
            GlucoseMeasurementContext(sequenceNumber: 42, meal: 1, tester: 1, health: 5).encoded()
                == h("06 2a 00 01 51"))
    }

    static let contextErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("02 2a", .truncated(field: "sequence_number", offset: 1, needed: 2, available: 1)),
        ("02 2a 00", .truncated(field: "meal", offset: 3, needed: 1, available: 0)),
        ("80 2a 00", .truncated(field: "extended_flags", offset: 3, needed: 1, available: 0)),
        ("01 2a 00 01 3c", .truncated(field: "carbohydrate", offset: 4, needed: 2, available: 1)),
        ("08 2a 00 08 07", .truncated(field: "exercise_intensity", offset: 5, needed: 1, available: 0)),
        ("40 2a 00 41", .truncated(field: "hba1c", offset: 3, needed: 2, available: 1)),
    ]

    @Test(arguments: contextErrors)
    func contextRejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(GlucoseMeasurementContext.self, h(hex)) == error)
    }

    @Test func featureBits() throws {
        let feature = try GlucoseFeature(decoding: h("03 04"))
        #expect(feature == [.lowBatteryDetection, .sensorMalfunctionDetection, .multipleBond])
        #expect(try GlucoseFeature(decoding: h("00 f8")).fields.last?.value == .int(0xF800))
        #expect(decodeError(GlucoseFeature.self, h("03")) == .invalidLength(expected: 2, actual: 1))
    }

    @Test func controlPointRequests() throws {
        #expect(RecordAccessControlPoint.reportAllRecords.encoded() == h("01 01"))
        #expect(RecordAccessControlPoint.reportRecords(from: 42).encoded() == h("01 03 01 2a 00"))
        #expect(RecordAccessControlPoint.abort.encoded() == h("03 00"))
        #expect(RecordAccessControlPoint.reportNumberOfAllRecords.encoded() == h("04 01"))
        let range = try RecordAccessControlPoint(decoding: h("01 04 01 0a 00 14 00"))
        #expect(range.opCode == .reportStoredRecords && range.filterOperator == .withinRangeOf)
        #expect(range.operand == .sequenceNumberRange(10, 20))
        let time = try RecordAccessControlPoint(decoding: h("02 02 02 ea 07 0c 02 07 1e 00"))
        #expect(time.opCode == .deleteStoredRecords)
        #expect(time.operand == .userFacingTime(DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30)))
    }

    @Test func controlPointResponses() throws {
        let count = try RecordAccessControlPoint(decoding: h("05 00 f4 01"))
        #expect(count.operand == .numberOfRecords(500))
        let success = try RecordAccessControlPoint(decoding: h("06 00 01 01"))
        #expect(success.responseCode?.request == 1)
        #expect(success.responseCode?.code == .success)
        #expect(success == .response(to: .reportStoredRecords, .success))
        let none = try RecordAccessControlPoint(decoding: h("06 00 01 06"))
        #expect(none.responseCode?.code == .noRecordsFound)
        #expect(
            FieldValue.object(none.fields).json
                == #"{"op_code":"response_code","operator":"null","operand":{"request_op_code":"report_stored_records","#
                + #""response_code":"no_records_found"}}"#)
        let reserved = try RecordAccessControlPoint(decoding: h("06 00 01 0d"))
        #expect(reserved.responseCode?.code == nil)
    }

    static let controlPointErrors: [(String, DecodeError)] = [
        ("", .empty),
        ("01", .truncated(field: "operator", offset: 1, needed: 1, available: 0)),
        ("01 03", .truncated(field: "filter_type", offset: 2, needed: 1, available: 0)),
        ("01 03 01 2a", .truncated(field: "filter_value", offset: 3, needed: 2, available: 1)),
        ("01 04 01 0a 00", .truncated(field: "filter_maximum", offset: 5, needed: 2, available: 0)),
        ("05 00 f4", .truncated(field: "number_of_records", offset: 2, needed: 2, available: 1)),
        ("06 00 01", .truncated(field: "response_code", offset: 3, needed: 1, available: 0)),
    ]

    @Test(arguments: controlPointErrors)
    func controlPointRejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(RecordAccessControlPoint.self, h(hex)) == error)
    }

    @Test func unknownOperandsAreKept() throws {
        // DecodingPolicy.racpOperands: a filter type this layout does not define, and a reserved op code with bytes
        // after it.
        let filter = try RecordAccessControlPoint(decoding: h("01 03 07 aa bb"))
        #expect(filter.operand == .other(h("07 aa bb")))
        #expect(filter.encoded() == h("01 03 07 aa bb"))
        let reserved = try RecordAccessControlPoint(decoding: h("09 00 01"))
        #expect(reserved.opCode == nil && reserved.operand == .other([1]))
        #expect(reserved.fields.first?.value == .string("reserved"))
    }
}

enum GlucoseVectors {
    /// Nordic Android-BLE-Common-Library, GlucoseMeasurementDataCallbackTest.
    static let nordicMeasurement = "1b 01 00 e3 07 02 1b 0b 0a 1e fb ff 1e 00 12 05 01"
    /// Built by hand from the layout (`docs/gatt-glucose.md`).
    static let milligrams = "03 2a 00 ea 07 0c 02 07 1e 00 3c 00 5f b0 11"
    static let millimoles = "06 2b 00 ea 07 0c 02 07 1e 00 37 c0 11"
    static let fullContext = "ff 01 00 00 01 3c d0 02 12 08 07 32 01 04 d0 41 f0"
}

extension GlucoseMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            GlucoseVectors.nordicMeasurement, GlucoseVectors.milligrams, GlucoseVectors.millimoles,
            "00 00 00 00 00 00 00 00 00 00", "ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff",
            "14 f4 01 ea 07 0c 02 07 1e 00",
        ]
    }

    static func random(using rng: inout SplitMix64) -> GlucoseMeasurement {
        GlucoseMeasurement(
            sequenceNumber: rng.uint16(), baseTime: .random(using: &rng),
            timeOffset: rng.maybe { Int16(bitPattern: $0.uint16()) }, units: rng.bool() ? .kgPerL : .molPerL,
            concentration: rng.maybe {
                GlucoseConcentration(value: .random(using: &$0), type: $0.uint8(), sampleLocation: $0.uint8())
            },
            sensorStatus: rng.maybe { GlucoseSensorStatus(rawValue: $0.uint16()) }, contextFollows: rng.bool(),
            reservedFlags: rng.uint8())
    }
}

extension GlucoseMeasurementContext: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [GlucoseVectors.fullContext, "06 2a 00 01 51", "00 00 00", "20 ff ff", "02 f4 01 03"]
    }

    static func random(using rng: inout SplitMix64) -> GlucoseMeasurementContext {
        let testerHealth = rng.maybe { ($0.uint8() & 0x0F, $0.uint8() & 0x0F) }
        return GlucoseMeasurementContext(
            sequenceNumber: rng.uint16(), extendedFlags: rng.maybe { $0.uint8() },
            carbohydrate: rng.maybe { Carbohydrate(id: $0.uint8(), kilograms: .random(using: &$0)) },
            meal: rng.maybe { $0.uint8() }, tester: testerHealth?.0, health: testerHealth?.1,
            exercise: rng.maybe { Exercise(durationSeconds: $0.uint16(), intensityPercent: $0.uint8()) },
            medicationUnits: rng.bool() ? .kilograms : .liters,
            medication: rng.maybe { Medication(id: $0.uint8(), amount: .random(using: &$0)) },
            hba1c: rng.maybe { SFloat.random(using: &$0) })
    }
}

extension GlucoseFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["03 04", "00 00", "ff 07", "ff ff"] }
    static var fixedLength: Int? { 2 }
    static func random(using rng: inout SplitMix64) -> GlucoseFeature { GlucoseFeature(rawValue: rng.uint16()) }
}

extension RecordAccessControlPoint: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "01 01", "01 03 01 2a 00", "01 04 01 0a 00 14 00", "02 02 02 ea 07 0c 02 07 1e 00", "03 00", "04 01",
            "05 00 f4 01", "06 00 01 01", "06 00 01 06", "01 03 07 aa bb", "09 00 01", "01 05", "01 06",
        ]
    }

    static func random(using rng: inout SplitMix64) -> RecordAccessControlPoint {
        let time = { (rng: inout SplitMix64) in DateTime.random(using: &rng) }
        switch rng.next() % 9 {
        case 0: return RecordAccessControlPoint(.reportStoredRecords, .allRecords)
        case 1:
            return RecordAccessControlPoint(
                opCode: [1, 2, 4][Int(rng.next() % 3)], operator: UInt8(2 + rng.next() % 2),
                operand: .sequenceNumber(rng.uint16()))
        case 2:
            return RecordAccessControlPoint(
                .reportNumberOfStoredRecords, .withinRangeOf, .sequenceNumberRange(rng.uint16(), rng.uint16()))
        case 3: return RecordAccessControlPoint(.deleteStoredRecords, .lessThanOrEqualTo, .userFacingTime(time(&rng)))
        case 4:
            return RecordAccessControlPoint(
                .reportStoredRecords, .withinRangeOf, .userFacingTimeRange(time(&rng), time(&rng)))
        case 5: return RecordAccessControlPoint(.numberOfStoredRecordsResponse, .null, .numberOfRecords(rng.uint16()))
        case 6:
            return RecordAccessControlPoint(
                .responseCode, .null, .response(requestOpCode: rng.uint8(), code: rng.uint8()))
        case 7: return RecordAccessControlPoint(opCode: 3, operator: rng.uint8(), operand: .other(rng.bytes(count: 3)))
        default:
            return RecordAccessControlPoint(
                opCode: 1, operator: 3, operand: .other([UInt8(3 + rng.next() % 250)] + rng.bytes(count: 2)))
        }
    }

    /// An operand this layout does not define is "the bytes there are": a prefix keeps fewer of them.
    static func isDocumentedShorterForm(_ shorter: Self, of full: Self) -> Bool {
        guard case .other = full.operand, shorter.opCodeValue == full.opCodeValue,
            shorter.operatorValue == full.operatorValue
        else { return false }
        switch shorter.operand {
        case .none, .other: return full.encoded().starts(with: shorter.encoded())
        default: return false
        }
    }
}
