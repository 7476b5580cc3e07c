import GATT
import Support
import TestSupport

/// What the generic tests (``PropertyTests``) need to know about one characteristic type: canonical valid
/// encodings, whether it is fixed-size, a random value generator, and which shorter forms a strict prefix
/// may decode to under ``DecodingPolicy``.
protocol TestableCharacteristic: CharacteristicValue {
    /// Valid values in canonical form (no trailing bytes, no flag bits the encoder would not set), as hex.
    /// For each, `encoded(decode(b)) == b`.
    static var canonicalSamples: [String] { get }
    /// The exact size of a fixed-size characteristic (``DecodingPolicy/trailingBytes``), `nil` when variable.
    static var fixedLength: Int? { get }
    /// A random valid value.
    static func random(using rng: inout SplitMix64) -> Self
    /// Whether `shorter`, decoded from a strict prefix of the bytes of `full`, is a shorter form the decoding
    /// policy documents (rather than a half-read value that should have been rejected).
    static func isDocumentedShorterForm(_ shorter: Self, of full: Self) -> Bool
}

extension TestableCharacteristic {
    static var fixedLength: Int? { nil }
    static func isDocumentedShorterForm(_ shorter: Self, of full: Self) -> Bool { false }
}

/// The catalog type with `name`, as a testable type.
func testableType(named name: String) -> (any TestableCharacteristic.Type)? {
    CharacteristicCatalog.all.first { $0.name == name } as? any TestableCharacteristic.Type
}

let catalogNames: [String] = CharacteristicCatalog.all.map { $0.name }

// MARK: - Heart rate

extension HeartRateMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            // Polar H7 (docs/gatt-policy.md, "Values seen on real devices")
            "06 3c", "16 3c 11 04", "16 3c f5 03",
            // Polar H10 via BlueZ (the same section)
            "10 39 c9 03", "10 3a c0 03", "10 3a e3 03", "10 3b ec 03", "10 36 c1 03", "10 37 0c 04", "00 37",
            "10 38 03 04", "10 38 6e 04",
            // Mi Band 4 (the same section)
            "00 44", "00 4c", "00 4b", "00 56", "00 55", "00 4f",
            // uint16, energy, saturated energy, reserved bits, not detected, 0 bpm
            "01 2c 01", "01 3c 00", "0e 3c 10 00", "1e 3c 10 00 11 04 f5 03", "1f 2c 01 ff ff 11 04 f5 03 00 04",
            "e6 3c", "f6 3c 11 04", "04 00",
            // 9 RR (the default-MTU maximum) and 12 RR (larger MTU)
            "10 3c" + String(repeating: " 00 04", count: 9),
            "18 3c 00 00" + String(repeating: " ff ff", count: 12),
        ]
    }

    static func random(using rng: inout SplitMix64) -> HeartRateMeasurement {
        let wide = rng.bool()
        let heartRate = wide ? rng.uint16() : UInt16(rng.uint8())
        let contact: SensorContact = [.notSupported, .notDetected, .detected][Int.random(in: 0...2, using: &rng)]
        let count = Int.random(in: 0...30, using: &rng)
        return HeartRateMeasurement(
            heartRate: heartRate, format: wide ? .uint16 : .uint8, sensorContact: contact,
            energyExpended: rng.maybe { $0.uint16() },
            rrIntervals: RRIntervals((0..<count).map { _ in rng.uint16() }),
            reservedFlags: rng.uint8())
    }

    /// DecodingPolicy.rrIntervals: a prefix that ends between two RR intervals is a measurement with fewer
    /// intervals (at least one, since the flag says "one or more").
    static func isDocumentedShorterForm(_ shorter: HeartRateMeasurement, of full: HeartRateMeasurement) -> Bool {
        let kept = shorter.rrIntervals.count
        guard kept >= 1, kept < full.rrIntervals.count else { return false }
        var expected = full
        expected.rrIntervals = RRIntervals(Array(full.rrIntervals.prefix(kept)))
        return shorter == expected
    }
}

extension BodySensorLocation: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00", "01", "02", "03", "04", "05", "06", "07", "ff"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> BodySensorLocation { BodySensorLocation(rawValue: rng.uint8()) }
}

extension HeartRateControlPoint: TestableCharacteristic {
    static var canonicalSamples: [String] { ["01", "00", "02", "ff"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> HeartRateControlPoint {
        HeartRateControlPoint(opCode: rng.uint8())
    }
}

// MARK: - Running and cycling

extension RSCMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "00 00 05 50", "02 00 05 50 ff ff 00 01", "07 00 05 50 7d 00 10 27 00 00", "01 00 05 50 7d 00",
            "04 80 02 b4", "f8 00 00 00", "06 ff ff ff ff ff ff ff",
        ]
    }

    static func random(using rng: inout SplitMix64) -> RSCMeasurement {
        RSCMeasurement(
            speed: rng.uint16(), cadence: rng.uint8(), strideLength: rng.maybe { $0.uint16() },
            totalDistance: rng.maybe { $0.uint32() }, isRunning: rng.bool(), reservedFlags: rng.uint8())
    }
}

extension RSCFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00 00", "1f 00", "04 00", "e0 ff", "ff ff"] }
    static var fixedLength: Int? { 2 }
    static func random(using rng: inout SplitMix64) -> RSCFeature { RSCFeature(rawValue: rng.uint16()) }
}

extension SensorLocation: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00", "01", "02", "0c", "0e", "0f", "10", "11", "ff"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> SensorLocation { SensorLocation(rawValue: rng.uint8()) }
}

extension SCControlPoint: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "01 10 27 00 00", "01 ff ff ff ff", "02", "03 05", "03 ff", "04", "10 01 01", "10 04 01 01 02 0e",
            "10 04 01", "10 04 02", "10 03 03", "10 02 04", "10 01 00", "00", "05 aa bb", "0f", "11 01", "ff",
        ]
    }

    static func random(using rng: inout SplitMix64) -> SCControlPoint {
        let parameter = rng.bytes(count: Int.random(in: 0...12, using: &rng))
        switch Int.random(in: 0...5, using: &rng) {
        case 0: return .setCumulativeValue(rng.uint32())
        case 1: return .startSensorCalibration
        case 2: return .updateSensorLocation(SensorLocation(rawValue: rng.uint8()))
        case 3: return .requestSupportedSensorLocations
        case 4:
            return .response(
                requestOpCode: rng.uint8(), value: ResponseValue(rawValue: rng.uint8()), parameter: parameter)
        default:
            var opCode = rng.uint8()
            while [0x01, 0x02, 0x03, 0x04, 0x10].contains(opCode) { opCode = rng.uint8() }
            return .reserved(opCode: opCode, parameter: parameter)
        }
    }

    /// The response parameter and a reserved op code's parameter are "whatever follows", with no length: a
    /// prefix that ends inside them is a response (or reserved request) with a shorter parameter.
    static func isDocumentedShorterForm(_ shorter: SCControlPoint, of full: SCControlPoint) -> Bool {
        switch (shorter, full) {
        case (.response(let request, let value, let short), .response(let fullRequest, let fullValue, let long)):
            return request == fullRequest && value == fullValue && short.count < long.count
                && Array(long.prefix(short.count)) == short
        case (.reserved(let opCode, let short), .reserved(let fullOpCode, let long)):
            return opCode == fullOpCode && short.count < long.count && Array(long.prefix(short.count)) == short
        default:
            return false
        }
    }
}

extension CSCMeasurement: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            "00", "01 10 00 00 00 00 04", "02 05 00 00 08", "03 10 00 00 00 00 04 05 00 00 08",
            "03 ff ff ff ff ff ff ff ff ff ff", "fc", "fd 01 00 00 00 02 00",
        ]
    }

    static func random(using rng: inout SplitMix64) -> CSCMeasurement {
        CSCMeasurement(
            wheel: rng.maybe { WheelData(cumulativeRevolutions: $0.uint32(), lastEventTime: $0.uint16()) },
            crank: rng.maybe { CrankData(cumulativeRevolutions: $0.uint16(), lastEventTime: $0.uint16()) },
            reservedFlags: rng.uint8())
    }
}

extension CSCFeature: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00 00", "01 00", "02 00", "03 00", "07 00", "f8 ff"] }
    static var fixedLength: Int? { 2 }
    static func random(using rng: inout SplitMix64) -> CSCFeature { CSCFeature(rawValue: rng.uint16()) }
}

// MARK: - Battery

extension BatteryLevel: TestableCharacteristic {
    static var canonicalSamples: [String] { ["00", "01", "32", "63", "64"] }
    static var fixedLength: Int? { 1 }
    static func random(using rng: inout SplitMix64) -> BatteryLevel {
        // `init?(percent:)` accepts 0...100, so this cannot fail.
        BatteryLevel(percent: UInt8.random(in: 0...100, using: &rng)) ?? BatteryLevel(percent: 0)!
    }
}

// MARK: - Device Information

extension TestableCharacteristic where Self: DeviceInformationString {
    static var canonicalSamples: [String] {
        [
            "56312e302e392e3730",  // "V1.0.9.70", Mi Band 4 software revision
            "56302e32352e31392e35",  // "V0.25.19.5", Mi Band 4 hardware revision
            "383663356466643565666638",  // "86c5dfd5eff8", Mi Band 4 serial number
            "4d6920536d6172742042616e642034",  // "Mi Smart Band 4"
            "",  // "" is valid
            "50756c73c3b36d6574726f20e29da4",  // "Pulsómetro ❤" (2- and 3-byte sequences)
            "f09f8f83e2808de29982efb88f",  // "🏃‍♂️" (4-byte sequence, ZWJ, variation selector)
        ]
    }

    static func random(using rng: inout SplitMix64) -> Self {
        let ranges: [ClosedRange<UInt32>] = [
            0x01...0x7F, 0x20...0x7E, 0xA0...0x2FF, 0x4E00...0x9FFF, 0x1F300...0x1FAFF,
        ]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...24, using: &rng) {
            let range = ranges[Int.random(in: 0..<ranges.count, using: &rng)]
            if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &rng)) { text.append(scalar) }
        }
        return Self(String(text))
    }

    /// DecodingPolicy.strings: a prefix is the string cut there; a multi-byte character cut in half becomes one
    /// U+FFFD at the end.
    static func isDocumentedShorterForm(_ shorter: Self, of full: Self) -> Bool {
        let short = Array(shorter.value.unicodeScalars)
        let long = Array(full.value.unicodeScalars)
        guard short.count <= long.count else { return false }
        if Array(long.prefix(short.count)) == short { return true }
        guard let last = short.last, last == "\u{FFFD}" else { return false }
        let kept = short.count - 1
        return Array(long.prefix(kept)) == Array(short.prefix(kept)) && !long[kept].isASCII
    }
}

extension ManufacturerNameString: TestableCharacteristic {}
extension ModelNumberString: TestableCharacteristic {}
extension SerialNumberString: TestableCharacteristic {}
extension HardwareRevisionString: TestableCharacteristic {}
extension FirmwareRevisionString: TestableCharacteristic {}
extension SoftwareRevisionString: TestableCharacteristic {}

extension SystemID: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["de bc 9a fe ff 56 34 12", "e1 2c 9f ff fe 0b f1 44", "00 00 00 00 00 00 00 00", "ff ff ff ff ff ff ff ff"]
    }
    static var fixedLength: Int? { 8 }
    static func random(using rng: inout SplitMix64) -> SystemID {
        SystemID(
            manufacturerIdentifier: UInt64.random(in: 0...0xFF_FFFF_FFFF, using: &rng),
            organizationallyUniqueIdentifier: UInt32.random(in: 0...0xFF_FFFF, using: &rng))
    }
}

extension PnPID: TestableCharacteristic {
    static var canonicalSamples: [String] {
        ["01 57 01 24 00 01 01", "02 6b 1d 46 02 00 01", "00 00 00 00 00 00 00", "ff ff ff ff ff ff ff"]
    }
    static var fixedLength: Int? { 7 }
    static func random(using rng: inout SplitMix64) -> PnPID {
        PnPID(
            vendorIDSource: rng.uint8(), vendorID: rng.uint16(), productID: rng.uint16(), productVersion: rng.uint16())
    }
}

// MARK: - Steps

extension StepCounterActivitySummaryData: TestableCharacteristic {
    static var canonicalSamples: [String] {
        [
            PAMSVectors.allFields, PAMSVectors.noOptionalFields, PAMSVectors.walkingAndFloor,
            "01 e0 ff ff ff ff ff ff ff ff ff ff ff ff",
        ]
    }

    static func random(using rng: inout SplitMix64) -> StepCounterActivitySummaryData {
        func uint24(_ rng: inout SplitMix64) -> UInt32 { UInt32.random(in: 0...0xFF_FFFF, using: &rng) }
        return StepCounterActivitySummaryData(
            header: rng.uint8(), sessionID: rng.uint16(), subSessionID: rng.uint16(), relativeTimestamp: rng.uint32(),
            sequenceNumber: rng.uint32(), normalWalkingSteps: rng.maybe(uint24),
            intensitySteps: rng.maybe(uint24), floorSteps: rng.maybe(uint24),
            distance: rng.maybe(uint24), wornDuration: rng.maybe(uint24), reservedFlags: rng.uint8())
    }
}

extension InfiniTimeStepCount: TestableCharacteristic {
    static var canonicalSamples: [String] { ["dc 2a 00 00", "00 00 00 00", "ff ff ff ff", "01 00 00 00"] }
    static var fixedLength: Int? { 4 }
    static func random(using rng: inout SplitMix64) -> InfiniTimeStepCount { InfiniTimeStepCount(steps: rng.uint32()) }
}

/// PAMS Step Counter Activity Summary Data vectors, built by hand from the layout in docs/gatt-policy.md
/// ("Steps: PAMS and vendor counters").
enum PAMSVectors {
    /// header 0x80, flags 0x1f, session 1, sub-session 2, timestamp 3600, sequence 5, normal walking 10972,
    /// intensity 500, floor 12, distance 7874, worn duration 3600.
    static let allFields =
        "80 1f 01 00 02 00 10 0e 00 00 05 00 00 00 dc 2a 00 f4 01 00 0c 00 00 c2 1e 00 10 0e 00"
    /// No optional fields: the 14-byte minimum.
    static let noOptionalFields = "80 00 07 00 00 00 00 00 00 00 01 00 00 00"
    /// flags 0x05: normal walking steps 10 and floor steps 3, nothing in between.
    static let walkingAndFloor = "81 05 01 00 00 00 3c 00 00 00 02 00 00 00 0a 00 00 03 00 00"
}
