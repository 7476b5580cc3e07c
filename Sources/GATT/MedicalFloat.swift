/// The special values of IEEE 11073-20601's SFLOAT and FLOAT: each is one exact bit pattern with exponent 0
/// (`docs/gatt-health-devices.md`, "IEEE 11073 SFLOAT and FLOAT").
public enum MedicalFloatSpecial: String, Sendable, Equatable, CaseIterable {
    /// Not a number: the sensor has no valid value (an intermediate cuff pressure's diastolic, for example).
    case nan
    /// Not at this resolution: the value exists but cannot be shown with the precision of the type.
    case nres
    case positiveInfinity = "+infinity"
    case negativeInfinity = "-infinity"
    /// Reserved for future use by the standard.
    case reserved
}

/// IEEE 11073-20601 16-bit SFLOAT: a 4-bit signed exponent (high nibble) and a 12-bit signed mantissa, value =
/// mantissa × 10^exponent. Blood pressure, pulse rate, SpO2 and the perfusion index are sent this way.
///
/// The value keeps its bit pattern, so the exponent the sensor chose (its precision: `120`, `120.0` and
/// `120.00` are three different values) survives a decode and re-encodes to the same bytes. Special values
/// (``MedicalFloatSpecial``) are exact patterns with exponent 0: `07FF` NaN, `0800` NRes, `07FE` +INFINITY,
/// `0802` -INFINITY, `0801` reserved. The same mantissas with another exponent are ordinary numbers
/// (``DecodingPolicy/medicalFloatSpecialValues``).
public struct SFloat: Hashable, Sendable, CustomStringConvertible {
    /// The two bytes as sent (little-endian on the wire).
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// mantissa × 10^exponent; `nil` when the mantissa is outside -2048...2047 or the exponent outside -8...7.
    /// A pattern that is one of the special values (mantissa 2046, 2047, -2048, -2047 or -2046 with exponent
    /// 0) gives that special value.
    public init?(mantissa: Int, exponent: Int = 0) {
        guard (-2048...2047).contains(mantissa), (-8...7).contains(exponent) else { return nil }
        rawValue = UInt16(truncatingIfNeeded: exponent) << 12 | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
    }

    /// `value` rounded to `exponent` (e.g. `SFloat(120.5, exponent: -1)` sends mantissa 1205); `nil` when
    /// the result does not fit the mantissa or would be a special value's pattern.
    public init?(_ value: Double, exponent: Int = 0) {
        guard value.isFinite, (-8...7).contains(exponent) else { return nil }
        let scaled = (value / powerOfTen(exponent)).rounded()
        guard scaled >= -2048, scaled <= 2047 else { return nil }
        if exponent == 0, scaled >= 2046 || scaled <= -2046 { return nil }
        self.init(mantissa: Int(scaled), exponent: exponent)
    }

    public init(_ special: MedicalFloatSpecial) {
        switch special {
        case .nan: rawValue = 0x07FF
        case .nres: rawValue = 0x0800
        case .positiveInfinity: rawValue = 0x07FE
        case .negativeInfinity: rawValue = 0x0802
        case .reserved: rawValue = 0x0801
        }
    }

    public static let nan = SFloat(.nan)

    /// The signed exponent, -8...7.
    public var exponent: Int { Int(Int16(bitPattern: rawValue) >> 12) }
    /// The signed mantissa, -2048...2047.
    public var mantissa: Int { Int(Int16(bitPattern: rawValue << 4) >> 4) }

    /// The special value this pattern is, if it is one.
    public var special: MedicalFloatSpecial? {
        switch rawValue {
        case 0x07FF: .nan
        case 0x0800: .nres
        case 0x07FE: .positiveInfinity
        case 0x0802: .negativeInfinity
        case 0x0801: .reserved
        default: nil
        }
    }

    /// The number, when this is one (not a special value).
    public var value: Double? { special == nil ? scaledByPowerOfTen(mantissa, exponent) : nil }

    /// The number as a `Double`: NaN for NaN, NRes and reserved, ±infinity for the infinities.
    public var doubleValue: Double { medicalDouble(special, value) }

    /// How `fields` shows it: a number, or the special value's name.
    public var fieldValue: FieldValue { medicalFieldValue(special, value) }

    public var description: String { medicalDescription(special, mantissa, exponent) }

    static func read(_ reader: inout ByteReader, _ field: StaticString) throws(DecodeError) -> SFloat {
        SFloat(rawValue: try reader.readUInt16(field))
    }

    func write(to writer: inout ByteWriter) { writer.write(rawValue) }
}

/// IEEE 11073-20601 32-bit FLOAT: an 8-bit signed exponent (the high byte) and a 24-bit signed mantissa,
/// value = mantissa × 10^exponent. Thermometers send temperatures this way.
///
/// Like ``SFloat`` it keeps its bit pattern. Special values are exact patterns with exponent 0: `007FFFFF`
/// NaN, `00800000` NRes, `007FFFFE` +INFINITY, `00800002` -INFINITY, `00800001` reserved.
public struct MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    /// The four bytes as sent (little-endian on the wire).
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// mantissa × 10^exponent; `nil` when the mantissa is outside -8388608...8388607 or the exponent outside
    /// -128...127.
    public init?(mantissa: Int, exponent: Int = 0) {
        guard (-0x80_0000...0x7F_FFFF).contains(mantissa), (-128...127).contains(exponent) else { return nil }
        rawValue = UInt32(truncatingIfNeeded: exponent) << 24 | UInt32(truncatingIfNeeded: mantissa) & 0xFF_FFFF
    }

    /// `value` rounded to `exponent` (e.g. `MedicalFloat(36.6, exponent: -1)` sends mantissa 366); `nil` when
    /// the result does not fit or would be a special value's pattern.
    public init?(_ value: Double, exponent: Int = 0) {
        guard value.isFinite, (-128...127).contains(exponent) else { return nil }
        let scaled = (value / powerOfTen(exponent)).rounded()
        guard scaled >= -0x80_0000, scaled <= 0x7F_FFFF else { return nil }
        if exponent == 0, scaled >= 0x7F_FFFE || scaled <= -0x7F_FFFE { return nil }
        self.init(mantissa: Int(scaled), exponent: exponent)
    }

    public init(_ special: MedicalFloatSpecial) {
        switch special {
        case .nan: rawValue = 0x007F_FFFF
        case .nres: rawValue = 0x0080_0000
        case .positiveInfinity: rawValue = 0x007F_FFFE
        case .negativeInfinity: rawValue = 0x0080_0002
        case .reserved: rawValue = 0x0080_0001
        }
    }

    public static let nan = MedicalFloat(.nan)

    /// The signed exponent, -128...127.
    public var exponent: Int { Int(Int8(truncatingIfNeeded: rawValue >> 24)) }
    /// The signed mantissa, -8388608...8388607.
    public var mantissa: Int { Int(Int32(bitPattern: rawValue << 8) >> 8) }

    public var special: MedicalFloatSpecial? {
        switch rawValue {
        case 0x007F_FFFF: .nan
        case 0x0080_0000: .nres
        case 0x007F_FFFE: .positiveInfinity
        case 0x0080_0002: .negativeInfinity
        case 0x0080_0001: .reserved
        default: nil
        }
    }

    public var value: Double? { special == nil ? scaledByPowerOfTen(mantissa, exponent) : nil }
    public var doubleValue: Double { medicalDouble(special, value) }
    public var fieldValue: FieldValue { medicalFieldValue(special, value) }
    public var description: String { medicalDescription(special, mantissa, exponent) }

    static func read(_ reader: inout ByteReader, _ field: StaticString) throws(DecodeError) -> MedicalFloat {
        MedicalFloat(rawValue: try reader.readUInt32(field))
    }

    func write(to writer: inout ByteWriter) { writer.write(rawValue) }
}

/// 10^exponent. Powers up to 10^22 are exact in a `Double`, so a mantissa scaled by a division or a
/// multiplication with one of them is the closest `Double` to the decimal value (120.5, not 120.50000000000001).
func powerOfTen(_ exponent: Int) -> Double {
    var result = 1.0
    for _ in 0..<min(abs(exponent), 400) { result *= 10 }
    return exponent < 0 ? 1 / result : result
}

func scaledByPowerOfTen(_ mantissa: Int, _ exponent: Int) -> Double {
    guard exponent < 0 else { return Double(mantissa) * powerOfTen(exponent) }
    var divisor = 1.0
    for _ in 0..<min(-exponent, 400) { divisor *= 10 }
    return Double(mantissa) / divisor
}

private func medicalDouble(_ special: MedicalFloatSpecial?, _ value: Double?) -> Double {
    switch special {
    case nil: value ?? .nan
    case .positiveInfinity: .infinity
    case .negativeInfinity: -.infinity
    case .nan, .nres, .reserved: .nan
    }
}

private func medicalFieldValue(_ special: MedicalFloatSpecial?, _ value: Double?) -> FieldValue {
    if let special { return .string(special.rawValue) }
    return .optional(value)
}

private func medicalDescription(_ special: MedicalFloatSpecial?, _ mantissa: Int, _ exponent: Int) -> String {
    if let special { return special.rawValue }
    return exponent == 0 ? "\(mantissa)" : "\(mantissa)e\(exponent)"
}
