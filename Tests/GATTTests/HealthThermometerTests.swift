import GATT
import Support
import Testing

/// Temperature Measurement 0x2A1C, Temperature Type 0x2A1D, Intermediate Temperature 0x2A1E and Measurement
/// Interval 0x2A21: `docs/gatt-health-devices.md`, "Temperature Measurement".
@Suite struct HealthThermometerTests {
    @Test func celsiusOnly() throws {
        // FLOAT 0xFF00016E: 366 × 10^-1 = 36.6 °C.
        let value = try TemperatureMeasurement(decoding: h("00 6e 01 00 ff"))
        #expect(value.units == .celsius)
        #expect(value.temperature == MedicalFloat(mantissa: 366, exponent: -1))
        #expect(value.celsius == 36.6)
        #expect(value.timeStamp == nil && value.temperatureType == nil)
    }

    @Test func everyField() throws {
        let value = try TemperatureMeasurement(decoding: h(TemperatureVectors.everyField))
        #expect(value.celsius == 36.6)
        #expect(value.timeStamp == DateTime(year: 2026, month: 12, day: 2, hours: 7, minutes: 30, seconds: 0))
        #expect(value.temperatureType == .mouth)
        #expect(value.fields.first { $0.name == "temperature_type" }?.value == .string("mouth"))
    }

    @Test func fahrenheit() throws {
        // 1006 × 10^-1 = 100.6 °F.
        let value = try TemperatureMeasurement(decoding: h("01 ee 03 00 ff"))
        #expect(value.units == .fahrenheit)
        #expect(value.temperature.value == 100.6)
        #expect(abs(try #require(value.celsius) - (100.6 - 32) * 5 / 9) < 1e-12)
        #expect(value.fields.first { $0.name == "temperature" }?.unit == "degF")
    }

    @Test func specialTemperaturesDecode() throws {
        let value = try TemperatureMeasurement(decoding: h("00 ff ff 7f 00"))
        #expect(value.temperature.special == .nan)
        #expect(value.celsius == nil)
        #expect(try TemperatureMeasurement(decoding: h("00 fe ff 7f 00")).temperature.special == .positiveInfinity)
    }

    static let errors: [(String, DecodeError)] = [
        ("", .empty),
        ("00 6e 01 00", .truncated(field: "temperature", offset: 1, needed: 4, available: 3)),
        ("02 6e 01 00 ff ea 07", .truncated(field: "time_stamp", offset: 7, needed: 1, available: 0)),
        ("04 6e 01 00 ff", .truncated(field: "temperature_type", offset: 5, needed: 1, available: 0)),
    ]

    @Test(arguments: errors)
    func rejects(_ hex: String, _ error: DecodeError) {
        #expect(decodeError(TemperatureMeasurement.self, h(hex)) == error)
    }

    @Test func intermediateTemperatureSharesTheLayout() throws {
        let value = try IntermediateTemperature(decoding: h(TemperatureVectors.everyField))
        #expect(value.celsius == 36.6)
        #expect(value.temperatureType == .mouth)
        #expect(value.encoded() == h(TemperatureVectors.everyField))
    }

    @Test func temperatureTypes() throws {
        let names = [
            "reserved", "armpit", "body", "ear", "finger", "gastrointestinal_tract", "mouth", "rectum", "toe",
            "tympanum", "reserved",
        ]
        for (raw, name) in names.enumerated() {
            let type = try TemperatureType(decoding: [UInt8(raw)])
            #expect(type.locationName == name)
            #expect(type.isReserved == (name == "reserved"))
        }
        #expect(try TemperatureType(decoding: [0xFF]).isReserved)
        #expect(decodeError(TemperatureType.self, []) == .invalidLength(expected: 1, actual: 0))
    }

    @Test func measurementInterval() throws {
        #expect(try MeasurementInterval(decoding: h("3c 00")).seconds == 60)
        #expect(try MeasurementInterval(decoding: h("00 00")).fields.last?.value == .bool(false))
        #expect(decodeError(MeasurementInterval.self, h("3c")) == .invalidLength(expected: 2, actual: 1))
    }
}

enum TemperatureVectors {
    /// 36.6 °C at 2026-12-02 07:30:00, in the mouth (built from the layout).
    static let everyField = "06 6e 01 00 ff ea 07 0c 02 07 1e 00 06"
}

extension MedicalFloat {
    static func random(using rng: inout SplitMix64) -> MedicalFloat { MedicalFloat(rawValue: rng.uint32()) }
}

extension TemperatureMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["00 6e 01 00 ff", TemperatureVectors.everyField, "01 ee 03 00 ff", "00 ff ff 7f 00", "fc 00 00 00 00 00"]
    }

    static func random(using rng: inout SplitMix64) -> TemperatureMeasurement {
        TemperatureMeasurement(
            units: rng.bool() ? .celsius : .fahrenheit, temperature: .random(using: &rng),
            timeStamp: rng.maybe { DateTime.random(using: &$0) },
            temperatureType: rng.maybe { TemperatureType(rawValue: $0.uint8()) }, reservedFlags: rng.uint8())
    }
}

extension IntermediateTemperature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00 6e 01 00 ff", TemperatureVectors.everyField] }

    static func random(using rng: inout SplitMix64) -> IntermediateTemperature {
        IntermediateTemperature(
            units: rng.bool() ? .celsius : .fahrenheit, temperature: .random(using: &rng),
            timeStamp: rng.maybe { DateTime.random(using: &$0) },
            temperatureType: rng.maybe { TemperatureType(rawValue: $0.uint8()) }, reservedFlags: rng.uint8())
    }
}

extension TemperatureType: TestableCharacteristic {
    static var canonicalSamples: [String] { ["01", "02", "06", "09", "00", "0a", "ff"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> TemperatureType { TemperatureType(rawValue: rng.uint8()) }
}

extension MeasurementInterval: TestableCharacteristic {
    static var canonicalSamples: [String] { ["3c 00", "00 00", "ff ff"] }
    static var fixedLength: Int? { 2 }
    static func random(using rng: inout SplitMix64) -> MeasurementInterval {
        MeasurementInterval(seconds: rng.uint16())
    }
}
