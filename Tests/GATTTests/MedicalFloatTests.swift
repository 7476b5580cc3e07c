import GATT
import Testing

/// IEEE 11073 SFLOAT and FLOAT: `docs/gatt-health-devices.md`, "IEEE 11073 SFLOAT and FLOAT".
@Suite struct MedicalFloatTests {
    // The encodings of HL7's PHD implementation guide ("Mder FLOATs and SFLOATs"), and 18.9 from Nordic's
    // blood pressure test: raw value, mantissa, exponent, number.
    static let sfloats: [(UInt16, Int, Int, Double)] = [
        (0x0002, 2, 0, 2), (0xF014, 20, -1, 2.0), (0xE0C8, 200, -2, 2.00), (0x1002, 2, 1, 20),
        (0x2002, 2, 2, 200), (0x00C8, 200, 0, 200), (0x04D2, 1234, 0, 1234), (0x0B2E, -1234, 0, -1234),
        (0xF0BD, 189, -1, 18.9), (0x0000, 0, 0, 0), (0x8001, 1, -8, 0.00000001), (0x7001, 1, 7, 10_000_000),
        (0x0FFF, -1, 0, -1), (0x0801 ^ 0x1000, -2047, 1, -20_470), (0x17FF, 2047, 1, 20_470),
    ]

    @Test(arguments: sfloats)
    func sfloatVectors(_ raw: UInt16, _ mantissa: Int, _ exponent: Int, _ number: Double) throws {
        let value = SFloat(rawValue: raw)
        #expect(value.mantissa == mantissa)
        #expect(value.exponent == exponent)
        #expect(value.special == nil)
        #expect(value.value == number)
        #expect(value.doubleValue == number)
        #expect(SFloat(mantissa: mantissa, exponent: exponent) == value)
        #expect(SFloat(number, exponent: exponent) == value)
    }

    static let floats: [(UInt32, Int, Int, Double)] = [
        (0x0000_0002, 2, 0, 2), (0xFF00_0014, 20, -1, 2.0), (0xFE00_00C8, 200, -2, 2.00), (0x0100_0002, 2, 1, 20),
        (0x0200_0002, 2, 2, 200), (0x0000_04D2, 1234, 0, 1234), (0x00FF_FB2E, -1234, 0, -1234),
        (0xFF00_016E, 366, -1, 36.6), (0xFE00_0E4A, 3658, -2, 36.58), (0xFD00_0001, 1, -3, 0.001),
        (0x0300_0007, 7, 3, 7000), (0x007F_FFFD, 8_388_605, 0, 8_388_605), (0x00FF_FFFF, -1, 0, -1),
    ]

    @Test(arguments: floats)
    func floatVectors(_ raw: UInt32, _ mantissa: Int, _ exponent: Int, _ number: Double) throws {
        let value = MedicalFloat(rawValue: raw)
        #expect(value.mantissa == mantissa)
        #expect(value.exponent == exponent)
        #expect(value.special == nil)
        #expect(value.value == number)
        #expect(MedicalFloat(mantissa: mantissa, exponent: exponent) == value)
    }

    static let sfloatSpecials: [(UInt16, MedicalFloatSpecial)] = [
        (0x07FF, .nan), (0x0800, .nres), (0x07FE, .positiveInfinity), (0x0802, .negativeInfinity),
        (0x0801, .reserved),
    ]

    @Test(arguments: sfloatSpecials)
    func sfloatSpecialValues(_ raw: UInt16, _ special: MedicalFloatSpecial) {
        let value = SFloat(rawValue: raw)
        #expect(value.special == special)
        #expect(value.value == nil)
        #expect(SFloat(special).rawValue == raw)
        #expect(value.fieldValue == .string(special.rawValue))
        #expect(value.description == special.rawValue)
        switch special {
        case .positiveInfinity: #expect(value.doubleValue == .infinity)
        case .negativeInfinity: #expect(value.doubleValue == -.infinity)
        default: #expect(value.doubleValue.isNaN)
        }
    }

    static let floatSpecials: [(UInt32, MedicalFloatSpecial)] = [
        (0x007F_FFFF, .nan), (0x0080_0000, .nres), (0x007F_FFFE, .positiveInfinity),
        (0x0080_0002, .negativeInfinity), (0x0080_0001, .reserved),
    ]

    @Test(arguments: floatSpecials)
    func floatSpecialValues(_ raw: UInt32, _ special: MedicalFloatSpecial) {
        let value = MedicalFloat(rawValue: raw)
        #expect(value.special == special)
        #expect(value.value == nil)
        #expect(MedicalFloat(special).rawValue == raw)
        #expect(value.fieldValue == .string(special.rawValue))
    }

    @Test func specialMantissasUnderAnotherExponentAreNumbers() {
        // DecodingPolicy.medicalFloatSpecialValues: only the exact patterns with exponent 0 are special.
        #expect(SFloat(rawValue: 0xF7FF).special == nil)
        #expect(SFloat(rawValue: 0xF7FF).value == 204.7)
        #expect(SFloat(rawValue: 0x1800).value == -20_480)
        #expect(MedicalFloat(rawValue: 0xFF7F_FFFF).special == nil)
        #expect(MedicalFloat(rawValue: 0xFF7F_FFFF).value == 838_860.7)
    }

    @Test func theExponentIsKeptSoEqualNumbersStayDistinct() {
        let two = SFloat(rawValue: 0x0002)
        let twoPointZero = SFloat(rawValue: 0xF014)
        #expect(two.value == twoPointZero.value)
        #expect(two != twoPointZero)
        #expect(two.description == "2")
        #expect(twoPointZero.description == "20e-1")
    }

    @Test func exponentAndMantissaEdges() {
        #expect(SFloat(mantissa: 2047, exponent: 7) != nil)
        #expect(SFloat(mantissa: -2048, exponent: -8)?.rawValue == 0x8800)
        #expect(SFloat(mantissa: 2048, exponent: 0) == nil)
        #expect(SFloat(mantissa: -2049, exponent: 0) == nil)
        #expect(SFloat(mantissa: 1, exponent: 8) == nil)
        #expect(SFloat(mantissa: 1, exponent: -9) == nil)
        #expect(MedicalFloat(mantissa: 0x7F_FFFF, exponent: 127) != nil)
        #expect(MedicalFloat(mantissa: 0x80_0000, exponent: 0) == nil)
        #expect(MedicalFloat(mantissa: 1, exponent: 128) == nil)
        // Values that round onto a special pattern, or out of the mantissa, are refused.
        #expect(SFloat(2046, exponent: 0) == nil)
        #expect(SFloat(-2046, exponent: 0) == nil)
        #expect(SFloat(2045, exponent: 0)?.rawValue == 0x07FD)
        #expect(SFloat(2046, exponent: 1)?.rawValue == 0x10CD)
        #expect(SFloat(30_000, exponent: 0) == nil)
        #expect(SFloat(.nan, exponent: 0) == nil)
        #expect(SFloat(.infinity, exponent: 0) == nil)
        #expect(MedicalFloat(8_388_606, exponent: 0) == nil)
        #expect(MedicalFloat(36.6, exponent: -1)?.rawValue == 0xFF00_016E)
    }

    @Test func everySFloatPatternRoundTripsAndMapsConsistently() {
        for raw in UInt16.min...UInt16.max {
            let value = SFloat(rawValue: raw)
            if value.special == nil {
                #expect(SFloat(mantissa: value.mantissa, exponent: value.exponent) == value)
                #expect(value.value?.isFinite == true)
            }
        }
    }
}
